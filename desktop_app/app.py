"""The composition root: settings → adapters → services. The only place that wires things."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import Engine

from desktop_app import __version__
from desktop_app.adapters.browsers import find_browser
from desktop_app.adapters.media_store import AddressedMediaStore, FileMediaStore
from desktop_app.adapters.sql.database import (
    HEAD_REVISION,
    current_revision,
    migrate,
    open_database,
)
from desktop_app.adapters.sql.index_queue import SqlIndexQueue
from desktop_app.adapters.sql.run_store import SqlExperienceStore, SqlRunStore
from desktop_app.adapters.sql.trajectory_store import SqlTrajectoryStore
from desktop_app.adapters.sql.workflow_store import SqlWorkflowStore
from desktop_app.adapters.write_behind import WriteBehind
from desktop_app.adapters.writer_lock import WriterLock
from desktop_app.core.errors import BrowserError, StoreError
from desktop_app.core.library import WorkflowLibrary
from desktop_app.core.llm import StructuredLLM
from desktop_app.core.models.run import Run
from desktop_app.core.models.trajectory import Event, Trajectory, TrajectoryKind
from desktop_app.core.models.workflow import WorkflowVersion
from desktop_app.core.ports import SearchIndex
from desktop_app.core.redaction import scrub_stated_secrets
from desktop_app.core.replay.browser import BrowserPort, NoBrowser
from desktop_app.core.replay.calls import domains_of, origin_of
from desktop_app.core.replay.desktop_kinds import needs_browser, needs_desktop
from desktop_app.core.replay.engine import Replayer, ReplayEvent, ReplayOptions, ReplayOutcome
from desktop_app.core.replay.evidence import RECENT
from desktop_app.core.replay.learning import REPLAY_ACTOR, Learned, learn
from desktop_app.core.replay.memory import ExperienceMemory
from desktop_app.core.replay.online import propose
from desktop_app.core.replay.parameters import BoundParameters
from desktop_app.core.replay.person import Person
from desktop_app.core.replay.render import RebaseError, rebase
from desktop_app.core.trajectories import TrajectoryLibrary
from desktop_app.settings import Settings

if TYPE_CHECKING:
    from pathlib import Path

    from playwright.async_api import Page

    from desktop_app.adapters.browser.web_recorder import WebRecorder
    from desktop_app.adapters.desktop.port import SystemDesktop
    from desktop_app.adapters.desktop.recorder import DesktopRecorder
    from desktop_app.adapters.search.server import ChromaServer

__all__ = [
    "ReplayResult",
    "Services",
    "api_key",
    "collect_info",
    "make_structured_llm",
    "open_services",
    "record_desktop",
    "record_web",
    "replay",
    "team_index_server",
    "team_url",
]


@dataclass
class Services:
    """Everything the command line and the GUI use, wired to one data directory."""

    settings: Settings
    engine: Engine
    workflows: WorkflowLibrary
    trajectories: TrajectoryLibrary
    runs: SqlRunStore
    experiences: SqlExperienceStore
    media: AddressedMediaStore
    lock: WriterLock | None
    index_queue: SqlIndexQueue
    _closers: list[Any] = field(default_factory=list)

    @property
    def writable(self) -> bool:
        """Whether this process may write: it holds the writer lock, or it is a member of a
        team, whose server takes every member's writes (and refuses what their role may not)."""
        return self.settings.team or (self.lock is not None and self.lock.held)

    def close(self) -> None:
        """Release the index, the database and the writer lock."""
        for closer in reversed(self._closers):
            closer()
        self._closers.clear()
        self.engine.dispose()
        if self.lock is not None:
            self.lock.release()


def api_key(settings: Settings) -> tuple[str | None, str]:
    """The LLM API key and where it came from (``environment``, ``keyring`` or ``none``)."""
    if settings.llm_api_key is not None:
        return settings.llm_api_key.get_secret_value(), "environment"
    from desktop_app.adapters.secrets import get_api_key

    stored = get_api_key()
    return (stored, "keyring") if stored else (None, "none")


