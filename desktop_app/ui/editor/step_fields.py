"""The step form's kind-specific fields: a widget for each field the kind's spec puts on the form
(:attr:`desktop_app.core.step_kinds.KindSpec.form_fields`)."""

from __future__ import annotations

import functools

from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from desktop_app.core.models.workflow import ParameterType, Step
from desktop_app.core.step_kinds import KindField, kind_spec
from desktop_app.ui.editor.block_fields import ConditionEditor, SourceEditor
from desktop_app.ui.editor.step_form_base import StepFormBase
from desktop_app.ui.editor.template_edit import TemplateEdit

__all__ = ["StepFields"]


class StepFields(StepFormBase):
    """The fields of the step form that depend on the step's kind (its spec's form fields): built
    when the kind changes, filled from each snapshot, each committing one edit."""

    step_form: QFormLayout
    _field_kind: str | None

    # ── kind-specific fields ────────────────────────────────────────────────────────────────

    def _build_fields(self, step: Step) -> None:
        going = set(self._fields.values())
        self._flagged = [w for w in self._flagged if w not in going]
        while self.step_form.rowCount() > 1:
            self.step_form.removeRow(1)
        self._fields = {}
        self._field_kind = step.kind
        for spec in kind_spec(step.kind).form_fields:
            widget = self._make_field(spec)
            widget.setObjectName(f"step-{spec.name.replace('_', '-')}")
            widget.setAccessibleName(spec.label.replace("&", "").rstrip(":"))
            if spec.tip:
                widget.setToolTip(spec.tip)
            self._fields[spec.name] = widget
            self.step_form.addRow(spec.label, widget)

    def _make_field(self, spec: KindField) -> QWidget:
        name = spec.name
        what = f"Edit the {spec.noun or spec.label.lower()}"
        if spec.input == "template":
            edit = TemplateEdit(placeholder_text=spec.tip)
            edit.editing_finished.connect(lambda: self._emit({name: edit.text()}, what))
            return edit
        if spec.input in ("text", "optional_text", "keys"):
            line = QLineEdit()
            if spec.tip:
                line.setPlaceholderText(spec.tip)

            def commit() -> None:
                text = line.text().strip()
                value: object = text
                if spec.input == "optional_text":
                    value = text or None
                elif spec.input == "keys":
                    value = tuple(k.strip() for k in text.split("+") if k.strip())
                self._emit({name: value}, what)

            line.editingFinished.connect(commit)
            return line
        if spec.input in ("int", "float"):
            spin: QSpinBox | QDoubleSpinBox
            if spec.input == "int":
                spin = QSpinBox()
                spin.setRange(int(spec.low), int(spec.high))
            else:
                spin = QDoubleSpinBox()
                spin.setRange(spec.low, spec.high)
                spin.setDecimals(0)
            spin.setSuffix(spec.suffix)
            spin.editingFinished.connect(lambda: self._emit({name: spin.value()}, what))
            return spin
        if spec.input == "choice":
            combo = QComboBox()
            combo.addItems(spec.options)
            combo.activated.connect(lambda _i: self._emit({name: combo.currentText()}, what))
            return combo
        if spec.input == "checked":
            checked = QComboBox()
            checked.setEditable(True)
            checked.activated.connect(lambda _i: self._commit_checked(checked))
            line_edit = checked.lineEdit()
            if line_edit is not None:
                line_edit.editingFinished.connect(lambda: self._commit_checked(checked))
            return checked
        if spec.input == "condition":
            return self._condition_field(name)
        if spec.input == "source":
            return self._source_field(name)
        if spec.input == "arguments":
            box = QWidget()
            QFormLayout(box).setContentsMargins(0, 0, 0, 0)
            return box
        return QLabel()

    def _condition_field(self, name: str) -> ConditionEditor:
        editor = ConditionEditor()
        editor.condition_edited.connect(
            lambda condition: self._emit({name: condition}, "Change the condition")
        )
        editor.test_requested.connect(self._on_condition_test_requested)
        return editor

    def _source_field(self, name: str) -> SourceEditor:
        editor = SourceEditor()
        editor.source_edited.connect(
            lambda source: self._emit({name: source}, "Change what the loop goes over")
        )
        editor.test_requested.connect(self._on_source_test_requested)
        return editor

    def _on_condition_test_requested(self) -> None:
        if self._step is not None:
            self.condition_test_requested.emit(self._step.id)

    def _on_source_test_requested(self) -> None:
        if self._step is not None:
            self.source_test_requested.emit(self._step.id)

    def _fill_fields(self, step: Step) -> None:
        for spec in kind_spec(step.kind).form_fields:
            widget = self._fields.get(spec.name)
            value = getattr(step, spec.name, None)
            if isinstance(widget, TemplateEdit):
                widget.set_names(self._names)
                widget.set_text(str(value or ""))
            elif isinstance(widget, QLineEdit):
                text = "+".join(value or ()) if spec.input == "keys" else str(value or "")
                if widget.text() != text:
                    widget.setText(text)
            elif isinstance(widget, QSpinBox | QDoubleSpinBox):
                self._blocked(widget, functools.partial(widget.setValue, value or 0))
            elif isinstance(widget, QComboBox) and spec.input == "checked":
                self._fill_checked(widget, value)
            elif isinstance(widget, QComboBox):
                self._blocked(widget, functools.partial(widget.setCurrentText, str(value)))
            elif isinstance(widget, ConditionEditor) and value is not None:
                widget.set_condition(value, self._names)
            elif isinstance(widget, SourceEditor) and value is not None:
                widget.set_source(value, self._names)
            elif spec.input == "arguments" and widget is not None:
                self._fill_arguments(widget, dict(value or {}))
            elif isinstance(widget, QLabel):
                widget.setText(str(value or ""))

    def _fill_checked(self, combo: QComboBox, value: object) -> None:
        workflow = self._workflow
        flags = [
            "{" + p.name + "}"
            for p in (workflow.parameters if workflow is not None else ())
            if p.type is ParameterType.BOOL
        ]
        current = "true" if value is True else "false" if value is False else str(value)
        combo.blockSignals(True)
        combo.clear()
        combo.addItems(["true", "false", *flags])
        combo.setCurrentText(current)
        combo.blockSignals(False)

    def _commit_checked(self, combo: QComboBox) -> None:
        text = combo.currentText().strip()
        value: object = {"true": True, "false": False}.get(text.lower(), text)
        self._emit({"checked": value}, "Change what the box is set to")

    def _fill_arguments(self, box: QWidget, arguments: dict[str, str]) -> None:
        form = box.layout()
        assert isinstance(form, QFormLayout)
        existing = {
            w.property("argument"): w
            for w in box.findChildren(TemplateEdit)
            if w.property("argument")
        }
        if set(existing) != set(arguments):
            while form.rowCount():
                form.removeRow(0)
            existing = {}
            for key in sorted(arguments):
                edit = TemplateEdit()
                edit.setProperty("argument", key)
                edit.setObjectName(f"step-argument-{key}")
                edit.editing_finished.connect(
                    lambda e=edit, k=key: self._emit_argument(k, e.text())
                )
                existing[key] = edit
                form.addRow(key, edit)
            if not arguments:
                form.addRow(QLabel("The called workflow takes no values."))
        for key, edit in existing.items():
            edit.set_names(self._names)
            edit.set_text(arguments.get(key, ""))

    def _emit_argument(self, key: str, text: str) -> None:
        step = self._step
        arguments = dict(getattr(step, "arguments", {}) or {})
        arguments[key] = text
        self._emit({"arguments": arguments}, f"Edit the argument {key}")
