"""What an operation changed reaches every screen one way: ``AppEvents.announce`` turns a
``Changes`` into the change signals, and no screen emits them itself."""

from __future__ import annotations

import re
from pathlib import Path

from factories import full_workflow, run_for
from PySide6.QtWidgets import QApplication

from desktop_app.ops.changes import MANY, Changes, Origin, run_changes
from desktop_app.ui.host import AppEvents

PACKAGE = Path(__file__).resolve().parents[1] / "desktop_app"


def _heard(events: AppEvents) -> list[tuple[str, str]]:
    heard: list[tuple[str, str]] = []
    events.workflows_changed.connect(lambda i: heard.append(("workflows", i)))
    events.recordings_changed.connect(lambda i: heard.append(("recordings", i)))
    events.runs_changed.connect(lambda i: heard.append(("runs", i)))
    events.settings_changed.connect(lambda: heard.append(("settings", "")))
    return heard


def test_announce_emits_one_signal_per_id_and_one_for_many(qapp: QApplication) -> None:
    events = AppEvents()
    heard = _heard(events)
    events.announce(Changes.of(Origin.WINDOW, workflows=["b", "a"], runs=["r1"], settings=True))
    assert heard == [("settings", ""), ("workflows", "a"), ("workflows", "b"), ("runs", "r1")]
    heard.clear()
    events.announce(Changes.of(Origin.TRAY, recordings=["x", MANY, "y"]))
    assert heard == [("recordings", MANY)]
    heard.clear()
    events.announce(Changes(Origin.CLI))
    assert heard == []


def test_a_run_that_proposed_a_repair_changes_its_workflow_too() -> None:
    run = run_for(full_workflow())
    plain = run.model_copy(update={"proposed_version": None})
    assert run_changes(plain, Origin.WINDOW) == Changes.of(Origin.WINDOW, runs=[run.id])
    repaired = run.model_copy(update={"proposed_version": 2})
    assert run_changes(repaired, Origin.HANDOFF).workflows == {run.workflow_id}
    assert run_changes(None, Origin.TRAY).runs == {MANY}
    both = run_changes(plain, Origin.WINDOW) | Changes.of(Origin.TRAY, settings=True)
    assert both.origin is Origin.WINDOW and both.settings and both.runs == {run.id}


def test_no_screen_emits_a_change_signal_itself() -> None:
    emits = re.compile(r"events\.(workflows|recordings|runs|settings)_changed\.emit\(")
    found = [
        f"{path.relative_to(PACKAGE)}:{n}"
        for path in PACKAGE.rglob("*.py")
        if path != PACKAGE / "ui" / "host.py"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if emits.search(line)
    ]
    assert found == [], "announce the Changes an operation returned instead"
