"""A workflow version's record: how its runs went, as the Library, Review and the command line
show it, and whether it has gone stale.

Every version carries its record, read from its runs: how many finished, how many succeeded or
ended done, unverified, how many healed a step, the LLM calls and tokens they cost, their median
time, and the last failure and why. A version whose recent runs all failed, or that nobody ran
for a while, is *stale*: flagged for someone to look at, never archived or deleted for it.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Final

from pydantic import AwareDatetime, Field

from desktop_app.core.models.common import FrozenModel
from desktop_app.core.models.run import Run, RunStatus

__all__ = ["FAILING_RUNS", "VersionRecord", "stale_reason", "stale_why", "version_record"]

#: A version whose last this many finished runs all failed is stale.
FAILING_RUNS: Final = 3


class VersionRecord(FrozenModel):
    """How the finished runs of one workflow version went (runs still going do not count).

    A run done, unverified (every step ran, nothing showed the task was done) is neither a
    success nor a failure: it counts in ``runs`` and ``unverified`` only.
    """

    workflow_id: str
    version: int = Field(ge=1)
    runs: int = 0
    succeeded: int = 0
    unverified: int = 0
    failed: int = 0
    """Failed, aborted or interrupted."""
    healed: int = 0
    """Runs in which at least one step's element was found by healing."""
    llm_calls: int = 0
    tokens: int = 0
    median_ms: float | None = None
    last_run_at: AwareDatetime | None = None
    last_failure_at: AwareDatetime | None = None
    last_failure: str | None = None
    """The last failed run's first failed step and why, in one line."""
    recent_failures: int = 0
    """How many of the newest finished runs failed in a row."""

    @property
    def success_rate(self) -> float | None:
        """Succeeded over finished runs (None before any finished)."""
        return self.succeeded / self.runs if self.runs else None

    @property
    def heal_rate(self) -> float | None:
        """Runs that healed a step over finished runs (None before any finished)."""
        return self.healed / self.runs if self.runs else None

    def lines(self) -> list[str]:
        """The record in a few lines of words (the command line's ``workflows show``)."""
        if not self.runs:
            return ["not run yet"]
        rate = f"{self.success_rate:.0%}" if self.success_rate is not None else "-"
        heal = f"{self.heal_rate:.0%}" if self.heal_rate is not None else "-"
        lines = [
            f"{self.runs} finished run(s): {self.succeeded} succeeded ({rate}), "
            f"{self.unverified} done, unverified, {self.failed} failed",
            f"healed in {self.healed} run(s) ({heal}); {self.llm_calls} LLM call(s), "
            f"{self.tokens} tokens; median time {_seconds(self.median_ms)}",
        ]
        if self.last_run_at is not None:
            lines.append(f"last run {self.last_run_at:%Y-%m-%d %H:%M}")
        if self.last_failure is not None and self.last_failure_at is not None:
            lines.append(f"last failure {self.last_failure_at:%Y-%m-%d %H:%M}: {self.last_failure}")
        return lines


def _seconds(ms: float | None) -> str:
    return "-" if ms is None else f"{ms / 1000:.1f} s"


def _why(run: Run) -> str:
    step = run.first_failure
    if step is None:
        return run.error or run.status.value
    said = f"step {step.index + 1} '{step.title}'"
    if step.failure is not None:
        return f"{said}: {step.failure.words}"
    return f"{said}: {step.error or 'failed'}"


def version_record(workflow_id: str, version: int, runs: Iterable[Run]) -> VersionRecord:
    """The record of *version* of *workflow_id* from *runs* (any runs: others are left out)."""
    mine = sorted(
        (
            r
            for r in runs
            if r.workflow_id == workflow_id
            and r.workflow_version == version
            and r.status is not RunStatus.RUNNING
        ),
        key=lambda r: r.started_at,
    )
    failed = [r for r in mine if r.status not in (RunStatus.SUCCEEDED, RunStatus.UNVERIFIED)]
    durations = [
        (r.finished_at - r.started_at).total_seconds() * 1000 for r in mine if r.finished_at
    ]
    in_row = 0
    for run in reversed(mine):
        if run.status is not RunStatus.FAILED:
            break
        in_row += 1
    last_failed = failed[-1] if failed else None
    return VersionRecord(
        workflow_id=workflow_id,
        version=version,
        runs=len(mine),
        succeeded=sum(r.status is RunStatus.SUCCEEDED for r in mine),
        unverified=sum(r.status is RunStatus.UNVERIFIED for r in mine),
        failed=len(failed),
        healed=sum(bool(r.healed) for r in mine),
        llm_calls=sum(r.llm_calls for r in mine),
        tokens=sum(r.tokens for r in mine),
        median_ms=statistics.median(durations) if durations else None,
        last_run_at=mine[-1].started_at if mine else None,
        last_failure_at=last_failed.started_at if last_failed else None,
        last_failure=_why(last_failed) if last_failed else None,
        recent_failures=in_row,
    )


def stale_reason(
    record: VersionRecord, *, since: datetime, now: datetime, stale_after_days: int
) -> str | None:
    """Why the version is stale, or None: its last :data:`FAILING_RUNS` runs failed, or nobody
    ran it for *stale_after_days* (counted from its last run, else from *since*, when it was
    approved or made; 0 turns that check off)."""
    return stale_why(
        record.recent_failures,
        record.last_run_at,
        since=since,
        now=now,
        stale_after_days=stale_after_days,
    )


def stale_why(
    failures_in_row: int,
    last_run_at: datetime | None,
    *,
    since: datetime,
    now: datetime,
    stale_after_days: int,
) -> str | None:
    """:func:`stale_reason` from what it looks at: how many of the newest runs failed in a
    row, and when the version last ran (None: never)."""
    if failures_in_row >= FAILING_RUNS:
        return f"its last {failures_in_row} runs failed"
    last = last_run_at or since
    if stale_after_days and now - last >= timedelta(days=stale_after_days):
        days = (now - last).days
        return (
            f"nobody ran it for {days} days"
            if last_run_at
            else (f"never run in the {days} days since it was approved")
        )
    return None
