"""Desktop elements through the platform's accessibility API: one :class:`Tree` per platform.

Linux has AT-SPI over D-Bus (:mod:`.atspi`, tested); Windows has UI Automation (:mod:`.uia`)
and macOS the AX API (:mod:`.ax`), both written to the same protocol but untested here (no such
machine runs our suite): they say so in their docstrings and in ``docs/recording.md``.

A tree is synchronous and not thread-safe: one thread uses it (the desktop port's worker, or the
recorder's capture lock). Every method may block on the application (a D-Bus or COM call), each
bounded by a timeout, and never raises for an application that does not answer: it says "no
tree" (None) instead, and images take over.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from typing import Final, Protocol

from desktop_app.core.replay.desktop import Element, Window

__all__ = ["FOCUS_WAIT_S", "MAX_ELEMENTS", "Tree", "focus_taken", "open_tree"]

log = logging.getLogger(__name__)

#: The most elements one window's walk reads, on every platform; a bigger window has "no tree"
#: (images do).
MAX_ELEMENTS: Final = 2000


class Tree(Protocol):
    """The accessibility tree of the desktop's applications."""

    def elements(self, window: Window) -> list[Element] | None:
        """The elements shown in *window* (parents before children, the window itself left
        out), as many as :data:`MAX_ELEMENTS`; None when its application exposes no tree."""
        ...

    def focus(self, element: Element) -> bool:
        """Give *element* the keyboard focus; whether it has it now."""
        ...

    def text(self, element: Element) -> str | None:
        """The text *element* shows (a field's value); None when it exposes none."""
        ...

    def close(self) -> None:
        """Close the connection (safe to call twice)."""
        ...


def open_tree() -> Tree | None:
    """This platform's tree, or None (logged once, at info) when it cannot be opened: no
    accessibility bus, a library missing. Images alone are used then."""
    try:
        if sys.platform.startswith("linux"):
            from desktop_app.adapters.desktop.accessibility.atspi import AtSpiTree

            return AtSpiTree.open()
        if sys.platform == "win32":
            from desktop_app.adapters.desktop.accessibility.uia import UiaTree

            return UiaTree.open()
        if sys.platform == "darwin":
            from desktop_app.adapters.desktop.accessibility.ax import AxTree

            return AxTree.open()
    except Exception as exc:  # an optional capability: never stop a recording or a run
        log.info("accessibility: not available (%s); image anchors only", exc)
    return None


#: How long (seconds) a toolkit may take to report the focus it was asked to move (it may move
#: it on its next turn of the event loop).
FOCUS_WAIT_S: Final = 0.5


def focus_taken(has_focus: Callable[[], bool]) -> bool:
    """Whether *has_focus* says yes within :data:`FOCUS_WAIT_S` (polled; its exceptions are
    the caller's)."""
    deadline = time.monotonic() + FOCUS_WAIT_S
    while not has_focus():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