def _make_index(settings: Settings, engine: Engine, closers: list[Any]) -> SearchIndex:
    from desktop_app.adapters.search.chroma_index import ChromaSearchIndex
    from desktop_app.adapters.search.embeddings import make_embedding_function
    from desktop_app.adapters.search.hybrid_index import HybridSearchIndex
    from desktop_app.adapters.sql.text_index import SqlTextIndex

    if settings.embedding == "openai":
        key, _ = api_key(settings)
        function = make_embedding_function(
            "openai",
            base_url=settings.embedding_base_url or settings.llm_base_url,
            model=settings.embedding_model,
            api_key=key,
        )
    else:
        function = make_embedding_function("minilm")
    index = HybridSearchIndex(
        ChromaSearchIndex(_index_target(settings), function), SqlTextIndex(engine)
    )
    closers.append(index.close)
    return index


@contextlib.contextmanager
def open_services(settings: Settings, *, write: bool, index_now: bool = True) -> Iterator[Services]:
    """Open the stores in *settings.home* and yield the services over them.

    With *write*, this process takes the writer lock first (one writer at a time) and holds it
    until the block ends, and first finishes what an earlier process left (a recording, a run,
    the search index: :func:`finish_indexing`; with *index_now* False the caller does that last
    one itself, off its GUI thread). Without it the stores are only read; a database that needs
    migrating is migrated under the lock for that moment.

    Raises:
        StoreLockedError: *write* was asked for and another process holds the lock.
    """
    # Team mode: the server takes concurrent writers; no lock on this machine's folder.
    lock = WriterLock(settings.home) if write and not settings.team else None
    if lock is not None:
        lock.acquire()
    try:
        engine = open_database(team_url(settings) if settings.team else settings.database_path)
        if current_revision(engine) != HEAD_REVISION:
            if lock is None and not settings.team:
                with WriterLock(settings.home):
                    migrate(engine)
            else:
                migrate(engine)
        closers: list[Any] = []
        experiences = SqlExperienceStore(engine)
        queue = SqlIndexQueue(engine)
        services = Services(
            settings=settings,
            engine=engine,
            workflows=WorkflowLibrary(
                SqlWorkflowStore(engine),
                lambda: _make_index(settings, engine, closers),
                experiences,
                queue,
            ),
            index_queue=queue,
            trajectories=TrajectoryLibrary(SqlTrajectoryStore(engine)),
            runs=SqlRunStore(engine),
            experiences=experiences,
            media=_media_store(settings, engine),
            lock=lock,
            _closers=closers,
        )
    except BaseException:
        if lock is not None:
            lock.release()
        raise
    try:
        if write and not settings.team:  # a team's are others' recordings and runs under way
            services.trajectories.recover_abandoned()
            services.runs.interrupt_running("the process running it ended before the run finished")
            if index_now:
                finish_indexing(services)
        yield services
    finally:
        services.close()


def team_url(settings: Settings) -> str:
    """The team database's URL with its password (from the environment, else the keyring).

    Raises:
        StoreError: no password is known for it.
    """
    from sqlalchemy import make_url

    assert settings.team_database is not None
    if settings.team_password is not None:
        password: str | None = settings.team_password.get_secret_value()
    else:
        from desktop_app.adapters.secrets import get_team_secret

        password = get_team_secret("password", settings.team_database)
    if password is None:
        raise StoreError(
            f"no password for {settings.team_database}: run procedura team join, or set "
            "PROCEDURA_TEAM_PASSWORD"
        )
    url = make_url(settings.team_database).set(password=password)
    return url.render_as_string(hide_password=False)


def _index_target(settings: Settings) -> Path | ChromaServer:
    """Where the embedding index lives: this folder's, or the team's Chroma server (with its
    token from the environment, else the keyring).

    Raises:
        StoreError: the team's index address is not one.
    """

    if settings.team_index is None:
        return settings.index_dir
    if settings.team_index_token is not None:
        token: str | None = settings.team_index_token.get_secret_value()
    else:
        from desktop_app.adapters.secrets import get_team_secret

        token = get_team_secret("token", settings.team_index)
    return team_index_server(settings.team_index, token, settings.team_database)


