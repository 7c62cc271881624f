"""Which window is which: the terminal a recording runs in, the one under a point, by title."""

from __future__ import annotations

import contextlib
import fnmatch
import os
from collections.abc import Iterable
from pathlib import Path

from desktop_app.core.models.common import BoundingBox
from desktop_app.core.replay.desktop import Window

__all__ = [
    "ancestor_pids",
    "handle_of",
    "started_from_a_terminal",
    "terminal_window",
    "title_matches",
    "window_at",
]


def terminal_window() -> Window | None:
    """The window of the terminal this process was started from (to leave out what is typed
    there, such as the Ctrl+C that ends a recording), if it can be told for sure.

    Only a window that belongs to one of this process's ancestors (its ``_NET_WM_PID``) counts:
    the one ``$WINDOWID`` names (xterm, Konsole, kitty, Alacritty…), else the active window.
    None when standard input is not a terminal (started from a menu, a launcher or a script):
    then no window is a terminal of ours, and leaving out the active one would leave out the
    very application the person works in.

    Raises:
        DesktopUnavailable: there is no display to ask.
    """
    from desktop_app.adapters.desktop.x11 import X11

    if not started_from_a_terminal():
        return None
    ancestors = ancestor_pids()
    with X11() as x11:
        candidates = []
        with contextlib.suppress(ValueError):
            candidates.append(x11.window(int(os.environ.get("WINDOWID", ""))))
        if x11.has_window_manager():
            candidates.append(x11.active_window())
        return next((w for w in candidates if w is not None and w.pid in ancestors), None)


def started_from_a_terminal() -> bool:
    """Whether standard input is a terminal (a command typed in a terminal)."""
    try:
        return os.isatty(0)
    except OSError:
        return False


def ancestor_pids(pid: int | None = None) -> frozenset[int]:
    """The processes *pid* (default: this one) descends from, read from ``/proc`` (none where
    there is no ``/proc``)."""
    found: set[int] = set()
    current = _parent(os.getpid() if pid is None else pid)
    while current is not None and current > 0 and current not in found:
        found.add(current)
        current = _parent(current)
    return frozenset(found)


def _parent(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    # "pid (comm) state ppid …": the command name may hold spaces and parentheses
    return int(stat.rsplit(")", 1)[1].split()[1])


def handle_of(window: Window | None) -> int | None:
    return window.handle if window is not None else None


def title_matches(pattern: str, window: Window) -> bool:
    """Whether *window*'s title or application contains *pattern* (case-insensitive, with
    ``*`` and ``?`` wildcards)."""
    wanted = f"*{pattern.lower()}*"
    return any(
        fnmatch.fnmatchcase(text.lower(), wanted) for text in (window.title, window.app or "")
    )


def window_at(windows: Iterable[Window], x: int, y: int) -> Window | None:
    """The topmost of *windows* (topmost first) under (*x*, *y*)."""
    return next((w for w in windows if _inside(x, y, [w.box])), None)


def _inside(x: float, y: float, boxes: Iterable[BoundingBox]) -> bool:
    return any(b.x <= x < b.x + b.width and b.y <= y < b.y + b.height for b in boxes)
