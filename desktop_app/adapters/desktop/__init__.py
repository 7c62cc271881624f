"""The desktop outside the browser: windows, screenshots, image anchors, mouse and keyboard.

pynput, mss, python-xlib and OpenCV are imported lazily, inside the functions that need them:
importing this package never opens a display, and without one the desktop commands say so
(:func:`require_display`) while everything else works.
"""

from __future__ import annotations

import os
import sys

from desktop_app.core.replay.desktop import DesktopUnavailable

__all__ = ["require_display"]


def require_display() -> None:
    """Check that the desktop can be captured and driven here.

    Raises:
        DesktopUnavailable: no display (Linux without ``DISPLAY``), a Wayland session without
            X11 access, or a library missing (the message says which and what to do).
    """
    if sys.platform.startswith("linux"):
        if not os.environ.get("DISPLAY"):
            detail = (
                " (a Wayland session without Xwayland cannot be recorded)"
                if os.environ.get("WAYLAND_DISPLAY")
                else ""
            )
            raise DesktopUnavailable(
                "desktop recording and replay need an X11 display and DISPLAY is not set"
                + detail
                + "; run them from a desktop session (or under Xvfb)"
            )
        from desktop_app.adapters.desktop.x11 import X11

        X11().close()  # a display that cannot be opened says so (pynput's import would not)
    for module, package in (
        ("pynput", "pynput"),
        ("mss", "mss"),
        ("cv2", "opencv-python-headless"),
    ):
        try:
            __import__(module)
        except ImportError as exc:  # pynput also fails here when it cannot reach the display
            raise DesktopUnavailable(
                f"desktop recording and replay need {package}, which cannot be loaded: "
                + (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            ) from None
