"""One writer at a time: an OS file lock on the data directory, released when the process ends."""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType

from filelock import FileLock, Timeout

from desktop_app.core.errors import StoreLockedError

__all__ = ["WriterLock"]


class WriterLock:
    """Held by the process that writes the stores (the app, or a CLI command that writes).

    The lock is an ``flock`` on ``<data dir>/writer.lock``: the OS frees it when the holder exits
    or crashes, so a stale lock cannot block anyone. The holder's pid is kept beside it so the
    message can say who holds it.
    """

    def __init__(self, data_dir: Path) -> None:
        self._data_dir = data_dir
        self._lock = FileLock(data_dir / "writer.lock", is_singleton=False)
        self._pid_file = data_dir / "writer.pid"

    def acquire(self) -> None:
        """Take the lock now or raise :class:`StoreLockedError`."""
        self._data_dir.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            holder = self._holder()
            who = f"Procedura process {holder}" if holder else "another Procedura process"
            raise StoreLockedError(
                f"{who} is already writing to {self._data_dir}; close it first "
                "(or set PROCEDURA_HOME to use another data directory)"
            ) from None
        self._pid_file.write_text(str(os.getpid()))

    def release(self) -> None:
        """Give the lock up (nothing happens if it is not held)."""
        if self._lock.is_locked:
            self._pid_file.unlink(missing_ok=True)
            self._lock.release(force=True)

    @property
    def held(self) -> bool:
        """Whether this process holds the lock."""
        return self._lock.is_locked

    def _holder(self) -> str | None:
        try:
            return f"(pid {int(self._pid_file.read_text().strip())})"
        except (OSError, ValueError):
            return None

    def __enter__(self) -> WriterLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
