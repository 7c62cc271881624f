"""Render the desktop app's main screens into docs/images/gui-*.png (for the docs and README).

    python scripts/gui_screenshots.py [--out docs/images] [--only library,runs,...] [--scale 2]

Runs under Xvfb (started here when there is no DISPLAY) with Qt's xcb platform, so the pictures
show real window decorations-free widgets as a user sees them. The screen is 1440×900 (logical
pixels); with ``--scale 2`` Qt draws at twice the size (``QT_SCALE_FACTOR=2`` on a 2880×1800
screen) and each picture is written beside the 1x one as ``gui-NAME@2x.png``. Windows open as
the app opens them (sized to that screen), in a temporary config dir, never the user's.
Everything shown is real: the demo app's tasks are recorded in headless Chromium by a scripted
person, induced, approved and replayed — once as recorded, once against a drifted copy of the
app so a repair waits for review — in a temporary data directory.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

#: The screen the pictures are taken on, in logical pixels (a common laptop's).
SIZE = (1440, 900)


@contextlib.contextmanager
def _display(scale: float) -> Iterator[None]:
    """An X display: the one there is, or a private Xvfb of :data:`SIZE` times *scale* for the
    duration."""
    if os.environ.get("DISPLAY"):
        os.environ["QT_QPA_PLATFORM"] = "xcb"
        yield
        return
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        raise SystemExit("gui_screenshots: error: no DISPLAY and no Xvfb (apt-get install xvfb)")
    number = 90 + os.getpid() % 500
    width, height = (round(side * scale) for side in SIZE)
    proc = subprocess.Popen(
        [
            xvfb,
            f":{number}",
            "-screen",
            "0",
            f"{width}x{height}x24",
            "-nolisten",
            "tcp",
            "-noreset",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while not Path(f"/tmp/.X11-unix/X{number}").exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("gui_screenshots: error: Xvfb did not start")
            time.sleep(0.05)
        os.environ["DISPLAY"] = f":{number}"
        os.environ["QT_QPA_PLATFORM"] = "xcb"
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@dataclass
class Stage:
    """What the pictures show: the window, the demo site, and the ids of what was made."""

    window: Any
    backend: Any
    site_url: str
    drift_url: str
    out: Path
    ids: dict[str, str] = field(default_factory=dict)
    runs: dict[str, str] = field(default_factory=dict)
    #: Added to each picture's name: "" at scale 1, "@2x" at scale 2.
    suffix: str = ""


async def _settle(stage: Stage, seconds: float = 0.3) -> None:
    """Let jobs finish and Qt paint."""
    await stage.window.tasks.idle()
    await asyncio.sleep(seconds)  # the loop is Qt's: it paints meanwhile


def _save(stage: Stage, widget: Any, name: str) -> None:
    path = stage.out / f"gui-{name}{stage.suffix}.png"
    if not widget.grab().save(str(path)):
        raise SystemExit(f"gui_screenshots: error: could not write {path}")
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


# ── staging ──────────────────────────────────────────────────────────────────────────────────


async def _prepare(services: Any, site_url: str, drift_url: str) -> tuple[dict[str, str], dict]:
    """Record, induce, approve and run the demo tasks; return workflow and run ids."""
    from demo_tasks import TASKS, record_task

    from desktop_app.app import replay
    from desktop_app.core.models.run import RunTrigger
    from desktop_app.core.replay.engine import ReplayOptions
    from desktop_app.core.replay.parameters import bind_parameters
    from desktop_app.demo_site import DEMO_PASSWORD
    from desktop_app.ops.changes import Origin
    from desktop_app.ops.induce import induce

    ids: dict[str, str] = {}
    for task in ("create-contact", "expense-report", "filter-orders", "open-contact"):
        intent, user = TASKS[task]
        recording = await record_task(services, site_url + "/login", user, intent=intent)
        induced = induce(
            services.trajectories,
            services.workflows,
            [recording.id],
            actor="ana",
            origin=Origin.CLI,
        )
        ids[task] = induced.saved.version.workflow.id
    library = services.workflows
    for task in ("create-contact", "filter-orders", "open-contact"):
        library.approve(ids[task], actor="ben", comment="checked against the CRM")
    library.submit(ids["expense-report"], actor="ana", comment="ready for a look")
    library.set_pinned(ids["create-contact"], True)

    runs: dict[str, str] = {}
    contact = library.runnable(ids["create-contact"])
    secrets = {
        p.name: DEMO_PASSWORD for p in contact.workflow.parameters if p.type.value == "secret"
    }
    options = ReplayOptions(
        use_llm=False, trigger=RunTrigger.GUI, screenshot_every_step=True, assume_yes=True
    )
    for url, values, key in (
        (site_url, {"full_name": "Bob Smith", "email": "bob@example.test"}, "ok"),
        (drift_url, {"full_name": "Ann Lee", "email": "ann@example.test"}, "healed"),
    ):
        defaults = {
            p.name: str(p.default)
            for p in contact.workflow.parameters
            if p.default is not None and p.type.value != "secret"
        }
        params = bind_parameters(contact.workflow, {**defaults, **values}, secrets=secrets)
        result = await replay(
            services, contact, params, options=options, base_url=url, headless=True
        )
        runs[key] = result.run.id
    return ids, runs


Shot = Callable[[Stage], Awaitable[None]]


async def shot_library(stage: Stage) -> None:
    """The library, searched by meaning, with the best match selected."""
    window = stage.window
    window.show_screen("Library")
    page = window.library
    page.search.setText("add a person to the CRM")
    page._on_search_return_pressed()
    await _settle(stage, 0.8)
    _save(stage, window, "library")
    page.search.clear()
    await _settle(stage)


async def shot_recordings(stage: Stage) -> None:
    """The recordings screen."""
    stage.window.show_screen("Recordings")
    await stage.window.recordings.reload()
    await _settle(stage)
    _save(stage, stage.window, "recordings")


async def shot_review(stage: Stage) -> None:
    """The review screen on the repair replay proposed."""
    window = stage.window
    proposed = window.backend.runs.get_run(stage.runs["healed"]).proposed_version
    window.show_review(stage.ids["create-contact"], proposed)
    await _settle(stage, 0.8)
    _save(stage, window, "review")


async def shot_review_online(stage: Stage) -> None:
    """The review screen on what online induction proposed: an agent step that did the same in
    three runs on a page of its own (the fake LLM answering as a careful agent)."""
    from dataclasses import replace as replaced

    from fakes.openai_server import FakeOpenAIServer
    from test_experience_memory import items_site
    from test_online_induction import adds_the_item, agent_workflow

    from desktop_app.app import replay
    from desktop_app.core.replay.engine import ReplayOptions
    from desktop_app.core.replay.parameters import bind_parameters

    window = stage.window
    services = window.backend.services
    with items_site() as site, FakeOpenAIServer() as llm:
        llm.default_chat = adds_the_item()
        settings = services.settings.model_copy(
            update={"llm_base_url": llm.base_url, "llm_model": "fake-model"}
        )
        asking = replaced(services, settings=settings)
        saved = services.workflows.save(agent_workflow(site), actor="ana")
        version = services.workflows.approve(saved.version.workflow_id, actor="ben")
        result = None
        for item in ("Apples", "Pears", "Plums"):
            params = bind_parameters(version.workflow, {"item": item})
            result = await replay(
                asking, version, params, options=ReplayOptions(use_llm=True), headless=True
            )
    assert result is not None and result.learned.proposed is not None
    await window.reload_all()
    window.show_review(version.workflow_id, result.learned.proposed.version)
    await _settle(stage, 0.8)
    _save(stage, window, "review-online")


async def shot_runs(stage: Stage) -> None:
    """The run history with the healed run selected."""
    window = stage.window
    await window.runs.reload()
    window.show_run(stage.runs["healed"])
    await _settle(stage, 0.8)
    _save(stage, window, "runs")


async def shot_settings(stage: Stage) -> None:
    """The settings screen after a successful "Test connection" (against a local fake LLM)."""
    from fakes.openai_server import FakeOpenAIServer

    from desktop_app.adapters.secrets import set_api_key

    window = stage.window
    with FakeOpenAIServer(default_chat='{"ok": true}') as server:
        set_api_key("sk-shown-as-dots")
        await window.tasks.call(
            window.backend.save_settings,
            {"llm_base_url": server.base_url, "llm_model": "gpt-4o-mini"},
        )
        window.events.settings_changed.emit()
        page = window.show_screen("Settings")
        await page.reload()
        await _settle(stage)
        page.test_button.click()
        await _settle(stage, 1.0)
        _save(stage, window, "settings")


async def shot_editor(stage: Stage) -> None:
    """The step editor on create-contact, a locator just tested against the live demo app."""
    from desktop_app.ui.editor.window import EditorWindow

    window = stage.window
    workflow_id = stage.ids["create-contact"]
    window.open_editor(workflow_id, 1)  # the approved version, recorded on the site as it is
    await _settle(stage, 0.8)
    editor = next(w for w in _top_levels(EditorWindow))
    editor.resize(1400, 860)
    editor.tester.headless = True
    editor.form.test_url.setText(stage.site_url.rstrip("/") + "/login")
    editor.select_step(1)
    await _settle(stage)
    await editor.test_locator(1, 0)
    editor.select_step(1)
    await _settle(stage, 0.8)
    _save(stage, editor, "editor")
    await editor.tester.close()
    editor.close()
    await _settle(stage)


async def shot_editor_desktop(stage: Stage) -> None:
    """The step editor on a desktop workflow: a GTK form filled by a scripted person while
    Procedura recorded it (a private accessibility bus), the click on Email selected: its
    field by accessibility first, its image anchor second."""
    from desktop_support import GtkForm, a11y_session, act, record, until

    from desktop_app.ops.changes import Origin
    from desktop_app.ops.induce import induce
    from desktop_app.ui.editor.window import EditorWindow

    services = stage.backend.services

    with (
        a11y_session(),
        tempfile.TemporaryDirectory(prefix="procedura-form-") as tmp,
        GtkForm(Path(tmp) / "saved.json", x=820, y=420) as form,
    ):

        async def fill(_recorder: Any, seen: list[Any]) -> None:
            x, y, _, _ = form.geometry()
            for part, text in (("name", "Jane Doe"), ("email", "jane@example.test")):
                px, py = form.point(part)
                await act("mousemove", str(x + px), str(y + py), "sleep", "0.2", "click", "1")
                await act("type", "--delay", "40", text)
            px, py = form.point("save")
            await act("mousemove", str(x + px), str(y + py), "sleep", "0.2", "click", "1")
            await asyncio.to_thread(form.saved)
            await until(lambda: sum(e.point is not None for e in seen) == 3, "the Save click")

        trajectory = await record(services, fill)
    induced = induce(
        services.trajectories, services.workflows, [trajectory.id], actor="ana", origin=Origin.CLI
    )
    await stage.window.reload_all()
    stage.window.open_editor(induced.saved.version.workflow.id, induced.saved.version.version)
    await _settle(stage, 0.8)
    editor = next(w for w in _top_levels(EditorWindow))
    editor.resize(1400, 860)
    editor.select_step(2)  # Click the field 'Email': by accessibility, then its image
    await _settle(stage, 0.8)
    _save(stage, editor, "editor-desktop")
    editor.close()
    await _settle(stage)


async def shot_editor_blocks(stage: Stage) -> None:
    """The step editor on a workflow with blocks: a loop over the page's unpaid invoices holding
    two steps (its items just tested on the live page) and an if with an otherwise."""
    from invoices_site import invoices_site
    from test_replay_blocks import _remind_in_row

    from desktop_app.core.models.workflow import (
        ClickStep,
        ForEachStep,
        GotoStep,
        IfStep,
        PageItems,
        TextPresent,
        WaitForStep,
        Workflow,
    )
    from desktop_app.ui.editor.window import EditorWindow

    window = stage.window
    services = window.backend.services
    with invoices_site() as (_, url):
        workflow = Workflow(
            name="Remind every unpaid invoice",
            domains=("127.0.0.1",),
            steps=(
                GotoStep(title="Open the invoices", url=f"{url}/"),
                ForEachStep(
                    title="Remind each unpaid invoice",
                    over=PageItems(css="tr.invoice", contains="Unpaid", key="td.number",
                                   fields={"amount": "td.amount"}),
                    item="invoice",
                    confirm="once",
                    steps=(
                        ClickStep(title="Remind {invoice} ({amount})", target=_remind_in_row(),
                                  reacts=True, irreversible=True),
                        WaitForStep(title="Wait until {invoice} is reminded",
                                    condition=TextPresent(text="reminded")),
                    ),
                ),
                IfStep(
                    title="If every reminder went out",
                    condition=TextPresent(text="reminded"),
                    steps=(WaitForStep(title="Wait for the summary",
                                       condition=TextPresent(text="Invoices")),),
                    otherwise=(GotoStep(title="Open the invoices again", url=f"{url}/"),),
                ),
            ),
            success=(TextPresent(text="reminded"),),
        )  # fmt: skip
        saved = services.workflows.save(workflow, actor="ana")
        await window.reload_all()
        window.open_editor(saved.version.workflow_id, None)
        editor = await _wait_for_top_level(EditorWindow)
        while editor.workflow is None:
            await asyncio.sleep(0.05)
        editor.resize(1400, 900)
        editor.tester.headless = True
        editor.form.test_url.setText(f"{url}/")
        editor.select_step(1)
        await _settle(stage)
        await editor.test_source(1)
        await _settle(stage, 1.0)
        _save(stage, editor, "editor-blocks")
        await editor.tester.close()
        editor.close()
    await _settle(stage)


async def shot_run(stage: Stage) -> None:
    """The run dialog, then the run window after a run that healed against the drifted app."""
    from desktop_app.demo_site import DEMO_PASSWORD
    from desktop_app.ui.run_view import RunDialog

    window = stage.window
    window.open_run(stage.ids["create-contact"], None)
    dialog = await _wait_for_top_level(RunDialog)
    dialog.form.set_value("password", DEMO_PASSWORD)
    dialog.form.set_value("full_name", "Maria Garcia")
    dialog.form.set_value("email", "maria@example.test")
    dialog.base_url.setText(stage.drift_url)
    dialog.show_browser.setChecked(False)
    await _settle(stage)
    _save(stage, dialog, "run-dialog")
    dialog.run_button.click()
    await _shoot_run_window(stage, "run")


async def shot_run_loop(stage: Stage) -> None:
    """The run window after a loop reminded each unpaid invoice of a page of its own: the
    rounds under the loop, each round's step under it."""
    from invoices_site import invoices_site
    from test_replay_blocks import _remind_each_unpaid

    from desktop_app.ui.run_view import RunDialog

    window = stage.window
    services = window.backend.services
    with invoices_site() as (_, url):
        saved = services.workflows.save(_remind_each_unpaid(url), actor="ana")
        version = services.workflows.approve(saved.version.workflow_id, actor="ben")
        await window.reload_all()
        window.open_run(version.workflow_id, None)
        dialog = await _wait_for_top_level(RunDialog)
        dialog.show_browser.setChecked(False)
        dialog.run_button.click()
        await _shoot_run_window(stage, "run-loop")


