"""Start-up without the cycle collector.

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

__all__ = ["hold_collection", "release_collection", "take_over_collection"]

_held = False


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
