"""Recording scripted demonstrations, and killing recorders mid-way: what the recording tests and
``bench/recording.py`` share.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from demonstrations import Demonstrator, Pace, Scenario
from playwright.async_api import Page, async_playwright
from third_party import FlaskAdminSite, todomvc

from desktop_app.app import Services, record_web
from desktop_app.core.models import ActionKind, Trajectory
from desktop_app.core.trajectories import TrajectoryLibrary
from desktop_app.demo_site.server import DemoSite

REPO: Final = Path(__file__).resolve().parents[1]
#: The most a crash may lose: what was done in the last second before it.
LOSS_S: Final = 1.0


@contextlib.contextmanager
def app_for(scenario: Scenario) -> Iterator[str]:
    """The scenario's app, running; yields where its recording starts."""
    if scenario.app == "demo":
        with DemoSite() as site:
            yield site.url + scenario.path
    elif scenario.app.startswith("todomvc:"):
        with todomvc(scenario.app.split(":", 1)[1]) as url:
            yield url + scenario.path
    else:
        with FlaskAdminSite() as site:
            yield site.url + scenario.path


async def record_demonstration(
    services: Services, url: str, scenario: Scenario, pace: Pace, *, init_script: str = ""
) -> Trajectory:
    """Record *scenario* done at *pace* in headless Chromium: the person opens *url* (typed, as
    the first step) and demonstrates. *init_script* runs in every page first (a test's own)."""
    stop = asyncio.Event()
    tasks: list[asyncio.Task[None]] = []

    async def act(page: Page) -> None:
        try:
            if init_script:
                await page.context.add_init_script(script=init_script)
            await page.goto(url)
            await scenario.demonstrate(Demonstrator(page, pace))
        finally:
            stop.set()

    trajectory = await record_web(
        services,
        url=None,
        intent=scenario.intent,
        headless=True,
        stop=stop,
        on_started=lambda _id, page: tasks.append(asyncio.create_task(act(page))),
    )
    await tasks[0]
    return trajectory


# ── killing recorders ─────────────────────────────────────────────────────────────────────────


@dataclass
class KilledRecording:
    """One recorder killed with SIGKILL: its intent, when, and the notes added before."""

    intent: str
    killed_at: float = 0.0
    done: list[tuple[str, float]] = field(default_factory=list)  # (note, when Enter went)

    def lost(self, kept: set[str], loss_s: float = LOSS_S) -> list[str]:
        """Notes finished more than *loss_s* before the kill that the recording lacks."""
        return [t for t, at in self.done if at <= self.killed_at - loss_s and t not in kept]


def recorder_command(cdp: str, intent: str) -> list[str]:
    """``procedura record web --attach CDP --intent INTENT``, as a process to start."""
    return [
        sys.executable,
        "-m",
        "desktop_app",
        "record",
        "web",
        "--attach",
        cdp,
        "--intent",
        intent,
    ]


async def _start_recorder(cdp: str, intent: str) -> asyncio.subprocess.Process:
    process = await asyncio.create_subprocess_exec(
        *recorder_command(cdp, intent),
        cwd=REPO,
        env=dict(os.environ),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    line = await asyncio.wait_for(process.stderr.readline(), timeout=120)
    if not line.decode().startswith("recording "):
        raise RuntimeError(f"the recorder did not start: {line.decode().strip()}")
    return process


async def _add_notes(page: Page, prefix: str, done: list[tuple[str, float]]) -> None:
    """Add notes one after another, as fast as the page takes them, until cancelled."""
    field_ = page.get_by_label("Note")
    count = 0
    while True:
        count += 1
        text = f"{prefix}-{count}"
        await field_.click()
        await field_.press_sequentially(text, delay=20)
        await field_.press("Enter")
        done.append((text, time.time()))


async def kill_while_recording(
    cdp: str, notes_url: str, kills: int, *, seed: int, run_s: tuple[float, float]
) -> list[KilledRecording]:
    """*kills* times: ``procedura record web --attach CDP`` records a person adding notes on
    *notes_url* as fast as they can, and is killed with SIGKILL a random time in *run_s*
    (seconds) after the first note was done."""
    rng = random.Random(seed)
    killed = []
    async with async_playwright() as pw:
        browser = await pw.chromium.connect_over_cdp(cdp)
        page = browser.contexts[0].pages[0]
        for kill in range(kills):
            session = KilledRecording(intent=f"notes {kill}")
            recorder = await _start_recorder(cdp, session.intent)
            await page.goto(notes_url)
            user = asyncio.create_task(_add_notes(page, f"k{kill}", session.done))
            # Killed while notes are being added: the random moment counts from the first
            # note done (a loaded machine may take seconds to get there), 15 s at most.
            started = time.monotonic()
            while not session.done and not user.done() and time.monotonic() - started < 15:
                await asyncio.sleep(0.02)
            await asyncio.sleep(rng.uniform(*run_s))
            recorder.send_signal(signal.SIGKILL)
            session.killed_at = time.time()
            await recorder.wait()
            user.cancel()
            await asyncio.gather(user, return_exceptions=True)
            killed.append(session)
        await browser.close()
    return killed


def kept_notes(store: TrajectoryLibrary, trajectory_id: str) -> set[str]:
    """The values of the fills a recording holds (what survived of the notes)."""
    return {
        e.value
        for e in store.raw_events(trajectory_id)
        if e.action is ActionKind.FILL and isinstance(e.value, str) and e.value
    }
