"""The relational schema. Documents are stored whole as JSON; columns hold what is queried."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    Column,
    DateTime,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    LargeBinary,
    Text,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator
from sqlmodel import Field, SQLModel

__all__ = [
    "TEXT_INDEX",
    "ExperienceRow",
    "FleetJobRow",
    "FleetRowRow",
    "FleetScheduleRow",
    "IndexPendingRow",
    "MediaRow",
    "RunRow",
    "RunStepRow",
    "TextIndexEntryRow",
    "TrajectoryEventRow",
    "TrajectoryRawEventRow",
    "TrajectoryRow",
    "UtcDateTime",
    "WorkflowRow",
    "WorkflowTransitionRow",
    "WorkflowVersionRow",
    "is_text_index_table",
    "metadata",
]


class UtcDateTime(TypeDecorator[datetime]):
    """A timezone-aware datetime stored as naive UTC (SQLite has no time zones)."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        return value.replace(tzinfo=UTC)


def _utc(**kw: Any) -> Any:
    return Field(sa_type=UtcDateTime, **kw)


class WorkflowRow(SQLModel, table=True):
    """One workflow, with its list columns kept current as versions and statuses change."""

    __tablename__ = "workflows"

    id: str = Field(primary_key=True)
    name: str = Field(index=True)
    description: str = ""
    domains: str = "[]"
    parameters: str = "[]"
    status: str = Field(index=True)
    latest_version: int
    latest_status: str
    approved_version: int | None = None
    pinned: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    created_at: datetime = _utc()
    updated_at: datetime = _utc(index=True)


class WorkflowVersionRow(SQLModel, table=True):
    """One immutable version: the workflow document and its review status."""

    __tablename__ = "workflow_versions"

    workflow_id: str = Field(
        sa_column_args=[ForeignKey("workflows.id", ondelete="CASCADE")], primary_key=True
    )
    version: int = Field(primary_key=True)
    status: str
    created_at: datetime = _utc()
    created_by: str
    parent_version: int | None = None
    change_note: str = ""
    content_hash: str
    document: str = Field(sa_column=Column(Text, nullable=False))


class WorkflowTransitionRow(SQLModel, table=True):
    """One status change of a version."""

    __tablename__ = "workflow_transitions"
    __table_args__ = (
        ForeignKeyConstraint(
            ["workflow_id", "version"],
            ["workflow_versions.workflow_id", "workflow_versions.version"],
            ondelete="CASCADE",
        ),
        Index("ix_workflow_transitions_version", "workflow_id", "version"),
    )

    id: int | None = Field(default=None, primary_key=True)
    workflow_id: str
    version: int
    from_status: str | None = None
    to_status: str
    actor: str
    at: datetime = _utc()
    comment: str = ""


class TrajectoryRow(SQLModel, table=True):
    """A recorded demonstration's header (events are rows of their own)."""

    __tablename__ = "trajectories"

    id: str = Field(primary_key=True)
    intent: str = ""
    kind: str
    start: str | None = None
    started_at: datetime = _utc(index=True)
    ended_at: datetime | None = _utc(default=None, nullable=True)
    event_count: int = 0
    incomplete: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    raw_count: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    header: str = Field(sa_column=Column(Text, nullable=False))


class TrajectoryEventRow(SQLModel, table=True):
    """One event of a trajectory, appended as it happens."""

    __tablename__ = "trajectory_events"

    trajectory_id: str = Field(
        sa_column_args=[ForeignKey("trajectories.id", ondelete="CASCADE")], primary_key=True
    )
    seq: int = Field(primary_key=True)
    action: str
    at: datetime = _utc()
    document: str = Field(sa_column=Column(Text, nullable=False))


class TrajectoryRawEventRow(SQLModel, table=True):
    """One event of the raw stream a recorder captured, before noise was dropped."""

    __tablename__ = "trajectory_raw_events"

    trajectory_id: str = Field(
        sa_column_args=[ForeignKey("trajectories.id", ondelete="CASCADE")], primary_key=True
    )
    seq: int = Field(primary_key=True)
    action: str
    at: datetime = _utc()
    document: str = Field(sa_column=Column(Text, nullable=False))


class RunRow(SQLModel, table=True):
    """One replay (secrets already masked)."""

    __tablename__ = "runs"
    __table_args__ = (
        Index("ix_runs_workflow_started", "workflow_id", "started_at"),
        Index("ix_runs_started", "started_at"),
        # Covers the run statistics of the Library (counts per status, the newest runs).
        Index("ix_runs_workflow_recent", "workflow_id", "started_at", "status", "workflow_version"),
    )

    id: str = Field(primary_key=True)
    workflow_id: str = Field(sa_column_args=[ForeignKey("workflows.id", ondelete="CASCADE")])
    workflow_version: int
    status: str
    trigger: str
    started_at: datetime = _utc()
    finished_at: datetime | None = _utc(default=None, nullable=True)
    llm_calls: int = 0
    tokens: int = 0
    error: str | None = None
    header: str = Field(sa_column=Column(Text, nullable=False))


