"""The editor's step list: one card per step (number, title with chips, what it acts on, a
screenshot thumbnail, its problems), a block's own steps indented under it, reordered and moved
into and out of blocks by dragging (the rows and their model: :mod:`.step_rows`)."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPainterPath, QPixmap, QTextOption
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from desktop_app.core.editing import Issue
from desktop_app.core.models.workflow import Step
from desktop_app.core.step_kinds import Family, kind_spec
from desktop_app.core.templating import pieces
from desktop_app.ui import theme
from desktop_app.ui.editor.step_rows import StepListModel, StepRow
from desktop_app.ui.editor.thumbnails import CARD_HEIGHT, THUMB_SIZE, ThumbnailCache

__all__ = [
    "INDENT",
    "SECTION_HEIGHT",
    "StepCardDelegate",
    "StepListModel",
    "ThumbnailCache",
]

_Index = QModelIndex | QPersistentModelIndex

#: The colour of a step's number badge (white on it), by what the step is for (its kind's
#: family): mid-tone fills that read the same on a light or a dark list.
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


def _control_color() -> QColor:
    """A block's rail and its "Otherwise" heading: the theme's amber, readable in either scheme."""
    return theme.color("warning")


#: How far a block's own steps are indented under it, per level.
INDENT = 22
#: The height of an "Otherwise" row and of an empty list's row.
SECTION_HEIGHT = 30


class StepCardDelegate(QStyledItemDelegate):
    """Paints a step as a card: number, title with chips, target, thumbnail and problems."""

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:
        row: StepRow | None = index.data(StepListModel.ROW_ROLE)
        height = CARD_HEIGHT if row is None or row.kind == "step" else SECTION_HEIGHT
        return QSize(240, height)  # the list stretches each card to its width

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        row: StepRow | None = index.data(StepListModel.ROW_ROLE)
        if row is None:
            return
        if row.kind != "step":
            self._paint_section(painter, option, index, row)
            return
        step = row.step
        issues: list[Issue] = index.data(StepListModel.ISSUES_ROLE) or []
        summary: str = index.data(StepListModel.SUMMARY_ROLE) or ""
        thumb: QPixmap | None = index.data(Qt.ItemDataRole.DecorationRole)
        palette = option.palette
        selected = bool(option.state & QStyle.StateFlag.State_Selected)

        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        card = QRectF(option.rect.adjusted(6 + INDENT * row.depth, 3, -6, -3))
        if row.depth:  # the rail joining a block's own steps to it
            painter.setPen(_control_color())
            rail = option.rect.left() + 6 + INDENT * row.depth - INDENT / 2
            painter.drawLine(int(rail), option.rect.top(), int(rail), option.rect.bottom())
        path = QPainterPath()
        path.addRoundedRect(card, 8, 8)
        fill = QColor(palette.highlight().color()) if selected else palette.base().color()
        if selected:
            fill.setAlpha(46)
        painter.fillPath(path, fill)
        errors = [i for i in issues if i.is_error]
        border = (
            theme.color("error_border")
            if errors
            else theme.color("warning_border")
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
        painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, str(row.number))

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
            painter.setPen(theme.color("error") if errors else theme.color("warning"))
            text = f"{mark} {first.message}{more}"
            painter.drawText(
                QRectF(left, card.top() + 30 + metrics.height() + 2, width, metrics.height()),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                metrics.elidedText(text, Qt.TextElideMode.ElideRight, width),
            )
        painter.restore()

    @staticmethod
    def _paint_section(
        painter: QPainter, option: QStyleOptionViewItem, index: _Index, row: StepRow
    ) -> None:
        """An "Otherwise" row (a heading) or an empty list's row (a dashed place to drop)."""
        palette = option.palette
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rail = option.rect.left() + 6 + INDENT * row.depth - INDENT / 2
        painter.setPen(_control_color())
        painter.drawLine(int(rail), option.rect.top(), int(rail), option.rect.bottom())
        box = QRectF(option.rect.adjusted(6 + INDENT * row.depth, 3, -6, -3))
        font = QFont(option.font)
        if row.kind == "otherwise":
            font.setBold(True)
            color = _control_color()
        else:
            font.setItalic(True)
            color = palette.placeholderText().color()
            outline = QPainterPath()
            outline.addRoundedRect(box, 6, 6)
            pen = painter.pen()
            pen.setColor(palette.highlight().color() if selected else palette.mid().color())
            pen.setStyle(Qt.PenStyle.DashLine)
            painter.setPen(pen)
            painter.drawPath(outline)
        if selected:
            fill = QColor(palette.highlight().color())
            fill.setAlpha(46)
            highlight = QPainterPath()
            highlight.addRoundedRect(box, 6, 6)
            painter.fillPath(highlight, fill)
        painter.setFont(font)
        painter.setPen(color)
        metrics = QFontMetrics(font)
        text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        width = int(box.width() - 20)
        painter.drawText(
            box.adjusted(10, 0, -10, 0),
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
            painter.setPen(theme.color("error"))
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
                painter.fillPath(chip, theme.color("info_bg"))
                painter.setPen(theme.color("info_fg"))
                painter.drawText(QRectF(x + 4, y, advance - 6, height), int(flags), shown)
            else:
                painter.setPen(color)
                painter.drawText(QRectF(x, y, advance + 2, height), int(flags), shown)
            x += advance + (2 if is_name else 0)
