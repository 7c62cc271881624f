"""Small dialogs of the step editor: one locator, one expectation (a check after a step, or one
of the workflow's success check)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.models.target import ItemScope, Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import (
    ElementHidden,
    ElementVisible,
    Expectation,
    TextPresent,
    TitleMatches,
    UrlMatches,
)
from desktop_app.ui import theme
from desktop_app.ui.editor.template_edit import TemplateEdit
from desktop_app.ui.windows import fit_window

__all__ = [
    "EXPECTATION_KINDS",
    "STRATEGY_LABELS",
    "ExpectationDialog",
    "LocatorDialog",
]

STRATEGY_LABELS: dict[LocatorStrategy, str] = {
    LocatorStrategy.ROLE: "Role and name",
    LocatorStrategy.LABEL: "Label",
    LocatorStrategy.PLACEHOLDER: "Placeholder",
    LocatorStrategy.TEST_ID: "Test id",
    LocatorStrategy.TEXT: "Text",
    LocatorStrategy.CSS: "CSS selector",
    LocatorStrategy.XPATH: "XPath",
}

_STRATEGY_TIPS: dict[LocatorStrategy, str] = {
    LocatorStrategy.ROLE: "The ARIA role (button, link, textbox, …) and the accessible name: "
    "what a screen reader announces. The most robust choice.",
    LocatorStrategy.LABEL: "The text of the field's <label>.",
    LocatorStrategy.PLACEHOLDER: "The grey hint text inside an empty field.",
    LocatorStrategy.TEST_ID: "A data-testid (or data-test, data-qa) attribute developers add.",
    LocatorStrategy.TEXT: "Text shown inside the element.",
    LocatorStrategy.CSS: "A CSS selector such as #email or button.primary. Breaks when the "
    "page's structure changes.",
    LocatorStrategy.XPATH: "An XPath expression. The most brittle choice: use it last.",
}

_ROLES = (
    "button",
    "link",
    "textbox",
    "checkbox",
    "radio",
    "combobox",
    "option",
    "menuitem",
    "tab",
    "heading",
    "row",
    "cell",
    "dialog",
    "searchbox",
    "switch",
)

#: The expectation kinds the editor offers, in menu order, with their labels.
EXPECTATION_KINDS: dict[str, str] = {
    "url": "The address matches…",
    "title": "The page title contains…",
    "text": "The page shows text…",
    "visible": "An element is visible…",
    "hidden": "An element is hidden…",
}


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    field = ".".join(str(p) for p in error["loc"])
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{field}: {message}" if field else message


class LocatorDialog(QDialog):
    """Add or edit one locator. ``locator()`` is the result once accepted.

    Besides the strategy and its value, a locator may look only inside one repeated item (a
    table row, a list item, a card): the item's selector and the text it shows ("{full_name}").
    """

    def __init__(
        self, parent: QWidget | None, locator: Locator | None, names: Sequence[str]
    ) -> None:
        super().__init__(parent)
        self.setObjectName("locator-dialog")
        self.setWindowTitle("Edit locator" if locator is not None else "Add a locator")
        self.strategy = QComboBox()
        self.strategy.setObjectName("locator-strategy")
        self.strategy.setAccessibleName("Find by")
        for strategy, label in STRATEGY_LABELS.items():
            self.strategy.addItem(label, strategy)
            self.strategy.setItemData(
                self.strategy.count() - 1, _STRATEGY_TIPS[strategy], Qt.ItemDataRole.ToolTipRole
            )
        self.role = QComboBox()
        self.role.setObjectName("locator-role")
        self.role.setAccessibleName("Role")
        self.role.setEditable(True)
        self.role.addItems(_ROLES)
        self.value = TemplateEdit(placeholder_text="e.g. Email, #email, //input[@name='email']")
        self.value.setObjectName("locator-value")
        self.value.set_names(names)
        self.name = TemplateEdit(placeholder_text="the accessible name, e.g. Save")
        self.name.setObjectName("locator-name")
        self.name.set_names(names)
        self.exact = QCheckBox("Match the whole text exactly")
        self.exact.setChecked(True)
        self.nth = QSpinBox()
        self.nth.setObjectName("locator-nth")
        self.nth.setRange(-1, 999)
        self.nth.setValue(-1)
        self.nth.setSpecialValueText("the only match")
        self.nth.setToolTip(
            "When several elements match, which one (0 is the first, in page order). "
            "A locator that needs this ranks last."
        )
        item_tip = (
            "Look only inside the one repeated item (a table row, a list item, a card) that "
            "shows this text exactly, e.g. the row of {full_name}. Leave both empty to look in "
            "the whole page."
        )
        self.item_css = QLineEdit()
        self.item_css.setObjectName("locator-item-css")
        self.item_css.setPlaceholderText("optional: the repeated item, e.g. tr, li, div.card")
        self.item_css.setToolTip(item_tip)
        self.item_text = TemplateEdit(placeholder_text="the text the item shows, e.g. {full_name}")
        self.item_text.setObjectName("locator-item-text")
        self.item_text.setToolTip(item_tip)
        self.item_text.set_names(names)
        # The item that item is in (the line item a field's wrapper is in), when it has one.
        outer_tip = (
            "The item to look in first, when the item above does not tell itself apart on the "
            "page: the line item showing this text. Leave both empty to look in the whole page."
        )
        self.outer_css = QLineEdit()
        self.outer_css.setObjectName("locator-outer-css")
        self.outer_css.setToolTip(outer_tip)
        self.outer_text = TemplateEdit(placeholder_text="the text that item shows, e.g. Item 2")
        self.outer_text.setObjectName("locator-outer-text")
        self.outer_text.setToolTip(outer_tip)
        self.outer_text.set_names(names)
        self._has_outer = (
            locator is not None
            and locator.within is not None
            and (locator.within.outer is not None)
        )
        self.error = QLabel()
        self.error.setObjectName("locator-error")
        theme.set_tone(self.error, "error")
        self.error.setWordWrap(True)
        self.error.hide()

        form = QFormLayout()
        form.addRow("Find by", self.strategy)
        form.addRow("Role", self.role)
        form.addRow("Value", self.value)
        form.addRow("Name", self.name)
        form.addRow("", self.exact)
        form.addRow("Which match", self.nth)
        form.addRow("In the item", self.outer_css)
        form.addRow("that shows", self.outer_text)
        form.addRow("Inside the item", self.item_css)
        form.addRow("that shows", self.item_text)
        self._form = form
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(buttons)

        if locator is not None:
            self.strategy.setCurrentIndex(max(self.strategy.findData(locator.strategy), 0))
            if locator.strategy is LocatorStrategy.ROLE:
                self.role.setCurrentText(locator.value)
                self.name.set_text(locator.name or "")
            else:
                self.value.set_text(locator.value)
            self.exact.setChecked(locator.exact)
            self.nth.setValue(-1 if locator.nth is None else locator.nth)
            if locator.within is not None:
                self.item_css.setText(locator.within.css)
                self.item_text.set_text(locator.within.text)
                if locator.within.outer is not None:
                    self.outer_css.setText(locator.within.outer.css)
                    self.outer_text.set_text(locator.within.outer.text)
        self.strategy.currentIndexChanged.connect(self._on_strategy_current_index_changed)
        self._on_strategy_current_index_changed()
        fit_window(self, QSize(460, self.sizeHint().height()))

    def _on_strategy_current_index_changed(self, *_: object) -> None:
        role = self._strategy() is LocatorStrategy.ROLE
        self._form.setRowVisible(self.role, role)
        self._form.setRowVisible(self.name, role)
        self._form.setRowVisible(self.value, not role)
        scoped = self._strategy() is not LocatorStrategy.XPATH  # an XPath cannot look inside one
        self._form.setRowVisible(self.item_css, scoped)
        self._form.setRowVisible(self.item_text, scoped)
        self._form.setRowVisible(self.outer_css, scoped and self._has_outer)
        self._form.setRowVisible(self.outer_text, scoped and self._has_outer)
        self.strategy.setToolTip(_STRATEGY_TIPS[self._strategy()])

    def _strategy(self) -> LocatorStrategy:
        # Qt keeps item data of a str enum as a plain string: turn it back into the enum.
        return LocatorStrategy(self.strategy.currentData())

    def locator(self) -> Locator:
        """The locator as filled in.

        Raises:
            ValueError: a required part is empty (the message says which).
        """
        strategy = self._strategy()
        if strategy is LocatorStrategy.ROLE:
            value = self.role.currentText().strip()
            name: str | None = self.name.text().strip() or None
        else:
            value, name = self.value.text().strip(), None
        if not value:
            raise ValueError(
                "say what to look for" if strategy is not LocatorStrategy.ROLE else "give the role"
            )
        item_css, item_text = self.item_css.text().strip(), self.item_text.text().strip()
        within = None
        if strategy is not LocatorStrategy.XPATH and (item_css or item_text):
            if not (item_css and item_text):
                raise ValueError(
                    "to look inside an item, give both the item (e.g. tr) and the text it shows"
                )
            within = ItemScope(css=item_css, text=item_text, outer=self._outer())
        try:
            return Locator(
                strategy=strategy,
                value=value,
                name=name,
                exact=self.exact.isChecked(),
                nth=None if self.nth.value() < 0 else self.nth.value(),
                within=within,
            )
        except ValidationError as exc:
            raise ValueError(_first_error(exc)) from None

    def _outer(self) -> ItemScope | None:
        """The outer item as filled in (None when both are empty)."""
        css, text = self.outer_css.text().strip(), self.outer_text.text().strip()
        if not (css or text):
            return None
        if not (css and text):
            raise ValueError("to look in an outer item, give both the item and the text it shows")
        return ItemScope(css=css, text=text)

    def accept(self) -> None:
        try:
            self.locator()
        except ValueError as exc:
            self.error.setText(str(exc))
            self.error.show()
            return
        super().accept()


class ExpectationDialog(QDialog):
    """Add or edit one check of a kind the editor offers (after a step, or in the workflow's
    success check). ``expectation()`` once accepted."""

    def __init__(
        self,
        parent: QWidget | None,
        kind: str,
        current: Expectation | None,
        names: Sequence[str],
    ) -> None:
        super().__init__(parent)
        self.setObjectName("expectation-dialog")
        self.kind = kind
        self.setWindowTitle(EXPECTATION_KINDS.get(kind, "Check").rstrip("…"))
        self.text = TemplateEdit()
        self.text.setObjectName("expectation-text")
        self.text.set_names(names)
        self.match = QComboBox()
        self.match.setObjectName("expectation-match")
        self.match.setAccessibleName("Compare")
        for value, label in (
            ("glob", "Pattern (* matches anything)"),
            ("exact", "Exactly"),
            ("regex", "Regular expression"),
        ):
            self.match.addItem(label, value)
        self._target: Target | None = None
        self.locator_edit: LocatorDialog | None = None
        self.error = QLabel()
        self.error.setObjectName("expectation-error")
        theme.set_tone(self.error, "error")
        self.error.setWordWrap(True)
        self.error.hide()

        layout = QVBoxLayout(self)
        form = QFormLayout()
        if kind in ("url", "title", "text"):
            label = {"url": "Address", "title": "Title contains", "text": "Text"}[kind]
            form.addRow(label, self.text)
            if kind == "url":
                form.addRow("Compare", self.match)
                self.text.setPlaceholderText("e.g. https://crm.example.com/contacts/*")
        layout.addLayout(form)
        if kind in ("visible", "hidden"):
            existing = (
                current.target if isinstance(current, ElementVisible | ElementHidden) else None
            )
            self._target = existing
            first = existing.locators[0] if existing is not None and existing.locators else None
            self.locator_edit = LocatorDialog(None, first, names)
            self.locator_edit.setWindowFlags(Qt.WindowType.Widget)
            for box in self.locator_edit.findChildren(QDialogButtonBox):
                box.hide()
            layout.addWidget(self.locator_edit)
        layout.addWidget(self.error)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

        if isinstance(current, UrlMatches):
            self.text.set_text(current.pattern)
            self.match.setCurrentIndex(max(self.match.findData(current.match), 0))
        elif isinstance(current, TitleMatches | TextPresent):
            self.text.set_text(current.text)
        fit_window(self, QSize(480, self.sizeHint().height()))

    def expectation(self) -> Expectation:
        """The check as filled in.

        Raises:
            ValueError: something required is empty (the message says what).
        """
        text = self.text.text().strip()
        data: dict[str, Any]
        try:
            if self.kind == "url":
                if not text:
                    raise ValueError("give the address (use * for the parts that change)")
                return UrlMatches(pattern=text, match=self.match.currentData())
            if self.kind in ("title", "text"):
                if not text:
                    raise ValueError("give the text to look for")
                return TitleMatches(text=text) if self.kind == "title" else TextPresent(text=text)
            assert self.locator_edit is not None
            first = self.locator_edit.locator()
            rest = self._target.locators[1:] if self._target is not None else ()
            fingerprint = self._target.fingerprint if self._target is not None else None
            data = {"target": Target(locators=(first, *rest), fingerprint=fingerprint)}
            return ElementVisible(**data) if self.kind == "visible" else ElementHidden(**data)
        except ValidationError as exc:
            raise ValueError(_first_error(exc)) from None

    def accept(self) -> None:
        try:
            self.expectation()
        except ValueError as exc:
            self.error.setText(str(exc))
            self.error.show()
            return
        super().accept()
