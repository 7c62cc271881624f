"""A run stopped midway (SIGTERM, or killed outright) leaves an "interrupted" record, never a
corrupt database."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from replay_support import approved, services
from sqlalchemy import text

from desktop_app.app import open_services
from desktop_app.core.models.run import Run, RunStatus
from desktop_app.demo_site import DEMO_PASSWORD, DemoSite
from desktop_app.settings import load_settings

pytestmark = pytest.mark.slow


def _start_run(workflow_id: str, url: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "DEMO_SECRET": DEMO_PASSWORD}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "desktop_app",
            "run",
            workflow_id,
            "--base-url",
            url,
            "--headless",
            "--non-interactive",
            "--no-llm",
            "--secret-env",
            "password=DEMO_SECRET",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _wait_for_steps(count: int, proc: subprocess.Popen[bytes]) -> Run:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the run ended before it could be stopped"
        with open_services(load_settings(), write=False) as sv:
            runs = sv.runs.runs()
        if runs and len(runs[0].steps) >= count:
            return runs[0]
        time.sleep(0.1)  # polling the database of another process
    raise AssertionError(f"the run did not reach {count} steps")


def _workflow_id() -> str:
    with services() as sv:
        return approved(sv, "create-contact").workflow.id


def test_sigterm_marks_the_run_interrupted_with_what_it_did() -> None:
    workflow_id = _workflow_id()
    with DemoSite(variants=["slow"]) as site:
        proc = _start_run(workflow_id, site.url)
        try:
            _wait_for_steps(3, proc)
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 1
        finally:
            proc.kill()
    with open_services(load_settings(), write=False) as sv:
        (run,) = sv.runs.runs()
    assert run.status is RunStatus.INTERRUPTED
    assert run.finished_at is not None and 3 <= len(run.steps) < 10
    assert not any(c["full_name"] == "Jane Doe" for c in site.contacts())  # Save never ran


def test_a_killed_run_is_marked_interrupted_when_the_stores_are_next_opened() -> None:
    workflow_id = _workflow_id()
    with DemoSite(variants=["slow"]) as site:
        proc = _start_run(workflow_id, site.url)
        try:
            _wait_for_steps(3, proc)
            proc.kill()
            proc.wait(timeout=30)
        finally:
            proc.kill()
    with open_services(load_settings(), write=False) as sv:
        (run,) = sv.runs.runs()
        assert run.status is RunStatus.RUNNING  # nobody has looked yet
    with open_services(load_settings(), write=True) as sv:
        (run,) = sv.runs.runs()
        with sv.engine.connect() as connection:
            assert connection.execute(text("PRAGMA integrity_check")).scalar() == "ok"
    assert run.status is RunStatus.INTERRUPTED
    assert run.error and "ended before the run finished" in run.error
    assert len(run.steps) >= 3