async def _shoot_run_window(stage: Stage, name: str) -> None:
    """Once the run window just opened has a finished run: its picture, then close it."""
    from desktop_app.ui.run_view import RunWindow

    run_window = await _wait_for_top_level(RunWindow)
    deadline = time.monotonic() + 120
    while run_window.run is None:
        if time.monotonic() > deadline:
            raise SystemExit(f"gui_screenshots: error: the run for {name} did not finish")
        await asyncio.sleep(0.1)
    run_window.resize(1280, 820)
    await _settle(stage, 1.0)
    _save(stage, run_window, name)
    run_window.close()
    await _settle(stage)


async def shot_record(stage: Stage) -> None:
    """The record dialog, and the control bar with the live list of a recording's steps."""
    from desktop_app.ui.backend import RecordingRequest
    from desktop_app.ui.record import RecordDialog, RecordingController

    window = stage.window
    window.start_recording()
    dialog = await _wait_for_top_level(RecordDialog)
    dialog.url.setText(stage.site_url.rstrip("/") + "/login")
    dialog.intent.setText("Create a contact for Jane Doe at Globex")
    await _settle(stage)
    _save(stage, dialog, "record-dialog")
    dialog.reject()

    recordings = await window.tasks.call(window.backend.trajectories.list)
    contact = next(r for r in recordings if "contact for Jane" in r.intent)
    trajectory = await window.tasks.call(window.backend.trajectories.get, contact.id)
    controller = RecordingController(
        window, RecordingRequest(url=stage.site_url + "/login"), minimise=False
    )
    controller.bar.show()
    controller.bar.set_state("recording")
    controller.steps.set_events(trajectory.events[:7])
    controller.bar.set_count(controller.steps.rowCount())
    controller.bar.elapsed.setText("0:41")
    controller.bar.steps_button.setChecked(True)
    await _settle(stage, 1.5)
    _save(stage, controller.bar, "recording-bar")
    controller.bar.hide()
    controller.bar.deleteLater()
    await _settle(stage)


