"""One replay of a workflow version and how each of its steps went."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Final, Literal

from pydantic import AwareDatetime, Field, model_validator

from desktop_app.core.models.common import (
    SCHEMA_VERSION,
    FrozenModel,
    JsonScalar,
    MediaRef,
    new_id,
    utcnow,
)
from desktop_app.core.models.target import Locator, Target
from desktop_app.core.models.workflow import ParameterType, Workflow

__all__ = [
    "MASK",
    "RUN_STATUS_LABELS",
    "FailureKind",
    "Resolution",
    "Run",
    "RunStatus",
    "RunStep",
    "RunTrigger",
    "StepStatus",
    "TakenAction",
    "mask_parameters",
    "run_status_label",
]

#: What a secret parameter's value is replaced with in a run record.
MASK: Final = "••••••"


class RunStatus(StrEnum):
    """How a run ended (or that it is still going)."""

    RUNNING = "running"
    SUCCEEDED = "succeeded"
    UNVERIFIED = "unverified"
    """Every step was done (or skipped by a person), but nothing showed the task was done: the
    workflow has no success check, or a step was skipped. Shown as "done, unverified"."""
    FAILED = "failed"
    ABORTED = "aborted"
    INTERRUPTED = "interrupted"


#: How each run status reads to a person (never the raw value ``unverified``).
RUN_STATUS_LABELS: Final[dict[RunStatus, str]] = {
    RunStatus.RUNNING: "Running",
    RunStatus.SUCCEEDED: "Succeeded",
    RunStatus.UNVERIFIED: "Done, unverified",
    RunStatus.FAILED: "Failed",
    RunStatus.ABORTED: "Aborted",
    RunStatus.INTERRUPTED: "Interrupted",
}


def run_status_label(status: RunStatus) -> str:
    """How a run's *status* reads to a person: ``Done, unverified`` for ``unverified``."""
    return RUN_STATUS_LABELS[status]


class RunTrigger(StrEnum):
    """What started a run."""

    CLI = "cli"
    GUI = "gui"
    TRAY = "tray"
    BATCH = "batch"
    INTENT = "intent"
    SCHEDULE = "schedule"
    VERIFY = "verify"
    """A verification before approval (``workflows verify``): it stops before the first
    irreversible step unless told otherwise."""


class StepStatus(StrEnum):
    """How one step went."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    SKIPPED = "skipped"


class FailureKind(StrEnum):
    """Why a step failed, in the words a person fixing it needs."""

    ELEMENT_MISSING = "element_missing"
    """Nothing on the page was found to be the step's element."""
    AMBIGUOUS = "ambiguous"
    """Several elements could be the step's, and nothing told which: none was acted on."""
    VALUE_NOT_ACCEPTED = "value_not_accepted"
    """The field did not keep the value given (a list without that option, a field that
    rewrites or refuses what is typed)."""
    PAGE_ERROR = "page_error"
    """The page showed an error or a form's validation message after the step acted."""
    NOT_AS_EXPECTED = "not_as_expected"
    """The step acted, but the page did not become what the step (or the task) expects."""
    REFUSED = "refused"
    """Procedura would not do it: outside the workflow's domains, a commitment the step does
    not make, an irreversible step nobody confirmed, a question the recording never
    answered."""

    @property
    def words(self) -> str:
        """The kind in a few words: ``element missing``."""
        return _FAILURE_WORDS[self]


_FAILURE_WORDS: Final = {
    FailureKind.ELEMENT_MISSING: "element missing",
    FailureKind.AMBIGUOUS: "ambiguous: several elements could be it",
    FailureKind.VALUE_NOT_ACCEPTED: "value not accepted",
    FailureKind.PAGE_ERROR: "the page showed an error",
    FailureKind.NOT_AS_EXPECTED: "the page is not as expected",
    FailureKind.REFUSED: "refused",
}


class Resolution(StrEnum):
    """Which rung of the healing ladder found the step's element."""

    DIRECT = "direct"
    ALTERNATE = "alternate"
    FINGERPRINT = "fingerprint"
    EXPERIENCE = "experience"
    LLM = "llm"
    PERSON = "person"
    NOT_NEEDED = "not_needed"

    @property
    def is_heal(self) -> bool:
        """Whether the step was healed: its element was found by anything but its first
        recorded locator (the page had drifted)."""
        return self not in (Resolution.DIRECT, Resolution.NOT_NEEDED)


