"""Background work with an owner: store calls off the GUI thread, coroutines on the shared loop.

Every job the window starts goes through one :class:`TaskRunner`. It runs blocking service calls
on a single store thread (one writer, in order), runs coroutines (Playwright, replay) on the
qasync loop, shows a progress indicator for anything that takes over a second, reports each
failure once in a readable dialog with the details on demand, and cancels what is still running
when the window closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import traceback
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar

from PySide6.QtCore import QObject, Qt, QTimer, Signal, SignalInstance
from PySide6.QtWidgets import QMessageBox, QWidget

from desktop_app.core.errors import ProceduraError

__all__ = ["TaskRunner", "describe_error", "signal_future"]

log = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")

#: Jobs that take longer than this get a progress indicator.
PROGRESS_AFTER_MS = 1000


def describe_error(exc: BaseException) -> str:
    """One readable line for *exc*: our own errors say it themselves; others get their type."""
    if isinstance(exc, ProceduraError):
        return str(exc)
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def signal_future(signal: SignalInstance) -> asyncio.Future[tuple[Any, ...]]:
    """A future that resolves with the arguments of *signal*'s next emission."""
    loop = _current_loop()
    if loop is None:
        raise RuntimeError("no event loop: the window is closed")
    future: asyncio.Future[tuple[Any, ...]] = loop.create_future()

    def fire(*args: Any) -> None:
        with contextlib.suppress(RuntimeError, TypeError):
            signal.disconnect(fire)
        if not future.done():
            future.set_result(args)

    signal.connect(fire)
    return future


class TaskRunner(QObject):
    """Runs, tracks and cancels the window's background jobs.

    Signals:
        busy_changed(bool, str): a job has been running over a second (True, its label), or no
            such job is left (False, "").
        error_reported(str, str): a job failed; its one-line message and the details.
    """

    busy_changed = Signal(bool, str)
    error_reported = Signal(str, str)

    def __init__(self, parent: QWidget | None = None, *, dialogs: bool = True) -> None:
        super().__init__(parent)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="procedura-store")
        self._tasks: set[asyncio.Task[Any]] = set()
        self._slow: dict[asyncio.Task[Any], str] = {}
        self._dialogs = dialogs
        self._closed = False
        self.last_error: str | None = None

    # ── running ─────────────────────────────────────────────────────────────────────────────

    def call(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> asyncio.Future[T]:
        """Run blocking *fn* on the store thread; await the returned future for its result.

        A job may be stepped while no loop is marked running: qasync's ``run_until_complete``
        gives Qt's events one last pass after its loop stopped, and a job waiting on the store
        thread resumes there. Its next call still goes to the window's loop."""
        loop = _current_loop()
        if loop is None:
            raise RuntimeError("no event loop: the window is closed")
        return loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    def start(
        self,
        job: Coroutine[Any, Any, T],
        *,
        label: str,
        on_done: Callable[[T], object] | None = None,
        on_error: Callable[[BaseException], bool] | None = None,
    ) -> asyncio.Task[T] | None:
        """Start *job* on the loop, owned by this runner (None, and it never runs, once the
        window is closing).

        Args:
            job: the coroutine.
            label: what it does, for the progress indicator ("Searching…").
            on_done: called with the result on success.
            on_error: called with the exception first; return True when it was handled,
                else it is reported (once) in an error dialog.
        """
        loop = _current_loop()
        if self._closed or loop is None:
            job.close()  # a late signal while the window closes: nothing starts any more
            return None
        task = loop.create_task(job)
        self._tasks.add(task)
        QTimer.singleShot(PROGRESS_AFTER_MS, self, lambda: self._mark_slow(task, label))
        task.add_done_callback(functools.partial(self._finished, on_done, on_error, label))
        return task

    def run(
        self,
        fn: Callable[[], T],
        *,
        label: str,
        on_done: Callable[[T], object] | None = None,
        on_error: Callable[[BaseException], bool] | None = None,
    ) -> asyncio.Task[T] | None:
        """Start blocking *fn* on the store thread as an owned job (see :meth:`start`)."""

        async def job() -> T:
            return await self.call(fn)

        return self.start(job(), label=label, on_done=on_done, on_error=on_error)

    @property
    def pending(self) -> int:
        """How many jobs are still running."""
        return len(self._tasks)

    async def idle(self) -> None:
        """Wait until every job started so far (and those they start) has finished."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def shutdown(self) -> None:
        """Cancel every job, wait for them, and stop the store thread."""
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)
        await asyncio.get_running_loop().run_in_executor(
            None, functools.partial(self._executor.shutdown, wait=True)
        )

    # ── reporting ───────────────────────────────────────────────────────────────────────────

    def report(self, exc: BaseException, *, title: str = "Something went wrong") -> None:
        """Show *exc* once: its message, with the traceback behind "Show Details…"."""
        message = describe_error(exc)
        details = "".join(traceback.format_exception(exc))
        self.last_error = message
        if not isinstance(exc, ProceduraError):
            log.error("%s", details)
        self.error_reported.emit(message, details)
        parent = self.parent()
        if self._dialogs and isinstance(parent, QWidget):
            box = QMessageBox(QMessageBox.Icon.Warning, title, message, parent=parent)
            box.setDetailedText(details)
            box.setObjectName("error-dialog")
            box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            box.open()

    def _mark_slow(self, task: asyncio.Task[Any], label: str) -> None:
        if task.done() or task in self._slow:
            return
        self._slow[task] = label
        self.busy_changed.emit(True, label)

    def _finished(
        self,
        on_done: Callable[[Any], object] | None,
        on_error: Callable[[BaseException], bool] | None,
        label: str,
        task: asyncio.Task[Any],
    ) -> None:
        self._tasks.discard(task)
        if self._slow.pop(task, None) is not None:
            if self._slow:
                self.busy_changed.emit(True, next(reversed(self._slow.values())))
            else:
                self.busy_changed.emit(False, "")
        if task.cancelled():
            return
        exc = task.exception()
        if exc is None:
            if on_done is not None:
                try:
                    on_done(task.result())
                except Exception as callback_error:  # a bug in a callback: report, don't lose
                    self.report(callback_error, title=label)
            return
        if on_error is not None and on_error(exc):
            return
        self.report(exc, title=label.rstrip("…. ") or "Something went wrong")


def _current_loop() -> asyncio.AbstractEventLoop | None:
    """The loop jobs run on: the running one, else the one set for this thread (None if gone)."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        pass
    try:
        loop = asyncio.get_event_loop_policy().get_event_loop()
    except RuntimeError:
        return None
    return None if loop.is_closed() else loop
