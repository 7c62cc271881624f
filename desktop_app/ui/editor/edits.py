"""The step editor's edits: each change to the draft is one undoable command on the undo stack."""

from __future__ import annotations

from typing import cast

from desktop_app.core import editing
from desktop_app.core.editing import EditError, StepPath, Where
from desktop_app.core.models.target import Locator
from desktop_app.core.models.workflow import (
    Expectation,
    Parameter,
    ParameterType,
    StepKind,
    Workflow,
    branches,
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

    def insert_step(self, kind: StepKind, row: Where | None = None) -> None:
        """Insert a new step of *kind* after the selected one (first in the list of a selected
        "Otherwise" or empty list; or at *row*, an index or a slot path), and select it."""
        if self.workflow is None:
            return
        slot = editing.as_path(row) if row is not None else self._slot_after_selection()
        self._insert(kind, slot, f"Insert step {editing.path_label(slot)}")

    def insert_inside(self, kind: StepKind) -> None:
        """Add a new step of *kind* at the end of the selected block's own steps (or of the
        selected "Otherwise" or empty list), and select it."""
        target = self.inside_target()
        if self.workflow is None or target is None:
            return
        block = editing.step_at(self.workflow, target[:-1])
        slot = (*target, len(editing.list_at(self.workflow, target)))
        where = "under Otherwise in" if target[-1] == "otherwise" else "inside"
        self._insert(kind, slot, f"Add a step {where} '{block.title}'")

    def inside_target(self) -> StepPath | None:
        """The list "Add step inside" adds to: the selected block's own steps, or the selected
        "Otherwise" or empty list; None when neither is selected."""
        selected = self._selected()
        if selected is None:
            return None
        if selected.kind != "step":
            return selected.list_path
        return (*selected.path, "steps") if branches(selected.step) else None

    def _slot_after_selection(self) -> StepPath:
        selected = self._selected()
        workflow = self.workflow
        if selected is None:
            return (len(workflow.steps) if workflow is not None else 0,)
        if selected.kind != "step":
            return (*selected.list_path, 0)
        last = selected.path[-1]
        assert isinstance(last, int)
        return (*selected.path[:-1], last + 1)

    def _insert(self, kind: StepKind, slot: StepPath, what: str) -> None:
        if self.workflow is None:
            return
        try:
            after = editing.insert_step(self.workflow, slot, editing.blank_step(kind))
        except EditError as exc:
            self._host.show_status(str(exc))
            return
        inserted = editing.step_at(after, slot).id
        if self.push(f"{what} ({kind_spec(kind).label})", after, select=inserted):
            self.form.title.setFocus()
            self.form.title.selectAll()

    def delete_selected(self) -> None:
        """Delete the selected step (a block with the steps inside it)."""
        path = self.current_path()
        if self.workflow is None or path is None:
            return
        after = editing.delete_step(self.workflow, path)
        self.push(f"Delete step {editing.path_label(path)}", after, select=_near(after, path))

    def duplicate_selected(self) -> None:
        """Put a copy of the selected step after it, and select the copy."""
        path = self.current_path()
        if self.workflow is None or path is None:
            return
        after = editing.duplicate_step(self.workflow, path)
        copy = editing.step_at(after, _next(path)).id
        self.push(f"Duplicate step {editing.path_label(path)}", after, select=copy)

    def move_selected(self, delta: int) -> None:
        """Move the selected step up (-1) or down (+1) in its list."""
        path = self.current_path()
        if path is None or self.workflow is None:
            return
        last = path[-1]
        assert isinstance(last, int)
        count = len(editing.list_at(self.workflow, path[:-1]))
        if 0 <= last + delta < count:
            self.move_step(path, (*path[:-1], last + delta))

    def move_step(self, source: Where, destination: Where) -> None:
        """Move the step at *source* so that it ends up at *destination* (one undoable edit);
        paths move it into or out of a block."""
        workflow = self.workflow
        src, dst = editing.as_path(source), editing.as_path(destination)
        if workflow is None or src == dst:
            return
        try:
            moved = editing.step_at(workflow, src).id
            after = editing.move_step(workflow, src, dst)
        except EditError as exc:
            self._host.show_status(str(exc))
            return
        self.push(_move_text(workflow, after, src, dst), after, select=moved)

    def drop_step(self, source: Where, slot: Where) -> None:
        """Put the step at *source* at *slot*, a place in the workflow as shown (where its card
        was dropped), as one undoable edit."""
        try:
            destination = editing.slot_after_removal(source, slot)
        except EditError as exc:
            self._host.show_status(str(exc))
            return
        self.move_step(source, destination)

    def edit_step(self, row: Where, what: str = "Edit", **changes: object) -> bool:
        """Change fields of the step at *row* as one edit; False (and the reason shown) if
        refused."""
        if self.workflow is None:
            return False
        try:
            after = editing.update_step(self.workflow, row, **changes)
        except EditError as exc:
            self.form.show_error(str(exc))
            self._show_form()
            return False
        step_id = editing.step_at(self.workflow, row).id
        label = editing.path_label(row)
        return self.push(f"{what} (step {label})", after, select=step_id)

    def set_locators(
        self, row: Where, locators: tuple[Locator, ...], what: str = "Edit locators"
    ) -> bool:
        """Give the step at *row* these locators, best first, as one edit."""
        if self.workflow is None:
            return False
        try:
            after = editing.set_locators(self.workflow, row, locators)
        except EditError as exc:
            self.form.show_error(str(exc))
            return False
        step_id = editing.step_at(self.workflow, row).id
        label = editing.path_label(row)
        return self.push(f"{what} (step {label})", after, select=step_id)

    def _on_steps_model_move_requested(self, source: object, slot: object) -> None:
        if isinstance(source, tuple) and isinstance(slot, tuple):
            self.drop_step(source, slot)

    def _on_form_step_edited(self, step_id: str, changes: dict[str, object], what: str) -> None:
        path = self.steps_model.path_of(step_id)
        if path is not None:
            self.edit_step(path, what, **changes)

    def _on_form_locators_edited(self, step_id: str, locators: object, what: str) -> None:
        path = self.steps_model.path_of(step_id)
        if path is not None and isinstance(locators, tuple):
            self.set_locators(path, locators, what)

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


def _next(path: StepPath) -> StepPath:
    last = path[-1]
    assert isinstance(last, int)
    return (*path[:-1], last + 1)


def _near(workflow: Workflow, gone: StepPath) -> str | None:
    """The step to select once the step at *gone* was deleted: the one now there, else the
    one before it, else the block it was in, else the last step."""
    last = gone[-1]
    assert isinstance(last, int)
    steps = editing.list_at(workflow, gone[:-1])
    if steps:
        return steps[min(last, len(steps) - 1)].id
    if len(gone) > 1:
        return editing.step_at(workflow, gone[:-2]).id
    return workflow.steps[-1].id if workflow.steps else None


def _move_text(before: Workflow, after: Workflow, source: StepPath, destination: StepPath) -> str:
    """What a move is called on the undo stack: "Move step 3 to 5", "Move step 3 into 'For
    each invoice'", "Move step 4.1 out of 'For each invoice'"."""
    label = editing.path_label(source)
    if source[:-1] == destination[:-1]:
        return f"Move step {label} to {editing.path_label(destination)}"
    if len(destination) > 1:
        block = editing.step_at(after, destination[:-2])
        return f"Move step {label} into '{block.title}'"
    left = editing.step_at(before, source[:-2])
    return f"Move step {label} out of '{left.title}'"
