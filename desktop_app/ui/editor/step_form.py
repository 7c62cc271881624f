"""The editor's detail pane: every field of the selected step, its locators and its checks.

The form never changes the workflow itself: each committed field becomes a signal the editor
turns into one undoable edit, and the form is then shown the new snapshot.

The form's parts: :mod:`.step_form_base` (its state and helpers), :mod:`.step_fields` (the
kind-specific fields) and :mod:`.step_locators` (the element's locators).
"""

from __future__ import annotations

import re

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QSizePolicy,
    QTableWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.describe import describe_expectation
from desktop_app.core.editing import (
    EditError,
    Issue,
    StepPath,
    Where,
    as_path,
    known_names,
    path_label,
    step_at,
)
from desktop_app.core.models.workflow import (
    Expectation,
    ImageVisible,
    Step,
    WindowTitleMatches,
    Workflow,
)
from desktop_app.core.step_kinds import kind_spec
from desktop_app.ui import theme
from desktop_app.ui.editor.block_fields import ConditionEditor, SourceEditor
from desktop_app.ui.editor.dialogs import EXPECTATION_KINDS, ExpectationDialog
from desktop_app.ui.editor.step_fields import StepFields
from desktop_app.ui.editor.step_locators import StepLocators
from desktop_app.ui.editor.steps_view import ThumbnailCache
from desktop_app.ui.editor.template_edit import TemplateEdit

__all__ = ["StepForm"]

#: The size the selected step's screenshot is shown at, at most.
SCREENSHOT_SIZE = QSize(480, 300)


def _top(field: str) -> str:
    return re.split(r"[.\[]", field, maxsplit=1)[0]


