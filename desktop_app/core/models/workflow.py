"""What should be done: a parameterized, versioned procedure and its review status."""

from __future__ import annotations

from collections.abc import Iterator
from enum import StrEnum
from typing import Annotated, Any, Final, Literal

from pydantic import AwareDatetime, Field, field_validator, model_validator

from desktop_app.core.models.blocks import (
    BLOCK_KINDS,
    MAX_DEPTH,
    Block,
    CsvRows,
    ForEachStep,
    IfStep,
    ItemSource,
    ListItems,
    PageItems,
    RepeatUntilStep,
    TryStep,
    branches,
    item_variables,
    map_steps,
    walk,
)
from desktop_app.core.models.common import (
    ID_PATTERN,
    WORKFLOW_SCHEMA_VERSION,
    DocumentPathError,
    FrozenModel,
    Identifier,
    JsonScalar,
    Point,
    new_id,
    utcnow,
)
from desktop_app.core.models.conditions import (
    COMPARISONS,
    Condition,
    ElementHidden,
    ElementPresent,
    ElementVisible,
    Expectation,
    ImageVisible,
    TextPresent,
    TitleMatches,
    UrlMatches,
    ValueCompare,
    WindowTitleMatches,
)
from desktop_app.core.models.step_base import DEFAULT_TIMEOUT_S, StepBase
from desktop_app.core.models.target import Target
from desktop_app.core.templating import placeholders

__all__ = [
    "ALLOWED_TRANSITIONS",
    "BLOCK_KINDS",
    "COMPARISONS",
    "DEFAULT_TIMEOUT_S",
    "MAX_DEPTH",
    "NON_TEMPLATE_FIELDS",
    "STATUS_LABELS",
    "AgentStep",
    "AssertStep",
    "Block",
    "CallStep",
    "CheckStep",
    "ClickStep",
    "Condition",
    "CsvRows",
    "DesktopClickStep",
    "DesktopTypeStep",
    "ElementHidden",
    "ElementPresent",
    "ElementVisible",
    "Expectation",
    "ExtractStep",
    "FillStep",
    "ForEachStep",
    "GotoStep",
    "HotkeyStep",
    "IfStep",
    "ImageVisible",
    "ItemSource",
    "ListItems",
    "PageItems",
    "Parameter",
    "ParameterType",
    "PressStep",
    "RepeatUntilStep",
    "ScrollStep",
    "SelectStep",
    "StatusTransition",
    "Step",
    "StepKind",
    "TextPresent",
    "TitleMatches",
    "TryStep",
    "UrlMatches",
    "ValueCompare",
    "WaitForStep",
    "WindowTitleMatches",
    "Workflow",
    "WorkflowStatus",
    "WorkflowVersion",
    "branches",
    "item_variables",
    "map_steps",
    "status_label",
    "upgraded",
    "walk",
]


# ── parameters ──────────────────────────────────────────────────────────────────────────────


class ParameterType(StrEnum):
    """The type of a workflow parameter."""

    TEXT = "text"
    NUMBER = "number"
    DATE = "date"
    EMAIL = "email"
    CHOICE = "choice"
    BOOL = "bool"
    SECRET = "secret"
    LIST = "list"
    """Several values, one per line (what a ``for_each`` goes over)."""


class Parameter(FrozenModel):
    """A value the workflow asks for each time it runs."""

    name: Identifier
    type: ParameterType = ParameterType.TEXT
    description: str = ""
    default: JsonScalar = None
    choices: tuple[str, ...] = ()
    required: bool = True

    @model_validator(mode="after")
    def _consistent(self) -> Parameter:
        if self.type is ParameterType.SECRET and self.default is not None:
            raise ValueError(
                "a secret parameter cannot have a default: secrets live in the keyring "
                "or are asked for at run time"
            )
        if self.type is ParameterType.CHOICE:
            if not self.choices:
                raise ValueError("a choice parameter needs at least one choice")
            if self.default is not None and str(self.default) not in self.choices:
                raise ValueError(f"default {self.default!r} is not one of the choices")
        elif self.choices:
            raise ValueError("only a choice parameter has choices")
        if self.default is not None:
            if self.type is ParameterType.BOOL and not isinstance(self.default, bool):
                raise ValueError("a bool parameter's default must be true or false")
            if self.type is ParameterType.NUMBER and (
                isinstance(self.default, bool) or not isinstance(self.default, int | float)
            ):
                raise ValueError("a number parameter's default must be a number")
        return self


