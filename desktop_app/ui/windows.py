"""Small behaviours the top-level windows share: a size that fits the screen, the place they
had last time, coming forward, and asking before a stop.

Every top-level window calls :func:`fit_window` once it is built (before it is shown): it opens
at its preferred size, or the size and place it had when it last closed, never larger than the
available area of its screen (in logical pixels, so a scale factor is taken into account) and
wholly on it. Where a window was is kept in ``windows.ini`` in the user config dir
(:func:`~desktop_app.settings.window_state_path`).
"""

from __future__ import annotations

from PySide6.QtCore import (
    QByteArray,
    QEvent,
    QMargins,
    QObject,
    QPoint,
    QRect,
    QSettings,
    QSize,
    QTimer,
)
from PySide6.QtGui import QCloseEvent, QCursor, QGuiApplication, QScreen
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QFrame,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QToolBar,
    QToolButton,
    QWidget,
)

from desktop_app.settings import window_state_path

__all__ = [
    "TITLE_BAR",
    "bring_forward",
    "fit_window",
    "fitted",
    "may_close_while_running",
    "name_toolbar",
    "scrolling",
    "usable_area",
]

#: Room left above a window for the title bar the window manager adds (logical pixels): the
#: frame is not known before the window is shown.
TITLE_BAR = 32


def bring_forward(window: QWidget) -> None:
    """Show *window* (even if hidden in the tray, un-minimised if it was), raise it and give it
    the focus."""
    if window.isMinimized():
        window.showNormal()
    else:
        window.show()
    window.raise_()
    window.activateWindow()


