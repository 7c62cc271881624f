"""The runner fleet's jobs, rows and schedules in the team's PostgreSQL database.

The row is where at-least-once delivery is made safe (see
:mod:`desktop_app.core.models.fleet`): :meth:`SqlFleetStore.claim` takes a row for one worker
in one statement, with a lease measured by the server's clock (the workers' clocks may
disagree); :meth:`~SqlFleetStore.note_irreversible` is committed before an irreversible step
acts; a row taken again after its worker vanished is run again only when no such note is there.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Final

from sqlalchemy import Engine, text
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from desktop_app.adapters.sql.tables import FleetJobRow, FleetRowRow, FleetScheduleRow
from desktop_app.core.errors import NotFoundError
from desktop_app.core.models.common import JsonScalar, utcnow
from desktop_app.core.models.fleet import (
    FleetJob,
    FleetRow,
    RowState,
    Schedule,
)
from desktop_app.core.models.run import RunStatus

__all__ = ["Claim", "ClaimOutcome", "SqlFleetStore"]

#: A row whose worker vanished after its run's record said how it ended ends so too.
_ENDED: Final = {
    RunStatus.SUCCEEDED.value: RowState.SUCCEEDED,
    RunStatus.UNVERIFIED.value: RowState.UNVERIFIED,
}

#: What a row says when its worker vanished after beginning an irreversible step.
_ATTENTION: Final = (
    "the worker running this row stopped after beginning the irreversible step {step!r}; "
    "it was not done again: check the application, then run the row by hand if needed"
)


#: The constraint that keeps one job per schedule and firing time.
_FIRING: Final = "uq_fleet_jobs_firing"


class ClaimOutcome(StrEnum):
    """What a worker that asked for a row is to do."""

    RUN = "run"  # it is this worker's: run it
    BUSY = "busy"  # another worker holds it: ask again once the lease may have run out
    GONE = "gone"  # finished, cancelled, or flagged: nothing to do


@dataclass(frozen=True)
class Claim:
    """The answer to :meth:`SqlFleetStore.claim`."""

    outcome: ClaimOutcome
    row: FleetRow | None = None
    job: FleetJob | None = None


def _job(row: FleetJobRow, counts: dict[RowState, int] | None = None) -> FleetJob:
    job = FleetJob.model_validate_json(row.document)
    return job.model_copy(update={"cancel_requested": row.cancel_requested, "counts": counts or {}})


def _row(row: Any) -> FleetRow:
    return FleetRow(
        job_id=row.job_id,
        row=row.row_no,
        values=json.loads(row.params),
        state=RowState(row.state),
        attempt=row.attempt,
        worker=row.worker,
        run_id=row.run_id,
        irreversible_started=row.irreversible_started,
        error=row.error,
        started_at=row.started_at,
        finished_at=row.finished_at,
    )


class SqlFleetStore:
    """Jobs, rows and schedules over a migrated PostgreSQL engine (team mode)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    # ── jobs ────────────────────────────────────────────────────────────────────────────────

    def add_job(
        self,
        job: FleetJob,
        rows: Sequence[dict[str, JsonScalar]],
        *,
        fired_for: datetime | None = None,
    ) -> bool:
        """Store *job* with one queued row per values in *rows*; False when it is a schedule's
        firing already stored (another scheduler saw the same time first)."""
        job = job.model_copy(update={"total": len(rows), "counts": {}})
        with Session(self._engine) as session:
            session.add(
                FleetJobRow(
                    id=job.id,
                    kind=job.kind,
                    workflow_id=job.workflow_id,
                    version=job.version,
                    created_by=job.created_by,
                    created_at=job.created_at,
                    cancel_requested=False,
                    schedule_id=job.schedule_id,
                    fired_for=fired_for,
                    document=job.model_dump_json(exclude={"counts", "cancel_requested"}),
                )
            )
            try:
                session.flush()  # the job first (its rows refer to it): a firing taken fails here
                session.add_all(
                    FleetRowRow(
                        job_id=job.id,
                        row_no=number,
                        state=RowState.QUEUED,
                        attempt=0,
                        params=json.dumps(values),
                    )
                    for number, values in enumerate(rows, start=1)
                )
                session.commit()
            except IntegrityError as exc:
                diag = getattr(exc.orig, "diag", None)
                if fired_for is None or getattr(diag, "constraint_name", None) != _FIRING:
                    raise
                return False
        return True

    def job(self, job_id: str) -> FleetJob:
        with Session(self._engine) as session:
            row = session.get(FleetJobRow, job_id)
            if row is None:
                raise NotFoundError(f"no fleet job {job_id}")
            return _job(row, self._counts(session, [job_id]).get(job_id, {}))

    def jobs(self, *, limit: int = 50) -> list[FleetJob]:
        """The newest jobs first, with their rows counted by state."""
        with Session(self._engine) as session:
            rows = session.exec(
                select(FleetJobRow).order_by(col(FleetJobRow.created_at).desc()).limit(limit)
            ).all()
            counts = self._counts(session, [r.id for r in rows])
            return [_job(r, counts.get(r.id, {})) for r in rows]

    def _counts(self, session: Session, ids: list[str]) -> dict[str, dict[RowState, int]]:
        if not ids:
            return {}
        found = session.execute(
            text(
                "SELECT job_id, state, count(*) FROM fleet_rows "
                "WHERE job_id = ANY(:ids) GROUP BY job_id, state"
            ),
            {"ids": ids},
        ).all()
        counts: dict[str, dict[RowState, int]] = {}
        for job_id, state, n in found:
            counts.setdefault(str(job_id), {})[RowState(state)] = int(n)
        return counts

    def active_counts(self, *, limit: int = 50) -> dict[RowState, int]:
        """How many rows of the *limit* newest jobs run, and need attention (one query: the
        tray's line, as the Fleet screen lists those jobs)."""
        with self._engine.connect() as conn:
            found = conn.execute(
                text(
                    "SELECT state, count(*) FROM fleet_rows WHERE state IN "
                    "('running', 'needs_attention') AND job_id IN (SELECT id FROM fleet_jobs "
                    "ORDER BY created_at DESC LIMIT :n) GROUP BY state"
                ),
                {"n": limit},
            ).all()
        return {RowState(state): int(n) for state, n in found}

    def rows(self, job_id: str, *, state: RowState | None = None) -> list[FleetRow]:
        query = select(FleetRowRow).where(col(FleetRowRow.job_id) == job_id)
        if state is not None:
            query = query.where(col(FleetRowRow.state) == state.value)
        with Session(self._engine) as session:
            return [_row(r) for r in session.exec(query.order_by(col(FleetRowRow.row_no))).all()]

    def cancel(self, job_id: str) -> int:
        """Ask a job to stop: its queued rows are cancelled now (how many is returned); a row
        running finishes its current step and stops (its worker reads the request)."""
        self.job(job_id)
        with self._engine.begin() as conn:
            conn.execute(
                text("UPDATE fleet_jobs SET cancel_requested = true WHERE id = :j"), {"j": job_id}
            )
            done = conn.execute(
                text(
                    "UPDATE fleet_rows SET state = 'cancelled', finished_at = now() "
                    "WHERE job_id = :j AND state = 'queued'"
                ),
                {"j": job_id},
            )
            return int(done.rowcount)

    def resume(self, job_id: str) -> list[int]:
        """Queue again the rows of a job that were cancelled, or failed without beginning an
        irreversible step; their numbers (to hand to the queue). A row that needs attention
        stays as it is: a person decides."""
        self.job(job_id)
        with self._engine.begin() as conn:
            conn.execute(
                text("UPDATE fleet_jobs SET cancel_requested = false WHERE id = :j"), {"j": job_id}
            )
            again = conn.execute(
                text(
                    "UPDATE fleet_rows SET state = 'queued', error = NULL, worker = NULL, "
                    "lease_until = NULL, finished_at = NULL WHERE job_id = :j AND ("
                    "state = 'cancelled' OR (state = 'failed' AND irreversible_started IS NULL)"
                    ") RETURNING row_no"
                ),
                {"j": job_id},
            )
            return sorted(int(n) for (n,) in again)

    # ── a worker's row ──────────────────────────────────────────────────────────────────────

    def claim(self, job_id: str, row: int, worker: str, lease_s: float) -> Claim:
        """Take a row for *worker* for *lease_s* seconds (see the module's docstring)."""
        with self._engine.begin() as conn:
            current = conn.execute(
                text(
                    "SELECT r.state, r.irreversible_started, r.lease_until < now() AS expired, "
                    "j.cancel_requested, runs.status FROM fleet_rows AS r JOIN fleet_jobs AS j "
                    "ON j.id = r.job_id LEFT JOIN runs ON runs.id = r.run_id "
                    "WHERE r.job_id = :j AND r.row_no = :r FOR UPDATE OF r"
                ),
                {"j": job_id, "r": row},
            ).first()
            if current is None:
                return Claim(ClaimOutcome.GONE)
            state, begun, expired, cancel, run_status = current
            if state == RowState.RUNNING and not expired:
                return Claim(ClaimOutcome.BUSY)
            if state not in (RowState.QUEUED, RowState.RUNNING):
                return Claim(ClaimOutcome.GONE)
            if cancel:
                self._set(conn, job_id, row, RowState.CANCELLED, error=None)
                return Claim(ClaimOutcome.GONE)
            if state == RowState.RUNNING and begun is not None:  # its worker vanished
                # After its run ended? The run's own record says how (its checks held or not).
                ended = _ENDED.get(run_status)
                if ended is not None:
                    self._set(conn, job_id, row, ended, error=None)
                else:
                    self._set(
                        conn,
                        job_id,
                        row,
                        RowState.NEEDS_ATTENTION,
                        error=_ATTENTION.format(step=begun),
                    )
                return Claim(ClaimOutcome.GONE)
            conn.execute(
                text(
                    "UPDATE fleet_rows SET state = 'running', attempt = attempt + 1, "
                    "worker = :w, started_at = now(), finished_at = NULL, error = NULL, "
                    "lease_until = now() + make_interval(secs => :lease) "
                    "WHERE job_id = :j AND row_no = :r"
                ),
                {"j": job_id, "r": row, "w": worker, "lease": lease_s},
            )
        with Session(self._engine) as session:
            found = session.get(FleetRowRow, (job_id, row))
            job = session.get(FleetJobRow, job_id)
            assert found is not None and job is not None
            return Claim(ClaimOutcome.RUN, _row(found), _job(job))

    def renew(self, job_id: str, row: int, worker: str, lease_s: float) -> bool:
        """Extend *worker*'s lease of a row; whether the job was asked to stop. A row no longer
        this worker's (taken by another after the lease ran out) reads as a stop."""
        with self._engine.begin() as conn:
            held = conn.execute(
                text(
                    "UPDATE fleet_rows SET lease_until = now() + make_interval(secs => :lease) "
                    "WHERE job_id = :j AND row_no = :r AND worker = :w AND state = 'running' "
                    "RETURNING (SELECT cancel_requested FROM fleet_jobs WHERE id = :j)"
                ),
                {"j": job_id, "r": row, "w": worker, "lease": lease_s},
            ).first()
        return held is None or bool(held[0])

    def note_irreversible(
        self, job_id: str, row: int, worker: str, step: str, run_id: str | None = None
    ) -> bool:
        """Note, before it acts, that *worker* begins the irreversible *step* of a row in the
        run *run_id*; False when the row is no longer *worker*'s (its lease ran out and another
        took it): then the step must not be done. Should the worker vanish after that run
        ended (its record saved) but before :meth:`finish`, the row ends as the run did."""
        with self._engine.begin() as conn:
            noted = conn.execute(
                text(
                    "UPDATE fleet_rows SET irreversible_started = :s, run_id = :run "
                    "WHERE job_id = :j AND row_no = :r AND worker = :w AND state = 'running'"
                ),
                {"j": job_id, "r": row, "w": worker, "s": step, "run": run_id},
            )
            return int(noted.rowcount) == 1

    def finish(
        self,
        job_id: str,
        row: int,
        worker: str,
        state: RowState,
        *,
        run_id: str | None = None,
        error: str | None = None,
    ) -> None:
        """Record how *worker*'s run of a row ended."""
        with self._engine.begin() as conn:
            conn.execute(
                text(
                    "UPDATE fleet_rows SET state = :s, run_id = :run, error = :e, "
                    "finished_at = now(), lease_until = NULL "
                    "WHERE job_id = :j AND row_no = :r AND worker = :w"
                ),
                {"j": job_id, "r": row, "w": worker, "s": state.value, "run": run_id, "e": error},
            )

    @staticmethod
    def _set(conn: Any, job_id: str, row: int, state: RowState, *, error: str | None) -> None:
        conn.execute(
            text(
                "UPDATE fleet_rows SET state = :s, error = :e, finished_at = now(), "
                "lease_until = NULL WHERE job_id = :j AND row_no = :r"
            ),
            {"j": job_id, "r": row, "s": state.value, "e": error},
        )

    # ── schedules ───────────────────────────────────────────────────────────────────────────

    def save_schedule(self, schedule: Schedule) -> None:
        """Add a schedule or replace the one of its id."""
        with Session(self._engine) as session:
            row = session.get(FleetScheduleRow, schedule.id)
            if row is None:
                row = FleetScheduleRow(
                    id=schedule.id,
                    workflow_id=schedule.workflow_id,
                    cron=schedule.cron,
                    timezone=schedule.timezone,
                    enabled=schedule.enabled,
                    created_by=schedule.created_by,
                    created_at=schedule.created_at,
                    document="",
                )
            row.cron, row.timezone, row.enabled = schedule.cron, schedule.timezone, schedule.enabled
            row.last_fired_at = schedule.last_fired_at
            row.document = schedule.model_dump_json()
            session.add(row)
            session.commit()

    def schedules(self) -> list[Schedule]:
        with Session(self._engine) as session:
            rows = session.exec(select(FleetScheduleRow).order_by(col(FleetScheduleRow.created_at)))
            return [
                Schedule.model_validate_json(r.document).model_copy(
                    update={"last_fired_at": r.last_fired_at, "enabled": r.enabled}
                )
                for r in rows.all()
            ]

    def schedule(self, schedule_id: str) -> Schedule:
        for found in self.schedules():
            if found.id == schedule_id or (
                len(schedule_id) >= 4 and found.id.startswith(schedule_id)
            ):
                return found
        raise NotFoundError(f"no schedule {schedule_id}")

    def delete_schedule(self, schedule_id: str) -> None:
        with Session(self._engine) as session:
            row = session.get(FleetScheduleRow, schedule_id)
            if row is None:
                raise NotFoundError(f"no schedule {schedule_id}")
            session.delete(row)
            session.commit()

    def fired(self, schedule_id: str, at: datetime) -> None:
        """Note that a schedule fired for the time *at*."""
        with Session(self._engine) as session:
            row = session.get(FleetScheduleRow, schedule_id)
            if row is not None and (row.last_fired_at is None or row.last_fired_at < at):
                row.last_fired_at = at
                session.add(row)
                session.commit()

    def now(self) -> datetime:
        """The server's clock (what leases are measured by)."""
        with self._engine.connect() as conn:
            value = conn.execute(text("SELECT now()")).scalar_one()
        return value if isinstance(value, datetime) else utcnow()
