"""The screens at scale: the Library, the Review queue and the Runs screen over 10,000 workflows
and 100,000 runs, as :mod:`gui` reports them (one call: :func:`measure_screens`).

The data directory is written in bulk with SQL (``INSERT`` of every row in one transaction per
table, in a few seconds), as the stores would have written it: 10,000 workflows (40% approved,
20% with a second version in review, half of those repairs a replay proposed, 30% drafts, 10%
archived) and 100,000 runs of the approved ones over 90 days, two steps each (one in five
healed). A window is opened over it with no screen loaded, then for each screen, five times
(median): from the call that loads it to its first rows painted (``QWidget.repaint`` of the page
returned after the model had rows), and to complete (every job it started finished: the
selection's details too); a 5 ms heartbeat on the GUI thread gives the longest stall meanwhile.
Search-as-you-type: a query typed a key at a time (30 ms apart) into the Library's search box,
from the last key to the ranked rows shown (the 250 ms pause after typing included), with 200 of
the workflows indexed (embedding 10,000 takes minutes).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import time
from collections.abc import Callable, Coroutine, Iterator
from datetime import timedelta
from typing import Any

from common import Section, isolated_home, median
from gui_support import Gui, until
from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget
from qasync import QEventLoop
from sqlalchemy import insert
from sqlalchemy.engine import Engine

from desktop_app.adapters.sqlite.tables import (
    RunRow,
    RunStepRow,
    WorkflowRow,
    WorkflowTransitionRow,
    WorkflowVersionRow,
)
from desktop_app.adapters.sqlite.workflow_store import content_hash
from desktop_app.app import open_services
from desktop_app.core.models.common import new_id, utcnow
from desktop_app.core.models.run import Resolution, Run, RunStatus, RunStep, StepStatus
from desktop_app.core.models.workflow import Workflow, WorkflowStatus
from desktop_app.core.replay.learning import REPLAY_ACTOR
from desktop_app.core.views import IndexedWorkflow
from desktop_app.gui.backend import ServicesBackend
from desktop_app.settings import load_settings
from desktop_app.ui.main_window import MainWindow

__all__ = ["measure_screens", "seed"]

HEARTBEAT_MS = 5
#: A screen's goals: first rows painted, and complete (ms).
FIRST_PAINT_GOAL, COMPLETE_GOAL = "<= 300", "<= 1000"

_VERBS = ("Create", "Update", "Export", "Archive", "Invite", "Approve", "Refund", "Book", "Renew")
_OBJECTS = ("contact", "invoice", "order", "ticket", "lead", "expense report", "supplier", "trip")
_DOMAINS = tuple(f"crm-{k:02d}.example.com" for k in range(20))
_RUN_STATUSES = (
    *(RunStatus.SUCCEEDED,) * 16,
    RunStatus.FAILED,
    RunStatus.FAILED,
    RunStatus.UNVERIFIED,
    RunStatus.ABORTED,
)
_QUERY = "give a customer their money back"


# ── data, in bulk ───────────────────────────────────────────────────────────────────────────


def seed(engine: Engine, base: Workflow, workflows: int, runs: int) -> None:
    """*workflows* workflows and *runs* runs written straight into the tables."""
    now = utcnow()
    doc = json.loads(base.model_dump_json())
    wf_rows: list[dict[str, Any]] = []
    versions: list[dict[str, Any]] = []
    transitions: list[dict[str, Any]] = []
    approved: list[str] = []
    for i in range(workflows):
        name = f"{_VERBS[i % len(_VERBS)]} {_OBJECTS[(i // len(_VERBS)) % len(_OBJECTS)]} #{i}"
        domains = [_DOMAINS[i % len(_DOMAINS)]]
        kind = i % 10  # 0-3 approved, 4-5 approved with a version in review, 6-8 draft, 9 archived
        workflow_id = new_id()
        created = now - timedelta(days=120, minutes=i)
        first = {
            WorkflowStatus.APPROVED: kind <= 5,
            WorkflowStatus.DRAFT: 6 <= kind <= 8,
            WorkflowStatus.ARCHIVED: kind == 9,
        }
        status = next(s for s, chosen in first.items() if chosen)
        numbers = [(1, status, "bench", created)]
        if kind in (4, 5):
            who = REPLAY_ACTOR if kind == 5 else "analyst"
            numbers.append((2, WorkflowStatus.IN_REVIEW, who, now - timedelta(minutes=i)))
        for number, version_status, who, at in numbers:
            document = dict(
                doc,
                id=workflow_id,
                version=number,
                name=name,
                description=f"{name} in the {domains[0]} back office",
                domains=domains,
            )
            versions.append(
                {
                    "workflow_id": workflow_id,
                    "version": number,
                    "status": version_status.value,
                    "created_at": at,
                    "created_by": who,
                    "parent_version": number - 1 or None,
                    "change_note": "healed two steps" if who == REPLAY_ACTOR else "",
                    "content_hash": content_hash(base) if i == 0 else f"{i}-{number}",
                    "document": json.dumps(document),
                }
            )
            transitions.append(
                {
                    "workflow_id": workflow_id,
                    "version": number,
                    "from_status": None,
                    "to_status": version_status.value,
                    "actor": who,
                    "at": at,
                    "comment": "",
                }
            )
        if status is WorkflowStatus.APPROVED:
            approved.append(workflow_id)
        latest, latest_status = numbers[-1][0], numbers[-1][1]
        wf_rows.append(
            {
                "id": workflow_id,
                "name": name,
                "description": f"{name} in the {domains[0]} back office",
                "domains": json.dumps(domains),
                "parameters": json.dumps([p.name for p in base.parameters]),
                "status": status.value,
                "latest_version": latest,
                "latest_status": latest_status.value,
                "approved_version": 1 if status is WorkflowStatus.APPROVED else None,
                "pinned": i % 500 == 0,
                "created_at": created,
                "updated_at": numbers[-1][3],
            }
        )
    run_rows, step_rows = _runs(approved, runs) if approved else ([], [])
    with engine.begin() as conn:
        for table, rows in (
            (WorkflowRow, wf_rows),
            (WorkflowVersionRow, versions),
            (WorkflowTransitionRow, transitions),
            (RunRow, run_rows),
            (RunStepRow, step_rows),
        ):
            if rows:
                conn.execute(insert(table.__table__), rows)  # type: ignore[attr-defined]


def _runs(workflow_ids: list[str], count: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    now = utcnow()
    header = json.loads(Run(workflow_id="w", workflow_version=1).model_dump_json())
    step = json.loads(
        RunStep(
            index=0,
            step_id="s",
            title="Click 'Save'",
            status=StepStatus.SUCCEEDED,
            resolution=Resolution.DIRECT,
            started_at=now,
            duration_ms=120,
        ).model_dump_json()
    )
    runs, steps = [], []
    for i in range(count):
        run_id = new_id()
        started = now - timedelta(seconds=90 * 86400 * i / count)
        finished = started + timedelta(seconds=3 + i % 40)
        status = _RUN_STATUSES[i % len(_RUN_STATUSES)]
        workflow_id = workflow_ids[i % len(workflow_ids)]
        document = dict(
            header,
            id=run_id,
            workflow_id=workflow_id,
            status=status.value,
            started_at=started.isoformat(),
            finished_at=finished.isoformat(),
        )
        runs.append(
            {
                "id": run_id,
                "workflow_id": workflow_id,
                "workflow_version": 1,
                "status": status.value,
                "trigger": ("gui", "tray", "cli", "batch")[i % 4],
                "started_at": started,
                "finished_at": finished,
                "llm_calls": 0,
                "tokens": 0,
                "error": None,
                "header": json.dumps(document),
            }
        )
        for seq in range(2):
            healed = seq == 1 and i % 5 == 0
            resolution = Resolution.FINGERPRINT if healed else Resolution.DIRECT
            steps.append(
                {
                    "run_id": run_id,
                    "seq": seq,
                    "step_id": f"s{seq}",
                    "status": StepStatus.SUCCEEDED.value,
                    "resolution": resolution.value,
                    "duration_ms": 120.0,
                    "document": json.dumps(
                        dict(step, index=seq, step_id=f"s{seq}", resolution=resolution.value)
                    ),
                }
            )
    return runs, steps


# ── measuring ───────────────────────────────────────────────────────────────────────────────


class _Heartbeat(QObject):
    """A 5 ms timer on the GUI thread; the longest gap between its beats, beyond 5 ms."""

    def __init__(self) -> None:
        super().__init__()
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(HEARTBEAT_MS)
        self._timer.timeout.connect(self._beat)
        self._last = 0.0
        self.longest = 0.0

    def __enter__(self) -> _Heartbeat:
        self._last, self.longest = time.perf_counter(), 0.0
        self._timer.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._timer.stop()
        self._beat()

    def _beat(self) -> None:
        now = time.perf_counter()
        self.longest = max(self.longest, (now - self._last) * 1000 - HEARTBEAT_MS)
        self._last = now


async def _open(
    gui: Gui, page: QWidget, start: Callable[[], object], shown: Callable[[], bool]
) -> tuple[float, float, float]:
    """Start loading a screen; ms to its first rows painted, to complete, and the longest GUI
    stall meanwhile."""
    with _Heartbeat() as heartbeat:
        began = time.perf_counter()
        start()
        await until(shown, timeout=60, what="the screen's rows")
        page.repaint()
        painted = time.perf_counter()
        await gui.window.tasks.idle()
        done = time.perf_counter()
    return (painted - began) * 1000, (done - began) * 1000, heartbeat.longest


def _add(section: Section, what: str, samples: list[tuple[float, float, float]]) -> None:
    paint, done, stall = ([s[k] for s in samples] for k in range(3))
    note = f"median of {len(samples)}, max {max(paint):.0f} ms"
    section.add(f"{what}: first rows painted", median(paint), "ms", FIRST_PAINT_GOAL, note)
    section.add(f"{what}: complete", median(done), "ms", COMPLETE_GOAL, f"max {max(done):.0f} ms")
    section.add("  longest GUI stall opening it", max(stall), "ms", "", "max")


async def _type(gui: Gui, text: str) -> tuple[float, float]:
    """Type *text* in the Library's search box; ms from the last key to the rows shown, and the
    longest GUI stall while typing and searching."""
    page = gui.window.library
    page.search.clear()
    await gui.window.tasks.idle()
    with _Heartbeat() as heartbeat:
        for key in text:
            QTest.keyClicks(page.search, key)
            await asyncio.sleep(0.03)  # a fast typist's pace: the search waits for a pause
        last = time.perf_counter()
        await until(
            lambda: bool(page.visible_rows()) and page.visible_rows()[0].score is not None,
            what="the ranked rows",
        )
        shown = time.perf_counter()
        await gui.window.tasks.idle()
    return (shown - last) * 1000, heartbeat.longest


@contextlib.contextmanager
def _window(app: QApplication) -> Iterator[Gui]:
    """The main window over ``PROCEDURA_HOME``, shown, with no screen loaded."""
    app.setQuitOnLastWindowClosed(False)
    loop = QEventLoop(app, already_running=False)
    asyncio.set_event_loop(loop)
    try:
        with open_services(load_settings(), write=True) as services:
            backend = ServicesBackend(services)
            window = MainWindow(backend, dialogs=False)
            window.show()
            try:
                yield Gui(window=window, backend=backend, loop=loop)
            finally:
                window.close()
                loop.run_until_complete(window.shutdown())
                window.deleteLater()
                QApplication.processEvents()
                gc.collect()
    finally:
        asyncio.set_event_loop(None)
        loop.close()


def _times(gui: Gui, n: int, job: Callable[[], Coroutine[Any, Any, Any]]) -> list[Any]:
    return [gui.run(job(), timeout=300) for _ in range(n)]


def measure_screens(app: QApplication, section: Section, base: Workflow, *, smoke: bool) -> None:
    """Seed a data directory of its own and measure the three screens over it."""
    workflows, runs, repeats, indexed = (200, 2000, 1, 0) if smoke else (10_000, 100_000, 5, 200)
    with isolated_home():
        began = time.perf_counter()
        with open_services(load_settings(), write=True) as services:
            seed(services.engine, base, workflows, runs)
        section.add(
            f"writing {workflows:,} workflows and {runs:,} runs in bulk",
            time.perf_counter() - began,
            "s",
            "",
            "SQL inserts, one transaction per table",
        )
        with _window(app) as gui:
            window = gui.window
            library, review, history = window.library, window.review, window.runs
            gui.settle()

            def load_library() -> object:
                library.model.set_rows([])
                return library.refresh()

            _add(
                section,
                f"Library, {workflows:,} workflows",
                _times(
                    gui,
                    repeats,
                    lambda: _open(gui, library, load_library, lambda: library.model.rowCount() > 0),
                ),
            )
            window.show_screen("Review")

            def load_review() -> object:
                review.queue_model.set_entries([])
                return window.tasks.start(review.reload(), label="")

            _add(
                section,
                "Review queue",
                _times(
                    gui,
                    repeats,
                    lambda: _open(
                        gui, review, load_review, lambda: review.queue_model.rowCount() > 0
                    ),
                ),
            )
            window.show_screen("Runs")

            def load_runs() -> object:
                history.model.set_runs([], {})
                return window.tasks.start(history.reload(), label="")

            _add(
                section,
                f"Runs screen, {runs:,} runs",
                _times(
                    gui,
                    repeats,
                    lambda: _open(gui, history, load_runs, lambda: history.model.rowCount() > 0),
                ),
            )

            async def next_page() -> float:
                held = history.model.rowCount()
                began = time.perf_counter()
                history.table.scrollToBottom()
                await until(lambda: history.model.rowCount() > held, what="the next page")
                return (time.perf_counter() - began) * 1000

            gui.run(history.reload())
            pages = [gui.run(next_page()) for _ in range(repeats)]
            section.add("  the next 100 runs on scrolling down", median(pages), "ms", "", "median")
            if indexed:
                window.show_screen("Library")
                entries = [
                    IndexedWorkflow.of(v.workflow, v.status)
                    for v in gui.call(
                        lambda: [
                            gui.services.workflows.get(s.id)
                            for s in gui.services.workflows.list()[:indexed]
                        ]
                    )
                ]
                gui.call(lambda: gui.services.workflows.index.upsert_workflows(entries))
                gui.run(_type(gui, "warm up"))  # untimed: the first query loads the model
                typed = [gui.run(_type(gui, _QUERY)) for _ in range(repeats)]
                section.add(
                    "search-as-you-type: last key to ranked rows shown",
                    median([t[0] for t in typed]),
                    "ms",
                    FIRST_PAINT_GOAL,
                    f"median of {len(typed)}; includes the 250 ms pause; {indexed} indexed",
                )
                section.add(
                    "  longest GUI stall while typing", max(t[1] for t in typed), "ms", "<= 50"
                )
    section.notes.append(
        f"screens: {workflows:,} workflows and {runs:,} runs written in bulk; each screen "
        f"loaded {repeats} time(s) from its reload call to its first rows painted and to "
        "every job it started done (see bench/gui_screens.py)"
    )