class StepForm(StepFields, StepLocators):
    """Edits one step. Signals carry the step's id, so a late commit still finds its step.

    Signals:
        step_edited(str, dict, str): fields of a step were changed (id, changes, what).
        locators_edited(str, object, str): a step's locators were changed (id, tuple, what).
        locator_test_requested(str, int): "Test" was pressed for a step's locator (id, row).
        condition_test_requested(str): "Test now" was pressed for a step's condition (id).
        source_test_requested(str): "Test now" was pressed for what a loop goes over (id).
    """

    step_edited = Signal(str, dict, str)
    locators_edited = Signal(str, object, str)
    locator_test_requested = Signal(str, int)
    condition_test_requested = Signal(str)
    source_test_requested = Signal(str)

    def __init__(self, thumbnails: ThumbnailCache, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("editor-step-form")
        self.setAccessibleName("Selected step")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self._thumbnails = thumbnails
        self._workflow: Workflow | None = None
        self._step: Step | None = None
        self._index: StepPath | None = None
        self._names: list[str] = []
        self._fields: dict[str, QWidget] = {}
        self._field_kind: str | None = None
        self._results: dict[tuple[str, str], tuple[str, str]] = {}
        self._flagged: list[QWidget] = []

        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(12, 10, 12, 12)
        layout.setSizeConstraint(QLayout.SizeConstraint.SetMinimumSize)  # scroll, never squash

        self.empty = QLabel(
            "<h3>No step selected</h3><p>Select a step on the left to edit it, or insert one "
            "with <b>Insert</b>.</p>"
        )
        self.empty.setObjectName("editor-form-empty")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        layout.addWidget(self.empty)

        self.content = QWidget()
        content = QVBoxLayout(self.content)
        content.setContentsMargins(0, 0, 0, 0)
        self.heading = QLabel()
        self.heading.setObjectName("editor-form-heading")
        self.heading.setTextFormat(Qt.TextFormat.RichText)
        content.addWidget(self.heading)
        self.problems = QLabel()
        self.problems.setObjectName("editor-form-problems")
        self.problems.setWordWrap(True)
        self.problems.setTextFormat(Qt.TextFormat.RichText)
        content.addWidget(self.problems)
        self.error = QLabel()
        self.error.setObjectName("editor-form-error")
        self.error.setWordWrap(True)
        theme.set_tone(self.error, "error", strong=True)
        self.error.hide()
        content.addWidget(self.error)

        # ── the step ──
        self.step_box = QGroupBox("Step")
        self.step_form = QFormLayout(self.step_box)
        self.step_form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        self.title = TemplateEdit(placeholder_text="What the step does, e.g. “Click Save”")
        self.title.setObjectName("step-title")
        self.title.setToolTip("Shown in guides, run views and the review; may mention {parameters}")
        self.title.editing_finished.connect(
            lambda: self._emit({"title": self.title.text().strip()}, "Edit the title")
        )
        self.step_form.addRow("Title", self.title)
        content.addWidget(self.step_box)

        # ── the test page (for the element, a condition, the items a loop goes over) ──
        self.test_page = QWidget()
        url_row = QHBoxLayout(self.test_page)
        url_row.setContentsMargins(0, 0, 0, 0)
        url_row.addWidget(QLabel("Test on page"))
        self.test_url = QLineEdit()
        self.test_url.setObjectName("editor-test-url")
        self.test_url.setAccessibleName("Test on page")
        self.test_url.setPlaceholderText("The address of a page where this element is")
        self.test_url.setToolTip(
            "“Test” opens this page once in a browser and highlights what a locator finds. "
            "You can navigate in that browser: each test runs on the page it shows."
        )
        url_row.addWidget(self.test_url, 1)
        content.addWidget(self.test_page)

        # ── the element ──
        self.target_box = QGroupBox("Element")
        target_layout = QVBoxLayout(self.target_box)
        self.locators = QTableWidget(0, 4)
        self.locators.setObjectName("locator-table")
        self.locators.setHorizontalHeaderLabels(["#", "Locator (best first)", "", "Result"])
        self.locators.verticalHeader().hide()
        self.locators.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.locators.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.locators.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.locators.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.ResizeToContents)
        self.locators.doubleClicked.connect(lambda _i: self._edit_locator())
        self.locators.itemSelectionChanged.connect(self._update_locator_buttons)
        target_layout.addWidget(self.locators)
        buttons = QHBoxLayout()
        self.locator_add = self._button("Add…", "locator-add", "Add a way to find the element")
        self.locator_edit = self._button("Edit…", "locator-edit", "Change the selected locator")
        self.locator_remove = self._button("Remove", "locator-remove", "Remove the locator")
        self.locator_up = self._button("▲", "locator-up", "Try this locator earlier")
        self.locator_down = self._button("▼", "locator-down", "Try this locator later")
        self.locator_add.clicked.connect(self._add_locator)
        self.locator_edit.clicked.connect(self._edit_locator)
        self.locator_remove.clicked.connect(self._remove_locator)
        self.locator_up.clicked.connect(lambda: self._move_locator(-1))
        self._shortcut(self.locators, "Delete", self._remove_locator)
        self.locator_down.clicked.connect(lambda: self._move_locator(1))
        for button in (
            self.locator_add,
            self.locator_edit,
            self.locator_remove,
            self.locator_up,
            self.locator_down,
        ):
            buttons.addWidget(button)
        buttons.addStretch(1)
        target_layout.addLayout(buttons)
        self.fingerprint = QLabel()
        self.fingerprint.setObjectName("editor-fingerprint")
        self.fingerprint.setWordWrap(True)
        theme.set_tone(self.fingerprint, "muted")
        target_layout.addWidget(self.fingerprint)
        content.addWidget(self.target_box)

        # ── checks ──
        self.checks_box = QGroupBox("Checks after this step")
        self.checks_box.setToolTip(
            "What should be true once the step is done; a replay that finds otherwise stops "
            "or repairs the step instead of going on blindly."
        )
        checks = QVBoxLayout(self.checks_box)
        self.expectations = QListWidget()
        self.expectations.setObjectName("expectation-list")
        self.expectations.setMaximumHeight(110)
        self.expectations.itemDoubleClicked.connect(lambda _item: self._edit_expectation())
        self.expectations.itemSelectionChanged.connect(self._update_expectation_buttons)
        checks.addWidget(self.expectations)
        row = QHBoxLayout()
        self.expectation_add = QToolButton()
        self.expectation_add.setObjectName("expectation-add")
        self.expectation_add.setText("Add")
        self.expectation_add.setToolTip("Add a check")
        self.expectation_add.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.expectation_add)
        for kind, label in EXPECTATION_KINDS.items():
            action = QAction(label, menu)
            action.setObjectName(f"expectation-add-{kind}")
            action.triggered.connect(lambda _=False, k=kind: self._open_expectation(k, None))
            menu.addAction(action)
        self.expectation_add.setMenu(menu)
        self.expectation_edit = self._button("Edit…", "expectation-edit", "Change the check")
        self.expectation_remove = self._button("Remove", "expectation-remove", "Remove the check")
        self.expectation_edit.clicked.connect(self._edit_expectation)
        self._shortcut(self.expectations, "Delete", self._remove_expectation)
        self.expectation_remove.clicked.connect(self._remove_expectation)
        row.addWidget(self.expectation_add)
        row.addWidget(self.expectation_edit)
        row.addWidget(self.expectation_remove)
        row.addStretch(1)
        checks.addLayout(row)
        content.addWidget(self.checks_box)

        # ── behaviour ──
        behaviour = QGroupBox("Behaviour")
        behaviour_form = QFormLayout(behaviour)
        self.timeout = QDoubleSpinBox()
        self.timeout.setObjectName("step-timeout")
        self.timeout.setRange(0.1, 3600)
        self.timeout.setDecimals(1)
        self.timeout.setSuffix(" s")
        self.timeout.setToolTip("How long to wait for the element or the check before giving up")
        self.timeout.editingFinished.connect(self._on_timeout_editing_finished)
        behaviour_form.addRow("Timeout", self.timeout)
        self.irreversible = QCheckBox("Irreversible (submit, pay, delete, send)")
        self.irreversible.setObjectName("step-irreversible")
        self.irreversible.setToolTip(
            "Replays ask before doing this step when they had to repair it, and it is marked "
            "in guides. Mark every step that cannot be undone."
        )
        self.irreversible.toggled.connect(
            lambda on: self._emit(
                {"irreversible": on}, "Mark irreversible" if on else "Unmark irreversible"
            )
        )
        behaviour_form.addRow("", self.irreversible)
        self.optional = QCheckBox("Optional (the run goes on if this step fails)")
        self.optional.setObjectName("step-optional")
        self.optional.toggled.connect(
            lambda on: self._emit({"optional": on}, "Mark optional" if on else "Unmark optional")
        )
        behaviour_form.addRow("", self.optional)
        content.addWidget(behaviour)

        # ── screenshot ──
        self.screenshot_box = QGroupBox("Screenshot when recorded")
        shot = QVBoxLayout(self.screenshot_box)
        self.screenshot = QLabel()
        self.screenshot.setObjectName("step-screenshot")
        self.screenshot.setAlignment(Qt.AlignmentFlag.AlignLeft)
        self.screenshot.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        shot.addWidget(self.screenshot)
        content.addWidget(self.screenshot_box)
        content.addStretch(1)

        layout.addWidget(self.content)
        self.setWidget(body)
        self.content.hide()
        thumbnails.thumbnail_ready.connect(self._on_thumbnails_thumbnail_ready)

    # ── showing ─────────────────────────────────────────────────────────────────────────────

    def show_step(
        self, workflow: Workflow | None, index: Where | None, issues: list[Issue]
    ) -> None:
        """Show the step at *index* (a top-level index or a path into blocks) of *workflow*
        (None: nothing selected) with its problems."""
        self._workflow = workflow
        step = _step_or_none(workflow, index)
        if workflow is None or index is None or step is None:
            self._step = None
            self._index = None
            self.content.hide()
            self.empty.show()
            return
        same = self._step is not None and self._step.id == step.id
        if not same:
            self.error.hide()
        self._step, self._index = step, as_path(index)
        self._names = known_names(workflow)
        self.empty.hide()
        self.content.show()
        self.heading.setText(
            f"<h3 style='margin:0'>Step {path_label(index)} · {kind_spec(step.kind).label}</h3>"
            f"<span style='color:{theme.colours().muted}'>id {step.id}</span>"
        )
        self.title.set_names(self._names)
        self.title.set_text(step.title)
        if not same or self._field_kind != step.kind:
            self._build_fields(step)
        self._fill_fields(step)
        self._fill_target(step)
        self.test_page.setVisible(  # a page to test on: not for a step in a desktop window
            kind_spec(step.kind).performer != "desktop"
            and (
                "target" in type(step).model_fields
                or any(f.input in ("condition", "source") for f in kind_spec(step.kind).form_fields)
            )
        )
        self._fill_expectations(step)
        self._blocked(self.timeout, lambda: self.timeout.setValue(step.timeout_s))
        self._blocked(self.irreversible, lambda: self.irreversible.setChecked(step.irreversible))
        self._blocked(self.optional, lambda: self.optional.setChecked(step.optional))
        self._fill_screenshot(step)
        self._show_problems(issues)

    def show_error(self, message: str) -> None:
        """Say why an edit was refused (until another step is shown)."""
        self.error.setText(f"Not changed: {message}")
        self.error.show()

    def clear_error(self) -> None:
        """Hide the last refusal."""
        self.error.hide()

    def set_test_result(self, step_id: str, row: int, text: str, tone: str) -> None:
        """Show what testing locator *row* of a step found; *tone* is good, warn, bad or busy."""
        step = self._step_by_id(step_id)
        target = step.target_or_none if step is not None else None
        if target is None or not 0 <= row < len(target.locators):
            return
        self._results[(step_id, target.locators[row].describe())] = (text, tone)
        if self._step is not None and self._step.id == step_id:
            self._show_result(row, text, tone)

    def result_text(self, row: int) -> str:
        """The result shown for locator *row* of the step shown ("" when not tested)."""
        item = self.locators.item(row, 3)
        return item.text() if item is not None else ""

    def focus_field(self, field: str) -> None:
        """Put the cursor in the widget of *field* (a problem's field) and scroll to it."""
        widget = self._widget_for(field)
        if widget is None:
            return
        self.ensureWidgetVisible(widget)
        widget.setFocus(Qt.FocusReason.OtherFocusReason)

    def condition_editor(self) -> ConditionEditor | None:
        """The editor of the shown step's condition, if it has one."""
        widget = self._fields.get("condition")
        return widget if isinstance(widget, ConditionEditor) else None

    def source_editor(self) -> SourceEditor | None:
        """The editor of what the shown loop goes over, if it is one."""
        widget = self._fields.get("over")
        return widget if isinstance(widget, SourceEditor) else None

    def field_widget(self, name: str) -> QWidget | None:
        """The widget editing a kind-specific field (``value``, ``url``, …), if shown."""
        return self._fields.get(name)

    # ── checks ──────────────────────────────────────────────────────────────────────────────

    def _fill_expectations(self, step: Step) -> None:
        row = self.expectations.currentRow()
        self.expectations.clear()
        for expectation in step.expectations:
            item = QListWidgetItem(describe_expectation(expectation))
            if isinstance(expectation, ImageVisible | WindowTitleMatches):
                item.setToolTip("Recorded on the desktop; it can be removed here, not edited")
            self.expectations.addItem(item)
        if step.expectations:
            self.expectations.setCurrentRow(min(max(row, 0), len(step.expectations) - 1))
        else:
            changed = "a window" if kind_spec(step.kind).performer == "desktop" else "a page"
            placeholder = QListWidgetItem(
                f"No checks. Add one so replays notice when {changed} changed."
            )
            placeholder.setFlags(Qt.ItemFlag.NoItemFlags)
            self.expectations.addItem(placeholder)
        self._update_expectation_buttons()

    def _update_expectation_buttons(self) -> None:
        step = self._step
        row = self.expectations.currentRow()
        has = step is not None and 0 <= row < len(step.expectations)
        editable = (
            has and step is not None and _kind_of(step.expectations[row]) in EXPECTATION_KINDS
        )
        self.expectation_edit.setEnabled(bool(editable))
        self.expectation_remove.setEnabled(has)

    def _edit_expectation(self) -> None:
        step = self._step
        row = self.expectations.currentRow()
        if step is None or not 0 <= row < len(step.expectations):
            return
        kind = _kind_of(step.expectations[row])
        if kind in EXPECTATION_KINDS:
            self._open_expectation(kind, row)

    def _remove_expectation(self) -> None:
        step = self._step
        row = self.expectations.currentRow()
        if step is None or not 0 <= row < len(step.expectations):
            return
        remaining = step.expectations[:row] + step.expectations[row + 1 :]
        self._emit({"expectations": remaining}, "Remove a check")

    def _open_expectation(self, kind: str, row: int | None) -> None:
        step = self._step
        if step is None:
            return
        current = step.expectations[row] if row is not None else None
        dialog = ExpectationDialog(self, kind, current, self._names)
        step_id = step.id

        def accepted() -> None:
            now = self._step_by_id(step_id)
            if now is None:
                return
            made = dialog.expectation()
            found = list(now.expectations)
            if row is None:
                found.append(made)
            elif row < len(found):
                found[row] = made
            self.step_edited.emit(
                step_id,
                {"expectations": tuple(found)},
                "Add a check" if row is None else "Edit a check",
            )

        dialog.accepted.connect(accepted)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()

    # ── behaviour, screenshot, problems ─────────────────────────────────────────────────────

    def _on_timeout_editing_finished(self) -> None:
        if self._step is not None and abs(self.timeout.value() - self._step.timeout_s) > 1e-9:
            self._emit({"timeout_s": self.timeout.value()}, "Change the timeout")

    def _fill_screenshot(self, step: Step) -> None:
        ref = step.screenshot
        if ref is None:
            self.screenshot_box.hide()
            return
        self.screenshot_box.show()
        if not self._thumbnails.loaded(ref):
            self.screenshot.setText("Loading…")
            self._thumbnails.request([ref])
            return
        pixmap = self._thumbnails.pixmap(ref, SCREENSHOT_SIZE)
        if pixmap is None:
            self.screenshot.setText("The screenshot is missing from the media store.")
        else:
            self.screenshot.setPixmap(pixmap)

    def _on_thumbnails_thumbnail_ready(self, ref: str) -> None:
        if self._step is not None and self._step.screenshot == ref:
            self._fill_screenshot(self._step)

    def _show_problems(self, issues: list[Issue]) -> None:
        for widget in self._flagged:
            theme.set_invalid(widget, False)
            widget.setToolTip(widget.property("plain_tip") or "")
        self._flagged = []
        if not issues:
            self.problems.hide()
            return
        lines = []
        for issue in issues:
            color = theme.colours().error if issue.is_error else theme.colours().warning
            mark = "✖" if issue.is_error else "⚠"
            where = f"<b>{issue.field}</b>: " if issue.field else ""
            lines.append(f"<span style='color:{color}'>{mark} {where}{_html(issue.message)}</span>")
            flagged = self._widget_for(issue.field)
            if flagged is not None and issue.is_error and flagged not in self._flagged:
                if flagged.property("plain_tip") is None:
                    flagged.setProperty("plain_tip", flagged.toolTip())
                theme.set_invalid(flagged, True)
                flagged.setToolTip(issue.message)
                self._flagged.append(flagged)
        self.problems.setText("<br>".join(lines))
        self.problems.show()

    def _widget_for(self, field: str) -> QWidget | None:
        top = _top(field)
        if top == "title":
            return self.title
        if top == "target":
            return self.locators
        if top == "expectations":
            return self.expectations
        if top in ("timeout_s",):
            return self.timeout
        return self._fields.get(top)


def _step_or_none(workflow: Workflow | None, where: Where | None) -> Step | None:
    if workflow is None or where is None:
        return None
    try:
        return step_at(workflow, where)
    except EditError:
        return None


def _kind_of(expectation: Expectation | None) -> str | None:
    return expectation.kind if expectation is not None else None


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
