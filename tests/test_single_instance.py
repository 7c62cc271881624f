"""One app per data directory: a second start hands its work to the app that is running."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from replay_support import approved, services

from desktop_app.app import open_services
from desktop_app.core.models.run import RunStatus, RunTrigger
from desktop_app.demo_site import DEMO_PASSWORD, DemoSite
from desktop_app.handoff import app_is_running, server_name
from desktop_app.settings import load_settings

pytestmark = pytest.mark.slow


def _procedura(*args: str, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "desktop_app", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_a_second_start_brings_the_app_forward_and_hands_it_the_run(home: Path) -> None:
    with services() as sv:
        workflow_id = approved(sv, "create-contact").workflow_id
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "DEMO_PW": DEMO_PASSWORD}
    if sys.platform != "win32":  # a socket left behind by an app that crashed does not matter
        stale = socket.socket(socket.AF_UNIX)
        stale.bind(os.path.join(tempfile.gettempdir(), server_name(home)))
        stale.close()
    app = subprocess.Popen(
        [sys.executable, "-m", "desktop_app", "gui"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        settings = load_settings()
        deadline = time.monotonic() + 60
        while not app_is_running(settings):
            assert app.poll() is None, app.communicate()[1].decode()
            assert time.monotonic() < deadline, "the app never listened"
            time.sleep(0.2)

        began = time.monotonic()
        again = _procedura("gui", env=env, timeout=30)
        assert again.returncode == 0, again.stderr
        assert "already running" in again.stderr
        assert time.monotonic() - began < 15

        with DemoSite() as site:
            handed = _procedura(
                "run",
                workflow_id[:8],
                "--base-url",
                site.url,
                "--headless",
                "--secret-env",
                "password=DEMO_PW",
                "-p",
                "full_name=Handed Over",
                "-p",
                "email=handed@example.test",
                env=env,
                timeout=120,
            )
            assert handed.returncode == 0, handed.stderr
            assert "The desktop app is open: it runs" in handed.stderr  # not here
            assert "✓ 10 Click 'Save'" in handed.stderr  # each step, as a local run prints it
            summary = handed.stdout.splitlines()
            assert summary[0].startswith("run ") and " succeeded: 11 steps" in summary[0]
            assert any(c["full_name"] == "Handed Over" for c in site.contacts())

            # A batch is handed over row by row (two at once); the results file is written here.
            table = home.parent / "people.csv"
            table.write_text(
                "full_name,email\nRow One,one@example.test\nRow Two,two@example.test\n",
                encoding="utf-8",
            )
            batch = _procedura(
                "run", workflow_id[:8], "--params-csv", str(table), "--parallel", "2",
                "--base-url", site.url, "--secret-env", "password=DEMO_PW",
                env=env, timeout=120,
            )  # fmt: skip
            assert batch.returncode == 0, batch.stderr
            assert "The desktop app is open: it runs each row" in batch.stderr
            assert "2 succeeded" in batch.stdout
            results = (home.parent / "people.results.csv").read_text(encoding="utf-8")
            assert results.count(",succeeded,") == 2
            names = {c["full_name"] for c in site.contacts()}
            assert {"Row One", "Row Two"} <= names

            # So is a run by intent: the workflow is found here, read-only, and run there.
            intent = _procedura(
                "run", "--intent", "create a contact for Ann Intent at Initech", "--yes",
                "--no-llm", "--base-url", site.url, "--headless",
                "--secret-env", "password=DEMO_PW", env=env, timeout=120,
            )  # fmt: skip
            assert intent.returncode == 0, intent.stderr
            assert "The desktop app is open: it runs" in intent.stderr
            assert any(c["full_name"] == "Ann Intent" for c in site.contacts())

        app.send_signal(signal.SIGTERM)
        _, err = app.communicate(timeout=30)
    finally:
        if app.poll() is None:
            app.kill()
    assert app.returncode == 0, err.decode()
    assert not app_is_running(settings)

    with open_services(settings, write=False) as sv:  # the app wrote them: one writer
        *_, run = sv.runs.runs(workflow_id)  # newest first: the single run is the oldest
        triggers = sorted(r.trigger.value for r in sv.runs.runs(workflow_id))
    assert triggers == ["batch", "batch", "cli", "intent"]
    assert run.status is RunStatus.SUCCEEDED and run.trigger is RunTrigger.CLI
    assert run.parameters["full_name"] == "Handed Over"
    assert run.parameters["password"] != DEMO_PASSWORD  # masked, as ever
    assert summary[0].startswith(f"run {run.id[:8]} ")


def test_without_the_app_run_works_alone_and_names_differ_per_data_directory(
    home: Path, tmp_path: Path
) -> None:
    settings = load_settings()
    assert not app_is_running(settings)
    assert server_name(home) == server_name(home / ".." / home.name)
    assert server_name(home) != server_name(tmp_path / "other")
