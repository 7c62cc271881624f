"""Composition: a run of steps that does what an approved workflow does becomes a ``call`` step.

So workflows build on workflows: once "Sign in" is approved, every newly induced workflow that
signs in the same way calls it instead of repeating its steps, and a fix to "Sign in" (a healed
locator, a new version) reaches all of them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from desktop_app.core.models.target import LocatorStrategy, Target
from desktop_app.core.models.workflow import CallStep, Step, Workflow
from desktop_app.core.templating import placeholders

__all__ = ["Composition", "compose"]

_SLOT = re.compile(r"\{[a-z_][a-z0-9_]*\}")
#: A callable workflow must be at least this long to be worth a call.
MIN_SPAN: Final = 2


@dataclass
class Composition:
    """The workflow with calls in place of matching spans, and what was replaced."""

    workflow: Workflow
    notes: list[str] = field(default_factory=list)


def _target_key(target: Target | None) -> str:
    if target is None:
        return "-"
    by_strategy = {loc.strategy: loc for loc in target.locators}
    for strategy in (
        LocatorStrategy.TEST_ID,
        LocatorStrategy.ROLE,
        LocatorStrategy.LABEL,
        LocatorStrategy.PLACEHOLDER,
        LocatorStrategy.CSS,
    ):
        loc = by_strategy.get(strategy)
        if loc is not None:
            return _SLOT.sub("{}", loc.describe())
    return _SLOT.sub("{}", target.locators[0].describe())


def _key(step: Step) -> tuple[str, str, str]:
    """What the step does to which element, regardless of the values it is given."""
    extra = ""
    if step.kind == "goto":
        extra = _SLOT.sub("{}", step.url)
    elif step.kind == "check":
        extra = _SLOT.sub("{}", str(step.checked))
    elif step.kind == "press":
        extra = step.key
    return step.kind, _target_key(step.target_or_none), extra


def _value(step: Step) -> str | None:
    value = getattr(step, "value", None)
    if step.kind == "check":
        value = step.checked
    return value if isinstance(value, str) else None


def _arguments(span: Sequence[Step], callee: Workflow) -> dict[str, str] | None:
    """How the outer steps' values map onto the callee's parameters, or None if they conflict."""
    arguments: dict[str, str] = {}
    for outer, inner in zip(span, callee.steps, strict=True):
        inner_value = _value(inner)
        if inner_value is None:
            continue
        names = placeholders(inner_value)
        if len(names) == 1 and inner_value == "{" + names[0] + "}":
            given = _value(outer) or ""
            if arguments.setdefault(names[0], given) != given:
                return None
        elif inner_value != _value(outer):
            return None  # the callee has a constant here and the outer step another value
    for param in callee.parameters:
        if param.required and param.default is None and param.name not in arguments:
            return None
    return arguments


def compose(workflow: Workflow, library: Sequence[Workflow]) -> Composition:
    """Replace each span of *workflow*'s steps that does what a workflow of *library* does.

    Longer library workflows are tried first; a span matches when its steps act on the same
    elements in the same order (values may differ: they become the call's arguments).
    """
    steps = list(workflow.steps)
    notes: list[str] = []
    for callee in sorted(library, key=lambda w: -len(w.steps)):
        if callee.id == workflow.id or len(callee.steps) < MIN_SPAN:
            continue
        keys = [_key(s) for s in callee.steps]
        i = 0
        while i + len(keys) <= len(steps):
            span = steps[i : i + len(keys)]
            if any(isinstance(s, CallStep) for s in span) or [_key(s) for s in span] != keys:
                i += 1
                continue
            arguments = _arguments(span, callee)
            if arguments is None:
                i += 1
                continue
            call = CallStep(
                title=f"Run '{callee.name}'",
                workflow_id=callee.id,
                version=callee.version,
                arguments=arguments,
                irreversible=any(s.irreversible for s in span),
                expectations=span[-1].expectations,
                source_events=tuple(e for s in span for e in s.source_events),
            )
            steps[i : i + len(keys)] = [call]
            notes.append(
                f"steps {i + 1}–{i + len(keys)} do what '{callee.name}' (version "
                f"{callee.version}) does: replaced by a call to it"
            )
            i += 1
    if not notes:
        return Composition(workflow)
    composed = Workflow.model_validate(
        {**workflow.model_dump(), "steps": [s.model_dump() for s in steps]}
    )
    return Composition(composed, notes)
