"""A browser that goes away during a run is said to have gone, at once: the run ends failed
with that reason, not after a step waited for an element it took for drift ("could not find
the element"). Killed (a crash, an out-of-memory kill) and closed (a person closing the window
of a run that shows its browser).
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from late_app import STORED, ListHandler, add_item
from replay_support import approve, services, serving

from desktop_app.app import replay
from desktop_app.core.models.run import Run, RunStatus, StepStatus
from desktop_app.core.replay.engine import ReplayEvent, ReplayOptions
from desktop_app.core.replay.parameters import bind_parameters

pytestmark = pytest.mark.slow


@pytest.fixture
def site() -> Iterator[str]:
    STORED.clear()
    with serving(ListHandler) as url:
        yield url


def _parent(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[1])


def _ours(pid: int) -> bool:
    """Whether *pid* descends from this test's process (other workers run browsers too)."""
    with_ancestors = pid
    while with_ancestors > 1:
        if with_ancestors == os.getpid():
            return True
        with_ancestors = _parent(with_ancestors)
    return False


def _browsers() -> set[int]:
    """The Chromium browser processes (the ones Playwright talks to) this test's process runs."""
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
            if not any(a == b"--remote-debugging-pipe" for a in args):
                continue
            if any(a.startswith(b"--type=") for a in args) or not _ours(int(entry.name)):
                continue
        except OSError:
            continue
        found.add(int(entry.name))
    return found


def _kill_browser(before: set[int]) -> None:
    """SIGKILL the run's Chromium: the one browser started since *before* (a browser an earlier
    test left running in this worker is not the run's)."""
    started = _browsers() - before
    assert len(started) == 1, f"the run's browser is not clear: {sorted(started)}"
    os.kill(started.pop(), signal.SIGKILL)


def _run_and(site: str, at_step: int, do: Any) -> Run:
    """Run "add an item" and *do* (given the page) as step *at_step* starts."""
    pages: list[Any] = []
    before = _browsers()

    def on_event(event: ReplayEvent) -> None:
        if event.index == at_step and event.step is None:
            do(pages[0], before)

    with services() as sv:
        version = approve(sv, add_item("ready"))
        params = bind_parameters(version.workflow, {"item": "Oat milk"})
        result = asyncio.run(
            replay(
                sv,
                version,
                params,
                options=ReplayOptions(use_llm=False),
                base_url=site,
                headless=True,
                on_event=on_event,
                on_page=pages.append,
            )
        )
    return result.run


def test_a_browser_killed_during_a_run_ends_it_failed_saying_so(site: str) -> None:
    run = _run_and(site, 1, lambda page, before: _kill_browser(before))
    assert run.status is RunStatus.FAILED
    assert "the browser closed or crashed during the run" in (run.error or ""), run.error
    typed = run.steps[1]
    assert typed.status is StepStatus.FAILED
    assert "browser closed or crashed" in (typed.error or ""), typed.error
    assert "find" not in (typed.error or "") and typed.resolution is None  # not drift
    assert len(run.steps) == 2  # nothing after it, not even the success check
    assert not STORED


def test_a_browser_page_closed_during_a_run_ends_it_failed_saying_so(site: str) -> None:
    run = _run_and(site, 2, lambda page, _: asyncio.ensure_future(page.close()))
    assert run.status is RunStatus.FAILED
    assert "the browser page was closed during the run" in (run.error or ""), run.error
    assert run.steps[2].status is StepStatus.FAILED
    assert len(run.steps) == 3
    assert not STORED
