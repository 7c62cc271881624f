"""`procedura gui`: it starts, holds the stores as their one writer, and ends cleanly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import EXAMPLES, Cli
from fakes.openai_server import FakeOpenAIServer

from desktop_app.app import open_services
from desktop_app.core.errors import StoreLockedError
from desktop_app.handoff import app_is_running
from desktop_app.settings import load_settings

pytestmark = pytest.mark.slow


def _held(home: Path) -> bool:
    try:
        with open_services(load_settings(home=home), write=True):
            return False
    except StoreLockedError:
        return True


@pytest.mark.parametrize("args", [[], ["--tray"]], ids=["window", "at-login"])
def test_gui_starts_holds_the_stores_and_closes_on_sigterm(home: Path, args: list[str]) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "desktop_app", "gui", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while not (home / "procedura.db").exists() or not _held(home):
            assert proc.poll() is None, proc.communicate()[1].decode()
            assert time.monotonic() < deadline, "the window never took the stores"
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err.decode()
    assert not _held(home)


def test_gui_without_a_display_says_so(home: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.pop("QT_QPA_PLATFORM", None)
    done = subprocess.run(
        [sys.executable, "-m", "desktop_app", "gui"], env=env, capture_output=True, text=True
    )
    assert done.returncode != 0
    assert done.stderr.strip().startswith("error: no display")
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_window_opens_before_what_the_last_session_left_is_indexed(
    procedura: Cli, llm: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROCEDURA_EMBEDDING", "openai")  # the fake server's embeddings
    monkeypatch.setenv("PROCEDURA_LLM_API_KEY", "sk-test-key")
    llm.fail_next(400, "embeddings are down", times=None, path="/v1/embeddings")
    workflow = EXAMPLES / "create-contact.workflow.json"
    assert procedura("workflows", "import", str(workflow)).exit_code != 0  # saved, not indexed
    assert procedura.index_pending() == 1
    llm.reset()
    held = llm.hold("/v1/embeddings")  # the index takes as long as this test says

    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "desktop_app", "gui"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        # The app answers (its window is up) while the index still waits for its embeddings.
        while not app_is_running(load_settings()):
            assert proc.poll() is None, proc.communicate()[1].decode()
            assert time.monotonic() < deadline, "the app never came up"
            time.sleep(0.1)
        while not llm.requests_to("/v1/embeddings"):
            assert time.monotonic() < deadline, "the app never indexed what was left"
            time.sleep(0.1)
        assert procedura.index_pending() == 1
        held.set()
        while procedura.index_pending() != 0:
            assert proc.poll() is None, proc.communicate()[1].decode()
            assert time.monotonic() < deadline, "the index was never brought up to date"
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        held.set()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err.decode()
    found = procedura("workflows", "search", "add a new contact to the CRM", "--json")
    assert [hit["name"] for hit in json.loads(found.stdout)] == ["Create a contact"]
