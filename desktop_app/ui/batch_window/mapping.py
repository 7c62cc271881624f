"""The column → parameter table of the batch dialog: its model and its combo-box delegate."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtWidgets import QComboBox, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from desktop_app.core.models.workflow import ParameterType, Workflow
from desktop_app.ui import theme
from desktop_app.ui.table_model import RowsModel

__all__ = ["MappingModel", "_Mapping", "_ParameterDelegate"]

_IGNORED: Final = "— ignored —"


@dataclass(slots=True)
class _Mapping:
    column: str
    sample: str
    parameter: str | None
    explicit: bool = False


class MappingModel(RowsModel[_Mapping]):
    """Column → parameter, one CSV column a row; the parameter is edited with a combo box.

    Signals:
        mapping_edited(): a person chose another parameter for a column.
    """

    HEADERS = ("Column", "Parameter", "First row's value")
    COLUMN, PARAMETER, SAMPLE = range(3)
    mapping_edited = Signal()

    def __init__(self, workflow: Workflow, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._workflow = workflow

    def mapping(self) -> dict[str, str | None]:
        """Column → parameter name (None: ignored)."""
        return {m.column: m.parameter for m in self.rows()}

    def explicit(self) -> list[str]:
        """The columns whose parameter a person chose."""
        return [m.column for m in self.rows() if m.explicit]

    def parameter_of(self, column: str) -> str | None:
        """The parameter *column* gives (None: ignored)."""
        return self.mapping().get(column)

    def set_parameter(self, column: str, parameter: str | None) -> None:
        """Map *column* to *parameter* (None: ignore it), as a person would."""
        for row, item in enumerate(self._rows):
            if item.column == column:
                self.setData(self.index(row, self.PARAMETER), parameter or "")
                return
        raise KeyError(column)

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        flags = super().flags(index)
        if index.isValid() and index.column() == self.PARAMETER:
            flags |= Qt.ItemFlag.ItemIsEditable
        return flags

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = 0) -> Any:
        item = self.row_at(index)
        if item is None:
            return None
        column = index.column()
        param = self._workflow.parameter(item.parameter) if item.parameter else None
        secret = param is not None and param.type is ParameterType.SECRET
        if role == Qt.ItemDataRole.DisplayRole:
            if column == self.COLUMN:
                return item.column
            if column == self.PARAMETER:
                if item.parameter is None:
                    return _IGNORED
                return f"🔒 {item.parameter} — a secret: refused" if secret else item.parameter
            return item.sample
        if role == Qt.ItemDataRole.EditRole and column == self.PARAMETER:
            return item.parameter or ""
        if role == Qt.ItemDataRole.ForegroundRole:
            if column == self.PARAMETER and (secret or (item.parameter and param is None)):
                return theme.color("error")
            if column == self.PARAMETER and item.parameter is None:
                return theme.color("muted")
        if role == Qt.ItemDataRole.ToolTipRole and column == self.PARAMETER:
            if secret:
                return (
                    "Secrets are never read from a file. Ignore this column and type the "
                    "secret below."
                )
            if item.parameter is None:
                return "This column is not used. Choose the parameter it gives, if any."
            return param.description if param is not None else ""
        return None

    def setData(
        self, index: QModelIndex | QPersistentModelIndex, value: Any, role: int = 2
    ) -> bool:
        item = self.row_at(index)
        if item is None or index.column() != self.PARAMETER or role != Qt.ItemDataRole.EditRole:
            return False
        chosen = str(value) or None
        if chosen == item.parameter and item.explicit:
            return False
        item.parameter = chosen
        item.explicit = True
        self.dataChanged.emit(index, index)
        self.mapping_edited.emit()
        return True


class _ParameterDelegate(QStyledItemDelegate):
    """A combo box of the workflow's parameters (secrets left out: they never come from a file)."""

    def __init__(self, workflow: Workflow, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._workflow = workflow

    def createEditor(
        self,
        parent: QWidget,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> QWidget:
        combo = QComboBox(parent)
        combo.setObjectName("mapping-parameter")
        combo.addItem(_IGNORED, "")
        for param in self._workflow.parameters:
            if param.type is not ParameterType.SECRET:
                combo.addItem(f"{param.name}  ({param.type.value})", param.name)
        combo.setToolTip("The parameter this column gives, or “ignored”")
        combo.activated.connect(lambda _i: self.commitData.emit(combo))
        return combo

    def setEditorData(self, editor: QWidget, index: QModelIndex | QPersistentModelIndex) -> None:
        assert isinstance(editor, QComboBox)
        found = editor.findData(index.data(Qt.ItemDataRole.EditRole) or "")
        if found < 0:  # a secret: not offered, shown as "ignored" in the combo
            found = 0
            theme.set_invalid(editor, True)
            editor.setToolTip(
                "This column names a secret parameter. Secrets are never read from a file; "
                "leave it ignored and type the secret below."
            )
        else:
            theme.set_invalid(editor, False)
        editor.setCurrentIndex(found)

    def setModelData(
        self,
        editor: QWidget,
        model: QAbstractItemModel,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        assert isinstance(editor, QComboBox)
        model.setData(index, editor.currentData() or "", Qt.ItemDataRole.EditRole)
