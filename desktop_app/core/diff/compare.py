"""The comparison: what one workflow version changes, and which version to read it against."""

from __future__ import annotations

from collections.abc import Sequence

from desktop_app.core.diff.fields import _workflow_fields
from desktop_app.core.diff.parameters import _diff_parameters
from desktop_app.core.diff.tree import _diff_steps
from desktop_app.core.diff.views import WorkflowDiff
from desktop_app.core.models.workflow import Workflow, WorkflowStatus, WorkflowVersion

__all__ = [
    "base_for",
    "diff_workflows",
]

# ── the entry point ─────────────────────────────────────────────────────────────────────────


def diff_workflows(old: Workflow | None, new: Workflow) -> WorkflowDiff:
    """What *new* changes compared with *old* (None: *new* is a first version, all of it new)."""
    steps, step_pairs = _diff_steps(old.steps if old is not None else (), new.steps)
    return WorkflowDiff(
        workflow_id=new.id,
        name=new.name,
        old_version=old.version if old is not None else None,
        new_version=new.version,
        fields=tuple(_workflow_fields(old, new)),
        parameters=tuple(_diff_parameters(old, new, step_pairs)),
        steps=tuple(steps),
    )


# ── which versions to compare ───────────────────────────────────────────────────────────────


def base_for(compared: WorkflowVersion, versions: Sequence[WorkflowVersion]) -> int | None:
    """The version *compared* is best read against, by default.

    Its parent (the version it was made from: the one a repair's run replayed, or the latest one
    when it was saved), else the approved version, else the one before it; None for a first
    version with nothing before it.
    """
    numbers = {v.version for v in versions} - {compared.version}
    if compared.parent_version in numbers:
        return compared.parent_version
    approved = [
        v.version
        for v in versions
        if v.status is WorkflowStatus.APPROVED and v.version != compared.version
    ]
    if approved:
        return max(approved)
    earlier = [n for n in numbers if n < compared.version]
    return max(earlier) if earlier else None