def team_index_server(index: str, token: str | None, database: str | None) -> ChromaServer:
    """The team's Chroma server at *index*; the team's entries are in the Chroma database named
    as the team's PostgreSQL *database* (a URL), so one server can hold several teams.

    Raises:
        StoreError: *index* is not a Chroma server's address.
    """
    from sqlalchemy import make_url

    from desktop_app.adapters.search.server import DEFAULT_DATABASE, ChromaServer

    name = (make_url(database).database if database else None) or DEFAULT_DATABASE
    try:
        return ChromaServer.from_url(index, token=token, database=name)
    except ValueError as exc:
        raise StoreError(f"setting team_index: {exc}") from None


def _media_store(settings: Settings, engine: Engine) -> AddressedMediaStore:
    if settings.team:
        from desktop_app.adapters.sql.media_store import SqlMediaStore

        return SqlMediaStore(engine, settings.home / "media-cache")
    return FileMediaStore(settings.media_dir)


def finish_indexing(services: Services) -> int:
    """Tell the search index what a process that ended before telling it left marked; how
    many changes that was. An index that cannot be opened now keeps the marks for the next
    start (and `procedura doctor`): the library opens without it; search says what is wrong
    when used. Slow when much was left (each entry is embedded): the app runs it in the
    background once its window is up."""
    with contextlib.suppress(StoreError):
        return services.workflows.repair_index()
    return 0


def collect_info(services: Services) -> dict[str, Any]:
    """What ``procedura info`` reports: version, where data lives, counts, browser and LLM."""
    settings = services.settings
    workflows, versions = services.workflows.count()
    media_files, media_bytes = services.media.count()
    browser = find_browser(settings.browser)
    key, key_source = api_key(settings)
    return {
        "version": __version__,
        "data_dir": str(settings.home),
        "database": settings.team_database or str(settings.database_path),
        "schema_revision": current_revision(services.engine),
        "counts": {
            "workflows": workflows,
            "workflow_versions": versions,
            "trajectories": services.trajectories.count(),
            "runs": services.runs.count(),
            "experiences": services.experiences.count(),
            "media_files": media_files,
            "media_bytes": media_bytes,
            "index_pending": len(services.index_queue.pending()),
        },
        "browser": (
            {"found": True, "path": str(browser.path), "source": browser.source}
            if browser
            else {"found": False, "path": None, "source": None}
        ),
        "llm": {
            "configured": key is not None or settings.llm_base_url is not None,
            "base_url": settings.llm_base_url,
            "model": settings.llm_model,
            "api_key": key_source,
        },
        "embedding": settings.embedding,
    }


