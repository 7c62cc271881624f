"""The editor's step list: one card per step (number, title with chips, what it acts on, a
screenshot thumbnail, its problems), reordered by dragging."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QByteArray,
    QMimeData,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QRect,
    QRectF,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QImage,
    QPainter,
    QPainterPath,
    QPixmap,
    QTextOption,
)
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from desktop_app.core.editing import Issue, step_summary
from desktop_app.core.errors import ProceduraError
from desktop_app.core.models.workflow import Step, Workflow
from desktop_app.core.ports import MediaStore
from desktop_app.core.step_kinds import Family, kind_spec
from desktop_app.core.templating import pieces
from desktop_app.ui.host import Host

__all__ = [
    "StepCardDelegate",
    "StepListModel",
    "ThumbnailCache",
]

_Index = QModelIndex | QPersistentModelIndex

#: The colour of a step card's stripe, by what the step is for (its kind's family).
_FAMILY_COLORS: dict[Family, str] = {
    "navigate": "#2f6fb3",
    "act": "#7048b6",
    "input": "#1f8a5b",
    "read": "#b26a00",
    "check": "#5a6b7b",
    "delegate": "#b3306f",
    "desktop": "#5a6b7b",
    "control": "#8a6d1f",
}

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


class StepListModel(QAbstractListModel):
    """The steps of the workflow being edited (a thin adapter over its tuple of steps).

    :meth:`set_workflow` turns a new snapshot into the smallest change Qt understands (rows
    changed, one inserted, removed or moved, else a reset), so selection and scrolling survive.
    Dropping a card asks for the move (``move_requested``) instead of moving anything itself:
    the editor makes it an undoable edit and hands back the new snapshot.

    Signals:
        move_requested(int, int): the step at the first index should end up at the second.
    """

    move_requested = Signal(int, int)

    STEP_ROLE = Qt.ItemDataRole.UserRole + 1
    ISSUES_ROLE = Qt.ItemDataRole.UserRole + 2
    SUMMARY_ROLE = Qt.ItemDataRole.UserRole + 3
    ID_ROLE = Qt.ItemDataRole.UserRole + 4
    MIME_TYPE = "application/x-procedura-step-row"

    def __init__(self, thumbnails: ThumbnailCache, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._thumbnails = thumbnails
        self._steps: tuple[Step, ...] = ()
        self._issues: dict[int, list[Issue]] = {}
        thumbnails.thumbnail_ready.connect(self._on_thumbnails_thumbnail_ready)

    # ── content ─────────────────────────────────────────────────────────────────────────────

    def set_workflow(self, workflow: Workflow, issues: Mapping[int, list[Issue]]) -> None:
        """Show *workflow*'s steps with their problems."""
        old = [s.id for s in self._steps]
        new = [s.id for s in workflow.steps]
        self._issues = dict(issues)
        if old == new:
            self._steps = workflow.steps
        elif len(new) == len(old) + 1 and (k := _inserted_at(old, new)) is not None:
            self.beginInsertRows(QModelIndex(), k, k)
            self._steps = workflow.steps
            self.endInsertRows()
        elif len(new) == len(old) - 1 and (k := _inserted_at(new, old)) is not None:
            self.beginRemoveRows(QModelIndex(), k, k)
            self._steps = workflow.steps
            self.endRemoveRows()
        elif (moved := _moved(old, new)) is not None:
            source, destination = moved
            child = destination + 1 if destination > source else destination
            self.beginMoveRows(QModelIndex(), source, source, QModelIndex(), child)
            self._steps = workflow.steps
            self.endMoveRows()
        else:
            self.beginResetModel()
            self._steps = workflow.steps
            self.endResetModel()
        if self._steps:
            self.dataChanged.emit(self.index(0), self.index(len(self._steps) - 1))

    def step(self, row: int) -> Step:
        """The step shown in *row*."""
        return self._steps[row]

    def row_of(self, step_id: str) -> int | None:
        """The row of the step with this id, if shown."""
        return next((i for i, s in enumerate(self._steps) if s.id == step_id), None)

    def _on_thumbnails_thumbnail_ready(self, ref: str) -> None:
        for row, step in enumerate(self._steps):
            if step.screenshot == ref:
                index = self.index(row)
                self.dataChanged.emit(index, index, [Qt.ItemDataRole.DecorationRole])

    # ── Qt model ────────────────────────────────────────────────────────────────────────────

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 (Qt API default)
        return 0 if parent.isValid() else len(self._steps)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._steps):
            return None
        row = index.row()
        step = self._steps[row]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            return f"{row + 1}. {step.title or '(no title)'}"
        if role == self.STEP_ROLE:
            return step
        if role == self.ID_ROLE:
            return step.id
        if role == self.ISSUES_ROLE:
            return self._issues.get(row, [])
        if role == self.SUMMARY_ROLE:
            return step_summary(step)
        if role == Qt.ItemDataRole.DecorationRole:
            if step.screenshot is None:
                return None
            return self._thumbnails.pixmap(step.screenshot, THUMB_SIZE)
        if role == Qt.ItemDataRole.ToolTipRole:
            lines = [
                f"<b>{_html(step.title or '(no title)')}</b>",
                _html(kind_spec(step.kind).label),
            ]
            summary = step_summary(step)
            if summary:
                lines.append(f"<tt>{_html(summary)}</tt>")
            for issue in self._issues.get(row, []):
                color = "#b3261e" if issue.is_error else "#9a6700"
                lines.append(f"<span style='color:{color}'>{_html(str(issue))}</span>")
            return "<br>".join(lines)
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if index.isValid():
            return base | Qt.ItemFlag.ItemIsDragEnabled
        return Qt.ItemFlag.ItemIsDropEnabled

    def supportedDropActions(self) -> Qt.DropAction:
        return Qt.DropAction.MoveAction

    def supportedDragActions(self) -> Qt.DropAction:
        return Qt.DropAction.MoveAction

    def mimeTypes(self) -> list[str]:
        return [self.MIME_TYPE]

    def mimeData(self, indexes: Sequence[QModelIndex]) -> QMimeData:
        data = QMimeData()
        rows = sorted({i.row() for i in indexes if i.isValid()})
        data.setData(self.MIME_TYPE, QByteArray(",".join(map(str, rows)).encode()))
        return data

    def canDropMimeData(
        self, data: QMimeData, action: Qt.DropAction, row: int, column: int, parent: _Index
    ) -> bool:
        return data.hasFormat(self.MIME_TYPE) and action == Qt.DropAction.MoveAction

    def dropMimeData(
        self, data: QMimeData, action: Qt.DropAction, row: int, column: int, parent: _Index
    ) -> bool:
        if not self.canDropMimeData(data, action, row, column, parent):
            return False
        text = bytes(data.data(self.MIME_TYPE).data()).decode()
        rows = [int(r) for r in text.split(",") if r.strip().isdigit()]
        if len(rows) != 1:
            return False
        if row < 0:
            row = parent.row() if parent.isValid() else len(self._steps)
        return self.moveRows(QModelIndex(), rows[0], 1, QModelIndex(), row)

    def moveRows(
        self,
        sourceParent: _Index,
        sourceRow: int,
        count: int,
        destinationParent: _Index,
        destinationChild: int,
    ) -> bool:
        if sourceParent.isValid() or destinationParent.isValid() or count != 1:
            return False
        if not 0 <= sourceRow < len(self._steps):
            return False
        destination = destinationChild - 1 if destinationChild > sourceRow else destinationChild
        destination = max(0, min(destination, len(self._steps) - 1))
        if destination != sourceRow:
            self.move_requested.emit(sourceRow, destination)
        return True