class TakenAction(FrozenModel):
    """One action an agent step took, as a recorded step would do it again.

    ``value`` is a template: the run's values (secrets included) are put back as their
    ``{placeholders}``, so no secret is stored and the next run types its own values.
    ``target`` is the element as the page described it just before the action (None for a key
    pressed on the page); its locators never pin one record or position.
    """

    action: Literal["click", "fill", "select", "check", "uncheck", "press"]
    target: Target | None = None
    value: str = ""
    key: str = ""
    label: str = ""
    commits: bool = False
    """The action set off something that commits (it was confirmed by a person or ``--yes``)."""


class RunStep(FrozenModel):
    """The outcome of one step of a run."""

    index: int = Field(ge=0)
    step_id: str
    title: str
    status: StepStatus
    resolution: Resolution | None = None
    locator: Locator | None = None
    started_at: AwareDatetime
    duration_ms: float = Field(ge=0)
    #: Of the duration, the time spent waiting for the app: a page just loaded coming to
    #: rest before the first action, a reaction to the action, the page catching up before
    #: an ignored action was done once more.
    waited_ms: float = Field(default=0, ge=0)
    llm_calls: int = Field(default=0, ge=0)
    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    screenshot: MediaRef | None = None
    error: str | None = None
    detail: str | None = None
    failure: FailureKind | None = None
    """Why the step failed (set for failed steps where it is known)."""
    page_messages: tuple[str, ...] = ()
    """What the page said when the step failed: its errors and forms' validation messages
    (secrets masked)."""
    nearest: tuple[str, ...] = ()
    """When the element was not found or not told apart: the page's elements most like the
    recorded one, best first, each with how alike it is (0–1)."""
    actions: tuple[TakenAction, ...] = ()
    """An agent step's actions, in order (online induction turns them into recorded steps)."""
    depth: int = Field(default=0, ge=0)
    """How deep the step shows under the blocks and calls it is in (0: a step of the workflow
    itself; 1: inside an ``if``, a ``try``, a call, or a loop's round record; 2: a step of
    that round…)."""
    iteration: int | None = Field(default=None, ge=1)
    """The round of the innermost loop the step was done in (1 for the first item)."""
    branch: Literal["steps", "otherwise"] | None = None
    """Which way the innermost ``if`` or ``try`` went: its steps, or ``otherwise``; on the
    block's own record, the way it took."""

    @property
    def top_level(self) -> bool:
        """Whether this is the record of one of the workflow's own steps (a block's included),
        not of a step inside a call, a block or a loop's round."""
        return "/" not in self.step_id and "#" not in self.step_id


class Run(FrozenModel):
    """A replay: which version, with which (masked) parameters, and how each step went."""

    schema_version: Literal[1] = SCHEMA_VERSION
    document: Literal["run"] = "run"
    id: str = Field(default_factory=new_id)
    workflow_id: str
    workflow_version: int = Field(ge=1)
    status: RunStatus = RunStatus.RUNNING
    trigger: RunTrigger = RunTrigger.CLI
    parameters: dict[str, JsonScalar] = Field(default_factory=dict)
    secret_parameters: tuple[str, ...] = ()
    started_at: AwareDatetime = Field(default_factory=utcnow)
    finished_at: AwareDatetime | None = None
    steps: tuple[RunStep, ...] = ()
    error: str | None = None
    proposed_version: int | None = Field(default=None, ge=1)
    #: The time spent after the last step waiting for the app to finish (requests, a
    #: debounced save) before the outcome was checked and the browser closed.
    closing_wait_ms: float = Field(default=0, ge=0)

    @property
    def healed(self) -> tuple[RunStep, ...]:
        """The steps that healed (:attr:`Resolution.is_heal`), in order."""
        return tuple(s for s in self.steps if s.resolution is not None and s.resolution.is_heal)

    @property
    def first_failure(self) -> RunStep | None:
        """The first step that failed (the success check counts as the last step), or None."""
        return next((s for s in self.steps if s.status is StepStatus.FAILED), None)

    @property
    def llm_calls(self) -> int:
        """LLM calls over all steps."""
        return sum(s.llm_calls for s in self.steps)

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens over all steps."""
        return sum(s.prompt_tokens + s.completion_tokens for s in self.steps)

    @model_validator(mode="after")
    def _secrets_masked(self) -> Run:
        for name in self.secret_parameters:
            if self.parameters.get(name, MASK) != MASK:
                raise ValueError(f"secret parameter {name!r} is not masked in the run record")
        return self


def mask_parameters(workflow: Workflow, values: Mapping[str, JsonScalar]) -> dict[str, JsonScalar]:
    """*values* with every secret parameter's value replaced by :data:`MASK`."""
    secret = {p.name for p in workflow.parameters if p.type is ParameterType.SECRET}
    return {k: (MASK if k in secret else v) for k, v in values.items()}
