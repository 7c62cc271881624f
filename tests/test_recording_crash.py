"""Killed at any moment, on a busy machine, a recording loses at most its last second.

``procedura record web --attach`` records a person adding notes in a browser of their own while
two processes keep the CPU busy, and is killed with SIGKILL at random moments (20 of them, one
recorder each). Every recording is kept, marked incomplete, and holds every note the person had
finished adding more than a second before the kill.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any, Final

import pytest
from browser_support import busy_machine, chromium_with_cdp
from capture_harness import PageServer
from recording_support import KilledRecording, kept_notes, kill_while_recording

from desktop_app.app import open_services
from desktop_app.settings import load_settings

pytestmark = pytest.mark.slow

KILLS: Final = int(os.environ.get("PROCEDURA_TEST_KILLS", "20"))


def test_a_kill_9_loses_at_most_the_last_second(home: Path, tmp_path: Path, procedura: Any) -> None:
    server = PageServer()
    try:
        with chromium_with_cdp(tmp_path / "profile") as cdp, busy_machine():
            sessions: list[KilledRecording] = asyncio.run(
                kill_while_recording(
                    cdp, server.url("notes.html"), KILLS, seed=16, run_s=(0.4, 1.6)
                )
            )
    finally:
        server.close()

    listed = json.loads(procedura("trajectories", "list", "--json").stdout)  # recovers the last
    by_intent = {t["intent"]: t for t in listed}
    assert len(listed) == KILLS
    lost = []
    with open_services(load_settings(), write=False) as services:
        for session in sessions:
            summary = by_intent[session.intent]
            assert summary["incomplete"] is True, session.intent
            kept = kept_notes(services.trajectories, summary["id"])
            lost += [(session.intent, note) for note in session.lost(kept)]
    assert lost == []
    assert sum(len(s.done) for s in sessions) >= KILLS  # notes were being added all along