# ── steps ───────────────────────────────────────────────────────────────────────────────────

StepKind = Literal[
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
    "call",
    "agent",
    "desktop_click",
    "desktop_type",
    "hotkey",
    "if",
    "for_each",
    "repeat_until",
    "try",
]


class GotoStep(StepBase):
    """Open a URL."""

    kind: Literal["goto"] = "goto"
    url: str = Field(min_length=1)


class ClickStep(StepBase):
    """Click an element."""

    kind: Literal["click"] = "click"
    target: Target
    button: Literal["left", "right", "middle"] = "left"
    click_count: int = Field(default=1, ge=1, le=3)
    modifiers: tuple[Literal["Alt", "Control", "Meta", "Shift"], ...] = ()


class FillStep(StepBase):
    """Type a value into a field, replacing what is there."""

    kind: Literal["fill"] = "fill"
    target: Target
    value: str


class SelectStep(StepBase):
    """Choose an option (by label or value) in a select."""

    kind: Literal["select"] = "select"
    target: Target
    value: str


class CheckStep(StepBase):
    """Check or uncheck a checkbox or radio button.

    ``checked`` is true or false, or a ``{placeholder}`` of a bool parameter.
    """

    kind: Literal["check"] = "check"
    target: Target
    checked: bool | str = True

    @field_validator("checked", mode="before")
    @classmethod
    def _bool_or_placeholder(cls, value: object) -> object:
        if isinstance(value, str):
            if value.strip().lower() in {"true", "false"}:
                return value.strip().lower() == "true"
            names = placeholders(value)
            if len(names) != 1 or value != "{" + names[0] + "}":
                raise ValueError("checked is true, false or one {bool_parameter}")
        return value


class PressStep(StepBase):
    """Press a key or chord (``Enter``, ``Control+S``), on an element or the page."""

    kind: Literal["press"] = "press"
    target: Target | None = None
    key: str = Field(min_length=1)


class ScrollStep(StepBase):
    """Scroll the page or an element."""

    kind: Literal["scroll"] = "scroll"
    target: Target | None = None
    dx: float = 0
    dy: float = 0


class WaitForStep(StepBase):
    """Wait until a condition holds."""

    kind: Literal["wait_for"] = "wait_for"
    condition: Condition


class AssertStep(StepBase):
    """Fail the run unless a condition holds."""

    kind: Literal["assert"] = "assert"
    condition: Condition


class ExtractStep(StepBase):
    """Read a value from the page into a variable later steps use as ``{variable}``."""

    kind: Literal["extract"] = "extract"
    target: Target
    variable: Identifier
    attribute: str | None = None
    pattern: str | None = None


class CallStep(StepBase):
    """Run another workflow with mapped arguments."""

    kind: Literal["call"] = "call"
    workflow_id: str = Field(min_length=1)
    version: int | None = Field(default=None, ge=1)
    arguments: dict[str, str] = Field(default_factory=dict)


class AgentStep(StepBase):
    """An open-ended step an LLM performs, e.g. "pick the cheapest result"."""

    kind: Literal["agent"] = "agent"
    instruction: str = Field(min_length=1)
    max_actions: int = Field(default=10, ge=1, le=100)
    output_variable: Identifier | None = None


