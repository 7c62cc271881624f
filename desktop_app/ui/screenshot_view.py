"""A run step's screenshot: scaled to fit, click (or Enter) to see it full size.

Images are read and decoded on the store thread (``host.tasks.call``); the GUI thread only
turns the decoded image into a pixmap and scales it.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from typing import Final

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QImage, QKeyEvent, QMouseEvent, QPixmap, QResizeEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.errors import ProceduraError
from desktop_app.core.ports import MediaStore
from desktop_app.ui.host import Host
from desktop_app.ui.windows import fit_window

__all__ = ["ScreenshotLoader", "ScreenshotView", "decode_screenshot"]

_CACHE_SIZE: Final = 24


def decode_screenshot(media: MediaStore, ref: str) -> QImage | None:
    """The image stored under *ref* (None if it is gone or not an image). Blocking."""
    try:
        data = media.get(ref)
    except (OSError, ProceduraError, KeyError):
        return None
    image = QImage.fromData(data)
    return None if image.isNull() else image


class ScreenshotLoader:
    """Loads screenshots off the GUI thread and keeps the last few decoded."""

    def __init__(self, host: Host) -> None:
        self._host = host
        self._cache: OrderedDict[str, QImage | None] = OrderedDict()

    def cached(self, ref: str) -> QImage | None:
        """A decoded image already in memory."""
        return self._cache.get(ref)

    async def load(self, ref: str) -> QImage | None:
        """The image of *ref* (None if it cannot be read)."""
        if ref in self._cache:
            self._cache.move_to_end(ref)
            return self._cache[ref]
        image = await self._host.tasks.call(decode_screenshot, self._host.backend.media, ref)
        self._cache[ref] = image
        while len(self._cache) > _CACHE_SIZE:
            self._cache.popitem(last=False)
        return image


class ScreenshotView(QLabel):
    """A screenshot scaled to the space it has; a click opens it full size.

    Signals:
        enlarged(): the full-size view was opened.
    """

    enlarged = Signal()

    def __init__(self, empty_text: str = "No screenshot", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._image: QImage | None = None
        self._caption = ""
        self._empty_text = empty_text
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setMinimumSize(QSize(200, 120))
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setFrameShape(QLabel.Shape.StyledPanel)
        self.setWordWrap(True)
        self.setText(empty_text)
        self._dialog: QDialog | None = None

    # ── state ───────────────────────────────────────────────────────────────────────────────

    def has_image(self) -> bool:
        """Whether a screenshot is shown."""
        return self._image is not None

    def caption(self) -> str:
        """What the shown screenshot is of."""
        return self._caption

    def set_image(self, image: QImage | None, caption: str = "") -> None:
        """Show *image* (None: the empty text)."""
        self._image = image
        self._caption = caption if image is not None else ""
        if image is None:
            self.clear()
            self.setText(self._empty_text)
            self.setToolTip("")
            self.setCursor(Qt.CursorShape.ArrowCursor)
        else:
            self.setToolTip(
                f"{caption}\nClick to see it full size."
                if caption
                else "Click to see it full size."
            )
            self.setCursor(Qt.CursorShape.PointingHandCursor)
            self._rescale()

    def set_empty_text(self, text: str) -> None:
        """What the view says while it shows no screenshot."""
        self._empty_text = text
        if self._image is None:
            self.setText(text)

    # ── full size ───────────────────────────────────────────────────────────────────────────

    def enlarge(self) -> QDialog | None:
        """Open the screenshot full size in a window of its own; the window."""
        if self._image is None:
            return None
        if self._dialog is not None:
            with contextlib.suppress(RuntimeError):
                self._dialog.close()
        dialog = QDialog(self.window())
        dialog.setObjectName("screenshot-dialog")
        dialog.setWindowTitle(self._caption or "Screenshot")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        picture = QLabel()
        picture.setPixmap(QPixmap.fromImage(self._image))
        area = QScrollArea()
        area.setWidget(picture)
        area.setAlignment(Qt.AlignmentFlag.AlignCenter)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(dialog.reject)
        layout = QVBoxLayout(dialog)
        layout.addWidget(area)
        layout.addWidget(buttons)
        fit_window(dialog, QSize(self._image.width() + 40, self._image.height() + 80))
        self._dialog = dialog
        dialog.show()
        self.enlarged.emit()
        return dialog

    # ── Qt ──────────────────────────────────────────────────────────────────────────────────

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        """A left click opens the full-size view."""
        if event.button() is Qt.MouseButton.LeftButton and self._image is not None:
            self.enlarge()
            return
        super().mouseReleaseEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Enter or Space opens the full-size view."""
        keys = (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space)
        if event.key() in keys and self.enlarge() is not None:
            return
        super().keyPressEvent(event)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """Keep the screenshot fitted."""
        super().resizeEvent(event)
        self._rescale()

    def _rescale(self) -> None:
        if self._image is None:
            return
        size = self.contentsRect().size()
        if size.width() < 2 or size.height() < 2:
            return
        scaled = self._image.scaled(
            size, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation
        )
        self.setPixmap(QPixmap.fromImage(scaled))
