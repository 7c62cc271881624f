"""The tray's icons: the application's (or a drawn one), with a badge for the tray's state."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QColor, QFont, QIcon, QPainter, QPixmap, QPolygon
from PySide6.QtWidgets import QApplication, QWidget

from desktop_app.ui.tray.base import TrayState

__all__ = ["_app_icon", "_badged"]


def _app_icon(icon: QIcon | None, window: QWidget) -> QIcon:
    for candidate in (icon, window.windowIcon(), QApplication.windowIcon()):
        if candidate is not None and not candidate.isNull():
            return candidate
    pixmap = QPixmap(64, 64)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(QColor("#2f5fb3"))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.drawRoundedRect(4, 4, 56, 56, 12, 12)
    painter.setPen(QColor("white"))
    font = QFont()
    font.setBold(True)
    font.setPixelSize(38)
    painter.setFont(font)
    painter.drawText(QRect(4, 4, 56, 56), Qt.AlignmentFlag.AlignCenter, "P")
    painter.end()
    return QIcon(pixmap)


def _badged(base: QIcon, state: TrayState) -> QIcon:
    """*base* with a badge in the corner: green ▶ while running, grey ❚❚ while paused."""
    if state == "idle":
        return base
    size = 64
    pixmap = base.pixmap(size, size)
    if pixmap.isNull():
        pixmap = QPixmap(size, size)
        pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    badge = QRect(size - 30, size - 30, 28, 28)
    painter.setPen(QColor("white"))
    painter.setBrush(QColor("#1b7f3b") if state == "running" else QColor("#6e6e6e"))
    painter.drawEllipse(badge)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor("white"))
    cx, cy = badge.center().x(), badge.center().y()
    if state == "running":
        painter.drawPolygon(
            QPolygon([QPoint(cx - 4, cy - 7), QPoint(cx - 4, cy + 7), QPoint(cx + 7, cy)])
        )
    else:
        painter.drawRect(cx - 6, cy - 6, 4, 12)
        painter.drawRect(cx + 2, cy - 6, 4, 12)
    painter.end()
    return QIcon(pixmap)
