"""When a recording was paused, on the page's clock, and which reports fall inside.

The page stamps its reports with ``Date.now()``; the pauses are kept on that clock, so a report
that arrives after the person resumed is still dropped when what it reports happened while
paused. Typing begun before a pause and sent just after it began is what pausing flushed: kept.
"""

from __future__ import annotations

import math
import time
from typing import Any, Final

__all__ = ["Pauses"]

#: Reports dropped while the recording is paused (observations such as ``effects`` are kept).
_PAUSABLE: Final = frozenset(
    {"click", "double_click", "fill", "select", "check", "uncheck", "press", "submit", "upload"}
    | {"scroll"}
)
#: A fill begun before a pause and sent this soon after it is what the pause flushed: kept.
_FLUSH_GRACE_MS: Final = 1500.0


def now_ms() -> float:
    """Now, in ms since the epoch: the clock the page's ``Date.now()`` reports on."""
    return time.time() * 1000


class Pauses:
    """The pauses of one recording, as [begin, end) in ms since the epoch."""

    def __init__(self) -> None:
        self._spans: list[tuple[float, float | None]] = []

    @property
    def paused(self) -> bool:
        """Whether a pause is going on."""
        return bool(self._spans) and self._spans[-1][1] is None

    def begin(self) -> None:
        """A pause begins now (nothing happens if one is going on)."""
        if not self.paused:
            self._spans.append((now_ms(), None))

    def end(self) -> None:
        """The pause going on ends now."""
        if self.paused:
            self._spans[-1] = (self._spans[-1][0], now_ms())

    def drops(self, data: dict[str, Any]) -> bool:
        """Whether the report *data* is of something done while paused."""
        if not self._spans or data.get("type") not in _PAUSABLE:
            return False
        try:
            made = float(data.get("t") or now_ms())
            began = float(data.get("t_start") or made)
        except (TypeError, ValueError):
            made = began = now_ms()
        for begin, end in self._spans:
            until = math.inf if end is None else end
            if data.get("type") == "fill":
                if begin <= began < until:
                    return True  # typing began while paused
                if began < begin and made >= begin + _FLUSH_GRACE_MS:
                    return True  # typing from before that went on while paused
            elif begin <= made < until:
                return True
        return False
