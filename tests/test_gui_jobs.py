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


def test_a_job_stepped_after_the_loop_stopped_still_reaches_the_store_thread(gui: Gui) -> None:
    """qasync gives Qt's events one last pass after its loop stopped, with no loop marked
    running: a job resumed then must still get its next store call (it once failed there with
    "no running event loop", and a Review page never showed a verification's result)."""

    async def job() -> int:
        first = await gui.window.tasks.call(lambda: 20)
        return first + await gui.window.tasks.call(lambda: 22)

    stepped = job()
    with pytest.raises(RuntimeError):
        asyncio.get_running_loop()  # as in that last pass
    pending = stepped.send(None)  # the first call, made outside a running loop
    assert isinstance(pending, asyncio.Future) and pending.get_loop() is gui.loop
    gui.run(pending)
    second = stepped.send(None)  # resumed outside the loop again: the second call
    gui.run(second)
    with pytest.raises(StopIteration) as ended:
        stepped.send(None)
    assert ended.value.value == 42