def usable_area(screen: QScreen, frame: QMargins | None = None) -> QRect:
    """Where a window's contents may go on *screen*: its available geometry (without panels and
    docks), less the window's *frame* (by default room for a title bar)."""
    area = screen.availableGeometry()
    frame = frame if frame is not None else QMargins(0, min(TITLE_BAR, area.height() // 4), 0, 0)
    return area.marginsRemoved(frame)


def fitted(rect: QRect, area: QRect) -> QRect:
    """*rect* made no larger than *area* and moved (as little as needed) to lie wholly in it."""
    size = rect.size().boundedTo(area.size())
    x = min(max(rect.x(), area.x()), area.x() + area.width() - size.width())
    y = min(max(rect.y(), area.y()), area.y() + area.height() - size.height())
    return QRect(QPoint(x, y), size)


def fit_window(window: QWidget, preferred: QSize, *, remember: str | None = None) -> bool:
    """Size a top-level *window* that is about to be shown so that it fits its screen.

    It gets *preferred*, bounded by the usable area of the screen it opens on (its parent's, else
    the one under the mouse), centred there; a dialog keeps Qt's placement over its parent. Its
    minimum size is bounded the same way, and each time it is shown it is moved (and if need be
    shrunk) to lie wholly, frame and all, on its screen. With *remember* (a stable name such as
    ``"editor"``), it opens instead where it was when a window of that name last closed —
    maximised if it was, moved back onto a screen and shrunk to it if that screen is now
    smaller or gone — and where it is is saved each time it closes. A main window's docks and
    toolbars come back as they were too (call this once they are added).

    Returns:
        Whether the window's docks and toolbars were put back as they were saved (else the
        caller lays them out for a first opening).
    """
    area = usable_area(_screen_for(window), _frame_of_others(window))
    if window.minimumWidth() > area.width() or window.minimumHeight() > area.height():
        window.setMinimumSize(window.minimumSize().boundedTo(area.size()))
    _Fitted(window, remember)
    if remember is not None and _restore(window, remember):
        return _restore_state(window, remember)
    size = preferred.boundedTo(area.size())
    if isinstance(window, QDialog):
        window.resize(size)
        return False
    centred = QRect(QPoint(0, 0), size)
    centred.moveCenter(area.center())
    window.setGeometry(_cascaded(window, fitted(centred, area), area))
    return False


def scrolling(content: QWidget) -> QScrollArea:
    """*content* in a frameless scroll area that fills the window and scrolls only when the
    window is smaller than *content*'s minimum (on a small screen, or at a large scale), so a
    window never needs to be larger than the screen."""
    area = QScrollArea()
    area.setObjectName("window-scroll")
    area.setAccessibleName("Window contents")
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setWidget(content)
    return area


def name_toolbar(toolbar: QToolBar, name: str) -> None:
    """Name *toolbar* for screen readers, and the "»" button Qt adds to it when the window is too
    narrow to show every action."""
    toolbar.setAccessibleName(name)
    more = toolbar.findChild(QToolButton, "qt_toolbar_ext_button")
    if more is not None:
        more.setAccessibleName(f"More {name.lower()} actions")


def _screen_for(window: QWidget) -> QScreen:
    """The screen *window* will open on: its parent's, else the one under the mouse."""
    parent = window.parentWidget()
    if parent is not None:
        top = QWidget.window(parent)  # (the main window's ``window`` is a property)
        if top.isVisible():
            return top.screen()
    screen = QGuiApplication.screenAt(QCursor.pos()) or QGuiApplication.primaryScreen()
    return screen


def _frame(window: QWidget) -> QMargins:
    """The frame the window system put around a shown *window* (its title bar and borders)."""
    outer, inner = window.frameGeometry(), window.geometry()
    return QMargins(
        inner.left() - outer.left(),
        inner.top() - outer.top(),
        outer.right() - inner.right(),
        outer.bottom() - inner.bottom(),
    )


def _frame_of_others(window: QWidget) -> QMargins | None:
    """The frame of a shown top-level window (a new one will likely get the same), or None."""
    for other in QApplication.topLevelWidgets():
        if other is not window and other.isVisible() and not isinstance(other, QDialog):
            frame = _frame(other)
            if not frame.isNull():
                return frame
    return None


def _keep_on_screen(window: QWidget) -> None:
    """Move (and if need be shrink) a shown *window* so that all of it, frame and all, is in
    the available area of its screen."""
    if not window.isVisible() or window.isMaximized() or window.isFullScreen():
        return
    frame = _frame(window)
    outer = window.frameGeometry()
    on_screen = fitted(outer, window.screen().availableGeometry())
    if on_screen != outer:
        window.setGeometry(on_screen.marginsRemoved(frame))


def _store() -> QSettings:
    return QSettings(str(window_state_path()), QSettings.Format.IniFormat)


def _saved(key: str) -> QByteArray | None:
    """What ``windows.ini`` holds under *key*, if anything."""
    saved = _store().value(key)
    if isinstance(saved, bytes | bytearray):
        saved = QByteArray(bytes(saved))
    return saved if isinstance(saved, QByteArray) else None


def _restore(window: QWidget, name: str) -> bool:
    """Put *window* where it was saved under *name*; whether there was a place to restore."""
    saved = _saved(f"{name}/geometry")
    if saved is None or not window.restoreGeometry(saved):
        return False
    if window.isMaximized() or window.isFullScreen():
        return True  # the window manager fits it to the screen; its normal size is kept
    rect = window.geometry()
    screen = QGuiApplication.screenAt(rect.center()) or _screen_for(window)
    area = usable_area(screen, _frame_of_others(window))
    window.setGeometry(_cascaded(window, fitted(rect, area), area))
    return True


def _restore_state(window: QWidget, name: str) -> bool:
    """Put a main window's docks and toolbars back as saved under *name*; whether they were."""
    saved = _saved(f"{name}/state")
    return isinstance(window, QMainWindow) and saved is not None and window.restoreState(saved)


def _cascaded(window: QWidget, rect: QRect, area: QRect) -> QRect:
    """*rect*, moved down and right by a title bar while a shown window of the same kind (a
    second editor) already opens there, so that one never hides the other exactly."""
    taken = {
        other.geometry().topLeft()
        for other in QApplication.topLevelWidgets()
        if other is not window and type(other) is type(window) and other.isVisible()
    }
    for _ in range(len(taken)):
        if rect.topLeft() not in taken:
            break
        moved = fitted(rect.translated(TITLE_BAR, TITLE_BAR), area)
        if moved.topLeft() == rect.topLeft():  # in the corner already: start again at the top
            moved = fitted(QRect(area.topLeft(), rect.size()), area)
        rect = moved
    return rect


class _Fitted(QObject):
    """Keeps its window on screen each time it is shown and, when it has a *name*, saves where
    it is each time it is closed or hidden by the app."""

    def __init__(self, window: QWidget, name: str | None) -> None:
        super().__init__(window)
        self.setObjectName("fitted-window")
        self._window = window
        self._name = name
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """On show, onto the screen; on hide, save (not when the window system minimises)."""
        if watched is not self._window or event.spontaneous():
            return False
        if event.type() == QEvent.Type.Show:
            # Once the window system has framed it (on the next turn of the event loop).
            QTimer.singleShot(0, self, lambda: _keep_on_screen(self._window))
        elif event.type() == QEvent.Type.Hide and self._name is not None:
            store = _store()
            store.setValue(f"{self._name}/geometry", self._window.saveGeometry())
            if isinstance(self._window, QMainWindow):
                store.setValue(f"{self._name}/state", self._window.saveState())
            store.sync()
        return False


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
