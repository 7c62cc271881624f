"""Edits to a workflow's steps, however deep in blocks: insert a blank one, delete, duplicate,
move (within a list, into a block and out of it), update, relocate.

Every function takes where the step is as a top-level index or a :data:`.paths.StepPath`.
"""

from __future__ import annotations

from collections.abc import Sequence

from desktop_app.core.editing.common import (
    TARGETED_KINDS,
    EditError,
    _fresh_id,
    _with,
)
from desktop_app.core.editing.paths import (
    Where,
    _split,
    as_path,
    list_at,
    path_label,
    slot_after_removal,
    step_at,
    with_list,
)
from desktop_app.core.models.blocks import MAX_DEPTH
from desktop_app.core.models.target import Locator, Target
from desktop_app.core.models.workflow import Step, StepKind, Workflow, branches, walk
from desktop_app.core.step_kinds import KINDS

__all__ = [
    "blank_step",
    "delete_step",
    "duplicate_step",
    "insert_step",
    "move_into",
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


def _fresh_ids(step: Step, taken: set[str]) -> Step:
    """*step* (and every step inside it) with ids not in *taken*; the ids used are added."""
    if step.id in taken:
        step = step.model_copy(update={"id": _fresh_id(taken)})
    taken.add(step.id)
    held = branches(step)
    if held:
        update = {name: tuple(_fresh_ids(s, taken) for s in inner) for name, inner in held}
        step = step.model_copy(update=update)
    return step


def _depth(step: Step) -> int:
    """How many levels of blocks *step* is (0 for a step that holds none)."""
    inner_depths = (max((_depth(s) for s in inner), default=0) for _n, inner in branches(step))
    return max((1 + d for d in inner_depths), default=0)


def insert_step(workflow: Workflow, index: Where, step: Step) -> Workflow:
    """*workflow* with *step* inserted at *index*: a top-level index (``len(steps)`` appends),
    or a path to a slot inside a block (``(3, "steps", 0)``: first inside step 4).

    A step whose id (or the id of a step inside it) is already used gets a new one.

    Raises:
        EditError: there is no such place, or blocks would nest too deep.
    """
    path = as_path(index)
    list_path, at = _split(path)
    steps = list(list_at(workflow, list_path))
    if not 0 <= at <= len(steps):
        raise EditError(f"cannot insert at position {path_label(path)}")
    depth = len(list_path) // 2 + _depth(step)
    if depth > MAX_DEPTH:
        raise EditError(f"blocks cannot nest more than {MAX_DEPTH} deep")
    step = _fresh_ids(step, {s.id for s in walk(workflow.steps)})
    steps.insert(at, step)
    return with_list(workflow, list_path, steps)


def delete_step(workflow: Workflow, index: Where) -> Workflow:
    """*workflow* without the step at *index* (a block goes with the steps it holds)."""
    path = as_path(index)
    step_at(workflow, path)
    list_path, at = _split(path)
    steps = list(list_at(workflow, list_path))
    del steps[at]
    return with_list(workflow, list_path, steps)


def duplicate_step(workflow: Workflow, index: Where) -> Workflow:
    """*workflow* with a copy of the step at *index* right after it (new ids, inside too)."""
    path = as_path(index)
    step = step_at(workflow, path)
    list_path, at = _split(path)
    copy = _fresh_ids(step, {s.id for s in walk(workflow.steps)})
    return insert_step(workflow, (*list_path, at + 1), copy)


def move_step(workflow: Workflow, source: Where, destination: Where) -> Workflow:
    """*workflow* with the step at *source* moved so that it ends up at *destination*.

    With top-level indexes this reorders the workflow's steps. With paths, the step may go
    into a block or out of it: *destination* is where it ends up once taken out from where it
    was (:func:`~desktop_app.core.editing.paths.slot_after_removal` turns a place in the
    workflow as it is now, where a card was dropped, into that).

    Raises:
        EditError: no such step or place, or a block moved into itself.
    """
    src, dst = as_path(source), as_path(destination)
    step = step_at(workflow, src)
    list_path, at = _split(src)
    steps = list(list_at(workflow, list_path))
    del steps[at]
    without = with_list(workflow, list_path, steps)
    target_list, to = _split(dst)
    if not 0 <= to <= len(list_at(without, target_list)):
        raise EditError(f"cannot move a step to position {path_label(dst)}")
    return insert_step(without, dst, step)


def move_into(workflow: Workflow, source: Where, slot: Where) -> Workflow:
    """*workflow* with the step at *source* put at *slot*, a place in the workflow as it is now
    (where a card was dropped: before the step at *slot*, or at the end of a list).

    Raises:
        EditError: no such step or place, or a block dropped inside itself.
    """
    return move_step(workflow, source, slot_after_removal(source, slot))


def update_step(workflow: Workflow, index: Where, **changes: object) -> Workflow:
    """*workflow* with fields of the step at *index* changed, e.g. ``title="Sign in"``.

    Values are checked as the step model checks them (``timeout_s`` above 0, a ``checked``
    that is true, false or one placeholder, …). Empty required text, a block with no step
    inside yet and a condition still to be filled in are allowed and reported by
    :func:`validate`. Nested values are given as models (a :class:`Target`, expectations, a
    condition, what a loop goes over).

    Raises:
        EditError: no such step, no such field, or a value the field cannot take.
    """
    path = as_path(index)
    step = step_at(workflow, path)
    if "kind" in changes or "id" in changes:
        raise EditError("a step's kind and id cannot be changed; insert a new step instead")
    updated = _with(step, changes, soft=True)
    list_path, at = _split(path)
    steps = list(list_at(workflow, list_path))
    steps[at] = updated
    return with_list(workflow, list_path, steps)


def set_locators(workflow: Workflow, index: Where, locators: Sequence[Locator]) -> Workflow:
    """*workflow* with the step at *index* finding its element by *locators*, best first.

    The recorded fingerprint is kept. No locators leaves a step that needs one to be reported
    by :func:`validate`; a step whose target is optional (a key press, a scroll) then acts on
    the page.
    """
    step = step_at(workflow, index)
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
