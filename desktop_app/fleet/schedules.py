"""The fleet's schedules: when a cron expression fires in its time zone, and the verbs that add,
change and remove schedules (the command line and the window's Schedules page call these; the
scheduler in :mod:`desktop_app.fleet.beat` reads what they write).

A schedule's times are wall-clock times of its zone: ``0 9 * * 1-5`` in Europe/Paris is 09:00 in
Paris, winter and summer. Where the zone's clocks jump:

* forward (a wall time that does not exist: 02:30 on the last Sunday of March in Paris), the
  time fires when it would have been by the offset before the jump (02:30 CET = 03:30 CEST);
* back (a wall time that happens twice), it fires once, at its first occurrence, so a
  schedule of every few minutes pauses during the repeated hour.

The five fields are Celery's ``crontab``: minute, hour, day of month, month, day of week (0-6,
Sunday is 0, or ``sun``-``sat``). When both days are restricted a day must match both (classic
cron fires when either matches).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING, Any, Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from desktop_app.adapters.sql.fleet_store import SqlFleetStore
from desktop_app.app import Services
from desktop_app.core.errors import AmbiguousReferenceError, NotFoundError
from desktop_app.core.models.common import JsonScalar
from desktop_app.core.models.fleet import Schedule
from desktop_app.core.models.workflow import ParameterType, WorkflowVersion
from desktop_app.core.replay.parameters import ParameterError, bind_parameters

if TYPE_CHECKING:
    from celery import Celery

__all__ = [
    "ScheduleView",
    "Timing",
    "add_schedule",
    "find_schedule",
    "list_schedules",
    "local_zone",
    "parse_timing",
    "remove_schedule",
    "set_enabled",
    "update_schedule",
]

#: The fields of a cron expression, in order, with the range Celery's parser takes for each.
_FIELDS: Final = (
    ("minute", 60, 0),
    ("hour", 24, 0),
    ("day-of-month", 31, 1),
    ("month", 12, 1),
    ("day-of-week", 7, 0),
)
#: Steps through the repeated hour (one a minute at most) before a time is given up on.
_MAX_STEPS: Final = 1000


@cache
def _clock_app() -> Celery:
    """A Celery application with no broker: crontab asks one for UTC settings (nothing opens)."""
    from celery import Celery

    app = Celery("procedura-clock", set_as_current=False)
    app.conf.update(enable_utc=True, timezone="UTC")
    return app


@dataclass(frozen=True)
class Timing:
    """A checked cron expression (five fields, one space apart) in an IANA time zone."""

    cron: str
    zone: ZoneInfo

    @property
    def timezone(self) -> str:
        return self.zone.key

    def now(self) -> datetime:
        """The time now in the zone (the scheduler's crontab reads its clock from here)."""
        return datetime.now(self.zone)

    def crontab(self, nowfun: Callable[[], datetime] | None = None) -> Any:
        """The Celery ``crontab`` of these fields, its clock in the zone."""
        from celery.schedules import crontab

        minute, hour, day_of_month, month, day_of_week = self.cron.split(" ")
        return crontab(
            minute,
            hour,
            day_of_week,
            day_of_month,
            month,
            nowfun=nowfun or self.now,
            app=_clock_app(),
        )

    def next_after(self, moment: datetime) -> datetime:
        """The first firing strictly after *moment* (aware), in the zone.

        Raises:
            ParameterError: the fields name no date that exists (``0 0 30 2 *``).
        """
        after = moment.astimezone(UTC)
        point = moment.astimezone(self.zone)
        for _ in range(_MAX_STEPS):
            try:
                start, delta, _ = self.crontab(_pinned(point)).remaining_delta(point)
            except RuntimeError:  # Celery gave up rolling over: no such date, ever
                raise ParameterError(
                    f"cron {self.cron!r} names no date that exists: it would never fire",
                    name="cron",
                ) from None
            # A wall time of the zone, later than *point*'s: it may not exist, or be twice.
            wall: datetime = start + delta
            twice = _twice(wall)
            if not twice:
                wall = wall.replace(fold=0)  # a time in the gap is read by the offset before it
            at = wall.astimezone(UTC)
            if (twice and wall.fold == 1) or at <= after:
                point = wall  # its first occurrence was the one: look further
                continue
            return at.astimezone(self.zone)
        raise ParameterError(f"cron {self.cron!r}: no firing time found", name="cron")

    def latest_due(self, after: datetime, now: datetime) -> datetime | None:
        """The last firing in (*after*, *now*], or None: the one a late scheduler still makes
        (the earlier ones it skips)."""
        due: datetime | None = None
        point = self.next_after(after)
        while point <= now:
            due = point
            point = self.next_after(point)
        return due


def _pinned(moment: datetime) -> Callable[[], datetime]:
    """A clock that always reads *moment* (crontab then answers "the next time after it")."""
    return lambda: moment


def _twice(wall: datetime) -> bool:
    """Whether the wall-clock time *wall* happens twice (its zone's clocks go back over it)."""
    first, second = wall.replace(fold=0), wall.replace(fold=1)
    if first.utcoffset() == second.utcoffset():
        return False
    back = first.astimezone(UTC).astimezone(wall.tzinfo)
    return back.replace(tzinfo=None) == wall.replace(tzinfo=None, fold=0)


def parse_timing(cron: str, timezone: str) -> Timing:
    """Check a cron expression and a time zone name.

    Raises:
        ParameterError: not five fields, a field Celery's crontab does not take, a date that
            never comes, or not an IANA zone (the message names what, and the zone meant when
            one is close); its ``name`` is ``cron`` or ``timezone``.
    """
    from celery.schedules import ParseException, crontab_parser

    fields = cron.split()
    if len(fields) != 5:
        raise ParameterError(
            f"cron {cron!r}: five fields are needed (minute hour day-of-month month "
            f"day-of-week, e.g. '0 9 * * 1-5'), not {len(fields)}",
            name="cron",
        )
    for value, (what, size, first) in zip(fields, _FIELDS, strict=True):
        try:
            found = crontab_parser(size, first).parse(value)
            if any(n < first or n >= size + first for n in found):
                raise ValueError(f"outside {first}-{size + first - 1}")
        except (ValueError, ParseException) as exc:
            hint = " (0-6, Sunday is 0, or sun-sat)" if what == "day-of-week" else ""
            raise ParameterError(
                f"cron {cron!r}: the {what} field {value!r} is not valid: {exc}{hint}",
                name="cron",
            ) from None
    timing = Timing(" ".join(fields), _zone(timezone))
    timing.next_after(timing.now())  # a date that never comes is refused now
    return timing


def _zone(name: str) -> ZoneInfo:
    problem = f"time zone {name!r} is not an IANA zone name (like Europe/Paris or UTC)"
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        pass
    close = difflib.get_close_matches(name, sorted(available_timezones()), n=1)
    hint = f": did you mean {close[0]}?" if close else ""
    raise ParameterError(problem + hint, name="timezone")


def local_zone() -> str | None:
    """This machine's IANA zone name, or None when it cannot be told."""
    try:
        import tzlocal

        name: str | None = tzlocal.get_localzone_name()
    except Exception:  # tzlocal raises several kinds when the system's zone is not set up
        return None
    if name is None:
        return None
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None
    return name


# ── the verbs ───────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class ScheduleView:
    """A schedule as a list shows it: its workflow's name and when it fires next."""

    schedule: Schedule
    workflow: str
    #: The next firing in the schedule's zone (None while disabled, or not computable).
    next_fire: datetime | None

    def as_dict(self) -> dict[str, Any]:
        """For ``--json``."""
        return {
            **self.schedule.model_dump(mode="json"),
            "workflow": self.workflow,
            "next_fire": self.next_fire.isoformat() if self.next_fire else None,
        }


def list_schedules(services: Services, *, now: datetime | None = None) -> list[ScheduleView]:
    """Every schedule of the team, oldest first, with its next firing after *now*."""
    moment = now or datetime.now(UTC)
    names: dict[str, str] = {}
    views = []
    for schedule in SqlFleetStore(services.engine).schedules():
        if schedule.workflow_id not in names:
            names[schedule.workflow_id] = services.workflows.summary(schedule.workflow_id).name
        next_fire = None
        if schedule.enabled:
            try:
                next_fire = parse_timing(schedule.cron, schedule.timezone).next_after(moment)
            except ParameterError:
                next_fire = None
        views.append(ScheduleView(schedule, names[schedule.workflow_id], next_fire))
    return views


def _check_values(version: WorkflowVersion, values: Mapping[str, str]) -> dict[str, JsonScalar]:
    """*values* when they bind to *version* (a secret comes from each worker's keyring)."""
    secret = {p.name: "x" for p in version.workflow.parameters if p.type is ParameterType.SECRET}
    bind_parameters(version.workflow, values, secrets=secret)
    return dict(values)


def add_schedule(
    services: Services,
    workflow: str,
    cron: str,
    timezone: str,
    values: Mapping[str, str],
    *,
    assume_yes: bool = False,
) -> Schedule:
    """Check everything, then store a schedule (enabled) of *workflow*'s approved version.

    Raises:
        ParameterError: a bad cron expression or zone, or *values* that do not bind.
        NotFoundError: no such workflow.
        TransitionError: the workflow has no approved version.
        NotAllowedError: the member is not an approver (the team's server refuses).
    """
    timing = parse_timing(cron, timezone)
    version = services.workflows.runnable(workflow)
    schedule = Schedule(
        workflow_id=version.workflow_id,
        cron=timing.cron,
        timezone=timing.timezone,
        values=_check_values(version, values),
        assume_yes=assume_yes,
        created_by=services.settings.actor,
    )
    SqlFleetStore(services.engine).save_schedule(schedule)
    return schedule


def find_schedule(services: Services, ref: str) -> Schedule:
    """The schedule whose id is *ref*, or starts with it.

    Raises:
        NotFoundError: none does (AmbiguousReferenceError: several do).
    """
    found = [s for s in SqlFleetStore(services.engine).schedules() if s.id.startswith(ref)]
    exact = [s for s in found if s.id == ref]
    if exact:
        return exact[0]
    if not found or not ref:
        raise NotFoundError(f"no schedule {ref!r} (procedura schedule list shows them)")
    if len(found) > 1:
        raise AmbiguousReferenceError(f"{ref!r} starts {len(found)} schedules' ids: give more")
    return found[0]


def update_schedule(
    services: Services,
    ref: str,
    *,
    cron: str | None = None,
    timezone: str | None = None,
    values: Mapping[str, str] | None = None,
    assume_yes: bool | None = None,
    enabled: bool | None = None,
) -> Schedule:
    """Change a schedule; what is not given stays. A changed cron, zone or values is checked as
    :func:`add_schedule` checks it (values against the approved version). The scheduler sees
    the change within seconds.

    Raises:
        the errors of :func:`add_schedule` and :func:`find_schedule`.
    """
    schedule = find_schedule(services, ref)
    update: dict[str, Any] = {}
    if cron is not None or timezone is not None:
        timing = parse_timing(cron or schedule.cron, timezone or schedule.timezone)
        update.update(cron=timing.cron, timezone=timing.timezone)
    if values is not None:
        version = services.workflows.runnable(schedule.workflow_id)
        update["values"] = _check_values(version, values)
    if assume_yes is not None:
        update["assume_yes"] = assume_yes
    if enabled is not None:
        update["enabled"] = enabled
    changed = schedule.model_copy(update=update)
    SqlFleetStore(services.engine).save_schedule(changed)
    return changed


def set_enabled(services: Services, ref: str, enabled: bool) -> Schedule:
    """Enable or disable a schedule (a disabled one fires no more; its firings stay listed)."""
    return update_schedule(services, ref, enabled=enabled)


def remove_schedule(services: Services, ref: str) -> Schedule:
    """Delete a schedule (the jobs it made stay, no longer linked to it); the one removed."""
    schedule = find_schedule(services, ref)
    SqlFleetStore(services.engine).delete_schedule(schedule.id)
    return schedule