async def record_web(
    services: Services,
    *,
    url: str | None,
    intent: str,
    attach: str | None = None,
    profile: str | None = None,
    headless: bool = False,
    stop: asyncio.Event | None = None,
    on_started: Callable[[str, Page], object] | None = None,
    on_recorder: Callable[[WebRecorder], object] | None = None,
    on_event: Callable[[Event], object] | None = None,
) -> Trajectory:
    """Record a demonstration in Chromium until its windows close or *stop* is set.

    Every event is stored as it happens; the trajectory is finished (noise dropped) at the end,
    whatever ended the recording. Once the first page is open, *on_started* gets the
    trajectory's id and the page, and *on_recorder* the recorder (to pause it, add notes, mark
    fields sensitive); *on_event* sees every event as it is stored (on the loop's thread).

    Raises:
        BrowserError: no browser, it could not start or be attached to, or *url* could not be
            opened (nothing is stored).
    """
    from playwright.async_api import Error as PlaywrightError

    from desktop_app.adapters.browser.launch import open_browser
    from desktop_app.adapters.browser.web_recorder import WebRecorder
    from desktop_app.resources import resource_path

    settings = services.settings
    browser = await open_browser(
        configured=settings.browser,
        headless=headless,
        profile_dir=settings.home / "profiles" / profile if profile else None,
        attach=attach,
        viewport=(1280, 800) if headless else None,
    )
    try:
        header = Trajectory(
            intent=intent,
            kind=TrajectoryKind.WEB,
            start_url=url,
            recorder=f"procedura-web {__version__}",
        )
        session = services.trajectories.start_recording(header)
        if on_event is not None:
            session.subscribe(on_event)
        recorder = WebRecorder(
            browser,
            session,
            services.media,
            resource_path("recorder", "capture.js"),
            on_scrubbed=lambda: _checkpoint(services.engine),
        )
        try:
            page = await recorder.start(url)
        except BaseException as exc:
            await recorder.stop()
            if session.event_count:
                session.finish()
            else:  # the recording never began: keep nothing
                services.trajectories.delete(session.trajectory_id, confirmed=True)
            if isinstance(exc, PlaywrightError):
                reason = _first_line(exc).removeprefix("Page.goto: ")
                raise BrowserError(f"could not open {url}: {reason}") from None
            raise
        try:
            if on_started is not None:
                on_started(session.trajectory_id, page)
            if on_recorder is not None:
                on_recorder(recorder)
            waiters = [asyncio.create_task(recorder.closed.wait())]
            if stop is not None:
                waiters.append(asyncio.create_task(stop.wait()))
            _, pending = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
            for task in pending:
                task.cancel()
        finally:
            await recorder.stop()
            trajectory = session.finish(secrets=recorder.typed_secrets)
            if trajectory.intent != scrub_stated_secrets(intent):  # it stated a typed secret
                _checkpoint(services.engine)  # the intent stored at the start must not linger
    finally:
        await browser.close()
    return trajectory


async def record_desktop(
    services: Services,
    *,
    intent: str,
    stop: asyncio.Event | None = None,
    on_started: Callable[[str], object] | None = None,
    on_recorder: Callable[[DesktopRecorder], object] | None = None,
    on_event: Callable[[Event], object] | None = None,
    sensitive_windows: Sequence[str] = (),
    exclude_terminal: bool = False,
) -> Trajectory:
    """Record a demonstration on the desktop (outside the browser) until *stop* is set.

    Clicks, typing and hotkeys in every window but Procedura's own are recorded; every event is
    stored as it happens and the trajectory is finished at the end, whatever ended the
    recording (*stop*, or this task being cancelled). Once listening, *on_started* gets the
    trajectory's id and *on_recorder* the recorder (to pause it, add notes, mark windows and
    regions sensitive, exclude windows); *on_event* sees every event as it is stored (on the
    loop's thread). Windows matching *sensitive_windows* (see
    :meth:`~desktop_app.adapters.desktop.recorder.DesktopRecorder.mark_sensitive_window`) are
    sensitive from the start. With *exclude_terminal*, what is done in the terminal this process
    was started from is left out (the command line's Ctrl+C); there is none when standard input
    is not a terminal (see :func:`~desktop_app.adapters.desktop.recorder.terminal_window`).

    Raises:
        DesktopUnavailable: no display, or input cannot be captured here (nothing is stored).
    """
    from desktop_app.adapters.desktop import require_display
    from desktop_app.adapters.desktop.recorder import DesktopRecorder, terminal_window

    require_display()
    terminal = terminal_window() if exclude_terminal else None
    header = Trajectory(
        intent=intent,
        kind=TrajectoryKind.DESKTOP,
        recorder=f"procedura-desktop {__version__}",
    )
    session = services.trajectories.start_recording(header)
    if on_event is not None:
        session.subscribe(on_event)
    recorder = DesktopRecorder(session, services.media)
    for pattern in sensitive_windows:
        recorder.mark_sensitive_window(pattern)
    if terminal is not None:
        recorder.exclude_window(terminal.handle)
    try:
        recorder.start()
    except BaseException:
        await recorder.stop()
        services.trajectories.delete(session.trajectory_id, confirmed=True)
        raise
    try:
        if on_started is not None:
            on_started(session.trajectory_id)
        if on_recorder is not None:
            on_recorder(recorder)
        await (stop.wait() if stop is not None else asyncio.get_running_loop().create_future())
    finally:
        await recorder.stop()
        trajectory = session.finish()
    return trajectory


