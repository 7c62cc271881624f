"""A replay's run record and screenshots, written behind it on a thread of their own.

The replay engine saves its run record after every step, with a screenshot; on the event loop
the window shares (qasync), each SQLite commit and each file's fsync would hold the window up.
Through a :class:`WriteBehind` they return at once and are written in the order given, on one
thread; whoever reads through it sees every write given before the read.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from desktop_app.adapters.media_store import AddressedMediaStore
from desktop_app.core.models.run import Run
from desktop_app.core.ports import RunStore
from desktop_app.core.views import RunQuery, RunStats

__all__ = ["WriteBehind"]

T = TypeVar("T")


class WriteBehind:
    """Run records and media written in order on one thread, behind the code that gives them.

    :attr:`runs` and :attr:`media` are the stores to hand the replay engine: ``save_run`` and
    ``put`` return at once (``put`` with the ref the bytes will have); every read through them
    first waits for the writes given before it (a screenshot not on disk yet is served from
    memory). A write that fails is raised by the next write given, or by :meth:`drain`; nothing
    given is dropped: :meth:`drain` (or :meth:`close`) returns once all of it is on disk.
    """

    def __init__(self, runs: RunStore, media: AddressedMediaStore) -> None:
        self._stores = (runs, media)
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._last: Future[Any] | None = None
        self._error: BaseException | None = None
        self.runs = _Runs(self, runs)
        self.media = _Media(self, media)

    # ── writing ─────────────────────────────────────────────────────────────────────────────

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        """Write with *fn* on the writing thread, after what was given before; its future (a
        failure is also kept for the next write given, or :meth:`drain`, to raise).

        Raises:
            Exception: what an earlier write raised (it is raised once).
        """
        return self._queue(functools.partial(self._guarded, fn))

    async def call(self, fn: Callable[[], T]) -> T:
        """Run blocking *fn* on the writing thread, after every write given so far; its result
        (its failure is the caller's alone)."""
        return await asyncio.wrap_future(self._queue(fn))

    def _queue(self, fn: Callable[[], T]) -> Future[T]:
        self._raise_failed()
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(1, thread_name_prefix="procedura-writes")
            future = self._executor.submit(fn)
            self._last = future
        return future

    def _guarded(self, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except BaseException as exc:
            with self._lock:
                if self._error is None:
                    self._error = exc
            raise

    def _raise_failed(self) -> None:
        with self._lock:
            error, self._error = self._error, None
        if error is not None:
            raise error

    # ── waiting ─────────────────────────────────────────────────────────────────────────────

    def settle(self) -> None:
        """Block until every write given so far has been done (or has failed)."""
        with self._lock:
            last = self._last
        if last is not None:
            last.exception()  # waits; a failure is the writer's to hear of, not a reader's

    async def drain(self) -> None:
        """Wait until every write given so far is done; raise the first one that failed."""
        with self._lock:
            last = self._last
        if last is not None:
            done = asyncio.wrap_future(last)
            await asyncio.wait([done])
            done.exception()  # heard here: a failed write is raised once, just below
        self._raise_failed()

    def close(self) -> None:
        """Wait for every write given, and stop the writing thread (it starts again if more
        writes come)."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)


class _Runs:
    """The run store, its saves written behind (a :class:`~desktop_app.core.ports.RunStore`)."""

    def __init__(self, writes: WriteBehind, store: RunStore) -> None:
        self._writes = writes
        self._store = store

    def save_run(self, run: Run) -> None:
        self._writes.submit(functools.partial(self._store.save_run, run))

    def get_run(self, run_id: str) -> Run:
        self._writes.settle()
        return self._store.get_run(run_id)

    def runs(self, workflow_id: str | None = None, limit: int = 100) -> list[Run]:
        self._writes.settle()
        return self._store.runs(workflow_id, limit)

    def find(self, ref: str) -> list[str]:
        self._writes.settle()
        return self._store.find(ref)

    def interrupt_running(self, reason: str) -> int:
        self._writes.settle()
        return self._store.interrupt_running(reason)

    def run_stats(self) -> dict[str, RunStats]:
        self._writes.settle()
        return self._store.run_stats()

    def run_page(self, query: RunQuery, *, offset: int = 0, limit: int = 100) -> list[Run]:
        self._writes.settle()
        return self._store.run_page(query, offset=offset, limit=limit)

    def run_count(self, query: RunQuery) -> int:
        self._writes.settle()
        return self._store.run_count(query)

    def run_workflows(self, ids: Sequence[str] | None = None) -> list[tuple[str, str]]:
        self._writes.settle()
        return self._store.run_workflows(ids)

    def count(self) -> int:
        self._writes.settle()
        return self._store.count()


class _Media:
    """The media store, its files written behind (a
    :class:`~desktop_app.core.ports.MediaStore`)."""

    def __init__(self, writes: WriteBehind, store: AddressedMediaStore) -> None:
        self._writes = writes
        self._store = store
        self._pending: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def put(self, data: bytes, extension: str) -> str:
        ref = self._store.ref_of(data, extension)
        with self._lock:
            if ref in self._pending:
                return ref
            self._pending[ref] = data
        try:
            self._writes.submit(functools.partial(self._write, ref, data, extension))
        except BaseException:
            with self._lock:
                self._pending.pop(ref, None)
            raise
        return ref

    def _write(self, ref: str, data: bytes, extension: str) -> None:
        try:
            self._store.put(data, extension)
        finally:
            with self._lock:
                self._pending.pop(ref, None)

    def get(self, ref: str) -> bytes:
        with self._lock:
            data = self._pending.get(ref)
        return data if data is not None else self._store.get(ref)

    def path(self, ref: str) -> Path:
        self._writes.settle()
        return self._store.path(ref)

    def exists(self, ref: str) -> bool:
        with self._lock:
            if ref in self._pending:
                return True
        return self._store.exists(ref)

    def delete(self, ref: str) -> None:
        self._writes.settle()
        self._store.delete(ref)

    def count(self) -> tuple[int, int]:
        self._writes.settle()
        return self._store.count()