async def shot_tray(stage: Stage) -> None:
    """The tray menu while a run from it is in progress."""
    from PySide6.QtCore import QPoint

    from desktop_app.ui.tray import Tray

    tray = Tray(stage.window, force=True)
    await tray.reload()
    tray.track_run("shot", "Create a contact", lambda: None)
    tray.progress_run("shot", "step 6 of 10")
    tray.menu.popup(QPoint(40, 40))
    await _settle(stage, 0.8)
    _save(stage, tray.menu, "tray-menu")
    tray.menu.hide()
    await _settle(stage)


async def shot_batch(stage: Stage) -> None:
    """The batch dialog on a CSV with one bad row: the mapping, the report, Run disabled."""
    from desktop_app.ui.batch_window import BatchDialog, open_batch

    path = Path(tempfile.mkdtemp(prefix="procedura-batch-")) / "new-contacts.csv"
    path.write_text(
        "Full name,email,Company,notes\n"
        "Grace Hopper,grace@example.test,Globex,met at the fair\n"
        "Bob Smith,bob at example,Initech,\n"
        "Ann Lee,ann@example.test,Hooli,VIP\n",
        encoding="utf-8",
    )
    open_batch(stage.window, stage.ids["create-contact"], path)
    dialog = await _wait_for_top_level(BatchDialog)
    deadline = time.monotonic() + 30
    while dialog.plan is None or dialog.planning:
        if time.monotonic() > deadline:
            raise SystemExit("gui_screenshots: error: the batch was never checked")
        await asyncio.sleep(0.05)
    dialog.resize(900, 700)
    await _settle(stage, 0.5)
    _save(stage, dialog, "batch")
    dialog.reject()
    await _settle(stage)


