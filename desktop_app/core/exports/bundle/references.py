"""What a workflow references: the media it uses and the workflows it calls."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from desktop_app.core.exports.bundle.format import _REF
from desktop_app.core.models.target import LocatorStrategy, Target
from desktop_app.core.models.workflow import (
    AssertStep,
    CallStep,
    ElementHidden,
    ElementVisible,
    Expectation,
    ImageVisible,
    WaitForStep,
    Workflow,
)

__all__ = ["media_refs"]


def media_refs(workflow: Workflow) -> set[str]:
    """Every media ref *workflow* uses: step screenshots and image anchors."""
    refs: set[str] = set()
    for step in workflow.steps:
        if step.screenshot is not None:
            refs.add(step.screenshot)
        targets: list[Target] = []
        if (target := step.target_or_none) is not None:
            targets.append(target)
        expectations: list[Expectation] = list(step.expectations)
        if isinstance(step, WaitForStep | AssertStep):
            expectations.append(step.condition)
        for expectation in expectations:
            if isinstance(expectation, ImageVisible):
                refs.add(expectation.anchor)
            elif isinstance(expectation, ElementVisible | ElementHidden):
                targets.append(expectation.target)
        for target in targets:
            refs.update(
                loc.value
                for loc in target.locators
                if loc.strategy is LocatorStrategy.IMAGE_ANCHOR and _REF.fullmatch(loc.value)
            )
    return refs


def _calls(workflow: Workflow) -> Iterator[tuple[int, CallStep]]:
    for i, step in enumerate(workflow.steps):
        if isinstance(step, CallStep):
            yield i, step


def _callees_first(
    workflows: Mapping[tuple[str, int], Workflow],
) -> tuple[list[str], list[str] | None]:
    """Workflow ids, each after every id it calls; or the ids of a call loop."""
    ids = {wid for wid, _ in workflows}
    graph: dict[str, set[str]] = {wid: set() for wid in ids}
    for (wid, _), wf in workflows.items():
        graph[wid].update(step.workflow_id for _, step in _calls(wf) if step.workflow_id in ids)
    order: list[str] = []
    done: set[str] = set()
    for root in sorted(graph):
        if root in done:
            continue
        path, stack = [root], [iter(sorted(graph[root]))]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
                node = path.pop()
                done.add(node)
                order.append(node)
            elif nxt in path:
                return order, [*path[path.index(nxt) :], nxt]
            elif nxt not in done:
                path.append(nxt)
                stack.append(iter(sorted(graph[nxt])))
    return order, None


def _loop_message(loop: Sequence[str], names: Mapping[str, str]) -> str:
    chain = " → ".join(repr(names.get(wid, wid)) for wid in loop)
    return f"workflows call each other in a loop ({chain}), which can never finish"
