"""What the window needs from the rest of the app: the :class:`Backend` port.

The composition root (``desktop_app.gui``) implements it over the services; the window never
sees an adapter. Methods marked *blocking* touch the stores, the index or the network: call them
through :meth:`desktop_app.ui.tasks.TaskRunner.call`, never on the GUI thread. Coroutines run on
the one asyncio loop (qasync) that Qt and Playwright share.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

from desktop_app.core.library import WorkflowLibrary
from desktop_app.core.models.fleet import FleetJob, FleetRow, Schedule
from desktop_app.core.models.run import Run
from desktop_app.core.models.target import Locator
from desktop_app.core.models.trajectory import Event, Trajectory
from desktop_app.core.models.workflow import Expectation, PageItems, WorkflowVersion
from desktop_app.core.ports import MediaStore, RunStore
from desktop_app.core.replay.engine import ReplayEvent, ReplayOptions
from desktop_app.core.replay.person import Person
from desktop_app.core.trajectories import TrajectoryLibrary
from desktop_app.ops.changes import Changes
from desktop_app.ops.induce import Induced
from desktop_app.ops.library import Reindexed
from desktop_app.settings import Settings

__all__ = [
    "Backend",
    "FleetCounts",
    "FleetMember",
    "LocatorPreview",
    "RecordingControls",
    "RecordingRequest",
    "RunRequest",
    "ScheduleEntry",
    "ScheduleRequest",
    "TeamJoinRequest",
    "TeamJoined",
    "TeamState",
]


@dataclass(frozen=True, slots=True)
class RecordingRequest:
    """What the record dialog asks for: a web recording (from *url*) or a desktop one."""

    url: str
    intent: str = ""
    profile: str | None = None
    headless: bool = False
    kind: Literal["web", "desktop"] = "web"


class RecordingControls(Protocol):
    """The handle on a recording in progress that the control bar drives."""

    @property
    def trajectory_id(self) -> str:
        """The recording's id."""
        ...

    @property
    def paused(self) -> bool:
        """Whether events are being dropped for now."""
        ...

    def pause(self) -> None:
        """Stop taking events until :meth:`resume` (what happens meanwhile is not recorded)."""
        ...

    def resume(self) -> None:
        """Take events again."""
        ...

    async def mark_sensitive(self) -> str | None:
        """Mark the focused field of the active page (desktop: the window last used)
        sensitive; its label (the window's title), or None if there is none."""
        ...

    def add_note(self, text: str) -> None:
        """Record a note from the demonstrator at this point of the recording."""
        ...

    def stop(self) -> None:
        """End the recording (as if the browser was closed)."""
        ...


@dataclass(frozen=True, slots=True)
class RunRequest:
    """One replay the run view starts.

    ``values`` are raw strings for the non-secret parameters, ``secrets`` the secret ones (they
    live in memory only, unless ``save_secrets`` puts them in the OS keyring).
    """

    version: WorkflowVersion
    values: Mapping[str, str] = field(default_factory=dict)
    secrets: Mapping[str, str] = field(default_factory=dict)
    options: ReplayOptions = field(default_factory=ReplayOptions)
    base_url: str | None = None
    headless: bool = False
    save_secrets: bool = False


class LocatorPreview(Protocol):
    """A live page the step editor tests locators against."""

    @property
    def url(self) -> str:
        """Where the page is now."""
        ...

    @property
    def is_open(self) -> bool:
        """Whether the page and its browser are still there (a person may close the window)."""
        ...

    async def test(self, locator: Locator, values: Mapping[str, str]) -> int:
        """Highlight what *locator* (rendered with *values*) matches; how many elements."""
        ...

    async def holds(self, condition: Expectation) -> bool:
        """Whether a block's condition about the page (placeholders filled) holds now."""
        ...

    async def items(self, source: PageItems) -> list[tuple[str, dict[str, str]]]:
        """The items a loop over the page's *source* (placeholders filled) would go over now:
        each one's text and fields."""
        ...

    async def close(self) -> None:
        """Close the page and its browser."""
        ...


@dataclass(frozen=True, slots=True)
class TeamState:
    """Where this machine stands, as the Settings screen's Team section shows it.

    Attributes:
        team: team mode (a team database is set) rather than personal mode.
        database: the team database's URL (no password), or the personal database's file.
        user: the team login (None in personal mode, or when the server was not reached).
        owner: whether the login owns the team's database.
        roles: the login's roles, each with what it may do in words, in role order.
        index: the team's search index server, if any.
        queue: the runner fleet's queue, if any.
        problem: why the team's server could not be reached or refused the login, in one line.
        restart_needed: the settings name another library than the one this window opened
            (after joining or leaving a team): it is used from the next start.
    """

    team: bool
    database: str
    user: str | None = None
    owner: bool = False
    roles: tuple[tuple[str, str], ...] = ()
    index: str | None = None
    queue: str | None = None
    problem: str | None = None
    restart_needed: bool = False


