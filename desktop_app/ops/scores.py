"""A workflow version's record and whether it is stale, the same for the command line
(``workflows show``), the Library and Review (see :mod:`desktop_app.core.scores`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Final

from desktop_app.core.models.common import utcnow
from desktop_app.core.models.workflow import WorkflowStatus, WorkflowVersion
from desktop_app.core.scores import VersionRecord, stale_reason, version_record

if TYPE_CHECKING:
    from desktop_app.core.ports import RunStore

__all__ = ["RECENT_RUNS", "Scored", "approved_at", "score"]

#: The record is read from at most this many of the workflow's newest runs.
RECENT_RUNS: Final = 500


@dataclass(frozen=True, slots=True)
class Scored:
    """A version's record, and why it is stale (None: it is not; only an approved version,
    the one that runs, can be)."""

    record: VersionRecord
    stale: str | None


def approved_at(version: WorkflowVersion) -> datetime:
    """When *version* was last approved (when it was made, if never)."""
    return max(
        (t.at for t in version.transitions if t.to_status is WorkflowStatus.APPROVED),
        default=version.created_at,
    )


def score(
    runs: RunStore,
    version: WorkflowVersion,
    *,
    stale_after_days: int,
    now: datetime | None = None,
) -> Scored:
    """The record of *version* from its workflow's newest :data:`RECENT_RUNS` runs."""
    found = runs.runs(version.workflow_id, limit=RECENT_RUNS)
    record = version_record(version.workflow_id, version.version, found)
    stale = None
    if version.status is WorkflowStatus.APPROVED:
        stale = stale_reason(
            record,
            since=approved_at(version),
            now=now or utcnow(),
            stale_after_days=stale_after_days,
        )
    return Scored(record=record, stale=stale)