class RunStepRow(SQLModel, table=True):
    """How one step of a run went."""

    __tablename__ = "run_steps"

    run_id: str = Field(
        sa_column_args=[ForeignKey("runs.id", ondelete="CASCADE")], primary_key=True
    )
    seq: int = Field(primary_key=True)
    step_id: str
    status: str
    resolution: str | None = None
    duration_ms: float = 0
    document: str = Field(sa_column=Column(Text, nullable=False))


class ExperienceRow(SQLModel, table=True):
    """A remembered repair."""

    __tablename__ = "experiences"

    id: str = Field(primary_key=True)
    workflow_id: str = Field(
        sa_column_args=[ForeignKey("workflows.id", ondelete="CASCADE")], index=True
    )
    step_id: str
    #: The host of the page the repair was found on ("" when unknown): the memory is bounded
    #: per site.
    site: str = Field(default="", sa_column_kwargs={"server_default": text("''")}, index=True)
    created_at: datetime = _utc()
    uses: int = 0
    last_used_at: datetime | None = _utc(default=None, nullable=True)
    document: str = Field(sa_column=Column(Text, nullable=False))


class MediaRow(SQLModel, table=True):
    """One media file of the shared media store (team mode), named by its content's hash."""

    __tablename__ = "media"

    ref: str = Field(primary_key=True)
    size: int
    created_at: datetime = _utc()
    data: bytes = Field(sa_column=Column(LargeBinary, nullable=False))


class FleetScheduleRow(SQLModel, table=True):
    """A schedule of the runner fleet (the document is the whole
    :class:`~desktop_app.core.models.fleet.Schedule`)."""

    __tablename__ = "fleet_schedules"

    id: str = Field(primary_key=True)
    workflow_id: str = Field(sa_column_args=[ForeignKey("workflows.id", ondelete="CASCADE")])
    cron: str
    timezone: str
    enabled: bool
    created_by: str
    created_at: datetime = _utc()
    last_fired_at: datetime | None = _utc(default=None, nullable=True)
    document: str = Field(sa_column=Column(Text, nullable=False))


class FleetJobRow(SQLModel, table=True):
    """A job of the runner fleet."""

    __tablename__ = "fleet_jobs"
    __table_args__ = (UniqueConstraint("schedule_id", "fired_for", name="uq_fleet_jobs_firing"),)

    id: str = Field(primary_key=True)
    kind: str
    workflow_id: str = Field(sa_column_args=[ForeignKey("workflows.id", ondelete="CASCADE")])
    version: int
    created_by: str
    created_at: datetime = _utc(index=True)
    cancel_requested: bool
    schedule_id: str | None = Field(
        default=None,
        sa_column_args=[ForeignKey("fleet_schedules.id", ondelete="SET NULL")],
        nullable=True,
    )
    fired_for: datetime | None = _utc(default=None, nullable=True)
    document: str = Field(sa_column=Column(Text, nullable=False))


class FleetRowRow(SQLModel, table=True):
    """A row of a fleet job: one run, claimed by one worker at a time."""

    __tablename__ = "fleet_rows"
    __table_args__ = (Index("ix_fleet_rows_state", "job_id", "state"),)

    job_id: str = Field(
        sa_column_args=[ForeignKey("fleet_jobs.id", ondelete="CASCADE")], primary_key=True
    )
    row_no: int = Field(primary_key=True)
    state: str
    attempt: int
    worker: str | None = None
    lease_until: datetime | None = _utc(default=None, nullable=True)
    run_id: str | None = None
    irreversible_started: str | None = None
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    started_at: datetime | None = _utc(default=None, nullable=True)
    finished_at: datetime | None = _utc(default=None, nullable=True)
    params: str = Field(sa_column=Column(Text, nullable=False))


class IndexPendingRow(SQLModel, table=True):
    """Something the search index must be brought up to date with: written in the same
    transaction as the change, removed once the index has it (a crash in between leaves it,
    for the next writer to finish)."""

    __tablename__ = "index_pending"

    kind: str = Field(primary_key=True)  # "workflow" or "experience"
    item_id: str = Field(primary_key=True)
    since: datetime = _utc()


class TextIndexEntryRow(SQLModel, table=True):
    """A workflow in the word index: its indexed version and filterable metadata. Its id is the
    rowid of its text in the FTS5 table :data:`TEXT_INDEX`, which SQLAlchemy does not model
    (see :func:`is_text_index_table`)."""

    __tablename__ = "text_index_entries"

    id: int | None = Field(default=None, primary_key=True)
    workflow_id: str = Field(index=True, unique=True)
    version: int
    status: str
    domains: str = "[]"  # lower-cased JSON list


#: The FTS5 table of the word index (created by migration 0006): one ``body`` column.
TEXT_INDEX = "text_index"
#: The tables FTS5 keeps for it ("shadow tables", https://sqlite.org/fts5.html).
_FTS5_SHADOWS = ("data", "idx", "content", "docsize", "config")


def is_text_index_table(name: str | None) -> bool:
    """Whether *name* is the FTS5 table of the word index or one of its shadow tables (kept
    out of the schema comparison of migrations with :data:`metadata`)."""
    return name == TEXT_INDEX or name in {f"{TEXT_INDEX}_{s}" for s in _FTS5_SHADOWS}


metadata = SQLModel.metadata
