"""The window's :class:`~desktop_app.ui.backend.Backend`, implemented over the services."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, Final, TypeVar

from desktop_app.adapters.secrets import remember_parameter_secrets
from desktop_app.adapters.write_behind import WriteBehind
from desktop_app.app import Services, api_key, make_structured_llm, replay
from desktop_app.core.errors import StoreError
from desktop_app.core.library import WorkflowLibrary
from desktop_app.core.models.fleet import FleetJob, FleetRow, RowState, Schedule
from desktop_app.core.models.run import Run
from desktop_app.core.models.trajectory import Event, Trajectory
from desktop_app.core.models.workflow import WorkflowVersion
from desktop_app.core.ports import MediaStore, RunStore
from desktop_app.core.replay.engine import ReplayEvent
from desktop_app.core.replay.parameters import bind_parameters
from desktop_app.core.replay.person import Person
from desktop_app.core.trajectories import TrajectoryLibrary
from desktop_app.core.values import value_text
from desktop_app.ops.changes import Changes, Origin
from desktop_app.ops.induce import Induced, LlmUse, choose_llm, induce
from desktop_app.ops.library import Reindexed, reindex
from desktop_app.ops.secrets import remember_secrets
from desktop_app.settings import Settings
from desktop_app.ui.backend import (
    FleetCounts,
    FleetMember,
    LocatorPreview,
    RecordingControls,
    RecordingRequest,
    RunRequest,
    ScheduleEntry,
    ScheduleRequest,
    TeamJoined,
    TeamJoinRequest,
    TeamState,
)

__all__ = ["ServicesBackend"]

T = TypeVar("T")

#: The settings that choose the library (personal or a team's): the window keeps using the ones
#: it opened with until the next start, whatever the settings file says by then.
_LIBRARY_SETTINGS: Final = ("team_database", "team_index", "team_queue")

#: What a run or a recording imports first: Playwright and the adapters over it (80-120 ms of the
#: GUI thread if the first run imports them on the loop, most of it PySide's import hook).
_BROWSER_MODULES: Final = (
    "playwright.async_api",
    "desktop_app.adapters.browser.launch",
    "desktop_app.adapters.browser.replay_page",
    "desktop_app.adapters.browser.web_recorder",
)


class ServicesBackend:
    """Everything the window does, over one data directory's services (which it does not own)."""

    def __init__(self, services: Services) -> None:
        self._services = services
        # A replay's record and screenshots are written behind it; the window reads through
        # the same writer, so it sees them before they are on disk (a step's screenshot).
        self._writes = WriteBehind(services.runs, services.media)
        #: The settings the stores were opened with, and those the next start will use.
        self._opened = services.settings
        self._next = services.settings

    @property
    def services(self) -> Services:
        """The services underneath."""
        return self._services

    @property
    def settings(self) -> Settings:
        """The settings in force."""
        return self._services.settings

    @property
    def workflows(self) -> WorkflowLibrary:
        """The workflow library."""
        return self._services.workflows

    @property
    def trajectories(self) -> TrajectoryLibrary:
        """Recordings."""
        return self._services.trajectories

    @property
    def runs(self) -> RunStore:
        """Run records (a read waits for the replay's writes given before it)."""
        return self._writes.runs

    @property
    def media(self) -> MediaStore:
        """Screenshots (one a replay has not written yet is read from memory)."""
        return self._writes.media

    def llm_configured(self) -> bool:
        """Whether an LLM endpoint or key is configured."""
        key, _ = api_key(self.settings)
        return key is not None or self.settings.llm_base_url is not None

    def induce(
        self, trajectory_ids: Sequence[str], *, cancel: threading.Event | None = None
    ) -> Induced:
        """Induce and save a draft from recordings (the LLM when one is configured); *cancel*
        stops it."""
        settings = self.settings
        return induce(
            self._services.trajectories,
            self._services.workflows,
            trajectory_ids,
            actor=settings.actor,
            origin=Origin.WINDOW,
            llm=choose_llm(LlmUse.AUTO, lambda: make_structured_llm(settings)),
            llm_model=settings.llm_model,
            cancel=cancel,
        )

    async def record(
        self,
        request: RecordingRequest,
        *,
        on_started: Callable[[RecordingControls], object],
        on_event: Callable[[Event], object],
    ) -> Trajectory:
        """Record in Chromium, or on the desktop, with the control bar's controls."""
        from desktop_app.gui.recording import record_desktop_with_controls, record_with_controls

        record = record_desktop_with_controls if request.kind == "desktop" else record_with_controls
        return await record(self._services, request, on_started=on_started, on_event=on_event)

    async def replay(
        self,
        request: RunRequest,
        *,
        person: Person | None,
        on_event: Callable[[ReplayEvent], object],
        on_note: Callable[[str], object] | None = None,
    ) -> Run:
        """Bind the values, keep secrets in the keyring if asked (*on_note* hears what was not
        kept, and the run goes on), run, and learn."""
        workflow = request.version.workflow
        params = bind_parameters(workflow, request.values, secrets=request.secrets)
        # What the form holds was typed or confirmed there (the keyring's are shown masked).
        typed = {name: request.secrets.get(name, "") for name in params.secrets}
        missed = remember_secrets(
            remember_parameter_secrets,
            workflow.id,
            typed,
            asked=request.save_secrets,
            given=typed.keys(),
        )
        if missed is not None and on_note is not None:
            on_note(missed)
        options = replace(request.options, screenshots=True, screenshot_every_step=True)
        result = await replay(
            self._services,
            request.version,
            params,
            options=options,
            person=person,
            base_url=request.base_url,
            headless=request.headless,
            on_event=on_event,
            writes=self._writes,
        )
        return result.run

    def prepare_browser(self) -> None:
        """Import Playwright and the browser adapters, so the first run or recording does not
        import them on the loop the window shares."""
        for name in _BROWSER_MODULES:
            importlib.import_module(name)

    async def open_preview(self, url: str, *, headless: bool = False) -> LocatorPreview:
        """A browser page at *url* for the editor's "Test" buttons."""
        from desktop_app.adapters.browser.preview import open_preview

        return await open_preview(self.settings.browser, url, headless=headless)

    def stored_secret(self, workflow_id: str, name: str) -> str | None:
        """A secret parameter's value from the OS keyring."""
        from desktop_app.adapters.secrets import get_parameter_secret

        return get_parameter_secret(workflow_id, name)

    def last_values(self, workflow_id: str) -> dict[str, str]:
        """The non-secret values of the workflow's latest run."""
        for run in self.runs.runs(workflow_id, limit=1):
            return {
                name: value_text(value)
                for name, value in run.parameters.items()
                if name not in run.secret_parameters and value is not None
            }
        return {}

    def save_settings(self, values: Mapping[str, Any]) -> Changes:
        """Write the settings file and use the new settings from now on."""
        from desktop_app.gui.settings_io import save_settings

        self._use(save_settings(self.settings, values))
        return Changes.of(Origin.WINDOW, settings=True)

    def _use(self, saved: Settings) -> None:
        """Use *saved* from now on, except what chooses the library (and who the actor is
        there), which the next start takes: the stores open now stay the ones in use."""
        self._next = saved
        opened = self._opened
        pinned: dict[str, Any] = {name: getattr(opened, name) for name in _LIBRARY_SETTINGS}
        if saved.team_database != opened.team_database:
            pinned["actor"] = opened.actor
        self._services.settings = saved.model_copy(update=pinned)

    def api_key_source(self) -> str:
        """Where the API key comes from."""
        return api_key(self.settings)[1]

    def set_api_key(self, key: str | None) -> Changes:
        """Save (or with None, remove) the API key in the OS keyring."""
        from desktop_app.adapters.secrets import delete_api_key, set_api_key

        if key:
            set_api_key(key)
        else:
            delete_api_key()
        return Changes.of(Origin.WINDOW, settings=True)

    def test_llm(self) -> str:
        """One call to the configured LLM; what answered."""
        from desktop_app.gui.settings_io import test_llm_connection

        return test_llm_connection(self.settings)

    def browser_info(self) -> str:
        """The browser found now for the settings in force."""
        from desktop_app.gui.settings_io import describe_browser

        return describe_browser(self.settings.browser)

    def set_data_dir(self, path: str | None) -> Changes:
        """Write (or remove) the data-directory pointer read at the next start."""
        from pathlib import Path

        from desktop_app.gui.settings_io import write_data_dir_pointer

        write_data_dir_pointer(Path(path) if path else None)
        return Changes.of(Origin.WINDOW, settings=True)

    def reindex(self) -> Reindexed:
        """Rebuild the search index."""
        return reindex(self._services.workflows, origin=Origin.WINDOW)

    # ── team mode and the runner fleet ──────────────────────────────────────────────────────

    def team_state(self) -> TeamState:
        """The mode the settings file chooses and, in team mode, the login's roles there."""
        from desktop_app.adapters.sql.team import ROLE_RIGHTS, TeamRole
        from desktop_app.team import team_status

        settings = self._next
        opened = self._opened
        restart = any(
            getattr(settings, name) != getattr(opened, name) for name in _LIBRARY_SETTINGS
        )
        status = team_status(settings)
        member = status.member
        return TeamState(
            team=status.team,
            database=status.database,
            user=member.user if member is not None else None,
            owner=member.owner if member is not None else False,
            roles=tuple(
                (role.value, ROLE_RIGHTS[role])
                for role in TeamRole
                if member is not None and role in member.roles
            ),
            index=status.index,
            queue=settings.team_queue,
            problem=status.problem,
            restart_needed=restart,
        )

    def join_team(self, request: TeamJoinRequest) -> TeamJoined:
        """``procedura team join`` from the window: checked, secrets kept, settings written
        (from the next start); nothing changes when a step fails."""
        from desktop_app.adapters.secrets import delete_team_secret, set_team_secret
        from desktop_app.gui.settings_io import save_settings
        from desktop_app.team import join_team, keep_index_token, keep_password

        settings = self._next
        queue, queue_password = _split_queue(request.queue)
        index = request.index or None
        token = request.token or None
        values, member = join_team(
            request.database, request.password or None, index=index, token=token
        )
        database = str(values["team_database"])
        password = request.password or _inline_password(request.database)
        kept: list[tuple[str, str]] = []
        try:
            if password:
                try:
                    keep_password(database, password)
                    kept.append(("password", database))
                except StoreError:
                    if settings.team_password is None:
                        raise
            if index is not None and token:
                try:
                    keep_index_token(index, token)
                    kept.append(("token", index))
                except StoreError:
                    if settings.team_index_token is None:
                        raise
            if queue is not None and queue_password:
                set_team_secret("queue", queue, queue_password)
                kept.append(("queue", queue))
            self._use(save_settings(self.settings, {**values, "team_queue": queue}))
        except BaseException:
            for kind, where in kept:
                delete_team_secret(kind, where)
            raise
        roles = ", ".join(sorted(r.value for r in member.roles)) or "owner"
        return TeamJoined(
            message=(
                f"Joined {member.database} as {member.user} ({roles}). Procedura opens the "
                "team's library when it next starts: quit it and start it again."
            ),
            changes=Changes.of(Origin.WINDOW, settings=True),
        )

    def leave_team(self) -> Changes:
        """``procedura team leave`` from the window (personal mode from the next start)."""
        from desktop_app.adapters.secrets import delete_team_secret
        from desktop_app.gui.settings_io import save_settings
        from desktop_app.team import leave_team

        settings = self._next
        values = leave_team(settings)
        if settings.team_queue is not None:
            delete_team_secret("queue", settings.team_queue)
        self._use(save_settings(self.settings, {**values, "team_queue": None}))
        return Changes.of(Origin.WINDOW, settings=True)

    def submit_to_fleet(
        self, version: WorkflowVersion, rows: list[dict[str, str]], *, assume_yes: bool
    ) -> FleetJob:
        """Submit a batch to the fleet (the fleet's verb)."""
        from desktop_app.fleet.jobs import submit_job

        return self._fleet(
            lambda _store: submit_job(self._services, version, rows, assume_yes=assume_yes)
        )

    def fleet_enabled(self) -> bool:
        """Whether the stores open are a team's with a queue."""
        return self._opened.team and self._opened.team_queue is not None

    def _fleet(self, act: Callable[[Any], T]) -> T:
        """*act* on the team's fleet store; the server's refusal or absence in one line.

        Raises:
            StoreError: no fleet here, or the team's database could not be used.
        """
        from sqlalchemy.exc import DBAPIError

        from desktop_app.adapters.sql.fleet_store import SqlFleetStore

        if not self.fleet_enabled():
            raise StoreError(
                "no runner fleet: join a team with its queue (team_queue), then restart"
            )
        try:
            return act(SqlFleetStore(self._services.engine))
        except DBAPIError as exc:
            lines = str(exc.orig).strip().splitlines()
            raise StoreError(
                f"the team's database: {lines[0] if lines else type(exc.orig).__name__}"
            ) from None

    def fleet_jobs(self, limit: int = 50) -> list[FleetJob]:
        """The newest jobs."""
        return self._fleet(lambda store: store.jobs(limit=limit))

    def fleet_rows(self, job_id: str) -> list[FleetRow]:
        """A job's rows."""
        return self._fleet(lambda store: store.rows(job_id))

    def fleet_counts(self) -> FleetCounts:
        """Rows running and needing attention in the newest jobs."""
        counts: dict[RowState, int] = self._fleet(lambda store: store.active_counts())
        return FleetCounts(
            running=counts.get(RowState.RUNNING, 0),
            attention=counts.get(RowState.NEEDS_ATTENTION, 0),
        )

    def cancel_fleet_job(self, job_id: str) -> int:
        """Cancel a job (the fleet's verb)."""
        from desktop_app.fleet.jobs import cancel_job

        return self._fleet(lambda _store: cancel_job(self._services, job_id))

    def resume_fleet_job(self, job_id: str) -> list[int]:
        """Resume a job (the fleet's verb: rows queued again reach the queue)."""
        from desktop_app.fleet.jobs import resume_job

        return self._fleet(lambda _store: resume_job(self._services, job_id))

    # ── the fleet's schedules (the verbs of desktop_app.fleet.schedules) ────────────────────

    def fleet_member(self) -> FleetMember:
        """The login's roles, asked of the team's server over the fleet's own connection."""
        from desktop_app.adapters.sql.team import TeamRole, membership

        member = self._fleet(lambda _store: membership(self._services.engine))
        return FleetMember(
            user=member.user,
            roles=tuple(role.value for role in TeamRole if role in member.roles),
            may_schedule=member.may(TeamRole.APPROVER),
        )

    def schedules(self) -> list[ScheduleEntry]:
        """Every schedule, with its workflow's name and next firing."""
        from desktop_app.fleet.schedules import list_schedules

        return self._fleet(
            lambda _store: [
                ScheduleEntry(v.schedule, v.workflow, v.next_fire)
                for v in list_schedules(self._services)
            ]
        )

    def next_firing(self, cron: str, timezone: str) -> datetime:
        """The next firing of *cron* in *timezone* (pure: no store is touched)."""
        from desktop_app.fleet.schedules import parse_timing

        timing = parse_timing(cron, timezone)
        return timing.next_after(timing.now())

    def local_zone(self) -> str | None:
        """This machine's zone (tzlocal)."""
        from desktop_app.fleet.schedules import local_zone

        return local_zone()

    def add_schedule(self, request: ScheduleRequest) -> Schedule:
        """``procedura schedule add`` from the window."""
        from desktop_app.fleet.schedules import add_schedule

        return self._fleet(
            lambda _store: add_schedule(
                self._services,
                request.workflow_id,
                request.cron,
                request.timezone,
                request.values,
                assume_yes=request.assume_yes,
            )
        )

    def update_schedule(self, schedule_id: str, request: ScheduleRequest) -> Schedule:
        """A schedule's fields, zone, values and "without asking" changed."""
        from desktop_app.fleet.schedules import update_schedule

        return self._fleet(
            lambda _store: update_schedule(
                self._services,
                schedule_id,
                cron=request.cron,
                timezone=request.timezone,
                values=request.values,
                assume_yes=request.assume_yes,
            )
        )

    def set_schedule_enabled(self, schedule_id: str, enabled: bool) -> Schedule:
        """``procedura schedule enable`` / ``disable``."""
        from desktop_app.fleet.schedules import set_enabled

        return self._fleet(lambda _store: set_enabled(self._services, schedule_id, enabled))

    def remove_schedule(self, schedule_id: str) -> Schedule:
        """``procedura schedule remove``."""
        from desktop_app.fleet.schedules import remove_schedule

        return self._fleet(lambda _store: remove_schedule(self._services, schedule_id))


def _inline_password(url: str) -> str | None:
    """The password written in a database URL, if any."""
    from sqlalchemy import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        password = make_url(url).password
    except ArgumentError:
        return None
    return None if password is None else str(password)


def _split_queue(url: str | None) -> tuple[str | None, str | None]:
    """The queue's URL without its password (a setting), and the password (for the keyring).

    Raises:
        StoreError: not a Redis URL.
    """
    from urllib.parse import urlsplit, urlunsplit

    if not url or not url.strip():
        return None, None
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss") or not parts.hostname:
        raise StoreError(f"the queue is a Redis URL (redis://host:6379/0), not {url}")
    if parts.password is None:
        return url, None
    host = parts.netloc.rsplit("@", 1)[-1]
    netloc = f"{parts.username}@{host}" if parts.username else host
    bare = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return bare, parts.password
