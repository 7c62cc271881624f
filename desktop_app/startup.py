"""Start-up: standard streams that exist, and no cycle collector while the modules load.

A launcher (a desktop file, a menu, a session manager) may start ``procedura`` with standard
input, output or error closed. The first files opened would then take those descriptors, and
whatever writes to "standard error" below Python (Qt's warnings, a native library's) would write
into them: into the database, say. So the entry point first puts ``/dev/null`` wherever one is
missing (:func:`open_standard_streams`).


Starting ``procedura`` imports a few hundred modules and makes some 300,000 objects, nearly all
of which live as long as the process (modules, classes, the models' schemas). Python's cycle
collector, left on, goes over them again and again while they are made, and finds nothing: a
sixth of the desktop app's cold start. So the entry point holds collection off while it starts,
and gives it back when the command begins, or, in the desktop app, when the window's own
collector (:mod:`desktop_app.ui.collector`) takes over.

Only the entry point holds it (``python -m desktop_app``, the ``procedura`` script): importing
the package as a library changes nothing.
"""

from __future__ import annotations

import gc
import os
import sys

__all__ = [
    "hold_collection",
    "open_standard_streams",
    "release_collection",
    "take_over_collection",
]

_held = False


def open_standard_streams() -> list[int]:
    """Open ``/dev/null`` on each of the descriptors 0, 1 and 2 that is closed, and give Python
    a stream for each it has none of (it has None for one closed at start); the descriptors
    that were closed."""
    closed = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.append(fd)
    for fd in closed:
        null = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
    for name, fd, mode in (("stdin", 0, "r"), ("stdout", 1, "w"), ("stderr", 2, "w")):
        if getattr(sys, name) is None:
            stream = open(fd, mode, encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
            setattr(sys, name, stream)
    return closed


def hold_collection() -> None:
    """Turn automatic collection off for start-up (if it was on)."""
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def release_collection() -> None:
    """Start-up is over: turn automatic collection back on, if start-up turned it off."""
    global _held
    if _held:
        _held = False
        gc.enable()


def take_over_collection() -> bool:
    """For a collector of its own: whether start-up held collection (it stays off; the caller
    must turn it back on when it is done). What start-up made is left out of later collections
    (:func:`gc.freeze`): it lives as long as the app."""
    global _held
    if not _held:
        return False
    _held = False
    gc.freeze()
    return True
