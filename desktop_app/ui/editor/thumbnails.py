"""Screenshots of steps for the editor's cards and form, loaded once per media ref off the GUI
thread."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from PySide6.QtCore import QObject, QSize, Qt, Signal
from PySide6.QtGui import QImage, QPixmap

from desktop_app.core.errors import ProceduraError
from desktop_app.core.ports import MediaStore
from desktop_app.ui.host import Host

__all__ = ["CARD_HEIGHT", "PREVIEW_SIZE", "THUMB_SIZE", "ThumbnailCache"]

#: The largest size a screenshot is kept at (the form shows it; cards scale it down).
PREVIEW_SIZE = QSize(640, 400)
THUMB_SIZE = QSize(104, 64)
CARD_HEIGHT = 78


def _decode(media: MediaStore, ref: str) -> QImage | None:
    """A screenshot's image, scaled to :data:`PREVIEW_SIZE` (on the store thread)."""
    image = QImage.fromData(media.get(ref))
    if image.isNull():
        return None
    if image.width() > PREVIEW_SIZE.width() or image.height() > PREVIEW_SIZE.height():
        image = image.scaled(
            PREVIEW_SIZE,
            Qt.AspectRatioMode.KeepAspectRatio,
            Qt.TransformationMode.SmoothTransformation,
        )
    return image


class ThumbnailCache(QObject):
    """Screenshots of steps, loaded once per media ref off the GUI thread.

    Signals:
        thumbnail_ready(str): the image of a ref was loaded (or found missing).
    """

    thumbnail_ready = Signal(str)

    def __init__(self, host: Host, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._host = host
        self._images: dict[str, QImage | None] = {}
        self._pixmaps: dict[tuple[str, int, int], QPixmap] = {}
        self._pending: set[str] = set()

    def request(self, refs: Iterable[str]) -> None:
        """Load the screenshots not loaded or loading yet."""
        missing = [
            r for r in dict.fromkeys(refs) if r not in self._images and r not in self._pending
        ]
        if missing:
            self._pending.update(missing)
            self._host.tasks.start(self._load(missing), label="Loading screenshots…")

    def loaded(self, ref: str) -> bool:
        """Whether *ref* was loaded (or found missing)."""
        return ref in self._images

    def image(self, ref: str) -> QImage | None:
        """The screenshot, if loaded and readable."""
        return self._images.get(ref)

    def pixmap(self, ref: str, size: QSize) -> QPixmap | None:
        """The screenshot scaled to fit *size*, if loaded and readable."""
        key = (ref, size.width(), size.height())
        cached = self._pixmaps.get(key)
        if cached is not None:
            return cached
        image = self._images.get(ref)
        if image is None:
            return None
        pixmap = QPixmap.fromImage(
            image.scaled(
                size, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation
            )
        )
        self._pixmaps[key] = pixmap
        return pixmap

    async def _load(self, refs: Sequence[str]) -> None:
        media = self._host.backend.media
        for ref in refs:
            try:
                image = await self._host.tasks.call(_decode, media, ref)
            except (ProceduraError, OSError):
                image = None  # a missing screenshot shows as none; it is not worth a dialog
            finally:
                self._pending.discard(ref)
            self._images[ref] = image
            self.thumbnail_ready.emit(ref)
