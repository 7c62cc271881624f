"""Editing a workflow in the step editor: pure operations that return a new workflow, and checks.

The workflow's steps, parameters and fields, and its success check (what shows the task was done,
checked after the last step: "Done when" in the editor) are all edited here.

Every operation takes a :class:`~desktop_app.core.models.workflow.Workflow` and returns a new one;
nothing changes in place, so an undo stack can keep whole snapshots. A draft may be incomplete
while someone edits it (a step with an empty title, a click without a locator, a placeholder of a
parameter not added yet): the operations allow that, :func:`validate` lists every such problem
where it is, and :func:`finalize` gives a workflow to save only once no error is left.

Errors::

    ProceduraError
    └── EditError    an edit that cannot be made: no such step or parameter, a name already
                     taken or not usable in a {placeholder}, a value of the wrong type
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from desktop_app.core.describe import describe_expectation, describe_locator
from desktop_app.core.errors import ProceduraError
from desktop_app.core.models.common import DocumentPathError, JsonScalar, new_id
from desktop_app.core.models.target import Locator, Target
from desktop_app.core.models.workflow import (
    NON_TEMPLATE_FIELDS,
    AgentStep,
    AssertStep,
    CallStep,
    CheckStep,
    ClickStep,
    DesktopClickStep,
    DesktopTypeStep,
    ElementHidden,
    ElementVisible,
    Expectation,
    ExtractStep,
    FillStep,
    GotoStep,
    HotkeyStep,
    Parameter,
    ParameterType,
    PressStep,
    ScrollStep,
    SelectStep,
    Step,
    StepKind,
    TextPresent,
    WaitForStep,
    Workflow,
)
from desktop_app.core.templating import placeholders, render

__all__ = [
    "INSERTABLE_KINDS",
    "TARGETED_KINDS",
    "EditError",
    "Issue",
    "Severity",
    "add_parameter",
    "add_success_check",
    "blank_step",
    "delete_parameter",
    "delete_step",
    "duplicate_step",
    "errors",
    "finalize",
    "insert_step",
    "known_names",
    "move_step",
    "new_parameter_name",
    "parameter_uses",
    "parse_default",
    "placeholder_spans",
    "remove_success_check",
    "rename_parameter",
    "rename_placeholder",
    "replace_success_check",
    "retype_parameter",
    "set_locators",
    "set_success",
    "start_url",
    "step_summary",
    "update_parameter",
    "update_step",
    "update_workflow",
    "validate",
]

Severity = Literal["error", "warning"]

#: Step kinds that act on an element and cannot run without a locator.
TARGETED_KINDS: Final[frozenset[str]] = frozenset({"click", "fill", "select", "check", "extract"})

#: Step kinds the editor can insert from scratch (a call needs a workflow, desktop kinds a
#: recording of the window, so those come from recordings).
INSERTABLE_KINDS: Final[tuple[StepKind, ...]] = (
    "goto",
    "click",
    "fill",
    "select",
    "check",
    "press",
    "scroll",
    "wait_for",
    "assert",
    "extract",
    "agent",
)

#: Step fields whose value is typed into the page, where a secret belongs.
_VALUE_FIELDS: Final = frozenset({"value", "text"})

#: Validation errors an edit may leave for :func:`validate` to report: required text left empty
#: and a target without locators.
_SOFT_ERRORS: Final = frozenset({"string_too_short", "too_short"})

#: The grammar of :mod:`desktop_app.core.templating`: ``{{``, ``}}`` or ``{name}``.
_TOKEN: Final = re.compile(r"\{\{|\}\}|\{([a-z_][a-z0-9_]*)\}")
_IDENTIFIER: Final = re.compile(r"^[a-z_][a-z0-9_]*$")

_M = TypeVar("_M", bound=BaseModel)


class EditError(ProceduraError):
    """An edit that cannot be made; the message says why in one line."""


@dataclass(frozen=True, slots=True)
class Issue:
    """A problem in a draft, where it is.

    Attributes:
        severity: ``error`` blocks saving; ``warning`` is worth a look but does not.
        message: what is wrong and what to do, in one line.
        step: the index (from 0) of the step, or None for the workflow or a parameter.
        field: where inside the step (``value``, ``target``, ``expectations[0].text``) or the
            workflow (``intent_template``, ``parameters[2]``); "" for the whole step.
        parameter: the parameter the problem is about, if any.
    """

    severity: Severity
    message: str
    step: int | None = None
    field: str = ""
    parameter: str | None = None

    @property
    def is_error(self) -> bool:
        """Whether it blocks saving."""
        return self.severity == "error"

    @property
    def is_success(self) -> bool:
        """Whether it is about the workflow's success check (its field is ``success[k]…``)."""
        return self.step is None and self.field.startswith("success[")

    @property
    def success_index(self) -> int | None:
        """Which check of the success check it is about (from 0), if it is about one."""
        found = re.match(r"success\[(\d+)\]", self.field) if self.step is None else None
        return int(found.group(1)) if found else None

    @property
    def where(self) -> str:
        """A short human location: ``Step 3 · value``, ``Parameter email``, ``Done when · check
        1``, ``Workflow``."""
        index = self.success_index
        if index is not None:
            return f"Done when · check {index + 1}"
        if self.step is not None:
            return f"Step {self.step + 1}" + (f" · {self.field}" if self.field else "")
        if self.parameter is not None:
            return f"Parameter {self.parameter}"
        return "Workflow" + (f" · {self.field}" if self.field else "")

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


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


