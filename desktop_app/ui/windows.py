"""Small behaviours the top-level windows share: coming forward, and asking before a stop."""

from __future__ import annotations

from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QMessageBox, QWidget

__all__ = ["bring_forward", "may_close_while_running"]


def bring_forward(window: QWidget) -> None:
    """Show *window* (even if hidden in the tray, un-minimised if it was), raise it and give it
    the focus."""
    if window.isMinimized():
        window.showNormal()
    else:
        window.show()
    window.raise_()
    window.activateWindow()


def may_close_while_running(
    window: QWidget, event: QCloseEvent, *, running: bool, title: str, question: str
) -> bool:
    """Whether a window whose job is *running* may close (and so stop it).

    A person closing it is asked first; a close from the app (quitting) is not. When the answer
    is no, the event is ignored and the window stays.
    """
    if not running or not event.spontaneous():
        return True
    answer = QMessageBox.question(
        window,
        title,
        question,
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        QMessageBox.StandardButton.No,
    )
    if answer != QMessageBox.StandardButton.Yes:
        event.ignore()
        return False
    return True
