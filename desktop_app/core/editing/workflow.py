"""Edits to the workflow itself: its name, description, domains, intent and success check."""

from __future__ import annotations

from collections.abc import Sequence

from desktop_app.core.editing.common import EditError
from desktop_app.core.models.workflow import Expectation, Workflow

__all__ = [
    "add_success_check",
    "remove_success_check",
    "replace_success_check",
    "set_success",
    "update_workflow",
]


def update_workflow(workflow: Workflow, **changes: object) -> Workflow:
    """*workflow* with its name, description, domains or intent template changed."""
    allowed = {"name", "description", "domains", "intent_template"}
    unknown = sorted(set(changes) - allowed)
    if unknown:
        raise EditError(f"{unknown[0]!r} cannot be changed here")
    update: dict[str, object] = {}
    for key, value in changes.items():
        if key == "domains":
            if not isinstance(value, tuple | list) or not all(isinstance(d, str) for d in value):
                raise EditError("domains are a list of host names")
            update[key] = tuple(d.strip() for d in value if d.strip())
        elif key == "intent_template" and value in (None, ""):
            update[key] = None
        elif not isinstance(value, str):
            raise EditError(f"{key} is text")
        elif key == "name" and len(value) > 200:
            raise EditError("a name is at most 200 characters")
        else:
            update[key] = value
    # The workflow's own cross-checks wait for validate(): the draft may be mid-edit.
    return workflow.model_copy(update=update)


# ── the success check ("done when") ─────────────────────────────────────────────────────────


def set_success(workflow: Workflow, checks: Sequence[Expectation]) -> Workflow:
    """*workflow* with *checks* as its success check: what shows the task was done, checked
    once the last step is done. No checks leaves a workflow whose runs end "done, unverified".

    Placeholders the workflow does not know are reported by :func:`validate`, not refused.
    """
    return workflow.model_copy(update={"success": tuple(checks)})


def _check_at(workflow: Workflow, index: int) -> Expectation:
    if not 0 <= index < len(workflow.success):
        count = len(workflow.success)
        raise EditError(
            f"there is no check {index + 1} in the success check (it has {count})"
            if count
            else "the workflow has no success check yet"
        )
    return workflow.success[index]


def add_success_check(workflow: Workflow, check: Expectation, index: int | None = None) -> Workflow:
    """*workflow* with *check* added to its success check (at the end unless *index*)."""
    checks = list(workflow.success)
    if index is not None and not 0 <= index <= len(checks):
        raise EditError(f"cannot add a check at position {index + 1}")
    checks.insert(len(checks) if index is None else index, check)
    return set_success(workflow, checks)


def replace_success_check(workflow: Workflow, index: int, check: Expectation) -> Workflow:
    """*workflow* with check *index* of its success check replaced by *check*."""
    _check_at(workflow, index)
    checks = list(workflow.success)
    checks[index] = check
    return set_success(workflow, checks)


def remove_success_check(workflow: Workflow, index: int) -> Workflow:
    """*workflow* without check *index* of its success check."""
    _check_at(workflow, index)
    checks = list(workflow.success)
    del checks[index]
    return set_success(workflow, checks)