def _checkpoint(engine: Engine) -> None:
    """Fold SQLite's write-ahead log into the database and empty it: values just scrubbed
    from the database must not linger in the log (secure_delete only clears the database)."""
    if engine.dialect.name != "sqlite":  # a server's log is the server's to keep
        return
    with engine.connect() as connection:
        connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def make_structured_llm(settings: Settings, *, secrets: Sequence[str] = ()) -> StructuredLLM | None:
    """The configured LLM (None when none is: no endpoint and no key), with the run's budget."""
    from desktop_app.adapters.llm import make_llm

    key, _ = api_key(settings)
    return make_llm(
        settings.llm_base_url,
        settings.llm_model,
        key,
        settings.llm_timeout_s,
        max_calls=settings.llm_max_calls_per_run,
        max_tokens=settings.llm_max_tokens_per_run,
        secrets=secrets,
    )


def _callee(services: Services, workflow_id: str, number: int | None) -> WorkflowVersion:
    if number is not None:
        return services.workflows.get(workflow_id, number)
    return services.workflows.runnable(workflow_id)


def _rebased(version: WorkflowVersion, base_url: str, origin: str | None) -> WorkflowVersion:
    if origin is None:
        raise RebaseError(f"workflow {version.workflow.name!r} opens no http(s) URL to move")
    return version.model_copy(update={"workflow": rebase(version.workflow, base_url, origin)})


@dataclass
class ReplayResult:
    """A finished replay: the run record, the repairs, and what was learned from them."""

    outcome: ReplayOutcome
    learned: Learned

    @property
    def run(self) -> Run:
        """The run record (with the proposed version, if any)."""
        return self.outcome.run


async def open_desktop() -> SystemDesktop:
    """The desktop of this session, for desktop steps (close it after the run).

    Raises:
        DesktopUnavailable: no display here, or pynput, mss or OpenCV cannot be loaded.
    """
    from desktop_app.adapters.desktop.port import SystemDesktop

    return await SystemDesktop.open()


