"""A long job a window owns — a run, a batch — as an object others can watch (Orange's
``TaskState``): it runs on the shared loop through the window's :class:`TaskRunner`, can be
stopped, and says how it ended once.

The owner hears how it ended (its result, its error, or that it was stopped) only while it holds
the job: once it lets go (:meth:`Job.release`, as its window closes) the job is stopped and no
callback reaches it any more; a window needs no "closed" flag of its own. What a job must do
whatever happens to its window (announce the run it recorded) belongs in the job's coroutine.
Watchers (the tray) connect to :attr:`Job.started` and :attr:`Job.ended`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from PySide6.QtCore import QObject, Signal

from desktop_app.core.errors import ProceduraError
from desktop_app.ui.tasks import TaskRunner

__all__ = ["Job"]

T = TypeVar("T")


class Job(QObject):
    """One long job at a time, owned by what started it.

    Signals:
        started(): a new run of the job began.
        ended(): it finished, failed or was stopped (after the owner heard how).
    """

    started = Signal()
    ended = Signal()

    def __init__(self, tasks: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tasks = tasks
        self._task: asyncio.Task[Any] | None = None
        self._released = False

    @property
    def running(self) -> bool:
        """Whether the job is going on."""
        return self._task is not None and not self._task.done()

    @property
    def released(self) -> bool:
        """Whether the owner has let go (nothing reaches it any more)."""
        return self._released

    def start(
        self,
        job: Coroutine[Any, Any, T],
        *,
        label: str,
        on_done: Callable[[T], object],
        on_error: Callable[[BaseException], object],
        on_stopped: Callable[[], object],
    ) -> bool:
        """Start *job*; whether it started (not once the owner let go, or the app is closing).

        Args:
            job: the coroutine.
            label: what it does, for the progress indicator.
            on_done: called with its result.
            on_error: called with the error it raised. A bug (not a ``ProceduraError``) is also
                reported once in the window's error dialog.
            on_stopped: called when it was stopped.

        Raises:
            RuntimeError: it is still running.
        """
        if self.running:
            job.close()
            raise RuntimeError("this job is still running")
        if self._released:
            job.close()
            return False
        task = self._tasks.start(
            job,
            label=label,
            on_done=functools.partial(self._on_done, on_done),
            on_error=functools.partial(self._on_error, on_error),
        )
        if task is None:
            return False
        self._task = task
        task.add_done_callback(functools.partial(self._on_task_done, on_stopped))
        self.started.emit()
        return True

    def stop(self) -> bool:
        """Stop it (the owner hears it was stopped); whether it was running."""
        if self._task is None or self._task.done():
            return False
        self._task.cancel()
        return True

    def release(self) -> None:
        """The owner lets go: the job is stopped, and nothing reaches the owner any more."""
        self._released = True
        self.stop()

    def _on_done(self, on_done: Callable[[Any], object], result: Any) -> None:
        if not self._released:
            on_done(result)
        self._say_ended()

    def _on_error(self, on_error: Callable[[BaseException], object], exc: BaseException) -> bool:
        if not self._released:
            on_error(exc)
        self._say_ended()
        return isinstance(exc, ProceduraError)  # a bug is reported, owner or not

    def _on_task_done(self, on_stopped: Callable[[], object], task: asyncio.Task[Any]) -> None:
        if not task.cancelled():
            return
        if not self._released:
            on_stopped()
        self._say_ended()

    def _say_ended(self) -> None:
        with contextlib.suppress(RuntimeError):  # its window, and it with it, is gone
            self.ended.emit()
