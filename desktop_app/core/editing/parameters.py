"""Edits to a workflow's parameters: add, rename (with its placeholders), update, retype, delete."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Final

from pydantic import BaseModel

from desktop_app.core.editing.common import (
    EditError,
    _check_name,
    _extracted,
    _loop_names,
    _parameter_index,
    _with,
)
from desktop_app.core.editing.paths import path_label
from desktop_app.core.models.workflow import (
    NON_TEMPLATE_FIELDS,
    Parameter,
    ParameterType,
    Step,
    Workflow,
    branches,
)
from desktop_app.core.values import value_text

__all__ = [
    "add_parameter",
    "delete_parameter",
    "follow_rename",
    "new_parameter_name",
    "parse_default",
    "placeholder_spans",
    "rename_parameter",
    "rename_placeholder",
    "retype_parameter",
    "update_parameter",
]

#: The grammar of :mod:`desktop_app.core.templating`: ``{{``, ``}}`` or ``{name}``.
_TOKEN: Final = re.compile(r"\{\{|\}\}|\{([a-z_][a-z0-9_]*)\}")


def new_parameter_name(workflow: Workflow, base: str = "value") -> str:
    """A parameter name not used yet: *base*, ``base_2``, ``base_3``, …"""
    taken = {p.name for p in workflow.parameters} | set(_extracted(workflow))
    taken |= set(_loop_names(workflow))
    if base not in taken:
        return base
    n = 2
    while f"{base}_{n}" in taken:
        n += 1
    return f"{base}_{n}"


def add_parameter(workflow: Workflow, parameter: Parameter, index: int | None = None) -> Workflow:
    """*workflow* with *parameter* added (at the end unless *index*).

    Raises:
        EditError: a parameter or an extracted variable already has that name.
    """
    _check_free(workflow, parameter.name)
    params = list(workflow.parameters)
    params.insert(len(params) if index is None else index, parameter)
    return workflow.model_copy(update={"parameters": tuple(params)})


def _check_free(workflow: Workflow, name: str) -> None:
    _check_name(name)
    if workflow.parameter(name) is not None:
        raise EditError(f"there is already a parameter called {name!r}")
    extracted = _extracted(workflow)
    if name in extracted:
        raise EditError(
            f"step {path_label(extracted[name])} stores a variable called {name!r}; "
            "choose another name"
        )
    loops = _loop_names(workflow)
    if name in loops:
        path, loop = loops[name]
        raise EditError(
            f"step {path_label(path)} ('{loop.title}') puts each item in {{{name}}}; "
            "choose another name"
        )


def rename_placeholder(template: str, old: str, new: str) -> str:
    """*template* with every ``{old}`` replaced by ``{new}`` (escaped braces left alone)."""

    def sub(match: re.Match[str]) -> str:
        return "{" + new + "}" if match.group(1) == old else match.group(0)

    return _TOKEN.sub(sub, template)


def placeholder_spans(template: str) -> list[tuple[int, int, str]]:
    """Where each ``{placeholder}`` of *template* is: ``(start, end, name)`` (for highlighting)."""
    return [(m.start(), m.end(), m.group(1)) for m in _TOKEN.finditer(template) if m.group(1)]


def _rewrite(value: Any, fn: Callable[[str], str], skip: frozenset[str]) -> Any:
    """*value* with *fn* applied to every string in it, outside fields named in *skip*."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, BaseModel):
        changes = {}
        for name in type(value).model_fields:
            if name in skip:
                continue
            old = getattr(value, name)
            new = _rewrite(old, fn, skip)
            if new != old:
                changes[name] = new
        return value.model_copy(update=changes) if changes else value
    if isinstance(value, tuple | list):
        items = [_rewrite(item, fn, skip) for item in value]
        return type(value)(items) if items != list(value) else value
    if isinstance(value, dict):
        rewritten = {key: _rewrite(item, fn, skip) for key, item in value.items()}
        return rewritten if rewritten != value else value
    return value


#: Quoted text in a title or a description: what the page shows ('Full name'), left alone.
_QUOTED: Final = re.compile(r"'[^']*'|\"[^\"]*\"|“[^”]*”|‘[^’]*’")


def _mention(name: str) -> re.Pattern[str] | None:
    """How prose mentions parameter *name*: ``full_name`` or its label ``full name`` (any
    case), as whole words and not inside a placeholder; None for a name too short to tell
    from an ordinary word."""
    label = name.replace("_", " ").strip()
    if len(label) < 3:
        return None
    words = r"[ _]+".join(re.escape(w) for w in label.split())
    return re.compile(rf"(?<![{{\w]){words}(?![}}\w])", re.IGNORECASE)


def follow_rename(text: str, old: str, new: str) -> str:
    """*text* (a description, a title) with its mentions of parameter *old*, by its name or its
    human label, turned into *new*'s: ``Asks for: full name`` becomes ``Asks for: contact
    name``. The first letter keeps its case; quoted text (what the page shows, ``Fill 'Full
    name'``) and placeholders are left alone."""
    mention = _mention(old)
    if mention is None or not text:
        return text
    label = new.replace("_", " ")

    def said(match: re.Match[str]) -> str:
        found = match.group(0)
        word = new if "_" in found else label
        return word[:1].upper() + word[1:] if found[:1].isupper() else word

    parts: list[str] = []
    at = 0
    for quoted in _QUOTED.finditer(text):
        parts.append(mention.sub(said, text[at : quoted.start()]))
        parts.append(quoted.group(0))
        at = quoted.end()
    parts.append(mention.sub(said, text[at:]))
    return "".join(parts)


