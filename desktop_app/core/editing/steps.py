"""Edits to a workflow's steps: insert a blank one, delete, duplicate, move, update, relocate."""

from __future__ import annotations

from collections.abc import Sequence

from desktop_app.core.editing.common import (
    TARGETED_KINDS,
    EditError,
    _fresh_id,
    _step_at,
    _with,
    _with_steps,
)
from desktop_app.core.models.target import Locator, Target
from desktop_app.core.models.workflow import Step, StepKind, Workflow
from desktop_app.core.step_kinds import KINDS

__all__ = [
    "blank_step",
    "delete_step",
    "duplicate_step",
    "insert_step",
    "move_step",
    "set_locators",
    "update_step",
]


def blank_step(kind: StepKind, *, title: str | None = None) -> Step:
    """A new step of *kind* to fill in (what it still needs shows in :func:`validate`).

    Raises:
        EditError: *kind* is not one of :data:`INSERTABLE_KINDS`.
    """
    spec = KINDS.get(kind)
    if spec is None or spec.blank is None:
        raise EditError(f"a {kind} step cannot be inserted here; record it instead")
    made: Step = spec.blank(title)
    return made


def insert_step(workflow: Workflow, index: int, step: Step) -> Workflow:
    """*workflow* with *step* inserted at *index* (``len(steps)`` appends).

    A step whose id is already used gets a new one.
    """
    if not 0 <= index <= len(workflow.steps):
        raise EditError(f"cannot insert at position {index + 1}")
    taken = {s.id for s in workflow.steps}
    if step.id in taken:
        step = step.model_copy(update={"id": _fresh_id(taken)})
    steps = list(workflow.steps)
    steps.insert(index, step)
    return _with_steps(workflow, steps)


def delete_step(workflow: Workflow, index: int) -> Workflow:
    """*workflow* without step *index*."""
    _step_at(workflow, index)
    steps = list(workflow.steps)
    del steps[index]
    return _with_steps(workflow, steps)


def duplicate_step(workflow: Workflow, index: int) -> Workflow:
    """*workflow* with a copy of step *index* (a new id) right after it."""
    step = _step_at(workflow, index)
    copy = step.model_copy(update={"id": _fresh_id({s.id for s in workflow.steps})})
    return insert_step(workflow, index + 1, copy)


def move_step(workflow: Workflow, source: int, destination: int) -> Workflow:
    """*workflow* with step *source* moved so that it ends up at index *destination*."""
    _step_at(workflow, source)
    if not 0 <= destination < len(workflow.steps):
        raise EditError(f"cannot move a step to position {destination + 1}")
    steps = list(workflow.steps)
    steps.insert(destination, steps.pop(source))
    return _with_steps(workflow, steps)


def update_step(workflow: Workflow, index: int, **changes: object) -> Workflow:
    """*workflow* with fields of step *index* changed, e.g. ``title="Sign in"``.

    Values are checked as the step model checks them (``timeout_s`` above 0, a ``checked``
    that is true, false or one placeholder, …). Empty required text is allowed and reported by
    :func:`validate`. Nested values are given as models (a :class:`Target`, expectations).

    Raises:
        EditError: no such step, no such field, or a value the field cannot take.
    """
    step = _step_at(workflow, index)
    if "kind" in changes or "id" in changes:
        raise EditError("a step's kind and id cannot be changed; insert a new step instead")
    updated = _with(step, changes, soft=True)
    steps = list(workflow.steps)
    steps[index] = updated
    return _with_steps(workflow, steps)


def set_locators(workflow: Workflow, index: int, locators: Sequence[Locator]) -> Workflow:
    """*workflow* with step *index* finding its element by *locators*, best first.

    The recorded fingerprint is kept. No locators leaves a step that needs one to be reported
    by :func:`validate`; a step whose target is optional (a key press, a scroll) then acts on
    the page.
    """
    step = _step_at(workflow, index)
    if "target" not in type(step).model_fields:
        raise EditError(f"a {step.kind} step does not act on an element")
    current = step.target_or_none
    fingerprint = current.fingerprint if current is not None else None
    target: Target | None
    if locators:
        target = Target(locators=tuple(locators), fingerprint=fingerprint)
    elif step.kind in TARGETED_KINDS:
        target = Target.model_construct(locators=(), fingerprint=fingerprint)
    else:
        target = None
    return update_step(workflow, index, target=target)
