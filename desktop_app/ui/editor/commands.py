"""Undo in the step editor: each edit is one command that swaps whole workflow snapshots."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QUndoCommand

from desktop_app.core.models.workflow import Workflow

__all__ = ["ApplySnapshot", "SnapshotCommand"]

#: Shows a workflow in the editor and selects a step (by id) when one is given.
ApplySnapshot = Callable[[Workflow, "str | None"], None]


class SnapshotCommand(QUndoCommand):
    """One edit: the workflow before and after it, and which step to select either way.

    Workflows are immutable, so keeping both snapshots is cheap and undo is exact.
    """

    def __init__(
        self,
        apply: ApplySnapshot,
        before: Workflow,
        after: Workflow,
        text: str,
        *,
        select_before: str | None,
        select_after: str | None,
    ) -> None:
        super().__init__(text)
        self._apply = apply
        self.before = before
        self.after = after
        self._select_before = select_before
        self._select_after = select_after

    def redo(self) -> None:
        """Show the workflow after the edit."""
        self._apply(self.after, self._select_after)

    def undo(self) -> None:
        """Show the workflow before the edit."""
        self._apply(self.before, self._select_before)
