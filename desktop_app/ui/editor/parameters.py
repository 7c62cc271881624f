"""The editor's side panels: the workflow's parameters, and its name, description and intent."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.editing import Issue, parameter_uses
from desktop_app.core.models.workflow import Parameter, ParameterType, Workflow
from desktop_app.core.values import value_text
from desktop_app.ui import theme
from desktop_app.ui.editor.template_edit import TemplateEdit
from desktop_app.ui.table_model import RowsModel

__all__ = ["ParameterModel", "ParameterPanel", "WorkflowPanel"]

_Index = QModelIndex | QPersistentModelIndex

_TYPE_LABELS = {
    ParameterType.TEXT: "Text",
    ParameterType.NUMBER: "Number",
    ParameterType.DATE: "Date",
    ParameterType.EMAIL: "Email",
    ParameterType.CHOICE: "Choice",
    ParameterType.BOOL: "True / false",
    ParameterType.SECRET: "Secret",
    ParameterType.LIST: "List (one per line)",
}


class ParameterModel(RowsModel[Parameter]):
    """The parameters as a table, with how many places use each (a thin adapter)."""

    HEADERS = ("Name", "Type", "Default", "Used")
    PARAMETER_ROLE = Qt.ItemDataRole.UserRole + 1

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._uses: dict[str, int] = {}
        self._problems: dict[str, list[Issue]] = {}

    def set_workflow(self, workflow: Workflow, issues: list[Issue]) -> None:
        """Show *workflow*'s parameters and the problems about them."""
        uses = {p.name: parameter_uses(workflow, p.name) for p in workflow.parameters}
        problems: dict[str, list[Issue]] = {}
        for issue in issues:
            if issue.step is None and issue.parameter is not None:
                problems.setdefault(issue.parameter, []).append(issue)
        if [p.name for p in workflow.parameters] == [p.name for p in self._rows]:
            self._rows, self._uses, self._problems = list(workflow.parameters), uses, problems
            if self._rows:
                self.dataChanged.emit(
                    self.index(0, 0), self.index(len(self._rows) - 1, len(self.HEADERS) - 1)
                )
            return
        self.beginResetModel()
        self._rows, self._uses, self._problems = list(workflow.parameters), uses, problems
        self.endResetModel()

    def parameter(self, row: int) -> Parameter:
        """The parameter in *row*."""
        return self._rows[row]

    def row_of(self, name: str) -> int | None:
        """The row of parameter *name*."""
        return next((i for i, p in enumerate(self._rows) if p.name == name), None)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        param = self.row_at(index)
        if param is None:
            return None
        column = index.column()
        if role == self.PARAMETER_ROLE:
            return param
        if role == Qt.ItemDataRole.DisplayRole:
            secret = param.type is ParameterType.SECRET
            default = "(at run time)" if secret else value_text(param.default)
            return (
                "{" + param.name + "}",
                _TYPE_LABELS[param.type],
                default or "—",
                str(self._uses.get(param.name, 0)),
            )[column]
        if role == Qt.ItemDataRole.ToolTipRole:
            lines = [param.description or param.name]
            lines += [str(issue) for issue in self._problems.get(param.name, [])]
            return "\n".join(lines)
        if role == Qt.ItemDataRole.ForegroundRole and self._problems.get(param.name):
            return theme.color("warning")
        return None


