"""Saving what an analyst edited: a new draft version, never a change to an existing one — the
step editor's Save, and what it says about it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from desktop_app.core.editing import finalize
from desktop_app.ops.changes import Changes, Origin

if TYPE_CHECKING:
    from desktop_app.core.library import WorkflowLibrary
    from desktop_app.core.models.workflow import Workflow, WorkflowVersion

__all__ = ["Saved", "save_draft"]


@dataclass(frozen=True, slots=True)
class Saved:
    """A draft saved: the version now latest, whether it is new, and what changed."""

    version: WorkflowVersion
    created: bool
    changes: Changes

    @property
    def summary(self) -> str:
        """One line for the status bar."""
        v = self.version
        if not self.created:
            return f"Nothing to save: same as version {v.version}"
        return f"Saved version {v.version} of “{v.workflow.name}”"


def save_draft(
    workflows: WorkflowLibrary,
    draft: Workflow,
    *,
    actor: str,
    origin: Origin,
    parent_version: int,
    change_note: str = "",
    expected_latest: int | None = None,
) -> Saved:
    """Save an edited draft as the next version (blocking); content the same as the latest
    version's saves nothing.

    Args:
        workflows: the library.
        draft: the edited workflow.
        actor: who saves.
        origin: which way in asked.
        parent_version: the version the edits started from (review compares with it).
        change_note: what changed, in the author's words.
        expected_latest: the latest version when the edit began: a version someone else
            saved since then stops the save (nothing is lost: the draft is the caller's).

    Raises:
        EditError: the draft has errors (nothing is saved).
        ConflictError: someone else saved a version meanwhile (nothing is saved).
        StoreError: it could not be saved.
    """
    result = workflows.save(
        finalize(draft),
        actor=actor,
        change_note=change_note.strip(),
        parent_version=parent_version,
        expected_latest=expected_latest,
    )
    workflow_id = result.version.workflow_id
    changes = Changes.of(origin, workflows=[workflow_id] if result.created else [])
    return Saved(result.version, result.created, changes)
