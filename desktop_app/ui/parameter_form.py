"""The form that asks for a run's parameters: one proper field per type, checked as you type.

Values are checked with the same code the command line uses (:func:`bind_parameters`), so the
form accepts exactly what a run accepts. The run view and the tray both use it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Final

from PySide6.QtCore import QDate, QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import (
    QCalendarWidget,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
    QWidgetAction,
)

from desktop_app.core.models.workflow import Parameter, ParameterType, Workflow
from desktop_app.core.replay.parameters import BoundParameters, ParameterError, bind_parameters
from desktop_app.core.values import value_text
from desktop_app.ui import theme

__all__ = ["ParameterForm", "field_label", "secret_source"]

_PLACEHOLDERS: Final[dict[ParameterType, str]] = {
    ParameterType.NUMBER: "a number, e.g. 1234.5",
    ParameterType.DATE: "YYYY-MM-DD",
    ParameterType.EMAIL: "name@example.com",
}


def field_label(param: Parameter) -> str:
    """A parameter's name as a form label: ``full_name`` → ``Full name``."""
    words = param.name.replace("_", " ").strip()
    return words[:1].upper() + words[1:]


@dataclass(slots=True)
class _Field:
    """One parameter's widgets and how to read and write its value as the raw string."""

    param: Parameter
    label: QLabel
    widget: QWidget
    get: Callable[[], str]
    set: Callable[[str], None]
    focus: QWidget