def _inserted_at(short: list[str], long: list[str]) -> int | None:
    """Where *long* has one element more than *short*, if that is the only difference."""
    k = next((i for i, (a, b) in enumerate(zip(short, long, strict=False)) if a != b), len(short))
    return k if long[:k] + long[k + 1 :] == short else None


def _moved(old: list[str], new: list[str]) -> tuple[int, int] | None:
    """``(source, destination)`` when *new* is *old* with one element moved, else None."""
    if len(old) != len(new) or old == new:
        return None
    first = next(i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b)
    last = max(i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b)
    if new[first:last] == old[first + 1 : last + 1] and new[last] == old[first]:
        return first, last
    if new[first + 1 : last + 1] == old[first:last] and new[first] == old[last]:
        return last, first
    return None


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class StepCardDelegate(QStyledItemDelegate):
    """Paints a step as a card: number, title with chips, target, thumbnail and problems."""

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:
        return QSize(240, CARD_HEIGHT)  # the list stretches each card to its width

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        step: Step | None = index.data(StepListModel.STEP_ROLE)
        if step is None:
            return
        issues: list[Issue] = index.data(StepListModel.ISSUES_ROLE) or []
        summary: str = index.data(StepListModel.SUMMARY_ROLE) or ""
        thumb: QPixmap | None = index.data(Qt.ItemDataRole.DecorationRole)
        palette = option.palette
        selected = bool(option.state & QStyle.StateFlag.State_Selected)

        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        card = QRectF(option.rect.adjusted(6, 3, -6, -3))
        path = QPainterPath()
        path.addRoundedRect(card, 8, 8)
        fill = QColor(palette.highlight().color()) if selected else palette.base().color()
        if selected:
            fill.setAlpha(46)
        painter.fillPath(path, fill)
        errors = [i for i in issues if i.is_error]
        border = (
            QColor("#c0392b")
            if errors
            else QColor("#d29922")
            if issues
            else palette.highlight().color()
            if selected
            else palette.mid().color()
        )
        painter.setPen(border)
        painter.drawPath(path)

        # the number, in the kind's colour
        badge = QRectF(card.left() + 10, card.top() + 10, 26, 26)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(_FAMILY_COLORS[kind_spec(step.kind).family]))
        painter.drawEllipse(badge)
        painter.setPen(QColor("white"))
        number_font = QFont(option.font)
        number_font.setBold(True)
        number_font.setPointSizeF(max(option.font.pointSizeF() - 1, 7))
        painter.setFont(number_font)
        painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, str(index.row() + 1))

        right = card.right() - 8
        if thumb is not None and not thumb.isNull():
            box = QRect(
                int(right - THUMB_SIZE.width()),
                int(card.top() + (card.height() - thumb.height()) / 2),
                thumb.width(),
                thumb.height(),
            )
            box.moveRight(int(right))
            painter.drawPixmap(box, thumb)
            painter.setPen(palette.mid().color())
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(box)
            right = box.left() - 8

        left = badge.right() + 10
        width = int(right - left)
        title_font = QFont(option.font)
        title_font.setBold(True)
        self._draw_title(
            painter, title_font, palette.text().color(), step, left, card.top() + 8, width
        )

        meta_font = QFont(option.font)
        meta_font.setPointSizeF(max(option.font.pointSizeF() - 1, 7))
        painter.setFont(meta_font)
        metrics = QFontMetrics(meta_font)
        tags = [kind_spec(step.kind).label]
        if step.irreversible:
            tags.append("⚠ irreversible")
        if step.optional:
            tags.append("optional")
        line = " · ".join(tags) + (f"  —  {summary}" if summary else "")
        painter.setPen(palette.placeholderText().color())
        painter.drawText(
            QRectF(left, card.top() + 30, width, metrics.height()),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            metrics.elidedText(line, Qt.TextElideMode.ElideRight, width),
        )
        if issues:
            first = errors[0] if errors else issues[0]
            more = f"  (+{len(issues) - 1})" if len(issues) > 1 else ""
            mark = "✖" if errors else "⚠"
            painter.setPen(QColor("#b3261e") if errors else QColor("#9a6700"))
            text = f"{mark} {first.message}{more}"
            painter.drawText(
                QRectF(left, card.top() + 30 + metrics.height() + 2, width, metrics.height()),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                metrics.elidedText(text, Qt.TextElideMode.ElideRight, width),
            )
        painter.restore()

    @staticmethod
    def _draw_title(
        painter: QPainter, font: QFont, color: QColor, step: Step, x: float, y: float, width: int
    ) -> None:
        """The title, with each ``{placeholder}`` drawn as a chip; elided to *width*."""
        painter.setFont(font)
        metrics = QFontMetrics(font)
        height = metrics.height()
        end = x + width
        if not step.title:
            painter.setPen(QColor("#b3261e"))
            painter.drawText(QRectF(x, y, width, height), "(no title)", QTextOption())
            return
        flags = (
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter | Qt.TextFlag.TextSingleLine
        )
        for text, is_name in pieces(step.title):
            shown = "{" + text + "}" if is_name else text
            advance = metrics.horizontalAdvance(shown) + (8 if is_name else 0)
            if x + advance > end:
                rest = metrics.elidedText(shown, Qt.TextElideMode.ElideRight, int(end - x))
                painter.setPen(color)
                painter.drawText(QRectF(x, y, end - x + 2, height), int(flags), rest)
                return
            if is_name:
                chip = QPainterPath()
                chip.addRoundedRect(QRectF(x, y, advance, height), 5, 5)
                painter.fillPath(chip, QColor("#dbe7fb"))
                painter.setPen(QColor("#1c4b96"))
                painter.drawText(QRectF(x + 4, y, advance - 6, height), int(flags), shown)
            else:
                painter.setPen(color)
                painter.drawText(QRectF(x, y, advance + 2, height), int(flags), shown)
            x += advance + (2 if is_name else 0)
