"""What a workflow references: the media it uses and the workflows it calls."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from desktop_app.core.exports.bundle.format import _REF
from desktop_app.core.models.target import LocatorStrategy, Target
from desktop_app.core.models.workflow import (
    AssertStep,
    CallStep,
    Condition,
    ElementHidden,
    ElementPresent,
    ElementVisible,
    IfStep,
    ImageVisible,
    RepeatUntilStep,
    WaitForStep,
    Workflow,
    walk,
)
from desktop_app.core.step_places import StepPlace, step_places

__all__ = ["media_refs"]


def media_refs(workflow: Workflow) -> set[str]:
    """Every media ref *workflow* uses: step screenshots and image anchors, inside blocks
    too, and in its success check."""
    refs: set[str] = set()
    for check in workflow.success:
        refs |= _condition_refs(check)
    for step in walk(workflow.steps):
        if step.screenshot is not None:
            refs.add(step.screenshot)
        if (target := step.target_or_none) is not None:
            refs |= _anchors(target)
        conditions: list[Condition] = list(step.expectations)
        if isinstance(step, WaitForStep | AssertStep | IfStep | RepeatUntilStep):
            conditions.append(step.condition)
        for condition in conditions:
            refs |= _condition_refs(condition)
    return refs


def _condition_refs(condition: Condition) -> set[str]:
    if isinstance(condition, ImageVisible):
        return {condition.anchor}
    if isinstance(condition, ElementVisible | ElementHidden | ElementPresent):
        return _anchors(condition.target)
    return set()


def _anchors(target: Target) -> set[str]:
    return {
        loc.value
        for loc in target.locators
        if loc.strategy is LocatorStrategy.IMAGE_ANCHOR and _REF.fullmatch(loc.value)
    }


def _calls(workflow: Workflow) -> Iterator[tuple[StepPlace, CallStep]]:
    """Every call step of *workflow*, inside blocks too, in order, with where it is."""
    for place in step_places(workflow.steps):
        if isinstance(place.step, CallStep):
            yield place, place.step


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