class DesktopClickStep(StepBase):
    """Click in a desktop window, found by title; the point is relative to the window."""

    kind: Literal["desktop_click"] = "desktop_click"
    window_title: str | None = None
    app: str | None = None
    point: Point | None = None
    target: Target | None = None
    button: Literal["left", "right", "middle"] = "left"
    click_count: int = Field(default=1, ge=1, le=3)


class DesktopTypeStep(StepBase):
    """Type text into a desktop window: into its element *target* when the step has one (the
    field typed into when recorded, found by accessibility and focused first), else wherever
    the window's keyboard focus is."""

    kind: Literal["desktop_type"] = "desktop_type"
    window_title: str | None = None
    text: str
    target: Target | None = None


class HotkeyStep(StepBase):
    """Press a key combination on the desktop, e.g. ``["ctrl", "s"]``."""

    kind: Literal["hotkey"] = "hotkey"
    window_title: str | None = None
    keys: tuple[str, ...] = Field(min_length=1)


Step = Annotated[
    GotoStep
    | ClickStep
    | FillStep
    | SelectStep
    | CheckStep
    | PressStep
    | ScrollStep
    | WaitForStep
    | AssertStep
    | ExtractStep
    | CallStep
    | AgentStep
    | DesktopClickStep
    | DesktopTypeStep
    | HotkeyStep
    | IfStep
    | ForEachStep
    | RepeatUntilStep
    | TryStep,
    Field(discriminator="kind"),
]

for _block in (IfStep, ForEachStep, RepeatUntilStep, TryStep):
    _block.model_rebuild(_types_namespace={"Step": Step})


# ── the workflow document ───────────────────────────────────────────────────────────────────


def upgraded(data: Any) -> Any:
    """A version 1 workflow document (or saved version) as version 2: the same document, since
    version 2 only added (blocks, conditions, list parameters)."""
    if isinstance(data, dict) and data.get("schema_version") == 1:
        return {**data, "schema_version": WORKFLOW_SCHEMA_VERSION}
    return data


#: Fields of a dumped step whose strings are data about the recording, not rendered templates.
NON_TEMPLATE_FIELDS: Final = frozenset(
    {
        "id",
        "kind",
        "title",
        "screenshot",
        "fingerprint",
        "workflow_id",
        "variable",
        "output_variable",
        "item",
        "fields",
        "column",
        "confirm",
    }
)
#: Fields of a dumped block that hold its steps (checked, and rendered, one step at a time).
BODY_FIELDS: Final = frozenset({"steps", "otherwise"})