@dataclass(frozen=True, slots=True)
class TeamJoinRequest:
    """What the "Join a team" dialog asks for (the secrets go to the OS keyring)."""

    database: str
    password: str
    index: str | None = None
    token: str | None = None
    queue: str | None = None


@dataclass(frozen=True, slots=True)
class TeamJoined:
    """A team joined: what to tell the person (one line), and what changed."""

    message: str
    changes: Changes


@dataclass(frozen=True, slots=True)
class FleetCounts:
    """Rows of the fleet's newest jobs running, and needing a person's attention."""

    running: int = 0
    attention: int = 0


@dataclass(frozen=True, slots=True)
class FleetMember:
    """Who this window is in the team whose fleet it shows, and whether they may change the
    team's schedules (an approver, an admin or the database's owner)."""

    user: str
    roles: tuple[str, ...]
    may_schedule: bool


@dataclass(frozen=True, slots=True)
class ScheduleEntry:
    """A schedule as the Schedules list shows it: its workflow's name and its next firing in
    the schedule's zone (None while disabled)."""

    schedule: Schedule
    workflow: str
    next_fire: datetime | None


@dataclass(frozen=True, slots=True)
class ScheduleRequest:
    """What the schedule dialog asks for: a workflow (its approved version runs), the cron
    fields and zone, the values of its non-secret parameters (raw strings; a secret comes from
    each worker's keyring), and whether runs do irreversible steps without asking."""

    workflow_id: str
    cron: str
    timezone: str
    values: Mapping[str, str] = field(default_factory=dict)
    assume_yes: bool = False


