"""The fleet's scheduler: Celery beat reading the team's schedules from its database.

It runs inside a worker (``procedura worker --schedules``, Celery's embedded beat) or alone
(``procedura fleet scheduler``), logged in as any member who may write jobs (a runner).

How it reads the schedules: every :data:`REFRESH_S` seconds it reads the enabled ones again,
so a schedule added, changed, disabled or removed (command line, window) takes effect within
seconds, without a restart. A schedule unchanged since the last read keeps its place; a new or
changed one is looked at from the previous read on (a firing time after it is still made).

When a schedule is due it makes a job of one row (the schedule's values) of the workflow's
version approved at that moment, and hands the row to the fleet. A workflow with no approved
version then gets no job: one line is logged and nothing is recorded.

At most once: the job is stored with the time it fires for (UTC, to the minute), and the team's
database holds one job per schedule and time. A second scheduler (two running by mistake, or
one restarted) that comes to the same time finds it taken and moves on. One scheduler per team
is the rule (it is the one that fires on time); a second is harmless.

Late: a scheduler that starts makes the last firing it missed by at most :data:`CATCH_UP`
(it was restarted, or none ran for a moment), once; earlier ones are skipped. A firing that
failed (the database or the queue away) is tried again every :data:`REFRESH_S` seconds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final
from weakref import WeakKeyDictionary

from celery.beat import Scheduler
from celery.utils.log import get_logger

from desktop_app.core.errors import StoreError
from desktop_app.core.models.common import utcnow
from desktop_app.core.models.fleet import FleetJob, JobKind, Schedule
from desktop_app.core.replay.parameters import ParameterError
from desktop_app.fleet.queue import enqueue, make_app
from desktop_app.fleet.schedules import Timing, parse_timing
from desktop_app.settings import Settings

if TYPE_CHECKING:
    from celery import Celery
    from sqlalchemy import Engine

    from desktop_app.adapters.sql.fleet_store import SqlFleetStore
    from desktop_app.adapters.sql.workflow_store import SqlWorkflowStore

__all__ = ["CATCH_UP", "REFRESH_S", "SCHEDULER", "TeamScheduler", "run_scheduler", "use_schedules"]

#: How often the schedules are read again (seconds); beat never sleeps longer than this.
REFRESH_S: Final = 5.0
#: How late a firing a starting scheduler still makes.
CATCH_UP: Final = timedelta(minutes=5)
#: The scheduler class, as Celery's ``--scheduler`` names it.
SCHEDULER: Final = "desktop_app.fleet.beat:TeamScheduler"

log = get_logger(__name__)  # under Celery's logger: its beat and worker print it

#: The settings each application's scheduler opens the team's database with.
_SETTINGS: WeakKeyDictionary[Any, Settings] = WeakKeyDictionary()


def use_schedules(app: Celery, settings: Settings) -> None:
    """Let *app*'s beat (embedded in a worker, or alone) read the team's schedules."""
    _SETTINGS[app] = settings
    app.conf.beat_scheduler = SCHEDULER


def run_scheduler(settings: Settings) -> None:
    """Run the scheduler alone until it is stopped (Ctrl+C, SIGTERM).

    Raises:
        StoreError: no queue is set up.
    """
    app = make_app(settings)
    use_schedules(app, settings)
    app.Beat(scheduler=SCHEDULER, loglevel="INFO", quiet=True).run()


@dataclass
class _Entry:
    """A schedule as the scheduler holds it: when it fires, and up to when it has."""

    schedule: Schedule
    timing: Timing
    #: Firing times up to this one are done (made, taken by another scheduler, or skipped).
    done_until: datetime
    #: After a firing that failed: not again before this (monotonic clock).
    retry_at: float = 0.0


def _definition(schedule: Schedule) -> Schedule:
    """What makes a schedule fire what it fires (not when it last did)."""
    return schedule.model_copy(update={"last_fired_at": None})


class TeamScheduler(Scheduler):  # type: ignore[misc]  # celery is untyped
    """A Celery beat scheduler over the team's schedules (see the module's docstring)."""

    max_interval = REFRESH_S

    def __init__(self, app: Celery, *args: Any, **kwargs: Any) -> None:
        self._entries: dict[str, _Entry] = {}
        self._refused: dict[str, Schedule] = {}
        self._read_at: datetime | None = None
        self._next_read = 0.0
        self._engine: Engine | None = None
        super().__init__(app, *args, **kwargs)

    # ── Celery's Scheduler ──────────────────────────────────────────────────────────────────

    def setup_schedule(self) -> None:
        from desktop_app.adapters.sql.database import open_database
        from desktop_app.adapters.sql.fleet_store import SqlFleetStore
        from desktop_app.adapters.sql.workflow_store import SqlWorkflowStore
        from desktop_app.app import team_url

        settings = _SETTINGS.get(self.app)
        if settings is None:
            raise StoreError(
                "the team's scheduler runs from procedura fleet scheduler or procedura worker "
                "--schedules"
            )
        self._engine = open_database(team_url(settings))
        self._fleet: SqlFleetStore = SqlFleetStore(self._engine)
        self._workflows: SqlWorkflowStore = SqlWorkflowStore(self._engine)
        self._read()

    def tick(self, *args: Any, **kwargs: Any) -> float:
        """Fire what is due; the seconds until something may be due again."""
        if time.monotonic() >= self._next_read:
            self._read()
        wait = self._next_read - time.monotonic()
        for entry in list(self._entries.values()):
            now = datetime.now(UTC)
            if time.monotonic() < entry.retry_at:
                wait = min(wait, entry.retry_at - time.monotonic())
                continue
            due = entry.timing.latest_due(entry.done_until, now)
            if due is not None:
                self._fire(entry, due)
            if time.monotonic() >= entry.retry_at:
                upcoming = entry.timing.next_after(max(entry.done_until, now))
                wait = min(wait, (upcoming - datetime.now(UTC)).total_seconds())
        return max(wait, 0.01)

    def sync(self) -> None:
        """Nothing to keep: the database holds every firing."""

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

    @property
    def info(self) -> str:
        return f"the team's schedules, read every {REFRESH_S:g} s"

    # ── reading ─────────────────────────────────────────────────────────────────────────────

    def _read(self) -> None:
        """Read the enabled schedules again; keep those unchanged, start the others from the
        previous read (or :data:`CATCH_UP` ago, on the first)."""
        self._next_read = time.monotonic() + REFRESH_S
        now = utcnow()
        try:
            found = [s for s in self._fleet.schedules() if s.enabled]
        except Exception as exc:  # the database is away: keep what we have, read again soon
            log.warning("could not read the team's schedules: %s", _line(exc))
            return
        since = self._read_at or now - CATCH_UP
        entries: dict[str, _Entry] = {}
        for schedule in found:
            old = self._entries.get(schedule.id)
            if old is not None and _definition(old.schedule) == _definition(schedule):
                entries[schedule.id] = old
                continue
            entry = self._entry(schedule, since, old)
            if entry is not None:
                entries[schedule.id] = entry
        for gone in self._entries.keys() - entries.keys():
            log.info("schedule %s: no longer enabled", gone[:8])
        self._entries = entries
        self._read_at = now

    def _entry(self, schedule: Schedule, since: datetime, old: _Entry | None) -> _Entry | None:
        try:
            timing = parse_timing(schedule.cron, schedule.timezone)
        except ParameterError as exc:
            if self._refused.get(schedule.id) != schedule:  # said once per definition
                self._refused[schedule.id] = schedule
                log.error("schedule %s cannot be used: %s", schedule.id[:8], exc)
            return None
        starts = [since, schedule.created_at]
        starts += [t for t in (schedule.last_fired_at, old and old.done_until) if t]
        log.info(
            "schedule %s: %r in %s, %s",
            schedule.id[:8],
            timing.cron,
            timing.timezone,
            "changed" if old is not None else "read",
        )
        return _Entry(schedule, timing, max(starts))

    # ── firing ──────────────────────────────────────────────────────────────────────────────

    def _fire(self, entry: _Entry, due: datetime) -> None:
        """Make *entry*'s firing for *due*; on failure, try again after :data:`REFRESH_S`."""
        at = due.astimezone(UTC).replace(second=0, microsecond=0)
        try:
            self._make_job(entry.schedule, at)
        except Exception as exc:  # the database or the queue is away: the firing is retried
            log.error(
                "schedule %s: could not fire for %s (tried again in %g s): %s",
                entry.schedule.id[:8],
                _moment(at),
                REFRESH_S,
                _line(exc),
            )
            entry.retry_at = time.monotonic() + REFRESH_S
            return
        entry.done_until = due
        entry.retry_at = 0.0

    def _make_job(self, schedule: Schedule, at: datetime) -> None:
        tag = schedule.id[:8]
        summary = self._workflows.summary(schedule.workflow_id)
        if summary.approved_version is None:
            log.warning(
                "schedule %s: %r has no approved version: nothing run for %s",
                tag,
                summary.name,
                _moment(at),
            )
            return
        version = self._workflows.get_version(schedule.workflow_id, summary.approved_version)
        job = FleetJob(
            kind=JobKind.SCHEDULE,
            schedule_id=schedule.id,
            workflow_id=schedule.workflow_id,
            version=version.version,
            name=version.workflow.name,
            created_by=f"schedule {tag}",
            assume_yes=schedule.assume_yes,
        )
        if not self._fleet.add_job(job, [dict(schedule.values)], fired_for=at):
            log.info("schedule %s: %s already fired (another scheduler)", tag, _moment(at))
            return
        try:
            enqueue(self.app, job.id, [1])
        except Exception as exc:
            # Stored but not queued: cancelled, so it reads as what it is and resume queues it.
            self._fleet.cancel(job.id)
            log.error(
                "schedule %s: job %s for %s could not be queued (%s): it was cancelled; "
                "procedura fleet resume %s queues it",
                tag,
                job.id[:8],
                _moment(at),
                _line(exc),
                job.id[:8],
            )
            return
        self._fleet.fired(schedule.id, at)
        log.info("schedule %s: job %s for %s, %r v%d", tag, job.id[:8], _moment(at), job.name,
                 job.version)  # fmt: skip


def _moment(at: datetime) -> str:
    return at.strftime("%Y-%m-%d %H:%M UTC")


def _line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
