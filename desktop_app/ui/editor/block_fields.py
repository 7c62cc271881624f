"""The step form's editors for what a block decides by and goes over: a condition (its kind and
fields, a locator for an element, a value compared with another) and what a loop goes over (the
lines of a list, the rows of a CSV file, the items of a list or table on the page), each with a
"Test now" button the editor answers from its live test page.

Neither editor changes the workflow: each committed change is one signal (``condition_edited``,
``source_edited``) the form turns into one undoable edit; the editor is then shown the new
snapshot.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

from pydantic import BaseModel, ValidationError
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.describe import describe_locator
from desktop_app.core.models.target import Target
from desktop_app.core.models.workflow import (
    COMPARISONS,
    Condition,
    CsvRows,
    ElementHidden,
    ElementPresent,
    ElementVisible,
    ItemSource,
    ListItems,
    PageItems,
    TextPresent,
    TitleMatches,
    UrlMatches,
    ValueCompare,
)
from desktop_app.ui import theme
from desktop_app.ui.editor.dialogs import LocatorDialog
from desktop_app.ui.editor.template_edit import TemplateEdit

__all__ = [
    "CONDITION_KINDS",
    "SOURCE_KINDS",
    "ConditionEditor",
    "SourceEditor",
    "parse_fields",
]

#: The conditions the editor offers, in its list's order.
CONDITION_KINDS: Final = {
    "text": "The page shows text",
    "title": "The page title contains",
    "url": "The address matches",
    "visible": "An element is visible",
    "hidden": "An element is hidden or gone",
    "present": "An element is on the page",
    "value": "A value compared with another",
}
#: What a loop can go over, in its list's order.
SOURCE_KINDS: Final = {
    "list": "The lines of a list",
    "csv": "The rows of a CSV file",
    "page": "The items of a list or table on the page",
}
_TONES: Final[dict[str, theme.Tone]] = {
    "good": "ok",
    "warn": "warning",
    "bad": "error",
    "busy": "busy",
}
_ELEMENT_KINDS: Final = ("visible", "hidden", "present")
_MATCHES: Final = (
    ("glob", "Pattern (* matches anything)"),
    ("exact", "Exactly"),
    ("regex", "Regular expression"),
)
_FIELD: Final = re.compile(r"^\s*([a-z_][a-z0-9_]*)\s*=\s*(.+?)\s*$")


def _made(model: type[BaseModel], **values: Any) -> Any:
    """*model* from *values*: checked, or as given when something is still missing (the
    editor's problems say what)."""
    try:
        return model(**values)
    except ValidationError:
        return model.model_construct(**values)


def parse_fields(text: str) -> dict[str, str]:
    """``amount = td.amount; due = td.due`` as ``{"amount": "td.amount", "due": "td.due"}``.

    Raises:
        ValueError: a part that is not ``name = what`` (the message says which).
    """
    fields: dict[str, str] = {}
    for part in text.split(";"):
        if not part.strip():
            continue
        found = _FIELD.match(part)
        if found is None:
            raise ValueError(
                f"{part.strip()!r}: write each field as name = what, e.g. amount = td.amount"
            )
        fields[found.group(1)] = found.group(2)
    return fields


def _fields_text(fields: dict[str, str]) -> str:
    return "; ".join(f"{name} = {what}" for name, what in fields.items())


class _Tested(QWidget):
    """What both editors share: a "Test now" button and the line saying what it found."""

    test_requested = Signal()

    def _test_row(self, name: str, tip: str) -> QHBoxLayout:
        row = QHBoxLayout()
        self.test_button = QToolButton()
        self.test_button.setObjectName(f"{name}-test")
        self.test_button.setText("Test now")
        self.test_button.setToolTip(tip)
        self.test_button.clicked.connect(self.test_requested)
        self.result = QLabel()
        self.result.setObjectName(f"{name}-test-result")
        self.result.setWordWrap(True)
        row.addWidget(self.test_button)
        row.addWidget(self.result, 1)
        return row

    def set_result(self, text: str, tone: str) -> None:
        """Show what the test found; *tone* is good, warn, bad or busy."""
        self.result.setText(text)
        theme.set_tone(self.result, _TONES.get(tone, "busy"))

    def result_text(self) -> str:
        """What the last test said ("" when not tested since the last change)."""
        return self.result.text()


class ConditionEditor(_Tested):
    """Edits a condition: its kind, then its text, address, element or compared values.

    Signals:
        condition_edited(object): the condition as now given.
        test_requested(): "Test now" was pressed.
    """

    condition_edited = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._condition: Condition | None = None
        self._names: list[str] = []
        self.kind = QComboBox()
        self.kind.setObjectName("condition-kind")
        self.kind.setAccessibleName("Condition")
        for kind, label in CONDITION_KINDS.items():
            self.kind.addItem(label, kind)
        self.kind.activated.connect(self._on_kind_activated)
        self.text = TemplateEdit(placeholder_text="the text, e.g. Saved")
        self.text.setObjectName("condition-text")
        self.match = QComboBox()
        self.match.setObjectName("condition-match")
        self.match.setAccessibleName("Match")
        for value, label in _MATCHES:
            self.match.addItem(label, value)
        self.element = QLabel()
        self.element.setObjectName("condition-element")
        self.element.setWordWrap(True)
        self.locate = QToolButton()
        self.locate.setObjectName("condition-locator")
        self.locate.setText("Locator…")
        self.locate.setToolTip("How to find the element (as a step's locator)")
        self.locate.clicked.connect(self._open_locator)
        self.value = TemplateEdit(placeholder_text="what to look at, e.g. {status} or {item}")
        self.value.setObjectName("condition-value")
        self.op = QComboBox()
        self.op.setObjectName("condition-op")
        self.op.setAccessibleName("Comparison")
        for op, words in COMPARISONS.items():
            self.op.addItem(words, op)
        self.to = TemplateEdit(placeholder_text="what to compare with, e.g. Unpaid")
        self.to.setObjectName("condition-to")

        self._form = QFormLayout()
        self._form.setContentsMargins(0, 0, 0, 0)
        self._form.addRow("When", self.kind)
        self._form.addRow("Text", self.text)
        self._form.addRow("Compare", self.match)
        element_row = QHBoxLayout()
        element_row.addWidget(self.element, 1)
        element_row.addWidget(self.locate)
        self._element_row = QWidget()
        self._element_row.setLayout(element_row)
        element_row.setContentsMargins(0, 0, 0, 0)
        self._form.addRow("Element", self._element_row)
        self._form.addRow("Value", self.value)
        self._form.addRow("", self.op)
        self._form.addRow("To", self.to)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self._form)
        layout.addLayout(
            self._test_row("condition", "Look at the test page now: does the condition hold there?")
        )
        for edit in (self.text, self.value, self.to):
            edit.editing_finished.connect(self._commit)
        self.match.activated.connect(lambda _i: self._commit())
        self.op.activated.connect(lambda _i: self._commit())

    def set_condition(self, condition: Condition, names: Sequence[str]) -> None:
        """Show *condition*; *names* are the placeholders its fields may use."""
        if condition != self._condition:
            self.set_result("", "busy")
        self._condition = condition
        self._names = list(names)
        kind = condition.kind
        self.kind.blockSignals(True)
        index = self.kind.findData(kind)
        if index < 0:  # a desktop condition: shown, not editable here
            self.kind.addItem(kind.replace("_", " "), kind)
            index = self.kind.count() - 1
        self.kind.setCurrentIndex(index)
        self.kind.blockSignals(False)
        for edit in (self.text, self.value, self.to):
            edit.set_names(self._names)
        if isinstance(condition, TextPresent | TitleMatches):
            self.text.set_text(condition.text)
        elif isinstance(condition, UrlMatches):
            self.text.set_text(condition.pattern)
            self.match.setCurrentIndex(max(self.match.findData(condition.match), 0))
        elif isinstance(condition, ElementVisible | ElementHidden | ElementPresent):
            locators = condition.target.locators
            self.element.setText(
                describe_locator(locators[0]) if locators else "No locator yet: add one"
            )
        elif isinstance(condition, ValueCompare):
            self.value.set_text(condition.value)
            self.op.setCurrentIndex(max(self.op.findData(condition.op), 0))
            self.to.set_text(condition.to)
        self._show_rows(kind)

    def _show_rows(self, kind: str) -> None:
        self._form.setRowVisible(self.text, kind in ("text", "title", "url"))
        label = self._form.labelForField(self.text)
        if isinstance(label, QLabel):
            label.setText({"url": "Address", "title": "Title contains"}.get(kind, "Text"))
        self._form.setRowVisible(self.match, kind == "url")
        self._form.setRowVisible(self._element_row, kind in _ELEMENT_KINDS)
        for widget in (self.value, self.op):
            self._form.setRowVisible(widget, kind == "value")
        op = self.op.currentData()
        self._form.setRowVisible(self.to, kind == "value" and op not in ("empty", "not_empty"))

    def condition(self) -> Condition | None:
        """The condition as the fields now give it (None for a kind not edited here)."""
        kind = self.kind.currentData()
        text = self.text.text().strip()
        current = self._condition
        if kind == "text":
            made: Condition = _made(TextPresent, text=text)
        elif kind == "title":
            made = _made(TitleMatches, text=text)
        elif kind == "url":
            made = _made(UrlMatches, pattern=text, match=self.match.currentData() or "glob")
        elif kind in _ELEMENT_KINDS:
            target = getattr(current, "target", None)
            if not isinstance(target, Target):
                target = Target.model_construct(locators=(), fingerprint=None)
            model = {"visible": ElementVisible, "hidden": ElementHidden}.get(kind, ElementPresent)
            made = model(target=target)
        elif kind == "value":
            made = _made(
                ValueCompare,
                value=self.value.text().strip(),
                op=self.op.currentData() or "equals",
                to=self.to.text().strip(),
            )
        else:
            return None
        return made

    def _commit(self) -> None:
        made = self.condition()
        self._show_rows(str(self.kind.currentData()))
        if made is not None and made != self._condition:
            self.condition_edited.emit(made)

    def _on_kind_activated(self, _index: int) -> None:
        kind = self.kind.currentData()
        current = self._condition
        if current is not None and kind == current.kind:
            return
        if kind in ("text", "title", "url") and not isinstance(
            current, TextPresent | TitleMatches | UrlMatches
        ):
            self.text.set_text("")
        self._show_rows(str(kind))
        self._commit()

    def _open_locator(self) -> None:
        target = getattr(self._condition, "target", None)
        first = target.locators[0] if isinstance(target, Target) and target.locators else None
        dialog = LocatorDialog(self, first, self._names)

        def accepted() -> None:
            made = dialog.locator()
            rest = target.locators[1:] if isinstance(target, Target) else ()
            fingerprint = target.fingerprint if isinstance(target, Target) else None
            new_target = Target(locators=(made, *rest), fingerprint=fingerprint)
            kind = self.kind.currentData()
            model = {"visible": ElementVisible, "hidden": ElementHidden}.get(kind, ElementPresent)
            self.condition_edited.emit(model(target=new_target))

        dialog.accepted.connect(accepted)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()