async def shot_locator_dialog(stage: Stage) -> None:
    """The locator dialog on a field found inside its wrapper in one line item of a form (an
    item inside another)."""
    from desktop_app.core.models.target import ItemScope, Locator, LocatorStrategy
    from desktop_app.ui.editor.dialogs import LocatorDialog

    wrapper = ItemScope(
        css="div.field",
        text="Description",
        outer=ItemScope(css="fieldset.item-row", text="Item {line}"),
    )
    locator = Locator(strategy=LocatorStrategy.ROLE, value="textbox", within=wrapper)
    dialog = LocatorDialog(stage.window, locator, ["line", "description"])
    dialog.show()
    await _settle(stage, 0.5)
    _save(stage, dialog, "locator-dialog")
    dialog.close()
    await _settle(stage)


def _top_levels(kind: type) -> list[Any]:
    from PySide6.QtWidgets import QApplication

    return [w for w in QApplication.topLevelWidgets() if isinstance(w, kind) and w.isVisible()]


async def _wait_for_top_level(kind: type) -> Any:
    deadline = time.monotonic() + 30
    while not _top_levels(kind):
        if time.monotonic() > deadline:
            raise SystemExit(f"gui_screenshots: error: no {kind.__name__} appeared")
        await asyncio.sleep(0.05)
    return _top_levels(kind)[0]