class ParameterPanel(QWidget):
    """Add, rename (everywhere), retype and describe the values a workflow asks for.

    Signals:
        add_requested(): "Add" was pressed.
        delete_requested(str): remove this parameter.
        rename_requested(str, str): rename a parameter (old, new) and its placeholders.
        retype_requested(str, object, object): give a parameter a type (name, type, choices).
        update_requested(str, dict): change other fields of a parameter.
    """

    add_requested = Signal()
    delete_requested = Signal(str)
    rename_requested = Signal(str, str)
    retype_requested = Signal(str, object, object)
    update_requested = Signal(str, dict)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("editor-parameters")
        self.model = ParameterModel(self)
        self.table = QTableView()
        self.table.setObjectName("editor-parameter-table")
        self.table.setAccessibleName("Parameters")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2, 3):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.table.selectionModel().currentRowChanged.connect(self._on_table_current_row_changed)

        self.add_button = QPushButton("Add")
        self.add_button.setObjectName("editor-parameter-add")
        self.add_button.setToolTip("Add a value the workflow asks for when it runs")
        self.add_button.clicked.connect(self.add_requested)
        self.remove_button = QPushButton("Remove")
        self.remove_button.setObjectName("editor-parameter-remove")
        self.remove_button.setToolTip("Remove the parameter (steps using it then show a problem)")
        self.remove_button.clicked.connect(self._on_remove_button_clicked)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)

        self.empty = QLabel(
            "No parameters: this workflow does the same thing every time. Add one for a value "
            "that changes from run to run, then type <b>{</b> in a step's value to use it."
        )
        self.empty.setObjectName("editor-parameters-empty")
        self.empty.setWordWrap(True)
        theme.set_tone(self.empty, "muted")

        self.details = QGroupBox("Parameter")
        form = QFormLayout(self.details)
        self.name = QLineEdit()
        self.name.setObjectName("editor-parameter-name")
        self.name.setToolTip(
            "Renaming rewrites every {placeholder} using it: titles, values, locators, checks"
        )
        self.name.editingFinished.connect(self._on_name_editing_finished)
        self.type = QComboBox()
        self.type.setObjectName("editor-parameter-type")
        self.type.setAccessibleName("Type")
        for type_, label in _TYPE_LABELS.items():
            self.type.addItem(label, type_)
        self.type.activated.connect(self._on_type_activated)
        self.secret = QCheckBox("Secret (kept in the keyring or asked for at run time)")
        self.secret.setObjectName("editor-parameter-secret")
        self.secret.setToolTip(
            "A secret's value is never stored in the workflow, runs, logs or screenshots"
        )
        self.secret.toggled.connect(self._on_secret_toggled)
        self.choices = QLineEdit()
        self.choices.setObjectName("editor-parameter-choices")
        self.choices.setPlaceholderText("Comma-separated, e.g. Acme, Globex")
        self.choices.editingFinished.connect(self._on_choices_editing_finished)
        self.default = QLineEdit()
        self.default.setObjectName("editor-parameter-default")
        self.default.setPlaceholderText("No default: asked every time")
        self.default.editingFinished.connect(self._on_default_editing_finished)
        self.description = QLineEdit()
        self.description.setObjectName("editor-parameter-description")
        self.description.setPlaceholderText("What to enter, for whoever runs it")
        self.description.editingFinished.connect(
            lambda: self._update({"description": self.description.text().strip()})
        )
        self.required = QCheckBox("Required")
        self.required.setObjectName("editor-parameter-required")
        self.required.toggled.connect(lambda on: self._update({"required": on}))
        form.addRow("Name", self.name)
        form.addRow("Type", self.type)
        form.addRow("", self.secret)
        form.addRow("Choices", self.choices)
        form.addRow("Default", self.default)
        form.addRow("Description", self.description)
        form.addRow("", self.required)
        self._form = form
        self.error = QLabel()
        self.error.setObjectName("editor-parameter-error")
        self.error.setWordWrap(True)
        theme.set_tone(self.error, "error")
        self.error.hide()

        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 2)
        layout.addLayout(buttons)
        layout.addWidget(self.empty)
        layout.addWidget(self.details)
        layout.addWidget(self.error)
        layout.addStretch(1)
        self._show_details(None)

    # ── showing ─────────────────────────────────────────────────────────────────────────────

    def show_workflow(self, workflow: Workflow, issues: list[Issue]) -> None:
        """Show the parameters of *workflow*, keeping the selection."""
        selected = self.selected()
        self.model.set_workflow(workflow, issues)
        has = bool(workflow.parameters)
        self.empty.setVisible(not has)
        self.table.setVisible(has)
        if selected is not None and self.select(selected.name):
            return
        self._show_details(self.selected())

    def selected(self) -> Parameter | None:
        """The parameter selected, if any."""
        index = self.table.currentIndex()
        if not index.isValid() or index.row() >= self.model.rowCount():
            return None
        return self.model.parameter(index.row())

    def select(self, name: str) -> bool:
        """Select parameter *name*, if there is one."""
        row = self.model.row_of(name)
        if row is None:
            return False
        self.table.selectRow(row)
        self._show_details(self.model.parameter(row))
        return True

    def show_error(self, message: str) -> None:
        """Say why a change was refused, and show the parameter as it still is."""
        self.error.setText(f"Not changed: {message}")
        self.error.show()
        self._show_details(self.selected(), keep_error=True)

    def _on_table_current_row_changed(self, *_: object) -> None:
        self._show_details(self.selected())

    def _show_details(self, param: Parameter | None, *, keep_error: bool = False) -> None:
        if not keep_error:
            self.error.hide()
        self.details.setVisible(param is not None)
        self.remove_button.setEnabled(param is not None)
        if param is None:
            return
        for widget in (self.type, self.secret, self.required):
            widget.blockSignals(True)
        self.details.setTitle("{" + param.name + "}")
        self.name.setText(param.name)
        self.type.setCurrentIndex(max(self.type.findData(param.type), 0))
        self.secret.setChecked(param.type is ParameterType.SECRET)
        self.choices.setText(", ".join(param.choices))
        self.default.setText(value_text(param.default))
        self.default.setEnabled(param.type is not ParameterType.SECRET)
        self.default.setPlaceholderText(
            "A secret never has a default"
            if param.type is ParameterType.SECRET
            else "true or false"
            if param.type is ParameterType.BOOL
            else "No default: asked every time"
        )
        self.description.setText(param.description)
        self.required.setChecked(param.required)
        self._form.setRowVisible(self.choices, param.type is ParameterType.CHOICE)
        for widget in (self.type, self.secret, self.required):
            widget.blockSignals(False)

    # ── edits ───────────────────────────────────────────────────────────────────────────────

    def _on_remove_button_clicked(self) -> None:
        param = self.selected()
        if param is not None:
            self.delete_requested.emit(param.name)

    def _on_name_editing_finished(self) -> None:
        param = self.selected()
        new = self.name.text().strip()
        if param is not None and new and new != param.name:
            self.rename_requested.emit(param.name, new)

    def _on_type_activated(self, _index: int) -> None:
        # Qt keeps item data of a str enum as a plain string: turn it back into the enum.
        self._retype(ParameterType(self.type.currentData()))

    def _on_secret_toggled(self, on: bool) -> None:
        self._retype(ParameterType.SECRET if on else ParameterType.TEXT)

    def _retype(self, type_: ParameterType) -> None:
        param = self.selected()
        if param is None or param.type is type_:
            return
        choices = [c.strip() for c in self.choices.text().split(",") if c.strip()]
        self.retype_requested.emit(param.name, type_, tuple(choices) or None)

    def _on_choices_editing_finished(self) -> None:
        param = self.selected()
        if param is None or param.type is not ParameterType.CHOICE:
            return
        choices = tuple(
            dict.fromkeys(c.strip() for c in self.choices.text().split(",") if c.strip())
        )
        if choices != param.choices:
            self.retype_requested.emit(param.name, ParameterType.CHOICE, choices)

    def _on_default_editing_finished(self) -> None:
        param = self.selected()
        if param is not None and self.default.text().strip() != value_text(param.default):
            self.update_requested.emit(param.name, {"default_text": self.default.text()})

    def _update(self, changes: dict[str, object]) -> None:
        param = self.selected()
        if param is None:
            return
        if all(getattr(param, key) == value for key, value in changes.items()):
            return
        self.update_requested.emit(param.name, changes)