class Backend(Protocol):
    """The services as the window uses them."""

    @property
    def settings(self) -> Settings:
        """The settings in force."""
        ...

    @property
    def workflows(self) -> WorkflowLibrary:
        """The workflow library (blocking: reads and writes hit SQLite and the index)."""
        ...

    @property
    def trajectories(self) -> TrajectoryLibrary:
        """Recordings (blocking)."""
        ...

    @property
    def runs(self) -> RunStore:
        """Run records (blocking)."""
        ...

    @property
    def media(self) -> MediaStore:
        """Screenshots (blocking)."""
        ...

    def llm_configured(self) -> bool:
        """Whether an LLM endpoint or key is configured."""
        ...

    def induce(
        self, trajectory_ids: Sequence[str], *, cancel: threading.Event | None = None
    ) -> Induced:
        """Induce and save a draft from one recording, or several of one task (blocking; the
        LLM names and describes it when one is configured).

        Raises:
            InductionCancelled: *cancel* was set (from another thread) first; nothing is saved.
            NotTheSameTaskError: the recordings cannot be combined.
        """
        ...

    async def record(
        self,
        request: RecordingRequest,
        *,
        on_started: Callable[[RecordingControls], object],
        on_event: Callable[[Event], object],
    ) -> Trajectory:
        """Record in Chromium until the browser closes or the controls stop it, or on the
        desktop (``request.kind``) until the controls stop it.

        Raises:
            BrowserError: no browser, or it would not start (nothing is stored).
            DesktopUnavailable: no display to record (nothing is stored).
        """
        ...

    async def replay(
        self,
        request: RunRequest,
        *,
        person: Person | None,
        on_event: Callable[[ReplayEvent], object],
        on_note: Callable[[str], object] | None = None,
    ) -> Run:
        """Run a version and learn from its repairs; the finished run record.

        Every step keeps a (masked) screenshot in the run record, so the run view can show it.
        Secrets asked to be remembered that the keyring would not keep are told to *on_note*
        (one line), and the run goes on with them.

        Raises:
            ParameterError: a value does not fit its parameter (nothing ran).
            BrowserError: no browser (no run is recorded).
        """
        ...

    def prepare_browser(self) -> None:
        """Load the browser automation code ahead of the first recording or run (blocking, a
        second or so the first time in a process; call it on a thread of its own, not the
        store thread)."""
        ...

    async def open_preview(self, url: str, *, headless: bool = False) -> LocatorPreview:
        """A browser page at *url* for testing locators.

        Raises:
            BrowserError: no browser, or it would not start.
        """
        ...

    def stored_secret(self, workflow_id: str, name: str) -> str | None:
        """A secret parameter's value saved in the OS keyring, if any (blocking)."""
        ...

    def last_values(self, workflow_id: str) -> dict[str, str]:
        """The non-secret values of the workflow's latest run (blocking)."""
        ...

    def save_settings(self, values: Mapping[str, Any]) -> Changes:
        """Write *values* to the settings file and use them from now on (blocking).

        Raises:
            SettingsError: a value is invalid (nothing is written).
        """
        ...

    def api_key_source(self) -> str:
        """Where the LLM API key comes from: ``environment``, ``keyring`` or ``none``."""
        ...

    def set_api_key(self, key: str | None) -> Changes:
        """Save the LLM API key in the OS keyring (None removes it); never in a file (blocking)."""
        ...

    def test_llm(self) -> str:
        """Call the configured LLM once; a one-line report of what answered (blocking).

        Raises:
            LLMError: not configured, unreachable, refused the key, or answered nonsense.
        """
        ...

    def browser_info(self) -> str:
        """One line: the browser recording and replay would use now, or why there is none."""
        ...

    def set_data_dir(self, path: str | None) -> Changes:
        """Use the folder *path* as the data directory from the next start (None: the default).

        Only matters while ``PROCEDURA_HOME`` is not set; nothing is moved (blocking).

        Raises:
            SettingsError: the path is relative, a file, or cannot be created or written.
        """
        ...

    def reindex(self) -> Reindexed:
        """Rebuild the search index from the stores; how many workflows and experiences (blocking).

        The index keeps the embeddings it was opened with (at start-up) until the next start.
        """
        ...

    # ── team mode and the runner fleet ──────────────────────────────────────────────────────

    def team_state(self) -> TeamState:
        """Personal or team mode and, in team mode, the login's roles (blocking: asks the
        team's server; a problem reaching it is in :attr:`TeamState.problem`, not raised)."""
        ...

    def join_team(self, request: TeamJoinRequest) -> TeamJoined:
        """Check the login (and the index) as ``procedura team join`` does, keep the secrets
        in the OS keyring and write the team's settings (blocking). Used from the next start.

        Raises:
            StoreError: unreachable, refused, no member, or no keyring (nothing is changed).
            SettingsError: a setting is invalid (nothing is changed).
        """
        ...

    def leave_team(self) -> Changes:
        """Forget the team's credentials and go back to personal mode from the next start
        (blocking)."""
        ...

    def submit_to_fleet(
        self, version: WorkflowVersion, rows: list[dict[str, str]], *, assume_yes: bool
    ) -> FleetJob:
        """Hand a batch's rows (checked already) to the team's fleet (blocking: the queue is
        reached). Secret values never go with them: each worker has its own.

        Raises:
            TransitionError: *version* is not approved.
            StoreError: no fleet, or the database or the queue could not be used.
        """
        ...

    def fleet_enabled(self) -> bool:
        """Whether the library this window opened is a team's with a runner fleet (a queue)."""
        ...

    def fleet_jobs(self, limit: int = 50) -> list[FleetJob]:
        """The fleet's newest jobs with their rows counted by state (blocking)."""
        ...

    def fleet_rows(self, job_id: str) -> list[FleetRow]:
        """A job's rows (blocking)."""
        ...

    def fleet_counts(self) -> FleetCounts:
        """How many rows of the newest jobs run, and need attention (blocking, one query)."""
        ...

    def cancel_fleet_job(self, job_id: str) -> int:
        """Stop a job: its queued rows now (how many), running rows before their next step
        (blocking)."""
        ...

    def resume_fleet_job(self, job_id: str) -> list[int]:
        """Queue again a job's cancelled rows and the failed ones that began no irreversible
        step; their numbers (blocking: the queue is reached)."""
        ...

    # ── the fleet's schedules ───────────────────────────────────────────────────────────────

    def fleet_member(self) -> FleetMember:
        """The login's roles in the team whose fleet this is (blocking: asks the server).

        Raises:
            StoreError: no fleet here, or the server could not be reached.
        """
        ...

    def schedules(self) -> list[ScheduleEntry]:
        """Every schedule of the team, oldest first, with its next firing (blocking)."""
        ...

    def next_firing(self, cron: str, timezone: str) -> datetime:
        """When *cron* in *timezone* fires next, in that zone. Pure and quick (well under a
        millisecond, up to ~20 ms for a date that never comes; the first call imports Celery's
        crontab, ~0.1 s: make it off the GUI thread first).

        Raises:
            ParameterError: a bad cron expression or zone (``name`` is ``cron`` or
                ``timezone``), in one line.
        """
        ...

    def local_zone(self) -> str | None:
        """This machine's IANA zone name, or None when it cannot be told."""
        ...

    def add_schedule(self, request: ScheduleRequest) -> Schedule:
        """Check everything, then store the schedule, enabled (blocking).

        Raises:
            ParameterError: a bad cron, zone or value (nothing is stored).
            TransitionError: the workflow has no approved version.
            NotAllowedError: the member is not an approver (the team's server refuses).
        """
        ...

    def update_schedule(self, schedule_id: str, request: ScheduleRequest) -> Schedule:
        """Change a schedule's cron, zone, values and "without asking" (its workflow stays;
        blocking). Raises as :meth:`add_schedule` does."""
        ...

    def set_schedule_enabled(self, schedule_id: str, enabled: bool) -> Schedule:
        """Enable or disable a schedule (blocking).

        Raises:
            NotAllowedError: the member is not an approver.
        """
        ...

    def remove_schedule(self, schedule_id: str) -> Schedule:
        """Delete a schedule; the jobs it made stay (blocking).

        Raises:
            NotAllowedError: the member is not an approver.
        """
        ...
