"""Checking a draft: every problem where it is, and the workflow to save once none blocks it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

from pydantic import ValidationError

from desktop_app.core.editing.block_checks import block_problems
from desktop_app.core.editing.common import (
    _SOFT_ERRORS,
    TARGETED_KINDS,
    EditError,
    _error_text,
    _extracted,
    _loop_names,
    _stored_variable,
    _template_strings,
)
from desktop_app.core.editing.paths import StepPath, path_label
from desktop_app.core.models.common import DocumentPathError
from desktop_app.core.models.workflow import (
    MAX_DEPTH,
    AssertStep,
    CheckStep,
    Condition,
    ElementHidden,
    ElementVisible,
    Expectation,
    FillStep,
    ForEachStep,
    ItemSource,
    Parameter,
    ParameterType,
    Step,
    WaitForStep,
    Workflow,
    branches,
    item_variables,
)
from desktop_app.core.step_kinds import KINDS
from desktop_app.core.templating import placeholders

__all__ = [
    "Issue",
    "Severity",
    "errors",
    "finalize",
    "validate",
]

Severity = Literal["error", "warning"]


#: The fields of a block that hold its steps.
_BODY_FIELDS: Final = frozenset({"steps", "otherwise"})
#: Step fields whose value is typed into the page, where a secret belongs.
_VALUE_FIELDS: Final = frozenset({"value", "text"})


@dataclass(frozen=True, slots=True)
class Issue:
    """A problem in a draft, where it is.

    Attributes:
        severity: ``error`` blocks saving; ``warning`` is worth a look but does not.
        message: what is wrong and what to do, in one line.
        step: the index (from 0) of the top-level step the problem is in (the step itself, or
            the block holding it), or None for the workflow or a parameter.
        field: where inside the step (``value``, ``target``, ``expectations[0].text``) or the
            workflow (``intent_template``, ``parameters[2]``); "" for the whole step.
        parameter: the parameter the problem is about, if any.
        path: where the step is, however deep in blocks (``(3, "steps", 0)``); None when the
            problem is not about a step, or only *step* was given.
    """

    severity: Severity
    message: str
    step: int | None = None
    field: str = ""
    parameter: str | None = None
    path: StepPath | None = None

    @property
    def step_path(self) -> StepPath | None:
        """Where the step the problem is about is (its path), if it is about one."""
        if self.path is not None:
            return self.path
        return (self.step,) if self.step is not None else None

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
        path = self.step_path
        if path is not None:
            return f"Step {path_label(path)}" + (f" · {self.field}" if self.field else "")
        if self.parameter is not None:
            return f"Parameter {self.parameter}"
        return "Workflow" + (f" · {self.field}" if self.field else "")

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


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
                    f"step {path_label(extracted[param.name])} stores a variable with the same "
                    "name; rename one of them",
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

    checker = _Steps(workflow, params, secrets, extracted, used)
    available = set(params)
    checker.steps(workflow.steps, (), available, 0)
    step_issues = checker.issues
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


class _Steps:
    """Checks steps through every block, each with the names known where it is (a loop's
    item inside the loop only; what a branch stores, after the block too)."""

    def __init__(
        self,
        workflow: Workflow,
        params: Mapping[str, Parameter],
        secrets: set[str],
        extracted: Mapping[str, StepPath],
        used: set[str],
    ) -> None:
        self.workflow = workflow
        self.params = params
        self.secrets = secrets
        self.extracted = extracted
        self.used = used
        self.loops = _loop_names(workflow)
        self.seen_ids: set[str] = set()
        self.issues: list[Issue] = []

    def steps(
        self, steps: tuple[Step, ...], prefix: StepPath, available: set[str], depth: int
    ) -> None:
        """Check *steps* (the list at *prefix*); the names they store join *available*."""
        for i, step in enumerate(steps):
            path = (*prefix, i)
            found = _step_issues(self, path, step, available)
            if step.id in self.seen_ids:
                found.append(_issue("error", "this step's id is used twice", path, "id"))
            self.seen_ids.add(step.id)
            held = branches(step)
            if held and depth >= MAX_DEPTH:
                found.append(
                    _issue(
                        "error",
                        f"blocks nest more than {MAX_DEPTH} deep here; take this block out of "
                        "the one holding it",
                        path,
                        "",
                    )
                )
            self.issues += found
            variable = _stored_variable(step)
            if variable is not None:
                available.add(variable)
            inner = set(available)
            if isinstance(step, ForEachStep):
                inner.update(item_variables(step))
            for name, body in held:
                scope = set(inner)
                self.steps(body, (*path, name), scope, depth + 1)
                available.update(scope - inner)


def _issue(
    severity: Severity, message: str, path: StepPath, field: str, parameter: str | None = None
) -> Issue:
    top = path[0]
    assert isinstance(top, int)
    return Issue(severity, message, step=top, field=field, parameter=parameter, path=path)


def _step_issues(checker: _Steps, path: StepPath, step: Step, available: set[str]) -> list[Issue]:
    params, secrets, extracted, used = (
        checker.params,
        checker.secrets,
        checker.extracted,
        checker.used,
    )
    issues: list[Issue] = []
    covered: set[str] = set()

    def add(severity: Severity, message: str, field: str, parameter: str | None = None) -> None:
        issues.append(_issue(severity, message, path, field, parameter))
        covered.add(field)

    if not step.title.strip():
        add("error", "the step has no title; say what it does, e.g. “Click Save”", "title")
    for name in placeholders(step.title):
        if name not in params and name not in extracted and name not in available:
            add("warning", f"the title mentions {{{name}}}, which is not a parameter", "title")

    target = step.target_or_none
    if step.kind in TARGETED_KINDS and (target is None or not target.locators):
        add("error", "no locator: add one so the step knows which element to use", "target")

    dumped = step.model_dump(mode="json")
    for field, text in _template_strings(dumped):
        for name in placeholders(text):
            used.add(name)
            if name in available:
                pass
            elif name in checker.loops:
                _loop_path, loop = checker.loops[name]
                add(
                    "error",
                    f"{{{name}}} is only known inside '{loop.title}'; use it in a step inside "
                    "that loop",
                    field,
                    name,
                )
            elif name in extracted:
                add(
                    "error",
                    f"{{{name}}} is stored only later, by step {path_label(extracted[name])}",
                    field,
                    name,
                )
            else:
                add(
                    "error",
                    f"{{{name}}} is not a parameter nor a variable an earlier step stores; "
                    "add the parameter or fix the name",
                    field,
                    name,
                )
            if name in secrets and field not in _VALUE_FIELDS and not field.startswith("arguments"):
                add(
                    "warning",
                    f"the secret {{{name}}} is used in {field}, where it may show in the address "
                    "bar, logs or screenshots",
                    field,
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

    for severity, message, field in block_problems(step, available, params, secrets):
        add(severity, message, field)

    try:
        type(step).model_validate(step.model_dump())
    except ValidationError as exc:
        for error in exc.errors():
            field = _field_path(error["loc"])
            if any(field == c or field.startswith(c + ".") for c in covered) or (
                field.startswith("target") and "target" in covered
            ):
                continue
            if field.split("[", 1)[0].split(".", 1)[0] in _BODY_FIELDS:
                continue  # the steps a block holds are checked one by one, where they are
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


def _expectations(step: Step) -> Iterable[tuple[str, Expectation | Condition]]:
    for k, expectation in enumerate(step.expectations):
        yield f"expectations[{k}]", expectation
    if isinstance(step, WaitForStep | AssertStep):
        yield "condition", step.condition


#: Tags pydantic puts in an error's location for a discriminated union member: the kinds of
#: step and of expectation.
_UNION_TAGS: Final = frozenset(
    {
        *KINDS,
        *(member.model_fields["kind"].default for member in get_args(get_args(Condition)[0])),
        *(member.model_fields["kind"].default for member in get_args(get_args(ItemSource)[0])),
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
        after_union = isinstance(previous, int) or previous in ("condition", "over")
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
        match = re.match(r"steps\[(\d+)\]((?:\.(?:steps|otherwise)\[\d+\])*)\.?(.*)$", path)
        if match:
            message = _error_text({**first, "loc": ()})
            inner = re.findall(r"\.(steps|otherwise)\[(\d+)\]", match.group(2))
            where: StepPath = (int(match.group(1)),)
            for name, index in inner:
                where = (*where, name, int(index))
            return [_issue("error", message, where, match.group(3))]
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