async def replay(
    services: Services,
    version: WorkflowVersion,
    params: BoundParameters,
    *,
    options: ReplayOptions,
    person: Person | None = None,
    base_url: str | None = None,
    headless: bool = True,
    on_event: Callable[[ReplayEvent], object] | None = None,
    on_page: Callable[[Page], object] | None = None,
    writes: WriteBehind | None = None,
    before_step: Callable[[str, str, bool], Awaitable[None]] | None = None,
    browser_factory: Callable[[], Awaitable[Any]] | None = None,
) -> ReplayResult:
    """Replay *version* in a fresh browser (or what *browser_factory* gives: an object with
    ``context`` and ``close()``, or a kept page), then learn from what healed; *before_step* is the
    engine's (:class:`~desktop_app.core.replay.engine.Replayer`).

    The run record and screenshots are written behind the run on a thread of their own
    (*writes*, else one of the run's own), and learning happens on that thread too: the loop
    (the window's, under qasync) only waits for them. All of it is on disk when this returns,
    however it ends.

    Raises:
        BrowserError: no browser, or it could not start (no run is recorded then).
        RebaseError: *base_url* is not an http(s) URL.
    """
    from desktop_app.adapters.browser.kept import KeptPage
    from desktop_app.adapters.browser.launch import open_browser
    from desktop_app.adapters.browser.replay_page import PlaywrightPage
    from desktop_app.resources import resource_path

    settings = services.settings
    original = version
    stored = functools.partial(_callee, services)  # the callees as stored (not moved)
    origin = origin_of(version.workflow, stored) if base_url is not None else None
    if base_url is not None:
        version = _rebased(version, base_url, origin)
    workflow = version.workflow
    options = replace(
        options,
        vision=settings.llm_vision,
        ready_quiet_s=settings.replay_ready_quiet_s,
        save_quiet_s=settings.replay_save_quiet_s,
        reaction_s=settings.replay_reaction_s,
    )
    desktop = await open_desktop() if needs_desktop(workflow) else None  # no display: says so
    llm = make_structured_llm(settings, secrets=params.secret_values()) if options.use_llm else None
    memory = ExperienceMemory(
        services.experiences, lambda: services.workflows.index, services.index_queue
    )
    behind = writes if writes is not None else WriteBehind(services.runs, services.media)
    try:
        if not needs_browser(workflow):
            browser: Any = None
        elif browser_factory is not None:
            browser = await browser_factory()
        else:
            browser = await open_browser(
                configured=settings.browser,
                headless=headless,
                withheld=params.secret_values(),  # never in the browser's environment
            )
    except BaseException:
        if desktop is not None:
            await desktop.close()
        raise
    web: PlaywrightPage | None = None
    try:
        port: BrowserPort = NoBrowser()
        if browser is not None:
            # A kept page (a fleet worker's, a headless batch's) is wiped between runs.
            kept = isinstance(browser, KeptPage)
            page = browser.page if kept else await browser.context.new_page()
            domains = domains_of(workflow, stored)
            if base_url is not None:
                domains = tuple(dict.fromkeys((*workflow.domains, *domains)))
            web = PlaywrightPage(page, domains, resource_path("recorder", "capture.js"))
            await web.install(browser.context)
            port = web
            if on_page is not None:
                on_page(page)

        def load(workflow_id: str, number: int | None) -> WorkflowVersion:
            callee = _callee(services, workflow_id, number)
            return _rebased(callee, base_url, origin) if base_url is not None else callee

        replayer = Replayer(
            browser=port,
            runs=behind.runs,
            media=behind.media,
            memory=memory,
            llm=llm,
            person=person,
            load=load,
            options=options,
            on_event=on_event,
            desktop=desktop,
            before_step=before_step,
        )
        outcome = await replayer.run(version, params)
    finally:
        try:
            if isinstance(browser, KeptPage) and web is not None:
                with contextlib.suppress(Exception):  # not clean: the page is not kept
                    await web.release()
                    browser.clean = True
            if browser is not None:
                await browser.close()
            if desktop is not None:
                await desktop.close()
        finally:
            await behind.drain()  # a stopped run's record is on disk when the stop is heard
            if writes is None:
                behind.close()
    try:
        learned = await behind.call(
            functools.partial(_learn, services, original, params, outcome, memory)
        )
        if learned.proposed is not None:
            update = {"proposed_version": learned.proposed.version}
            outcome.run = outcome.run.model_copy(update=update)
            await behind.call(functools.partial(services.runs.save_run, outcome.run))
    finally:
        if writes is None:
            behind.close()
    return ReplayResult(outcome=outcome, learned=learned)


def _learn(
    services: Services,
    version: WorkflowVersion,
    params: BoundParameters,
    outcome: ReplayOutcome,
    memory: ExperienceMemory,
) -> Learned:
    """What a finished run teaches (blocking: reads runs, writes versions and experiences)."""
    history = services.runs.runs(version.workflow_id, limit=RECENT)  # this run's included
    learned = learn(
        library=services.workflows,
        memory=memory,
        version=version,
        run_id=outcome.run.id,
        lessons=outcome.lessons,
        params=params,
        actor=REPLAY_ACTOR,
        status=outcome.run.status,
        history=history,
    )
    after = services.settings.propose_after_runs
    if learned.proposed is None and after:  # one proposal a run
        induced = propose(services.workflows, version, history, after)
        learned = replace(learned, proposed=induced, induced=induced is not None)
    return learned
