"""Python's cycle collector, run only on the GUI thread.

A Qt object that ends up in a reference cycle is deleted when the cycle collector runs, on
whichever thread happens to trigger it. If that is the store thread, Qt deletes a widget off the
GUI thread and the process can crash later (a timer firing for a deleted object). So while the
window lives, automatic collection is off and a timer on the GUI thread collects instead, with
the same generation thresholds Python would use.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

from desktop_app.startup import take_over_collection

__all__ = ["GuiThreadCollector"]

#: How often the thresholds are checked.
CHECK_EVERY_MS = 500


class GuiThreadCollector(QObject):
    """Turns automatic garbage collection off, and collects from a GUI-thread timer instead."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        # Start-up (the entry point) may have held collection off already: on when this stops.
        self._was_enabled = gc.isenabled() or take_over_collection()
        gc.disable()
        self._timer = QTimer(self)
        self._timer.setInterval(CHECK_EVERY_MS)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._timer.start()

    def _on_timer_timeout(self) -> None:
        counts = gc.get_count()
        thresholds = gc.get_threshold()
        generation = -1
        for i in range(3):
            if thresholds[i] and counts[i] > thresholds[i]:
                generation = i
        if generation >= 0:
            gc.collect(generation)

    def freeze(self) -> None:
        """Leave every object alive now out of later collections (what start-up made, which
        lives as long as the app): a full collection then goes over what came after, in
        milliseconds, not over the whole heap (some 200,000 objects with Playwright, Chroma
        and Qt loaded: a sixth of a second on the GUI thread, in the middle of a run)."""
        gc.freeze()

    def stop(self) -> None:
        """Collect once more, here, and give collection back to Python."""
        self._timer.stop()
        gc.unfreeze()
        gc.collect()
        if self._was_enabled:
            gc.enable()
