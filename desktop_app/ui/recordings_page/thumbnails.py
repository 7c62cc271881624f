"""Screenshots as small pixmaps, decoded and scaled off the GUI thread."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from PySide6.QtCore import QObject, QSize, Qt, Signal
from PySide6.QtGui import QImage, QPixmap

from desktop_app.ui.host import Host

__all__ = ["ThumbnailCache"]


def _scaled(get: Callable[[str], bytes], ref: str, width: int, height: int) -> QImage | None:
    """The screenshot *ref*, decoded and scaled (runs on the store thread, not the GUI's)."""
    image = QImage.fromData(get(ref))
    if image.isNull():
        return None
    return image.scaled(
        width,
        height,
        Qt.AspectRatioMode.KeepAspectRatio,
        Qt.TransformationMode.SmoothTransformation,
    )


class ThumbnailCache(QObject):
    """Screenshots as small pixmaps, loaded in the background the first time they are asked for.

    Signals:
        thumbnail_loaded(str): the thumbnail of a media ref is ready.
    """

    thumbnail_loaded = Signal(str)

    def __init__(self, host: Host, size: QSize, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._host = host
        self._size = size
        self._pixmaps: dict[str, QPixmap] = {}
        self._asked: set[str] = set()

    @property
    def size(self) -> QSize:
        """The size thumbnails fit in."""
        return self._size

    def get(self, ref: str) -> QPixmap | None:
        """The thumbnail of *ref* if loaded; else None, and it starts loading."""
        pixmap = self._pixmaps.get(ref)
        if pixmap is None and ref not in self._asked:
            self._asked.add(ref)
            with contextlib.suppress(RuntimeError):  # the window is closing
                self._host.tasks.start(
                    self._load(ref),
                    label="Loading screenshots…",
                    on_error=lambda _exc: True,  # a screenshot gone: the step shows none
                )
        return pixmap

    async def _load(self, ref: str) -> None:
        media = self._host.backend.media
        image = await self._host.tasks.call(
            _scaled, media.get, ref, self._size.width(), self._size.height()
        )
        if image is not None:
            self._pixmaps[ref] = QPixmap.fromImage(image)
            self.thumbnail_loaded.emit(ref)