class WorkflowPanel(QWidget):
    """The workflow's name, description and intent (the sentence search and the tray show).

    Signals:
        workflow_edited(dict, str): fields of the workflow changed (changes, what).
    """

    workflow_edited = Signal(dict, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("editor-workflow")
        self.name = QLineEdit()
        self.name.setObjectName("editor-workflow-name")
        self.name.editingFinished.connect(
            lambda: self._emit({"name": self.name.text().strip()}, "Rename the workflow")
        )
        self.intent = TemplateEdit(placeholder_text="e.g. Create a contact for {full_name}")
        self.intent.setObjectName("editor-workflow-intent")
        self.intent.setToolTip(
            "One sentence saying what a run does, with its parameters: shown in the tray and "
            "used by search. Secrets cannot appear in it."
        )
        self.intent.editing_finished.connect(
            lambda: self._emit({"intent_template": self.intent.text().strip()}, "Edit the intent")
        )
        self.description = QPlainTextEdit()
        self.description.setObjectName("editor-workflow-description")
        self.description.setPlaceholderText("When to use it, what it needs, what it leaves behind")
        self.description.setTabChangesFocus(True)
        self.description.setMaximumHeight(120)
        self.description.installEventFilter(self)
        self._workflow: Workflow | None = None
        form = QFormLayout(self)
        form.addRow("Name", self.name)
        form.addRow("Intent", self.intent)
        form.addRow("Description", self.description)

    def show_workflow(self, workflow: Workflow) -> None:
        """Show *workflow*'s name, intent and description."""
        self._workflow = workflow
        names = [p.name for p in workflow.parameters]
        if self.name.text() != workflow.name:
            self.name.setText(workflow.name)
        self.intent.set_names(names)
        self.intent.set_text(workflow.intent_template or "")
        if self.description.toPlainText() != workflow.description:
            self.description.setPlainText(workflow.description)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.description and event.type() == QEvent.Type.FocusOut:
            self._emit(
                {"description": self.description.toPlainText().strip()}, "Edit the description"
            )
        return super().eventFilter(watched, event)

    def _emit(self, changes: dict[str, object], what: str) -> None:
        workflow = self._workflow
        if workflow is None:
            return
        current = {
            "name": workflow.name,
            "intent_template": workflow.intent_template or "",
            "description": workflow.description,
        }
        if all(current.get(key) == value for key, value in changes.items()):
            return
        self.workflow_edited.emit(changes, what)
