"""A window's long job is an object it owns: the owner hears how it ended once, nothing after it
lets go, and watchers hear that it ended in every case (desktop_app/ui/jobs.py)."""

from __future__ import annotations

import asyncio

import pytest
from gui_support import Gui, until

from desktop_app.core.errors import ProceduraError
from desktop_app.ui.jobs import Job


class _Owner:
    def __init__(self) -> None:
        self.heard: list[str] = []

    def done(self, result: object) -> None:
        self.heard.append(f"done {result}")

    def failed(self, exc: BaseException) -> None:
        self.heard.append(f"failed {exc}")

    def stopped(self) -> None:
        self.heard.append("stopped")


def test_the_owner_hears_once_how_the_job_ended_and_nothing_after_letting_go(gui: Gui) -> None:
    job = Job(gui.window.tasks)
    owner = _Owner()
    ended: list[bool] = []
    job.ended.connect(lambda: ended.append(True))
    gate = asyncio.Event()

    async def work(result: str) -> str:
        await gate.wait()
        return result

    async def fail() -> str:
        raise ProceduraError("the page went away")

    def start(coroutine: object) -> bool:
        return job.start(
            coroutine,  # type: ignore[arg-type]
            label="Working…",
            on_done=owner.done,
            on_error=owner.failed,
            on_stopped=owner.stopped,
        )

    async def scenario() -> None:
        assert start(work("first"))
        assert job.running
        second = work("second")
        with pytest.raises(RuntimeError, match="still running"):
            start(second)  # one at a time
        gate.set()
        await until(lambda: len(ended) == 1, what="the first to end")
        assert owner.heard == ["done first"] and not job.running
        assert start(fail())
        await until(lambda: len(ended) == 2, what="the failure")
        gate.clear()
        assert start(work("third"))
        assert job.stop()
        await until(lambda: len(ended) == 3, what="the stop")
        assert start(work("fourth"))
        job.release()  # the window closes
        await until(lambda: len(ended) == 4, what="the release")
        assert not job.running
        assert not start(work("fifth"))  # nothing starts for an owner that let go

    gui.run(scenario())
    gui.settle()
    assert owner.heard == ["done first", "failed the page went away", "stopped"]
    assert gui.window.tasks.last_error is None  # an expected error is the owner's to show
