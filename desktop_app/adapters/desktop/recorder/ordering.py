"""Input put back in the order it happened, though two threads heard it.

pynput listens to the mouse and to the keyboard on two threads, each with its own connection
to the X server. Each hears its own input in order, but nothing orders one against the other:
while the mouse thread takes a click's screenshot, the keyboard thread may still be on the keys
typed just before it — at machine speed, or on a loaded machine, the click then reached the
recorder first, ended the burst of typing, and the last keys of a password started a new,
plain burst after it. So every press is stamped with the X server's own time of the event
(:func:`stamped`), both threads' stamps are put on one clock (:class:`Timeline`), and the
recorder's worker handles input in that order once it has waited :data:`SETTLE_S` for the
other thread to catch up (:class:`Reorder`).

On other platforms pynput's listeners have no X event to read a time from: the local clock at
the callback stands in (the same order as before).
"""

from __future__ import annotations

import heapq
import itertools
import threading
from typing import Any, Final, Generic, TypeVar

__all__ = ["SETTLE_S", "Reorder", "Timeline", "stamped"]

#: How long (seconds) an input waits for input heard by the other thread that came before it.
SETTLE_S: Final = 0.25
#: A server time this far (seconds) behind the last one means the clock wrapped (every 49.7
#: days) or the server restarted: the two clocks are matched again.
_RESET_S: Final = 60.0

_T = TypeVar("_T")


def stamped(listener_class: type[Any]) -> type[Any]:
    """A subclass of pynput's *listener_class* whose ``server_time`` is the X server's time
    (ms) of the event its callback is being called for, or None (not X11)."""

    class Stamped(listener_class):  # type: ignore[misc]
        server_time: int | None = None

        def _handle_message(self, display: Any, event: Any, injected: bool) -> None:
            self.server_time = getattr(event, "time", None)
            super()._handle_message(display, event, injected)

    Stamped.__name__ = f"Stamped{listener_class.__name__}"
    return Stamped


class Timeline:
    """The X server's event times on the local monotonic clock (thread-safe).

    The offset between the two is the least seen (the local clock read at a callback, less the
    event's server time): the callback that came soonest after its event tells it best.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._offset: float | None = None
        self._last: float | None = None

    def when(self, server_ms: int | None, clock: float) -> float:
        """When the event heard at *clock* (``time.monotonic()``) happened, on that clock."""
        if server_ms is None:
            return clock
        server = server_ms / 1000
        with self._lock:
            if self._last is not None and server < self._last - _RESET_S:
                self._offset = None
            self._last = server
            offset = clock - server
            if self._offset is None or offset < self._offset:
                self._offset = offset
            return server + self._offset


class Reorder(Generic[_T]):
    """Items held for :data:`SETTLE_S` after they arrive, then given out in the order they
    happened (not thread-safe: the worker's own)."""

    def __init__(self, settle_s: float = SETTLE_S) -> None:
        self._settle = settle_s
        self._heap: list[tuple[float, int, float, _T]] = []
        self._count = itertools.count()
        self._given: float | None = None

    def push(self, when: float, item: _T, arrived: float) -> bool:
        """Hold *item*, which happened at *when*; False (not held) when an item that happened
        after it has been given out already: it came too late to be put in its place."""
        if self._given is not None and when < self._given:
            return False
        heapq.heappush(self._heap, (when, next(self._count), arrived, item))
        return True

    def due(self) -> float | None:
        """When the next item may be given out (the earliest arrival, settled); None if none."""
        if not self._heap:
            return None
        return min(arrived for _, _, arrived, _ in self._heap) + self._settle

    def ready(self, now: float) -> list[_T]:
        """The items to handle now, in the order they happened: while any held item has
        settled, the one that happened first (it may have arrived later)."""
        out: list[_T] = []
        while self._heap and (due := self.due()) is not None and due <= now:
            when, _, _, item = heapq.heappop(self._heap)
            self._given = when
            out.append(item)
        return out

    def drain(self) -> list[_T]:
        """Every held item, in the order they happened."""
        out = []
        while self._heap:
            when, _, _, item = heapq.heappop(self._heap)
            self._given = when
            out.append(item)
        return out