class _DateEdit(QWidget):
    """A date as ISO text, with a calendar to pick it from."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.line = QLineEdit()
        self.line.setPlaceholderText("YYYY-MM-DD")
        self.line.textChanged.connect(self.changed)
        self.button = QToolButton()
        self.button.setText("…")
        self.button.setToolTip("Pick the date from a calendar")
        self.button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.calendar = QCalendarWidget()
        self.calendar.setGridVisible(True)
        self.calendar.clicked.connect(self._on_calendar_clicked)
        self.calendar.activated.connect(self._on_calendar_clicked)
        menu = QMenu(self.button)
        action = QWidgetAction(menu)
        action.setDefaultWidget(self.calendar)
        menu.addAction(action)
        menu.aboutToShow.connect(self._on_menu_about_to_show)
        self._menu = menu
        self.button.setMenu(menu)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.line, 1)
        layout.addWidget(self.button)

    def text(self) -> str:
        return self.line.text()

    def setText(self, text: str) -> None:
        self.line.setText(text)

    def _on_menu_about_to_show(self) -> None:
        try:
            shown = date.fromisoformat(self.line.text().strip())
        except ValueError:
            shown = date.today()
        self.calendar.setSelectedDate(QDate(shown.year, shown.month, shown.day))

    def _on_calendar_clicked(self, picked: QDate) -> None:
        self.line.setText(picked.toString("yyyy-MM-dd"))
        self._menu.close()


def secret_source(value: str, stored: str | None) -> str:
    """Where a secret field's value comes from, truthfully: *value* is what the field starts
    with, *stored* what the keyring holds for it (None: nothing, or no keyring)."""
    if value and stored is not None and value == stored:
        return "filled in from the keyring"
    if value:
        return "as typed for the last run (kept in memory only, not in the keyring)"
    if stored:
        return "the keyring holds another value; type the one to use"
    return "not in the keyring: type it (it is asked for on every run unless remembered)"


class ParameterForm(QWidget):
    """Fields for a workflow's parameters, with the first problem shown under them.

    Args:
        workflow: whose parameters to ask for.
        values: raw values to start from (the last run's), else each parameter's default.
        secrets: secret values to start from; shown masked.
        stored: the secret values the keyring holds (to say where each secret comes from:
            :func:`secret_source`).

    Signals:
        validity_changed(bool): the values became valid (True) or not (False).
        edited(): a field changed.
    """

    validity_changed = Signal(bool)
    edited = Signal()

    def __init__(
        self,
        workflow: Workflow,
        *,
        values: Mapping[str, str] | None = None,
        secrets: Mapping[str, str] | None = None,
        stored: Mapping[str, str] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("parameter-form")
        self._workflow = workflow
        self._fields: dict[str, _Field] = {}
        self._problem_labels: dict[str, QLabel] = {}
        self._bound: BoundParameters | None = None
        self._error = ""
        self._error_name: str | None = None
        self._valid: bool | None = None
        values = values or {}
        secrets = secrets or {}

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.DontWrapRows)
        self._form = form
        for param in workflow.parameters:
            if param.type is ParameterType.SECRET:
                start = secrets.get(param.name, "")
            else:
                start = values.get(param.name, value_text(param.default))
            source = None
            if param.type is ParameterType.SECRET:
                source = secret_source(start, (stored or {}).get(param.name))
            self._add_field(form, param, start, source=source)
        layout.addLayout(form)

        self.remember = QCheckBox("Remember secrets in the system keyring")
        self.remember.setObjectName("remember-secrets")
        self.remember.setToolTip(
            "Keep the secret values in the operating system's keyring, so the next run (and the "
            "tray) can use them without asking. They are never written to a file or a run record."
        )
        self.remember.setChecked(any(secrets.values()))
        self._has_secrets = any(p.type is ParameterType.SECRET for p in workflow.parameters)
        self.remember.setVisible(self._has_secrets)
        layout.addWidget(self.remember)

        if not workflow.parameters:
            none = QLabel("This workflow has no parameters.")
            none.setObjectName("no-parameters")
            none.setEnabled(False)
            layout.addWidget(none)
        elif any(
            p.required and p.default is None and p.type is not ParameterType.BOOL
            for p in workflow.parameters
        ):
            legend = QLabel("* a value is needed")
            legend.setEnabled(False)
            layout.addWidget(legend)

        self.error_label = QLabel()
        self.error_label.setObjectName("parameter-error")
        self.error_label.setWordWrap(True)
        theme.set_tone(self.error_label, "error")
        self.error_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error_label.hide()
        layout.addWidget(self.error_label)
        self.check()

    # ── reading ─────────────────────────────────────────────────────────────────────────────

    @property
    def workflow(self) -> Workflow:
        """Whose parameters these are."""
        return self._workflow

    def values(self) -> dict[str, str]:
        """The raw values of the non-secret parameters."""
        return {
            n: f.get() for n, f in self._fields.items() if f.param.type is not ParameterType.SECRET
        }

    def secrets(self) -> dict[str, str]:
        """The secret parameters' values (in memory only)."""
        return {n: f.get() for n, f in self._fields.items() if f.param.type is ParameterType.SECRET}

    def remember_secrets(self) -> bool:
        """Whether the secrets should go into the OS keyring."""
        return self._has_secrets and self.remember.isChecked()

    def is_valid(self) -> bool:
        """Whether every value fits its parameter."""
        return self._bound is not None

    def bound(self) -> BoundParameters | None:
        """The checked values (None while something is wrong)."""
        return self._bound

    def error(self) -> str:
        """The first problem, in one line ("" when there is none); each is under its field."""
        return self._error

    def field(self, name: str) -> QWidget:
        """The input widget of parameter *name* (a line edit, combo box, check box…)."""
        return self._fields[name].focus

    # ── writing ─────────────────────────────────────────────────────────────────────────────

    def set_value(self, name: str, value: str) -> None:
        """Put *value* in a field, as if typed."""
        self._fields[name].set(value)

    def focus_first(self) -> None:
        """Focus the field with a problem, else the first one."""
        name = self._error_name if self._error_name in self._fields else None
        if name is None and self._fields:
            name = next(iter(self._fields))
        if name is not None:
            self._fields[name].focus.setFocus(Qt.FocusReason.OtherFocusReason)

    def check(self) -> bool:
        """Check the values now; whether they are valid (each field says what is wrong with it)."""
        problems = self._problems()
        self._bound = None
        if not problems:
            try:
                self._bound = bind_parameters(self._workflow, self.values(), secrets=self.secrets())
            except ParameterError as exc:
                problems[exc.name or ""] = str(exc)
        first = next(iter(problems.items()), None)
        self._error, self._error_name = "", None
        if first is not None:
            name, problem = first
            if name in self._fields:
                label = field_label(self._fields[name].param)
                if not problem.startswith(label):
                    problem = f"{label}: {problem}"
            self._error, self._error_name = problem, name or None
        for name, field in self._fields.items():
            problem = problems.get(name, "")
            theme.set_tone(field.label, "error" if problem else None)
            inline = self._problem_labels[name]
            inline.setText(problem)
            inline.setVisible(bool(problem))
        general = problems.get("", "")
        self.error_label.setText(general)
        self.error_label.setVisible(bool(general))
        valid = not problems
        if valid != self._valid:
            self._valid = valid
            self.validity_changed.emit(valid)
        return valid

    def problem(self, name: str) -> str:
        """What is wrong with parameter *name*'s value, as shown under its field ("" if nothing)."""
        label = self._problem_labels[name]
        return label.text() if not label.isHidden() else ""

    # ── building ────────────────────────────────────────────────────────────────────────────

    def _problems(self) -> dict[str, str]:
        """Each field's problem, in form order (blank required values worded for a form)."""
        found: dict[str, str] = {}
        for name, field in self._fields.items():
            param = field.param
            raw = field.get()
            blank = raw == "" if param.type is ParameterType.SECRET else not raw.strip()
            if param.required and param.default is None and blank:
                found[name] = f"{field_label(param)} needs a value."
            elif param.type is not ParameterType.SECRET:
                alone = self._workflow.model_copy(update={"parameters": (param,)})
                try:
                    bind_parameters(alone, {name: raw})
                except ParameterError as exc:  # shown under the field: no need to name it
                    found[name] = str(exc).removeprefix(f"parameter {name!r}: ")
        return found

    def _add_field(
        self, form: QFormLayout, param: Parameter, start: str, *, source: str | None
    ) -> None:
        needed = param.required and param.default is None and param.type is not ParameterType.BOOL
        marker = " *" if needed else ""
        label = QLabel(f"{field_label(param)}{marker}")
        tip = param.description or f"The {param.type.value} parameter {param.name!r}"
        tip = f"{tip}\nParameter: {param.name} ({param.type.value})"
        label.setToolTip(tip)
        builder = {
            ParameterType.CHOICE: self._choice,
            ParameterType.BOOL: self._bool,
            ParameterType.DATE: self._date,
            ParameterType.SECRET: self._secret,
            ParameterType.LIST: self._lines,
        }.get(param.type, self._line)
        field = builder(param, label)
        field.widget.setToolTip(tip)
        field.focus.setObjectName(f"param-{param.name}")
        field.focus.setAccessibleName(field_label(param))
        field.focus.setAccessibleDescription(param.description)
        label.setBuddy(field.focus)
        field.set(start)
        self._fields[param.name] = field
        holder = QWidget()
        column = QVBoxLayout(holder)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(1)
        column.addWidget(field.widget)
        help_text = param.description
        if source is not None:
            help_text = f"{help_text} — {source}" if help_text else source[:1].upper() + source[1:]
        if help_text:
            hint = QLabel(help_text)
            hint.setObjectName(f"hint-{param.name}")
            hint.setWordWrap(True)
            hint.setEnabled(False)
            small = hint.font()
            small.setPointSizeF(max(small.pointSizeF() * 0.9, 7.0))
            hint.setFont(small)
            column.addWidget(hint)
        problem = QLabel()
        problem.setObjectName(f"problem-{param.name}")
        problem.setWordWrap(True)
        theme.set_tone(problem, "error")
        problem.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Its line is kept, shown or not: the fields below must not move while someone types
        # (the first keystroke in a field that "needs a value" hid it, and clicks went astray).
        keep = problem.sizePolicy()
        keep.setRetainSizeWhenHidden(True)
        problem.setSizePolicy(keep)
        problem.setMinimumHeight(problem.fontMetrics().height())
        problem.hide()
        self._problem_labels[param.name] = problem
        column.addWidget(problem)
        form.addRow(label, holder)

    def _line(self, param: Parameter, label: QLabel) -> _Field:
        edit = QLineEdit()
        placeholder = _PLACEHOLDERS.get(param.type, "")
        if param.default is not None:
            placeholder = f"{value_text(param.default)} (the default)"
        edit.setPlaceholderText(placeholder)
        edit.setClearButtonEnabled(True)
        edit.textChanged.connect(self._on_field_edited)
        return _Field(param, label, edit, edit.text, edit.setText, edit)

    def _lines(self, param: Parameter, label: QLabel) -> _Field:
        edit = QPlainTextEdit()
        edit.setPlaceholderText("One item per line")
        edit.setTabChangesFocus(True)
        edit.setFixedHeight(edit.fontMetrics().lineSpacing() * 5 + 12)
        edit.textChanged.connect(self._on_field_edited)
        return _Field(param, label, edit, edit.toPlainText, edit.setPlainText, edit)

    def _secret(self, param: Parameter, label: QLabel) -> _Field:
        edit = QLineEdit()
        edit.setEchoMode(QLineEdit.EchoMode.Password)
        edit.setPlaceholderText("secret: never stored in a workflow or a run record")
        edit.textChanged.connect(self._on_field_edited)
        show = QToolButton()
        show.setText("Show")
        show.setCheckable(True)
        show.setObjectName(f"show-{param.name}")
        show.setToolTip("Show or hide the secret while you type it")
        show.toggled.connect(
            lambda shown: edit.setEchoMode(
                QLineEdit.EchoMode.Normal if shown else QLineEdit.EchoMode.Password
            )
        )
        box = QWidget()
        row = QHBoxLayout(box)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(edit, 1)
        row.addWidget(show)
        return _Field(param, label, box, edit.text, edit.setText, edit)

    def _date(self, param: Parameter, label: QLabel) -> _Field:
        edit = _DateEdit()
        if param.default is not None:
            edit.line.setPlaceholderText(f"{value_text(param.default)} (the default)")
        edit.changed.connect(self._on_field_edited)
        return _Field(param, label, edit, edit.text, edit.setText, edit.line)

    def _choice(self, param: Parameter, label: QLabel) -> _Field:
        combo = QComboBox()
        combo.setAccessibleName(field_label(param))
        if not param.required or param.default is None:
            combo.addItem("(choose one)" if param.required else "(none)", "")
        for choice in param.choices:
            combo.addItem(choice, choice)
        combo.currentIndexChanged.connect(self._on_field_edited)

        def get() -> str:
            data = combo.currentData()
            return data if isinstance(data, str) else ""

        def put(value: str) -> None:
            key = value.strip().casefold()
            for i in range(combo.count()):
                data = combo.itemData(i)
                if isinstance(data, str) and data.strip().casefold() == key:
                    combo.setCurrentIndex(i)
                    return
            combo.setCurrentIndex(0)

        return _Field(param, label, combo, get, put, combo)

    def _bool(self, param: Parameter, label: QLabel) -> _Field:
        box = QCheckBox()
        box.toggled.connect(self._on_field_edited)

        def put(value: str) -> None:
            with QSignalBlocker(box):
                box.setChecked(value.strip().lower() in ("true", "yes", "on", "1"))
            self._on_field_edited()

        return _Field(param, label, box, lambda: "true" if box.isChecked() else "false", put, box)

    def _on_field_edited(self, *_: object) -> None:
        if self._fields.keys() < {p.name for p in self._workflow.parameters}:
            return  # still building
        self.check()
        self.edited.emit()
