"""The editor's step list as rows: every step, a block's own steps indented under it, an
"Otherwise" row before what an ``if`` or a ``try`` does otherwise, and a row standing for an
empty list (a place to drop a step in); the Qt model over them, with dragging into and out of
blocks."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from PySide6.QtCore import (
    QAbstractListModel,
    QByteArray,
    QMimeData,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)

from desktop_app.core.editing import Issue, StepPath, path_label, step_summary
from desktop_app.core.models.workflow import Step, Workflow, branches
from desktop_app.core.step_kinds import kind_spec
from desktop_app.ui import theme
from desktop_app.ui.editor.thumbnails import THUMB_SIZE, ThumbnailCache

__all__ = ["RowKind", "StepListModel", "StepRow", "step_rows"]

_Index = QModelIndex | QPersistentModelIndex

#: A step's card, the "Otherwise" row of an ``if`` or a ``try``, or an empty list's row.
RowKind = Literal["step", "otherwise", "empty"]


@dataclass(frozen=True, slots=True)
class StepRow:
    """One row of the step list.

    ``path`` is the step's path for a step's card, the list's path (``(3, "otherwise")``) for
    the other rows; ``step`` is the step, or the block the list belongs to; ``depth`` how far
    it is indented; ``number`` its place in its list (from 1; 0 for the other rows).
    """

    kind: RowKind
    path: StepPath
    step: Step
    depth: int
    number: int = 0

    @property
    def key(self) -> str:
        """What stays the same for this row across snapshots (to keep the selection)."""
        return (
            self.step.id if self.kind == "step" else f"{self.kind}:{self.step.id}:{self.path[-1]}"
        )

    @property
    def list_path(self) -> StepPath:
        """The list this row is in (a step's card) or stands for (the other rows)."""
        return self.path[:-1] if self.kind == "step" else self.path


def step_rows(steps: tuple[Step, ...], prefix: StepPath = (), depth: int = 0) -> list[StepRow]:
    """The rows showing *steps* (the list at *prefix*) and everything inside them."""
    rows: list[StepRow] = []
    for i, step in enumerate(steps):
        path = (*prefix, i)
        rows.append(StepRow("step", path, step, depth, i + 1))
        for name, inner in branches(step):
            where = (*path, name)
            if name == "otherwise":
                rows.append(StepRow("otherwise", where, step, depth + 1))
            rows += step_rows(inner, where, depth + 1)
            if not inner:
                rows.append(StepRow("empty", where, step, depth + 1))
    return rows


class StepListModel(QAbstractListModel):
    """The steps of the workflow being edited, as rows (a thin adapter over its steps).

    :meth:`set_workflow` turns a new snapshot into the smallest change Qt understands (rows
    changed, one inserted, removed or moved, else a reset), so selection and scrolling survive.
    Dropping a card asks for the move (``move_requested``) instead of moving anything itself:
    the editor makes it an undoable edit and hands back the new snapshot.

    Where a dropped card goes: between two rows, before the step below (at the end of the list
    when below is an empty list's row or the "Otherwise" row); on a block, first inside it; on
    another step, right after it (in its block, when it is in one); on an empty list's row or an
    "Otherwise" row, first in that list.

    Signals:
        move_requested(object, object): the step at the first path should go to the slot at the
            second (a place in the workflow as it is now).
    """

    move_requested = Signal(object, object)

    STEP_ROLE = Qt.ItemDataRole.UserRole + 1
    ISSUES_ROLE = Qt.ItemDataRole.UserRole + 2
    SUMMARY_ROLE = Qt.ItemDataRole.UserRole + 3
    ID_ROLE = Qt.ItemDataRole.UserRole + 4
    ROW_ROLE = Qt.ItemDataRole.UserRole + 5
    MIME_TYPE = "application/x-procedura-step-path"

    def __init__(self, thumbnails: ThumbnailCache, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._thumbnails = thumbnails
        self._rows: list[StepRow] = []
        self._issues: dict[StepPath, list[Issue]] = {}
        self._top_count = 0
        thumbnails.thumbnail_ready.connect(self._on_thumbnails_thumbnail_ready)

    def _on_thumbnails_thumbnail_ready(self, ref: str) -> None:
        for row, shown in enumerate(self._rows):
            if shown.kind == "step" and shown.step.screenshot == ref:
                index = self.index(row)
                self.dataChanged.emit(index, index, [Qt.ItemDataRole.DecorationRole])

    # ── content ─────────────────────────────────────────────────────────────────────────────

    def set_workflow(self, workflow: Workflow, issues: Mapping[StepPath, list[Issue]]) -> None:
        """Show *workflow*'s steps with their problems (by the path of the step each is in)."""
        rows = step_rows(workflow.steps)
        old = [r.key for r in self._rows]
        new = [r.key for r in rows]
        self._issues = dict(issues)
        self._top_count = len(workflow.steps)
        if old == new:
            self._rows = rows
        elif len(new) == len(old) + 1 and (k := _inserted_at(old, new)) is not None:
            self.beginInsertRows(QModelIndex(), k, k)
            self._rows = rows
            self.endInsertRows()
        elif len(new) == len(old) - 1 and (k := _inserted_at(new, old)) is not None:
            self.beginRemoveRows(QModelIndex(), k, k)
            self._rows = rows
            self.endRemoveRows()
        elif (moved := _moved(old, new)) is not None:
            source, destination = moved
            child = destination + 1 if destination > source else destination
            self.beginMoveRows(QModelIndex(), source, source, QModelIndex(), child)
            self._rows = rows
            self.endMoveRows()
        else:
            self.beginResetModel()
            self._rows = rows
            self.endResetModel()
        if self._rows:
            self.dataChanged.emit(self.index(0), self.index(len(self._rows) - 1))

    def row(self, row: int) -> StepRow:
        """What *row* shows."""
        return self._rows[row]

    def step(self, row: int) -> Step:
        """The step shown in *row* (the block, for an "Otherwise" or an empty list's row)."""
        return self._rows[row].step

    def rows(self) -> list[StepRow]:
        """Every row, top to bottom."""
        return list(self._rows)

    def row_of(self, step_id: str) -> int | None:
        """The row of the card of the step with this id, if shown."""
        return next(
            (i for i, r in enumerate(self._rows) if r.kind == "step" and r.step.id == step_id),
            None,
        )

    def row_of_path(self, path: StepPath) -> int | None:
        """The row of the card of the step at *path*, if shown."""
        return next(
            (i for i, r in enumerate(self._rows) if r.kind == "step" and r.path == path), None
        )

    def path_of(self, step_id: str) -> StepPath | None:
        """Where the step with this id is, if shown."""
        row = self.row_of(step_id)
        return self._rows[row].path if row is not None else None

    # ── Qt model ────────────────────────────────────────────────────────────────────────────

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 (Qt API default)
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        shown = self._rows[index.row()]
        step = shown.step
        if role == self.ROW_ROLE:
            return shown
        if shown.kind != "step":
            if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
                return _section_text(shown)
            if role == Qt.ItemDataRole.ToolTipRole:
                if shown.kind == "empty":
                    return "Drop a step here, or select this row and use Add step inside"
                if step.kind == "if":
                    return "What is done when the condition does not hold"
                return "What is done when a step tried fails"
            return None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            return f"{path_label(shown.path)}. {step.title or '(no title)'}"
        if role == self.STEP_ROLE:
            return step
        if role == self.ID_ROLE:
            return step.id
        if role == self.ISSUES_ROLE:
            return self._issues.get(shown.path, [])
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
            for issue in self._issues.get(shown.path, []):
                color = theme.colours().error if issue.is_error else theme.colours().warning
                lines.append(f"<span style='color:{color}'>{_html(str(issue))}</span>")
            return "<br>".join(lines)
        return None

    def flags(self, index: _Index) -> Qt.ItemFlag:
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if not index.isValid():
            return Qt.ItemFlag.ItemIsDropEnabled
        if self._rows[index.row()].kind == "step":
            return base | Qt.ItemFlag.ItemIsDragEnabled | Qt.ItemFlag.ItemIsDropEnabled
        return base | Qt.ItemFlag.ItemIsDropEnabled

    def supportedDropActions(self) -> Qt.DropAction:
        return Qt.DropAction.MoveAction

    def supportedDragActions(self) -> Qt.DropAction:
        return Qt.DropAction.MoveAction

    def mimeTypes(self) -> list[str]:
        return [self.MIME_TYPE]

    def mimeData(self, indexes: Sequence[QModelIndex]) -> QMimeData:
        data = QMimeData()
        paths = [
            list(self._rows[i.row()].path)
            for i in indexes
            if i.isValid() and self._rows[i.row()].kind == "step"
        ]
        data.setData(self.MIME_TYPE, QByteArray(json.dumps(paths).encode()))
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
        try:
            paths = json.loads(bytes(data.data(self.MIME_TYPE).data()).decode())
        except ValueError:
            return False
        if not isinstance(paths, list) or len(paths) != 1 or not isinstance(paths[0], list):
            return False
        source: StepPath = tuple(paths[0])
        slot = self.slot_on(parent.row()) if row < 0 and parent.isValid() else self.slot_before(row)
        if slot is not None and slot != source:
            self.move_requested.emit(source, slot)
        return True  # the editor moves it (one undoable edit); no row is removed here

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
        if not 0 <= sourceRow < len(self._rows) or self._rows[sourceRow].kind != "step":
            return False
        slot = self.slot_before(destinationChild)
        source = self._rows[sourceRow].path
        if slot is not None and slot != source:
            self.move_requested.emit(source, slot)
        return True

    # ── where a drop goes ───────────────────────────────────────────────────────────────────

    def slot_before(self, row: int) -> StepPath | None:
        """The slot a card dropped just above *row* goes to (the end, past the last row)."""
        if row < 0 or row >= len(self._rows):
            return (self._top_count,)
        below = self._rows[row]
        if below.kind == "step":
            return below.path
        if below.kind == "empty":
            return (*below.path, 0)
        block = below.path[:-1]  # above "Otherwise": the end of the block's own steps
        held = dict(branches(below.step))
        return (*block, "steps", len(held.get("steps", ())))

    def slot_on(self, row: int) -> StepPath | None:
        """The slot a card dropped on *row* goes to."""
        if not 0 <= row < len(self._rows):
            return None
        on = self._rows[row]
        if on.kind != "step":
            return (*on.path, 0)
        if branches(on.step):
            return (*on.path, "steps", 0)
        last = on.path[-1]
        assert isinstance(last, int)
        return (*on.path[:-1], last + 1)


def _section_text(row: StepRow) -> str:
    if row.kind == "otherwise":
        return "Otherwise"
    if row.path[-1] == "otherwise":
        return "Nothing otherwise: drop a step here, or Add step inside"
    return "No step inside yet: drop one here, or Add step inside"


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
