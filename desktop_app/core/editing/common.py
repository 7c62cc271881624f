"""What the families of edits share: the error, the kinds of step, and small helpers."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Final, TypeVar

from pydantic import BaseModel, ValidationError

from desktop_app.core.errors import ProceduraError
from desktop_app.core.models.common import DocumentPathError, new_id
from desktop_app.core.models.workflow import (
    BODY_FIELDS,
    NON_TEMPLATE_FIELDS,
    AgentStep,
    ExtractStep,
    ForEachStep,
    Step,
    Workflow,
    branches,
    item_variables,
)
from desktop_app.core.step_kinds import INSERTABLE_KINDS, TARGETED_KINDS

__all__ = [
    "INSERTABLE_KINDS",
    "TARGETED_KINDS",
    "EditError",
]

#: Validation errors an edit may leave for :func:`validate` to report: required text left empty
#: and a target without locators.
_SOFT_ERRORS: Final = frozenset({"string_too_short", "too_short"})


_IDENTIFIER: Final = re.compile(r"^[a-z_][a-z0-9_]*$")

_M = TypeVar("_M", bound=BaseModel)


class EditError(ProceduraError):
    """An edit that cannot be made; the message says why in one line."""


# ── helpers ─────────────────────────────────────────────────────────────────────────────────


def _error_text(error: Mapping[str, Any]) -> str:
    loc = ".".join(str(part) for part in error.get("loc", ()))
    ctx = error.get("ctx") or {}
    nested = ctx.get("error")
    if isinstance(nested, DocumentPathError):
        return nested.message
    message = str(error.get("msg", "invalid value")).removeprefix("Value error, ")
    message = message[:1].lower() + message[1:]
    leaf = str(error["loc"][-1]) if error.get("loc") else ""
    return f"{loc}: {message}" if loc and not message.startswith(leaf) else message


def _with(model: _M, changes: Mapping[str, object], *, soft: bool) -> _M:
    """*model* with *changes*, each checked as the model checks it.

    With *soft*, empty required text and an empty locator list are let through (for
    :func:`validate` to report) instead of refused.
    """
    fields = type(model).model_fields
    unknown = sorted(set(changes) - set(fields))
    if unknown:
        raise EditError(f"a {type(model).__name__} has no field {unknown[0]!r}")
    try:
        # Field by field (not dict(model): a step with a ``keys`` field would pass for a mapping).
        current = {name: getattr(model, name) for name in fields}
        return type(model).model_validate({**current, **changes})
    except ValidationError as exc:
        hard = [e for e in exc.errors() if not soft or e["type"] not in _SOFT_ERRORS]
        if hard:
            raise EditError(_error_text(hard[0])) from None
        return model.model_copy(update=dict(changes))


def _step_paths(
    steps: tuple[Step, ...], prefix: tuple[int | str, ...] = ()
) -> Iterator[tuple[tuple[int | str, ...], Step]]:
    """Every step of *steps* with its path, each block before its own steps."""
    for i, step in enumerate(steps):
        path = (*prefix, i)
        yield path, step
        for name, inner in branches(step):
            yield from _step_paths(inner, (*path, name))


def _parameter_index(workflow: Workflow, name: str) -> int:
    for i, param in enumerate(workflow.parameters):
        if param.name == name:
            return i
    raise EditError(f"there is no parameter {name!r}")


def _extracted(workflow: Workflow) -> dict[str, tuple[int | str, ...]]:
    """Variables the steps store (inside blocks too), with the path of the first step storing
    each."""
    found: dict[str, tuple[int | str, ...]] = {}
    for path, step in _step_paths(workflow.steps):
        name = _stored_variable(step)
        if name is not None and name not in found:
            found[name] = path
    return found


def _loop_names(workflow: Workflow) -> dict[str, tuple[tuple[int | str, ...], ForEachStep]]:
    """The names loops give their item and its fields, with the first loop giving each."""
    found: dict[str, tuple[tuple[int | str, ...], ForEachStep]] = {}
    for path, step in _step_paths(workflow.steps):
        if isinstance(step, ForEachStep):
            for name in item_variables(step):
                found.setdefault(name, (path, step))
    return found


def _stored_variable(step: Step) -> str | None:
    if isinstance(step, ExtractStep):
        return step.variable
    if isinstance(step, AgentStep):
        return step.output_variable
    return None


def _template_strings(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every string of a dumped step that is rendered at run time, with its path in the step
    (a block's own fields only: the steps it holds are each checked on their own)."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in NON_TEMPLATE_FIELDS and key not in BODY_FIELDS:
                yield from _template_strings(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _template_strings(item, f"{path}[{i}]")


def _check_name(name: str) -> None:
    if not _IDENTIFIER.fullmatch(name) or len(name) > 64:
        raise EditError(
            f"{name!r} cannot be a parameter name: use lowercase letters, digits and _, "
            "starting with a letter or _ (e.g. customer_name)"
        )


def _fresh_id(taken: set[str]) -> str:
    while True:
        candidate = new_id()[:12]
        if candidate not in taken:
            return candidate