class SourceEditor(_Tested):
    """Edits what a loop goes over: a list (one item per line), a CSV file's rows, or the
    items of a list or table on the page (testable live: "finds 7 items: …").

    Signals:
        source_edited(object): what the loop goes over, as now given.
        test_requested(): "Test now" was pressed.
    """

    source_edited = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._source: ItemSource | None = None
        self.kind = QComboBox()
        self.kind.setObjectName("source-kind")
        self.kind.setAccessibleName("Items from")
        for kind, label in SOURCE_KINDS.items():
            self.kind.addItem(label, kind)
        self.kind.activated.connect(lambda _i: self._commit())
        self.value = TemplateEdit(placeholder_text="a list parameter, e.g. {invoices}")
        self.value.setObjectName("source-value")
        self.path = TemplateEdit(placeholder_text="the file, e.g. {orders_file}")
        self.path.setObjectName("source-path")
        self.column = QLineEdit()
        self.column.setObjectName("source-column")
        self.column.setPlaceholderText("the column holding the item, e.g. Order")
        self.css = QLineEdit()
        self.css.setObjectName("source-css")
        self.css.setPlaceholderText("each item, e.g. tr, li, div.card")
        self.contains = TemplateEdit(placeholder_text="optional: only items showing, e.g. Unpaid")
        self.contains.setObjectName("source-contains")
        self.key = QLineEdit()
        self.key.setObjectName("source-key")
        self.key.setPlaceholderText("optional: the part naming the item, e.g. td.number")
        self.fields = QLineEdit()
        self.fields.setObjectName("source-fields")
        self.fields.setPlaceholderText("optional: amount = td.amount; due = td.due")
        self.fields.setToolTip(
            "More variables each item sets: name = a CSS selector inside the item (on the "
            "page) or a column header (in a CSV file), separated by ;"
        )
        self.error = QLabel()
        self.error.setObjectName("source-error")
        theme.set_tone(self.error, "error")
        self.error.hide()
        self._form = QFormLayout()
        self._form.setContentsMargins(0, 0, 0, 0)
        self._form.addRow("Goes over", self.kind)
        self._form.addRow("List", self.value)
        self._form.addRow("File", self.path)
        self._form.addRow("Column", self.column)
        self._form.addRow("Items", self.css)
        self._form.addRow("Showing", self.contains)
        self._form.addRow("Named by", self.key)
        self._form.addRow("Fields", self.fields)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self._form)
        layout.addWidget(self.error)
        layout.addLayout(self._test_row("source", "Read the items on the test page now"))
        for edit in (self.value, self.path, self.contains):
            edit.editing_finished.connect(self._commit)
        for line in (self.column, self.css, self.key, self.fields):
            line.editingFinished.connect(self._commit)

    def set_source(self, source: ItemSource, names: Sequence[str]) -> None:
        """Show *source*; *names* are the placeholders its fields may use."""
        if source != self._source:
            self.set_result("", "busy")
            self.error.hide()
        self._source = source
        self.kind.setCurrentIndex(max(self.kind.findData(source.kind), 0))
        for edit in (self.value, self.path, self.contains):
            edit.set_names(list(names))
        if isinstance(source, ListItems):
            self.value.set_text(source.value)
        elif isinstance(source, CsvRows):
            self.path.set_text(source.path)
            self.column.setText(source.column)
            self.fields.setText(_fields_text(dict(source.fields)))
        else:
            self.css.setText(source.css)
            self.contains.set_text(source.contains or "")
            self.key.setText(source.key or "")
            self.fields.setText(_fields_text(dict(source.fields)))
        self._show_rows(source.kind)

    def _show_rows(self, kind: str) -> None:
        self._form.setRowVisible(self.value, kind == "list")
        for widget in (self.path, self.column):
            self._form.setRowVisible(widget, kind == "csv")
        for widget in (self.css, self.contains, self.key):
            self._form.setRowVisible(widget, kind == "page")
        self._form.setRowVisible(self.fields, kind in ("csv", "page"))
        self.test_button.setVisible(kind == "page")
        self.result.setVisible(kind == "page")

    def source(self) -> ItemSource:
        """What the loop goes over, as the fields now give it.

        Raises:
            ValueError: the fields are not written as ``name = what`` (the message says how).
        """
        kind = self.kind.currentData()
        if kind == "list":
            made: ItemSource = _made(ListItems, value=self.value.text().strip())
        elif kind == "csv":
            made = _made(
                CsvRows,
                path=self.path.text().strip(),
                column=self.column.text().strip(),
                fields=parse_fields(self.fields.text()),
            )
        else:
            made = _made(
                PageItems,
                css=self.css.text().strip(),
                contains=self.contains.text().strip() or None,
                key=self.key.text().strip() or None,
                fields=parse_fields(self.fields.text()),
            )
        return made

    def _commit(self) -> None:
        self._show_rows(str(self.kind.currentData()))
        try:
            made = self.source()
        except ValueError as exc:
            self.error.setText(str(exc))
            self.error.show()
            return
        self.error.hide()
        if made != self._source:
            self.source_edited.emit(made)
