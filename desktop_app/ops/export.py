"""Which version an export writes, and how it says so: the same rule for ``procedura export``
and File → Export, whatever the format (bundle, Playwright script, guide).

An export writes the workflow's approved version (the one that runs from the tray) unless a
version is asked for; a workflow with no approved version exports its latest, and says plainly
that it is not approved. Every export says which version it wrote.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from desktop_app.core.models.workflow import WorkflowStatus, status_label

if TYPE_CHECKING:
    from desktop_app.core.library import WorkflowLibrary
    from desktop_app.core.models.workflow import WorkflowVersion

__all__ = ["ExportChoice", "version_to_export"]


@dataclass(frozen=True, slots=True)
class ExportChoice:
    """The version an export writes and the approved one beside it (None: none is)."""

    version: WorkflowVersion
    approved: int | None

    @property
    def is_approved(self) -> bool:
        """Whether the version written is approved."""
        return self.version.status is WorkflowStatus.APPROVED

    @property
    def words(self) -> str:
        """What was exported: ``"Create contact" v3 (approved)``, ``"Create contact" v4 (in
        review: v4 is not approved; v3 is)``."""
        v = self.version
        head = f'"{v.workflow.name}" v{v.version}'
        if self.is_approved:
            return f"{head} (approved)"
        status = status_label(v.status).lower()
        if self.approved is None:
            return f"{head} ({status}: v{v.version} is not approved, and no version of it is)"
        return f"{head} ({status}: v{v.version} is not approved; v{self.approved} is)"

    def wrote(self, where: str) -> str:
        """One line saying what was written where: ``Wrote "Create contact" v3 (approved)
        to out.py``."""
        return f"Wrote {self.words} to {where}"


def version_to_export(
    workflows: WorkflowLibrary, ref: str, version: int | None = None
) -> ExportChoice:
    """The version an export of workflow *ref* writes (blocking: it reads the library).

    Args:
        workflows: the library.
        ref: the workflow's id, id prefix or name.
        version: a version number: that one, approved or not. None: the approved one, else
            the latest.

    Raises:
        NotFoundError: no such workflow or version.
    """
    summary = workflows.summary(ref)
    approved = summary.approved_version
    if version is None:
        version = approved  # None (no approved version): the latest
    return ExportChoice(workflows.get(summary.id, version), approved)