def _retitled(steps: tuple[Step, ...], fn: Callable[[str], str]) -> tuple[Step, ...]:
    """*steps* (and the steps inside blocks) with *fn* applied to their titles."""
    result: list[Step] = []
    for step in steps:
        update: dict[str, object] = {}
        title = fn(step.title)
        if title != step.title:
            update["title"] = title
        for name, inner in branches(step):
            changed = _retitled(inner, fn)
            if changed != inner:
                update[name] = changed
        result.append(step.model_copy(update=update) if update else step)
    return tuple(result)


def rename_parameter(workflow: Workflow, old: str, new: str) -> Workflow:
    """*workflow* with parameter *old* called *new*, and every ``{old}`` rewritten to match.

    Placeholders are rewritten in step titles, values, URLs, locators, expectations, call
    arguments, the success check and the intent template; recorded data (fingerprints,
    screenshots) is left alone. The workflow's description, its intent template, its step
    titles and the parameter's own description follow the rename where they mention it by
    name or by its label (:func:`follow_rename`), so no text keeps the old name.

    Raises:
        EditError: no parameter *old*, or *new* is not a usable name or is already taken.
    """
    position = _parameter_index(workflow, old)
    if new == old:
        return workflow
    _check_free(workflow, new)
    params = list(workflow.parameters)
    param = params[position]
    params[position] = param.model_copy(
        update={"name": new, "description": follow_rename(param.description, old, new)}
    )
    skip = frozenset(NON_TEMPLATE_FIELDS - {"title"})

    def fn(text: str) -> str:
        return rename_placeholder(text, old, new)

    def prose(text: str) -> str:
        return follow_rename(text, old, new)

    steps = _retitled(tuple(_rewrite(step, fn, skip) for step in workflow.steps), prose)
    success = tuple(_rewrite(check, fn, skip) for check in workflow.success)
    intent = workflow.intent_template
    return workflow.model_copy(
        update={
            "parameters": tuple(params),
            "steps": steps,
            "success": success,
            "intent_template": prose(fn(intent)) if intent is not None else None,
            "description": prose(workflow.description),
        }
    )


def update_parameter(workflow: Workflow, name: str, **changes: object) -> Workflow:
    """*workflow* with fields of parameter *name* changed (description, default, required,
    choices). Use :func:`rename_parameter` for its name and :func:`retype_parameter` for its type.

    Raises:
        EditError: no such parameter, or a value the parameter cannot take (a default that is
            not one of the choices, a default for a secret, …).
    """
    position = _parameter_index(workflow, name)
    if "name" in changes:
        raise EditError("rename a parameter with rename_parameter (it rewrites its placeholders)")
    params = list(workflow.parameters)
    params[position] = _with(params[position], changes, soft=False)
    return workflow.model_copy(update={"parameters": tuple(params)})


def retype_parameter(
    workflow: Workflow,
    name: str,
    type_: ParameterType,
    *,
    choices: Sequence[str] | None = None,
) -> Workflow:
    """*workflow* with parameter *name* of type *type_*.

    A default the new type cannot take is dropped (a secret never has one). A choice parameter
    keeps *choices*, or its old default as the only choice.

    Raises:
        EditError: a choice parameter with no choice to offer.
    """
    position = _parameter_index(workflow, name)
    param = workflow.parameters[position]
    default = param.default
    new_choices: tuple[str, ...] = ()
    if type_ is ParameterType.CHOICE:
        if choices:
            new_choices = tuple(dict.fromkeys(c for c in choices if c))
        elif param.choices:
            new_choices = param.choices
        elif default not in (None, ""):
            new_choices = (str(default),)
        if not new_choices:
            raise EditError(f"give {name!r} at least one choice before making it a choice")
        if default is not None and str(default) not in new_choices:
            default = None
    if default is not None:
        try:
            default = parse_default(type_, value_text(default), new_choices)
        except EditError:
            default = None
    params = list(workflow.parameters)
    params[position] = _with(
        param, {"type": type_, "default": default, "choices": new_choices}, soft=False
    )
    return workflow.model_copy(update={"parameters": tuple(params)})


def delete_parameter(workflow: Workflow, name: str) -> Workflow:
    """*workflow* without parameter *name* (placeholders still using it: see :func:`validate`)."""
    position = _parameter_index(workflow, name)
    params = list(workflow.parameters)
    del params[position]
    return workflow.model_copy(update={"parameters": tuple(params)})


def parse_default(
    type_: ParameterType, text: str, choices: Sequence[str] = ()
) -> str | int | float | bool | None:
    """The default a person typed as *text*, as a value of *type_* ("" means no default).

    Raises:
        EditError: *text* is not a value of that type.
    """
    text = text.strip()
    if not text:
        return None
    if type_ is ParameterType.SECRET:
        raise EditError("a secret has no default: it is kept in the keyring or asked at run time")
    if type_ is ParameterType.NUMBER:
        try:
            number = float(text)
        except ValueError:
            raise EditError(f"{text!r} is not a number") from None
        return int(number) if number.is_integer() and "." not in text else number
    if type_ is ParameterType.BOOL:
        lowered = text.lower()
        if lowered in {"true", "yes", "1"}:
            return True
        if lowered in {"false", "no", "0"}:
            return False
        raise EditError(f"{text!r} is not true or false")
    if type_ is ParameterType.CHOICE and choices and text not in choices:
        raise EditError(f"{text!r} is not one of the choices ({', '.join(choices)})")
    return text