SHOTS: dict[str, Shot] = {
    "library": shot_library,
    "editor": shot_editor,
    "editor-blocks": shot_editor_blocks,
    "editor-desktop": shot_editor_desktop,
    "locator-dialog": shot_locator_dialog,
    "run": shot_run,
    "run-loop": shot_run_loop,
    "tray": shot_tray,
    "batch": shot_batch,
    "record": shot_record,
    "recordings": shot_recordings,
    "review": shot_review,
    "review-online": shot_review_online,
    "runs": shot_runs,
    "settings": shot_settings,
}


async def _main(out: Path, only: list[str], suffix: str) -> None:
    import qasync  # noqa: F401  (the loop is qasync's; imported for its side effects on Qt)

    from desktop_app.app import open_services
    from desktop_app.demo_site.server import DemoSite
    from desktop_app.gui.backend import ServicesBackend
    from desktop_app.settings import load_settings
    from desktop_app.ui.main_window import MainWindow

    with (
        DemoSite() as site,
        DemoSite(variants=["relabeled,renamed-ids"]) as drift,
        open_services(load_settings(), write=True) as services,
    ):
        print("recording, inducing and replaying the demo tasks…")
        started = time.monotonic()
        ids, runs = await _prepare(services, site.url, drift.url)
        print(f"ready in {time.monotonic() - started:.0f} s")
        backend = ServicesBackend(services)
        window = MainWindow(backend, dialogs=False)
        window.setGeometry(window.screen().availableGeometry())  # the whole (logical) screen
        window.show()
        await window.reload_all()
        stage = Stage(window, backend, site.url, drift.url, out, ids, runs, suffix=suffix)
        try:
            for name in only:
                await SHOTS[name](stage)
        finally:
            window.close()
            await window.shutdown()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    parser.add_argument("--only", default=",".join(SHOTS), help="comma-separated screens")
    parser.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="draw at this scale (QT_SCALE_FACTOR) and add @<scale>x to the file names",
    )
    args = parser.parse_args(argv)
    if not 1 <= args.scale <= 4:
        parser.error(f"--scale {args.scale:g} is out of range; use 1 to 4 (e.g. --scale 2)")
    suffix = "" if args.scale == 1 else f"@{args.scale:g}x"
    only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = sorted(set(only) - set(SHOTS))
    if unknown:
        parser.error(f"unknown screen {unknown[0]!r}; choose from {', '.join(SHOTS)}")
    args.out.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory(prefix="procedura-shots-") as home,
        _display(args.scale),
    ):
        os.environ["PROCEDURA_HOME"] = home
        # Where windows were (windows.ini) and the data-dir pointer: a fresh config, not yours.
        os.environ["XDG_CONFIG_HOME"] = str(Path(home) / "config")
        if args.scale != 1:
            os.environ["QT_SCALE_FACTOR"] = f"{args.scale:g}"
        os.environ["PROCEDURA_ACTOR"] = "ana"
        os.environ.pop("PYTHON_KEYRING_BACKEND", None)
        os.environ["ANONYMIZED_TELEMETRY"] = "False"
        for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "PROCEDURA_LLM_BASE_URL"):
            os.environ.pop(var, None)
        import keyring
        import qasync
        from fakes.keyring_backend import MemoryKeyring
        from PySide6.QtWidgets import QApplication

        keyring.set_keyring(MemoryKeyring())  # never the real keyring of whoever runs this
        app = QApplication(["procedura"])
        app.setApplicationName("Procedura")
        from desktop_app.ui import theme

        theme.apply(app)  # as the app does at start
        app.setQuitOnLastWindowClosed(False)
        loop = qasync.QEventLoop(app)
        asyncio.set_event_loop(loop)
        with loop:
            loop.run_until_complete(_main(args.out.resolve(), only, suffix))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
