"""Which window is which: the terminal a recording runs in, the one under a point, by title."""

from __future__ import annotations

import contextlib
import fnmatch
import os
from collections.abc import Iterable

from desktop_app.core.models.common import BoundingBox
from desktop_app.core.replay.desktop import Window

__all__ = ["handle_of", "terminal_window", "title_matches", "window_at"]


def terminal_window() -> Window | None:
    """The window of the terminal this process runs in (to leave out what is typed there, such
    as the Ctrl+C that ends a recording), if it can be told.

    It is the window ``$WINDOWID`` names (xterm, Konsole, kitty, Alacritty…), else the active
    window when a window manager says which one that is.

    Raises:
        DesktopUnavailable: there is no display to ask.
    """
    from desktop_app.adapters.desktop.x11 import X11

    with X11() as x11:
        window = None
        with contextlib.suppress(ValueError):
            window = x11.window(int(os.environ.get("WINDOWID", "")))
        if window is None and x11.has_window_manager():
            window = x11.active_window()
        return window


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
