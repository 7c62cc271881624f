"""Review: a version's way from draft to approved (and back), archiving and restoring — the
same transitions, checks and words for the command line (``workflows submit|approve|
request-changes|archive|restore``), the Review screen, the step editor and the Library.

Which transitions are allowed is the library's rule (:class:`~desktop_app.core.library.
WorkflowLibrary`); this module names each decision once and says what it did in one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from desktop_app.ops.changes import Changes, Origin

if TYPE_CHECKING:
    from desktop_app.core.library import WorkflowLibrary
    from desktop_app.core.models.workflow import WorkflowVersion
    from desktop_app.core.views import WorkflowSummary

__all__ = ["Archived", "Decision", "Reviewed", "archive", "decide"]


class Decision(StrEnum):
    """What a reviewer (or the author) decides about one version."""

    SUBMIT = "submit"
    APPROVE = "approve"
    REQUEST_CHANGES = "request_changes"
    RESTORE = "restore"


#: What each decision made of the version, after its name and number.
_DONE = {
    Decision.SUBMIT: "is in review",
    Decision.APPROVE: "is approved",
    Decision.REQUEST_CHANGES: "is back in draft",
    Decision.RESTORE: "is a draft again",
}


@dataclass(frozen=True, slots=True)
class Reviewed:
    """A decision recorded: the version as it is now, and what changed."""

    decision: Decision
    version: WorkflowVersion
    changes: Changes

    @property
    def summary(self) -> str:
        """One line: ``'Create a contact' version 2 is approved``."""
        return (
            f"{self.version.workflow.name!r} version {self.version.version} {_DONE[self.decision]}"
        )


@dataclass(frozen=True, slots=True)
class Archived:
    """A workflow archived: the library and the tray no longer show it; nothing is deleted."""

    workflow: WorkflowSummary
    changes: Changes

    @property
    def summary(self) -> str:
        """One line, with how to bring it back."""
        return (
            f"{self.workflow.name!r} is archived "
            f"(restore it with: procedura workflows restore {self.workflow.id[:8]})"
        )


def decide(
    workflows: WorkflowLibrary,
    ref: str,
    decision: Decision,
    *,
    actor: str,
    origin: Origin,
    version: int | None = None,
    comment: str = "",
) -> Reviewed:
    """Record *decision* about a version of the workflow *ref* (blocking).

    Args:
        workflows: the library.
        ref: the workflow's id, id prefix or name.
        decision: what to do.
        actor: who decides (the record names them).
        origin: which way in asked.
        version: the version (None: the latest). Restoring always takes the latest.
        comment: why; sending a version back needs one.

    Raises:
        TransitionError: the version's status does not allow it (or a comment is missing).
        NotFoundError: no such workflow or version.
    """
    match decision:
        case Decision.SUBMIT:
            done = workflows.submit(ref, actor=actor, version=version, comment=comment)
        case Decision.APPROVE:
            done = workflows.approve(ref, actor=actor, version=version, comment=comment)
        case Decision.REQUEST_CHANGES:
            done = workflows.request_changes(ref, actor=actor, version=version, comment=comment)
        case Decision.RESTORE:
            done = workflows.restore(ref, actor=actor, comment=comment)
    return Reviewed(decision, done, Changes.of(origin, workflows=[done.workflow_id]))


def archive(
    workflows: WorkflowLibrary, ref: str, *, actor: str, origin: Origin, comment: str = ""
) -> Archived:
    """Archive every version of the workflow *ref* (blocking).

    Raises:
        NotFoundError: no such workflow.
    """
    summary = workflows.archive(ref, actor=actor, comment=comment)
    return Archived(summary, Changes.of(origin, workflows=[summary.id]))
