"""The Qt binding installed keeps Python's reference counts: PySide6 6.12.0 dropped a reference
to ``None`` on every call of a Qt method that returns nothing, and on Python 3.11 (where
``None`` is counted) the interpreter aborted after some thousands of them ("Fatal Python
error: none_dealloc"): the desktop app died about 45 runs in. A release like that fails here,
not in a person's hands."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication, QLabel


class _Emitter(QObject):
    fired = Signal()


def test_qt_calls_leave_the_count_of_none_as_it_was(qapp: QApplication) -> None:
    label = QLabel()
    emitter = _Emitter()
    heard: list[None] = []
    emitter.fired.connect(lambda: heard.append(None))
    before = sys.getrefcount(None)
    for _ in range(300):
        label.setText("counted")  # a method returning nothing
        label.hide()
        emitter.fired.emit()  # a signal to a Python slot
    heard.clear()
    after = sys.getrefcount(None)
    # Other threads (none here) could move the count a little; a leak moves it by hundreds.
    assert abs(after - before) < 50, f"None's count moved by {after - before} in 900 Qt calls"