def _step_at(workflow: Workflow, index: int) -> Step:
    if not 0 <= index < len(workflow.steps):
        raise EditError(f"there is no step {index + 1} (the workflow has {len(workflow.steps)})")
    return workflow.steps[index]


def _with_steps(workflow: Workflow, steps: Sequence[Step]) -> Workflow:
    return workflow.model_copy(update={"steps": tuple(steps)})


def _parameter_index(workflow: Workflow, name: str) -> int:
    for i, param in enumerate(workflow.parameters):
        if param.name == name:
            return i
    raise EditError(f"there is no parameter {name!r}")


def _extracted(workflow: Workflow) -> dict[str, int]:
    """Variables the steps store, with the index of the first step storing each."""
    found: dict[str, int] = {}
    for i, step in enumerate(workflow.steps):
        name = _stored_variable(step)
        if name is not None and name not in found:
            found[name] = i
    return found


def _stored_variable(step: Step) -> str | None:
    if isinstance(step, ExtractStep):
        return step.variable
    if isinstance(step, AgentStep):
        return step.output_variable
    return None


def _template_strings(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every string of a dumped step that is rendered at run time, with its path in the step."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in NON_TEMPLATE_FIELDS:
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


# ── steps ───────────────────────────────────────────────────────────────────────────────────


def _empty_target() -> Target:
    # A target still to be given its locators: validate() reports it until it has one.
    return Target.model_construct(locators=(), fingerprint=None)


def blank_step(kind: StepKind, *, title: str | None = None) -> Step:
    """A new step of *kind* to fill in (what it still needs shows in :func:`validate`).

    Raises:
        EditError: *kind* is not one of :data:`INSERTABLE_KINDS`.
    """
    empty_text = TextPresent.model_construct(text="")
    made: Step
    if kind == "goto":
        made = GotoStep.model_construct(title=title or "Open a page", url="")
    elif kind == "click":
        made = ClickStep(title=title or "Click", target=_empty_target())
    elif kind == "fill":
        made = FillStep(title=title or "Fill in a field", target=_empty_target(), value="")
    elif kind == "select":
        made = SelectStep(title=title or "Choose an option", target=_empty_target(), value="")
    elif kind == "check":
        made = CheckStep(title=title or "Tick a box", target=_empty_target())
    elif kind == "press":
        made = PressStep(title=title or "Press Enter", key="Enter")
    elif kind == "scroll":
        made = ScrollStep(title=title or "Scroll down", dy=600)
    elif kind == "wait_for":
        made = WaitForStep(title=title or "Wait until the page shows…", condition=empty_text)
    elif kind == "assert":
        made = AssertStep(title=title or "Check that the page shows…", condition=empty_text)
    elif kind == "extract":
        made = ExtractStep(title=title or "Read a value", target=_empty_target(), variable="value")
    elif kind == "agent":
        made = AgentStep.model_construct(title=title or "Let the assistant do it", instruction="")
    else:
        raise EditError(f"a {kind} step cannot be inserted here; record it instead")
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


# ── parameters ──────────────────────────────────────────────────────────────────────────────


def new_parameter_name(workflow: Workflow, base: str = "value") -> str:
    """A parameter name not used yet: *base*, ``base_2``, ``base_3``, …"""
    taken = {p.name for p in workflow.parameters} | set(_extracted(workflow))
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
            f"step {extracted[name] + 1} stores a variable called {name!r}; choose another name"
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


def rename_parameter(workflow: Workflow, old: str, new: str) -> Workflow:
    """*workflow* with parameter *old* called *new*, and every ``{old}`` rewritten to match.

    Placeholders are rewritten in step titles, values, URLs, locators, expectations, call
    arguments, the success check and the intent template; recorded data (fingerprints,
    screenshots) is left alone.

    Raises:
        EditError: no parameter *old*, or *new* is not a usable name or is already taken.
    """
    position = _parameter_index(workflow, old)
    if new == old:
        return workflow
    _check_free(workflow, new)
    params = list(workflow.parameters)
    params[position] = params[position].model_copy(update={"name": new})
    skip = frozenset(NON_TEMPLATE_FIELDS - {"title"})

    def fn(text: str) -> str:
        return rename_placeholder(text, old, new)

    steps = tuple(_rewrite(step, fn, skip) for step in workflow.steps)
    success = tuple(_rewrite(check, fn, skip) for check in workflow.success)
    intent = workflow.intent_template
    return workflow.model_copy(
        update={
            "parameters": tuple(params),
            "steps": steps,
            "success": success,
            "intent_template": fn(intent) if intent is not None else None,
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
            default = parse_default(type_, _default_text(default), new_choices)
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


def _default_text(value: JsonScalar) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


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


# ── reading ─────────────────────────────────────────────────────────────────────────────────


def known_names(workflow: Workflow) -> list[str]:
    """The names a ``{placeholder}`` can use: parameters, then variables steps store."""
    names = [p.name for p in workflow.parameters]
    return names + [n for n in _extracted(workflow) if n not in names]


def parameter_uses(workflow: Workflow, name: str) -> int:
    """How many step fields, success checks (and the intent template) use ``{name}``."""
    count = 0
    for item in (*workflow.steps, *workflow.success):
        for _, text in _template_strings(item.model_dump(mode="json")):
            count += name in placeholders(text)
    intent = workflow.intent_template or ""
    return count + (name in placeholders(intent))


def start_url(workflow: Workflow) -> str | None:
    """Where the workflow starts: its first ``goto`` step's URL, with defaults filled in.

    None when there is no such step, or its URL needs a value that has no default.
    """
    for step in workflow.steps:
        if isinstance(step, GotoStep) and step.url:
            values = {p.name: _default_text(p.default) for p in workflow.parameters if p.default}
            try:
                return render(step.url, values)
            except KeyError:
                return None
    return None


def step_summary(step: Step) -> str:
    """One short line about what a step acts on, for its card (its title says what it does)."""
    target = step.target_or_none
    where = describe_locator(target.locators[0]) if target is not None and target.locators else ""
    detail = ""
    if isinstance(step, GotoStep):
        detail = step.url
    elif isinstance(step, FillStep | SelectStep):
        detail = f"← {step.value}" if step.value else "← (empty)"
    elif isinstance(step, CheckStep):
        detail = f"= {str(step.checked).lower()}"
    elif isinstance(step, PressStep):
        detail = step.key
    elif isinstance(step, ExtractStep):
        detail = f"→ {{{step.variable}}}"
    elif isinstance(step, WaitForStep | AssertStep):
        detail = describe_expectation(step.condition)
    elif isinstance(step, CallStep):
        detail = f"workflow {step.workflow_id[:8]}"
    elif isinstance(step, AgentStep):
        detail = step.instruction
    elif isinstance(step, DesktopTypeStep):
        detail = step.text
    elif isinstance(step, HotkeyStep):
        detail = "+".join(step.keys)
    elif isinstance(step, DesktopClickStep):
        detail = step.window_title or step.app or ""
    elif isinstance(step, ScrollStep):
        detail = f"by {step.dx:g}, {step.dy:g}"
    return "  ".join(part for part in (where, detail) if part)


# ── validation ──────────────────────────────────────────────────────────────────────────────


def validate(workflow: Workflow) -> list[Issue]:
    """Every problem in *workflow*, workflow and parameters first, then step by step.

    Errors (they block :func:`finalize`): a step with no title; a step that acts on an element
    without a locator; a placeholder that is neither a parameter nor a variable an earlier step
    stores; a password field filled with anything but one secret parameter; a secret in the
    intent; a tick box set from a parameter that is not true/false; required text left empty.
    Warnings: parameters nothing uses, a secret put where it may show (a URL, a locator, a
    check), a title mentioning an unknown placeholder. The success check's problems (field
    ``success[k]…``) come last: it is checked after the last step, so it may use a variable any
    step stores.
    """
    issues: list[Issue] = []
    params = {p.name: p for p in workflow.parameters}
    secrets = {n for n, p in params.items() if p.type is ParameterType.SECRET}
    extracted = _extracted(workflow)
    used: set[str] = set()

    for i, param in enumerate(workflow.parameters):
        if param.name in extracted:
            issues.append(
                Issue(
                    "error",
                    f"step {extracted[param.name] + 1} stores a variable with the same name; "
                    "rename one of them",
                    field=f"parameters[{i}]",
                    parameter=param.name,
                )
            )

    if not workflow.name.strip():
        issues.append(Issue("error", "the workflow has no name", field="name"))
    for name in placeholders(workflow.intent_template or ""):
        used.add(name)
        if name not in params:
            issues.append(
                Issue(
                    "error",
                    f"{{{name}}} is not a parameter of this workflow",
                    field="intent_template",
                )
            )
        elif name in secrets:
            issues.append(
                Issue(
                    "error",
                    f"the secret {{{name}}} cannot be in the intent (it is shown and searched)",
                    field="intent_template",
                    parameter=name,
                )
            )

    step_issues: list[Issue] = []
    seen_ids: set[str] = set()
    available = set(params)
    for i, step in enumerate(workflow.steps):
        found = _step_issues(workflow, i, step, params, secrets, available, extracted, used)
        if step.id in seen_ids:
            found.append(Issue("error", "this step's id is used twice", step=i, field="id"))
        seen_ids.add(step.id)
        step_issues += found
        variable = _stored_variable(step)
        if variable is not None:
            available.add(variable)
    success_issues = _success_issues(workflow, available, secrets, used)

    for i, param in enumerate(workflow.parameters):
        if param.name not in used:
            issues.append(
                Issue(
                    "warning",
                    f"no step uses {{{param.name}}}; use it in a value or remove it",
                    field=f"parameters[{i}]",
                    parameter=param.name,
                )
            )
    issues += step_issues
    issues += success_issues

    if not any(issue.is_error for issue in issues):
        issues += _model_problems(workflow)
    return issues


def _step_issues(
    workflow: Workflow,
    i: int,
    step: Step,
    params: Mapping[str, Parameter],
    secrets: set[str],
    available: set[str],
    extracted: Mapping[str, int],
    used: set[str],
) -> list[Issue]:
    issues: list[Issue] = []
    covered: set[str] = set()

    def add(severity: Severity, message: str, field: str, parameter: str | None = None) -> None:
        issues.append(Issue(severity, message, step=i, field=field, parameter=parameter))
        covered.add(field)

    if not step.title.strip():
        add("error", "the step has no title; say what it does, e.g. “Click Save”", "title")
    for name in placeholders(step.title):
        if name not in params and name not in extracted:
            add("warning", f"the title mentions {{{name}}}, which is not a parameter", "title")

    target = step.target_or_none
    if step.kind in TARGETED_KINDS and (target is None or not target.locators):
        add("error", "no locator: add one so the step knows which element to use", "target")

    dumped = step.model_dump(mode="json")
    for path, text in _template_strings(dumped):
        for name in placeholders(text):
            used.add(name)
            if name in available:
                pass
            elif name in extracted:
                add(
                    "error",
                    f"{{{name}}} is stored only later, by step {extracted[name] + 1}",
                    path,
                    name,
                )
            else:
                add(
                    "error",
                    f"{{{name}}} is not a parameter nor a variable an earlier step stores; "
                    "add the parameter or fix the name",
                    path,
                    name,
                )
            if name in secrets and path not in _VALUE_FIELDS and not path.startswith("arguments"):
                add(
                    "warning",
                    f"the secret {{{name}}} is used in {path}, where it may show in the address "
                    "bar, logs or screenshots",
                    path,
                    name,
                )

    if isinstance(step, FillStep) and target is not None and target.is_sensitive:
        names = placeholders(step.value)
        single = len(names) == 1 and step.value == "{" + names[0] + "}"
        if not single:
            add(
                "error",
                "a password field is filled with a constant; use a secret parameter",
                "value",
            )
        elif names[0] in params and names[0] not in secrets:
            add(
                "error",
                f"a password field is filled with {{{names[0]}}}, which is not a secret; "
                "make that parameter a secret",
                "value",
                names[0],
            )
    if isinstance(step, CheckStep) and isinstance(step.checked, str):
        flag = params.get(placeholders(step.checked)[0])
        if flag is not None and flag.type is not ParameterType.BOOL:
            add("error", f"{step.checked} is not a true/false parameter", "checked", flag.name)

    for expectation_path, expectation in _expectations(step):
        if (
            isinstance(expectation, ElementVisible | ElementHidden)
            and not expectation.target.locators
        ):
            add("error", "the check has no locator for its element", expectation_path)

    try:
        type(step).model_validate(step.model_dump())
    except ValidationError as exc:
        for error in exc.errors():
            field = _field_path(error["loc"])
            if any(field == c or field.startswith(c + ".") for c in covered) or (
                field.startswith("target") and "target" in covered
            ):
                continue
            add("error", _friendly(field, error), field)
    return issues


def _success_issues(
    workflow: Workflow, available: set[str], secrets: set[str], used: set[str]
) -> list[Issue]:
    """The problems of the success check: unknown placeholders, an element without a locator,
    required text left empty; a secret in it is worth a warning."""
    issues: list[Issue] = []
    for k, check in enumerate(workflow.success):
        where = f"success[{k}]"
        covered: set[str] = set()
        for path, text in _template_strings(check.model_dump(mode="json"), where):
            for name in placeholders(text):
                used.add(name)
                if name not in available:
                    covered.add(path)
                    issues.append(
                        Issue(
                            "error",
                            f"{{{name}}} is not a parameter nor a variable a step stores; "
                            "add the parameter or fix the name",
                            field=path,
                        )
                    )
                elif name in secrets:
                    issues.append(
                        Issue(
                            "warning",
                            f"the secret {{{name}}} is used in the success check, where it may "
                            "show in logs or screenshots",
                            field=path,
                        )
                    )
        if isinstance(check, ElementVisible | ElementHidden) and not check.target.locators:
            issues.append(Issue("error", "the check has no locator for its element", field=where))
            continue
        try:
            type(check).model_validate(check.model_dump())
        except ValidationError as exc:
            for error in exc.errors():
                field = f"{where}.{_field_path(error['loc'])}"
                if field not in covered:
                    issues.append(Issue("error", _friendly(field, error), field=field))
    return issues


def _expectations(step: Step) -> Iterable[tuple[str, Expectation]]:
    for k, expectation in enumerate(step.expectations):
        yield f"expectations[{k}]", expectation
    if isinstance(step, WaitForStep | AssertStep):
        yield "condition", step.condition


#: Tags pydantic puts in an error's location for a discriminated union member.
_UNION_TAGS: Final = frozenset(
    {
        *INSERTABLE_KINDS,
        "call",
        "desktop_click",
        "desktop_type",
        "hotkey",
        "url",
        "title",
        "visible",
        "hidden",
        "text",
        "window_title",
        "image",
    }
)


def _field_path(loc: Sequence[int | str]) -> str:
    """A pydantic error location as a path, without the tags of discriminated unions."""
    path = ""
    for k, part in enumerate(loc):
        if isinstance(part, int):
            path += f"[{part}]"
            continue
        previous = loc[k - 1] if k else None
        after_union = isinstance(previous, int) or previous == "condition"
        if after_union and part in _UNION_TAGS and k + 1 < len(loc):
            continue
        path = f"{path}.{part}" if path else part
    return path


def _friendly(field: str, error: Mapping[str, Any]) -> str:
    leaf = field.rsplit(".", 1)[-1]
    if error["type"] in _SOFT_ERRORS:
        return {
            "url": "say which address to open",
            "key": "say which key to press",
            "instruction": "say what the assistant should do",
            "text": "say which text to look for",
            "pattern": "give the pattern to match",
        }.get(leaf, f"{leaf} is empty")
    return _error_text({**error, "loc": ()})


def _model_problems(workflow: Workflow) -> list[Issue]:
    """What the workflow model itself refuses, for anything the checks above did not name."""
    try:
        Workflow.model_validate(workflow.model_dump())
    except ValidationError as exc:
        first = exc.errors()[0]
        ctx = first.get("ctx") or {}
        nested = ctx.get("error")
        path = nested.path if isinstance(nested, DocumentPathError) else _field_path(first["loc"])
        match = re.match(r"steps\[(\d+)\]\.?(.*)$", path)
        if match:
            message = _error_text({**first, "loc": ()})
            return [Issue("error", message, int(match.group(1)), match.group(2))]
        return [Issue("error", _error_text({**first, "loc": ()}), field=path)]
    return []


def errors(workflow: Workflow) -> list[Issue]:
    """The problems of *workflow* that block saving."""
    return [issue for issue in validate(workflow) if issue.is_error]


def finalize(workflow: Workflow) -> Workflow:
    """*workflow* checked as a document, ready to save.

    Raises:
        EditError: it has errors; the message counts them and names the first.
    """
    blocking = errors(workflow)
    if blocking:
        more = len(blocking) - 1
        also = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        raise EditError(f"cannot save yet: {blocking[0]}{also}")
    try:
        return Workflow.model_validate(workflow.model_dump())
    except ValidationError as exc:  # validate() should have named it; never save it anyway
        raise EditError(f"cannot save yet: {_error_text(exc.errors()[0])}") from None
