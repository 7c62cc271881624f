"""The step editor's edits: each change to the draft is one undoable command on the undo stack."""

from __future__ import annotations

from typing import cast

from desktop_app.core import editing
from desktop_app.core.editing import EditError
from desktop_app.core.models.target import Locator
from desktop_app.core.models.workflow import (
    Expectation,
    Parameter,
    ParameterType,
    StepKind,
    Workflow,
)
from desktop_app.core.step_kinds import kind_spec
from desktop_app.ui.editor.commands import SnapshotCommand
from desktop_app.ui.editor.window_base import EditorWindowBase
from desktop_app.ui.tasks import describe_error

__all__ = ["DraftEdits"]


class DraftEdits(EditorWindowBase):
    """The edits of the editor window: steps, the success check, parameters and the workflow.

    Each goes through :mod:`desktop_app.core.editing` and is pushed as one
    :class:`SnapshotCommand`.
    """

    # ── edits ───────────────────────────────────────────────────────────────────────────────

    def push(self, text: str, after: Workflow, *, select: str | None = None) -> bool:
        """Make *after* the draft as one undoable edit called *text*; False if nothing changed."""
        before = self.workflow
        if before is None or after == before:
            return False
        self.form.clear_error()
        command = SnapshotCommand(
            self._apply,
            before,
            after,
            text,
            select_before=self.current_step_id(),
            select_after=select or self.current_step_id(),
        )
        self.undo_stack.push(command)
        return True

    def insert_step(self, kind: StepKind, row: int | None = None) -> None:
        """Insert a new step of *kind* after the selected one (or at *row*), and select it."""
        if self.workflow is None:
            return
        if row is None:
            current = self.current_row()
            row = current + 1 if current is not None else len(self.workflow.steps)
        step = editing.blank_step(kind)
        after = editing.insert_step(self.workflow, row, step)
        inserted = after.steps[row].id
        if self.push(f"Insert step {row + 1} ({kind_spec(kind).label})", after, select=inserted):
            self.form.title.setFocus()
            self.form.title.selectAll()

    def delete_selected(self) -> None:
        """Delete the selected step."""
        row = self.current_row()
        if self.workflow is None or row is None:
            return
        after = editing.delete_step(self.workflow, row)
        select = after.steps[min(row, len(after.steps) - 1)].id if after.steps else None
        self.push(f"Delete step {row + 1}", after, select=select)

    def duplicate_selected(self) -> None:
        """Put a copy of the selected step after it, and select the copy."""
        row = self.current_row()
        if self.workflow is None or row is None:
            return
        after = editing.duplicate_step(self.workflow, row)
        self.push(f"Duplicate step {row + 1}", after, select=after.steps[row + 1].id)

    def move_selected(self, delta: int) -> None:
        """Move the selected step up (-1) or down (+1)."""
        row = self.current_row()
        if row is not None:
            self.move_step(row, row + delta)

    def move_step(self, source: int, destination: int) -> None:
        """Move step *source* so that it ends up at *destination* (one undoable edit)."""
        workflow = self.workflow
        if workflow is None or not 0 <= destination < len(workflow.steps) or source == destination:
            return
        moved = workflow.steps[source].id
        after = editing.move_step(workflow, source, destination)
        self.push(f"Move step {source + 1} to {destination + 1}", after, select=moved)

    def edit_step(self, row: int, what: str = "Edit", **changes: object) -> bool:
        """Change fields of step *row* as one edit; False (and the reason shown) if refused."""
        if self.workflow is None:
            return False
        try:
            after = editing.update_step(self.workflow, row, **changes)
        except EditError as exc:
            self.form.show_error(str(exc))
            self._show_form()
            return False
        return self.push(f"{what} (step {row + 1})", after, select=self.workflow.steps[row].id)

    def set_locators(
        self, row: int, locators: tuple[Locator, ...], what: str = "Edit locators"
    ) -> bool:
        """Give step *row* these locators, best first, as one edit."""
        if self.workflow is None:
            return False
        try:
            after = editing.set_locators(self.workflow, row, locators)
        except EditError as exc:
            self.form.show_error(str(exc))
            return False
        return self.push(f"{what} (step {row + 1})", after, select=self.workflow.steps[row].id)

    def _on_steps_model_move_requested(self, source: int, destination: int) -> None:
        self.move_step(source, destination)

    def _on_form_step_edited(self, step_id: str, changes: dict[str, object], what: str) -> None:
        row = self.steps_model.row_of(step_id)
        if row is not None:
            self.edit_step(row, what, **changes)

    def _on_form_locators_edited(self, step_id: str, locators: object, what: str) -> None:
        row = self.steps_model.row_of(step_id)
        if row is not None and isinstance(locators, tuple):
            self.set_locators(row, locators, what)

    # ── the success check ("done when") ─────────────────────────────────────────────────────

    def add_success_check(self, check: Expectation) -> bool:
        """Add *check* to the success check, as one edit."""
        if self.workflow is None:
            return False
        after = editing.add_success_check(self.workflow, check)
        done = self.push("Add a success check", after)
        self.success.select(len(after.success) - 1)
        return done

    def replace_success_check(self, index: int, check: Expectation) -> bool:
        """Make check *index* of the success check *check*, as one edit."""
        if self.workflow is None:
            return False
        try:
            after = editing.replace_success_check(self.workflow, index, check)
        except EditError as exc:
            self._host.show_status(str(exc))
            return False
        done = self.push(f"Edit success check {index + 1}", after)
        self.success.select(index)
        return done

    def remove_success_check(self, index: int) -> bool:
        """Remove check *index* of the success check, as one edit."""
        if self.workflow is None:
            return False
        try:
            after = editing.remove_success_check(self.workflow, index)
        except EditError as exc:
            self._host.show_status(str(exc))
            return False
        return self.push(f"Remove success check {index + 1}", after)

    def _on_success_check_added(self, check: object) -> None:
        self.add_success_check(cast(Expectation, check))

    def _on_success_check_replaced(self, index: int, check: object) -> None:
        self.replace_success_check(index, cast(Expectation, check))

    def _on_success_check_removed(self, index: int) -> None:
        self.remove_success_check(index)

    # ── parameters and the workflow ─────────────────────────────────────────────────────────

    def add_parameter(self, name: str | None = None) -> str | None:
        """Add a text parameter (a fresh name unless *name*) and select it; its name."""
        if self.workflow is None:
            return None
        chosen = name or editing.new_parameter_name(self.workflow)
        try:
            after = editing.add_parameter(self.workflow, Parameter(name=chosen))
        except (EditError, ValueError) as exc:
            self.parameters.show_error(describe_error(exc))
            return None
        self.push(f"Add parameter {{{chosen}}}", after)
        self.parameters.select(chosen)
        self.parameters.name.setFocus()
        self.parameters.name.selectAll()
        return chosen

    def rename_parameter(self, old: str, new: str) -> bool:
        """Rename a parameter and every placeholder using it, as one edit."""
        if self.workflow is None:
            return False
        try:
            after = editing.rename_parameter(self.workflow, old, new)
        except EditError as exc:
            self.parameters.show_error(str(exc))
            return False
        uses = editing.parameter_uses(self.workflow, old)
        done = self.push(f"Rename {{{old}}} to {{{new}}} ({uses} places)", after)
        self.parameters.select(new)
        return done

    def retype_parameter(
        self, name: str, type_: ParameterType, choices: tuple[str, ...] | None = None
    ) -> bool:
        """Give a parameter another type (its default goes if the type cannot take it)."""
        if self.workflow is None:
            return False
        try:
            after = editing.retype_parameter(self.workflow, name, type_, choices=choices)
        except EditError as exc:
            self.parameters.show_error(str(exc))
            return False
        done = self.push(f"Make {{{name}}} {type_.value}", after)
        self.parameters.select(name)
        return done

    def update_parameter(self, name: str, **changes: object) -> bool:
        """Change a parameter's description, default (``default_text`` as typed) or required."""
        workflow = self.workflow
        param = workflow.parameter(name) if workflow is not None else None
        if workflow is None or param is None:
            return False
        try:
            if "default_text" in changes:
                text = str(changes.pop("default_text"))
                changes["default"] = editing.parse_default(param.type, text, param.choices)
            after = editing.update_parameter(workflow, name, **changes)
        except EditError as exc:
            self.parameters.show_error(str(exc))
            return False
        done = self.push(f"Edit {{{name}}}", after)
        self.parameters.select(name)
        return done

    def delete_parameter(self, name: str) -> bool:
        """Remove a parameter (steps still using it show a problem)."""
        if self.workflow is None:
            return False
        try:
            after = editing.delete_parameter(self.workflow, name)
        except EditError as exc:
            self.parameters.show_error(str(exc))
            return False
        return self.push(f"Remove parameter {{{name}}}", after)

    def _on_parameters_add_requested(self) -> None:
        self.add_parameter()

    def _on_parameters_delete_requested(self, name: str) -> None:
        self.delete_parameter(name)

    def _on_parameters_rename_requested(self, old: str, new: str) -> None:
        self.rename_parameter(old, new)

    def _on_parameters_retype_requested(self, name: str, type_: object, choices: object) -> None:
        if isinstance(type_, ParameterType):
            self.retype_parameter(name, type_, choices if isinstance(choices, tuple) else None)

    def _on_parameters_update_requested(self, name: str, changes: dict[str, object]) -> None:
        self.update_parameter(name, **changes)

    def _on_workflow_panel_workflow_edited(self, changes: dict[str, object], what: str) -> None:
        if self.workflow is None:
            return
        try:
            after = editing.update_workflow(self.workflow, **changes)
        except EditError as exc:
            self._host.show_status(str(exc))
            self.workflow_panel.show_workflow(self.workflow)
            return
        self.push(what, after)