def _template_strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """Every string inside a dumped step that gets rendered at run time, with its JSON path."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in NON_TEMPLATE_FIELDS and key not in BODY_FIELDS:
                yield from _template_strings(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _template_strings(item, f"{path}[{i}]")


class Workflow(FrozenModel):
    """One version of a workflow's content. Immutable once saved: a change is a new version."""

    schema_version: Literal[2] = WORKFLOW_SCHEMA_VERSION
    document: Literal["workflow"] = "workflow"
    # The pattern is checked where documents come in (core.documents), not here: a library
    # written before it was checked still opens.
    id: str = Field(
        default_factory=new_id,
        min_length=1,
        max_length=64,
        json_schema_extra={"pattern": ID_PATTERN},
    )
    version: int = Field(default=1, ge=1)
    name: str = Field(min_length=1, max_length=200)
    description: str = ""
    domains: tuple[str, ...] = ()
    parameters: tuple[Parameter, ...] = ()
    intent_template: str | None = None
    steps: tuple[Step, ...] = ()
    success: tuple[Expectation, ...] = ()
    """What shows the task was done, checked once the last step is done and the page has
    settled. A run succeeds only when this holds; without it a run that did every step ends
    "done, unverified"."""
    source_trajectories: tuple[str, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        return upgraded(data)

    def parameter(self, name: str) -> Parameter | None:
        """The parameter called *name*, if any."""
        return next((p for p in self.parameters if p.name == name), None)

    @model_validator(mode="after")
    def _references(self) -> Workflow:
        seen_params: set[str] = set()
        for i, param in enumerate(self.parameters):
            if param.name in seen_params:
                raise DocumentPathError(
                    f"parameters[{i}].name", f"parameter {param.name!r} is defined twice"
                )
            seen_params.add(param.name)
        secrets = {p.name for p in self.parameters if p.type is ParameterType.SECRET}

        if self.intent_template is not None:
            for name in placeholders(self.intent_template):
                if name not in seen_params:
                    raise DocumentPathError(
                        "intent_template", f"{{{name}}} is not a parameter of this workflow"
                    )
                if name in secrets:
                    raise DocumentPathError(
                        "intent_template", f"secret parameter {{{name}}} cannot be in the intent"
                    )

        variables = set(seen_params)
        for step in walk(self.steps):
            variables.update(_sets(step))
        for i, check in enumerate(self.success):
            for path, text in _template_strings(check.model_dump(mode="json"), f"success[{i}]"):
                for name in placeholders(text):
                    if name not in variables:
                        raise DocumentPathError(
                            path,
                            f"{{{name}}} is not a parameter of this workflow "
                            "nor a variable a step extracts",
                        )
        _Checker(self, secrets).steps(self.steps, "steps", set(seen_params), 0)
        return self


def _sets(step: Step) -> tuple[str, ...]:
    """The variables *step* itself sets for the steps after it."""
    if isinstance(step, ExtractStep):
        return (step.variable,)
    if isinstance(step, AgentStep) and step.output_variable is not None:
        return (step.output_variable,)
    return ()


class _Checker:
    """The rules a workflow's steps keep, checked through every block: ids used once, every
    placeholder a parameter or a variable set before it (a loop's item inside the loop), no
    password typed as a constant."""

    def __init__(self, workflow: Workflow, secrets: set[str]) -> None:
        self._workflow = workflow
        self._secrets = secrets
        self._ids: set[str] = set()

    def steps(self, steps: tuple[Step, ...], where: str, known: set[str], depth: int) -> None:
        """Check *steps* (at *where*, e.g. ``steps[2].otherwise``) with the names *known*
        before them; the names they set are added to *known*."""
        if depth > MAX_DEPTH:
            raise DocumentPathError(where, f"blocks nest more than {MAX_DEPTH} deep")
        for i, step in enumerate(steps):
            self.step(step, f"{where}[{i}]", known, depth)

    def step(self, step: Step, at: str, known: set[str], depth: int) -> None:
        if step.id in self._ids:
            raise DocumentPathError(f"{at}.id", f"step id {step.id!r} is used twice")
        self._ids.add(step.id)
        for path, text in _template_strings(step.model_dump(mode="json"), at):
            for name in placeholders(text):
                if name not in known:
                    raise DocumentPathError(
                        path,
                        f"{{{name}}} is not a parameter of this workflow "
                        "nor a variable an earlier step extracts",
                    )
        if (
            isinstance(step, FillStep)
            and step.target.is_sensitive
            and step.value != ""
            and not (
                len(names := placeholders(step.value)) == 1
                and step.value == f"{{{names[0]}}}"
                and names[0] in self._secrets
            )
        ):
            raise DocumentPathError(
                f"{at}.value", "a password field is filled with a constant; use a secret parameter"
            )
        if isinstance(step, CheckStep) and isinstance(step.checked, str):
            flag = self._workflow.parameter(placeholders(step.checked)[0])
            if flag is not None and flag.type is not ParameterType.BOOL:
                raise DocumentPathError(f"{at}.checked", f"{step.checked} is not a bool parameter")
        known.update(_sets(step))
        self.block(step, at, known, depth)

    def block(self, step: Step, at: str, known: set[str], depth: int) -> None:
        if isinstance(step, IfStep) and not step.steps and not step.otherwise:
            raise DocumentPathError(f"{at}.steps", "an if does something when it holds or not")
        inner = set(known)
        if isinstance(step, ForEachStep):
            if (
                isinstance(step.over, ListItems)
                and set(placeholders(step.over.value)) & self._secrets
            ):
                raise DocumentPathError(
                    f"{at}.over.value", "a loop cannot go over a secret: its items would show"
                )
            names = item_variables(step)
            clash = next((n for n in names if n in known), None)
            if clash is not None:
                raise DocumentPathError(
                    f"{at}.item", f"{{{clash}}} is already a parameter or a variable"
                )
            if len(set(names)) != len(names):
                raise DocumentPathError(f"{at}.over.fields", "a field has the item's name")
            inner.update(names)
        for name, body in branches(step):
            scope = set(inner)
            self.steps(body, f"{at}.{name}", scope, depth + 1)
            # What a branch extracts is known after the block (it is empty when the branch
            # was not taken; a step using it then fails, saying which variable has no value).
            known.update(scope - inner)


# ── versions and review ─────────────────────────────────────────────────────────────────────


class WorkflowStatus(StrEnum):
    """Where a version stands in review. Only an approved version runs from the tray."""

    DRAFT = "draft"
    IN_REVIEW = "in_review"
    APPROVED = "approved"
    ARCHIVED = "archived"


#: How each status reads to a person (never the raw value ``in_review``).
STATUS_LABELS: Final[dict[WorkflowStatus, str]] = {
    WorkflowStatus.DRAFT: "Draft",
    WorkflowStatus.IN_REVIEW: "In review",
    WorkflowStatus.APPROVED: "Approved",
    WorkflowStatus.ARCHIVED: "Archived",
}


def status_label(status: WorkflowStatus | str) -> str:
    """How *status* reads to a person: ``In review`` for ``in_review``; everywhere a status is
    shown (the Library, Review, Runs, the tray, the command line's tables)."""
    try:
        return STATUS_LABELS[WorkflowStatus(status)]
    except ValueError:
        return str(status).replace("_", " ").capitalize()


#: The status changes review allows: from → the statuses it may go to.
ALLOWED_TRANSITIONS: Final[dict[WorkflowStatus, frozenset[WorkflowStatus]]] = {
    WorkflowStatus.DRAFT: frozenset(
        {WorkflowStatus.IN_REVIEW, WorkflowStatus.APPROVED, WorkflowStatus.ARCHIVED}
    ),
    WorkflowStatus.IN_REVIEW: frozenset(
        {WorkflowStatus.DRAFT, WorkflowStatus.APPROVED, WorkflowStatus.ARCHIVED}
    ),
    WorkflowStatus.APPROVED: frozenset({WorkflowStatus.ARCHIVED}),
    WorkflowStatus.ARCHIVED: frozenset({WorkflowStatus.DRAFT}),
}


class StatusTransition(FrozenModel):
    """One status change: who, when, from what to what, and why."""

    from_status: WorkflowStatus | None
    to_status: WorkflowStatus
    actor: str = Field(min_length=1)
    at: AwareDatetime = Field(default_factory=utcnow)
    comment: str = ""


class WorkflowVersion(FrozenModel):
    """A saved version: the immutable content plus its review state and history."""

    schema_version: Literal[2] = WORKFLOW_SCHEMA_VERSION
    workflow: Workflow

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        return upgraded(data)

    status: WorkflowStatus = WorkflowStatus.DRAFT
    created_at: AwareDatetime = Field(default_factory=utcnow)
    created_by: str = Field(min_length=1)
    parent_version: int | None = Field(default=None, ge=1)
    change_note: str = ""
    transitions: tuple[StatusTransition, ...] = ()

    @property
    def workflow_id(self) -> str:
        """The id of the workflow this is a version of."""
        return self.workflow.id

    @property
    def version(self) -> int:
        """The version number."""
        return self.workflow.version
