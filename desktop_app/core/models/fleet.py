"""The runner fleet's work: jobs (a batch, a run by intent, a schedule's firing) of rows, each
row one run that some worker of the team does, and the schedules that make jobs.

Delivery through the queue is at least once, so a row can reach a worker twice. What keeps that
safe is in the row: a worker *claims* it (one at a time, for a lease it renews while it runs),
and notes an irreversible step *before* doing it. A row whose worker vanished is taken again
when its lease runs out; if its note says an irreversible step was begun, it is not run again
but marked :attr:`RowState.NEEDS_ATTENTION`: a person looks at the application first.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from pydantic import AwareDatetime, Field

from desktop_app.core.models.common import FrozenModel, JsonScalar, new_id, utcnow

__all__ = [
    "FINISHED_STATES",
    "ROW_STATE_LABELS",
    "STATE_ORDER",
    "FleetJob",
    "FleetRow",
    "JobKind",
    "RowState",
    "Schedule",
]


class JobKind(StrEnum):
    """What made a job."""

    BATCH = "batch"  # the rows of a CSV file
    INTENT = "intent"  # "do this" in words, bound to a workflow and its values
    SCHEDULE = "schedule"  # a schedule fired


class RowState(StrEnum):
    """Where a row of a job stands."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    UNVERIFIED = "unverified"
    FAILED = "failed"
    NEEDS_ATTENTION = "needs_attention"
    CANCELLED = "cancelled"


#: States a row does not leave by itself.
FINISHED_STATES: Final = frozenset(
    {
        RowState.SUCCEEDED,
        RowState.UNVERIFIED,
        RowState.FAILED,
        RowState.NEEDS_ATTENTION,
        RowState.CANCELLED,
    }
)

#: The order states are told in: what needs a person first, then what is under way.
STATE_ORDER: Final = (
    RowState.NEEDS_ATTENTION,
    RowState.RUNNING,
    RowState.QUEUED,
    RowState.SUCCEEDED,
    RowState.UNVERIFIED,
    RowState.FAILED,
    RowState.CANCELLED,
)

#: How each state reads to a person.
ROW_STATE_LABELS: Final[dict[RowState, str]] = {
    RowState.QUEUED: "Queued",
    RowState.RUNNING: "Running",
    RowState.SUCCEEDED: "Succeeded",
    RowState.UNVERIFIED: "Done, unverified",
    RowState.FAILED: "Failed",
    RowState.NEEDS_ATTENTION: "Needs attention",
    RowState.CANCELLED: "Cancelled",
}


class FleetJob(FrozenModel):
    """Runs of one approved workflow version, handed to the fleet."""

    id: str = Field(default_factory=new_id)
    kind: JobKind
    workflow_id: str
    version: int
    name: str = ""  # the workflow's name when submitted, for lists
    created_by: str
    created_at: AwareDatetime = Field(default_factory=utcnow)
    #: Irreversible steps are done without asking (nobody attends a fleet's runs).
    assume_yes: bool = False
    cancel_requested: bool = False
    schedule_id: str | None = None
    total: int = 0
    #: How many rows are in each state (filled when read).
    counts: dict[RowState, int] = Field(default_factory=dict)

    @property
    def finished(self) -> bool:
        """Whether no row is queued or running."""
        return not any(self.counts.get(s, 0) for s in (RowState.QUEUED, RowState.RUNNING))

    @property
    def cancellable(self) -> bool:
        """Whether Cancel has anything to stop: a row queued or running (the Fleet screen's
        and the tray's Cancel are enabled by it)."""
        return not self.finished

    @property
    def resumable(self) -> bool:
        """Whether Resume may queue rows again: some are cancelled or failed (the Fleet
        screen's and the tray's Resume are enabled by it). The counts do not tell a failed row
        that began an irreversible step from one that did not: Resume leaves the first as it
        is, and may then queue nothing."""
        return bool(self.counts.get(RowState.CANCELLED) or self.counts.get(RowState.FAILED))

    @property
    def ended(self) -> int:
        """How many rows ended (whichever way)."""
        return sum(n for s, n in self.counts.items() if s in FINISHED_STATES)

    def states_in_words(self) -> str:
        """The rows counted by state, what needs a person first: ``1 needs attention, 2
        running, 7 succeeded`` (``nothing yet`` for none)."""
        parts = [
            f"{self.counts[s]} {ROW_STATE_LABELS[s].lower()}"
            for s in STATE_ORDER
            if self.counts.get(s)
        ]
        return ", ".join(parts) or "nothing yet"


class FleetRow(FrozenModel):
    """One run of a job: its values (never a secret) and how it went."""

    job_id: str
    row: int  # 1-based, as the input numbers it
    values: dict[str, JsonScalar] = Field(default_factory=dict)
    state: RowState = RowState.QUEUED
    attempt: int = 0
    worker: str | None = None
    run_id: str | None = None
    #: The title of an irreversible step a worker began (noted before acting).
    irreversible_started: str | None = None
    error: str | None = None
    started_at: AwareDatetime | None = None
    finished_at: AwareDatetime | None = None


class Schedule(FrozenModel):
    """An approved workflow run by the fleet at the times a cron expression names."""

    id: str = Field(default_factory=new_id)
    workflow_id: str
    cron: str  # five fields: minute hour day-of-month month day-of-week
    timezone: str = "UTC"  # an IANA zone name: "Europe/Paris"
    values: dict[str, JsonScalar] = Field(default_factory=dict)
    enabled: bool = True
    assume_yes: bool = False
    created_by: str
    created_at: AwareDatetime = Field(default_factory=utcnow)
    last_fired_at: AwareDatetime | None = None
