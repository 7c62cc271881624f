"""The diff as data: frozen models of what changed in a workflow, its parameters and its steps."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from desktop_app.core.models.common import FrozenModel

__all__ = [
    "FieldChange",
    "LocatorChange",
    "ParameterChange",
    "StepChange",
    "WorkflowDiff",
]


class FieldChange(FrozenModel):
    """One field that differs, rendered for people.

    ``before`` is None when the item was added (a domain, an expectation), ``after`` is None
    when it was removed.
    """

    field: str
    label: str
    before: str | None
    after: str | None


class LocatorChange(FrozenModel):
    """A change to a target's ranked locators. Ranks start at 1 (the one tried first)."""

    change: Literal["added", "removed", "changed", "moved"]
    before: str | None = None
    after: str | None = None
    old_rank: int | None = None
    new_rank: int | None = None


class ParameterChange(FrozenModel):
    """A parameter added, removed, renamed or changed."""

    change: Literal["added", "removed", "renamed", "changed"]
    name: str
    old_name: str | None = None
    summary: str
    fields: tuple[FieldChange, ...] = ()


class StepChange(FrozenModel):
    """One step of either version and what happened to it.

    Indexes are 0-based positions in the list holding the step (the workflow's steps, or a
    block's) in the old and the new version (None where the step is not in that version);
    ``number`` and ``old_number`` are the step's numbers as a person counts them (``4``, or
    ``4.2`` inside block 4). ``where`` says which block holds it (``in 'For each invoice'``;
    None at the top), ``old_where`` where it was when it moved into or out of a block (``at
    the top`` when it was in no block). ``moved`` is true only for a real change of order or
    of block, not for a step that shifted because another was inserted or removed before it.
    """

    status: Literal["added", "removed", "changed", "unchanged"]
    moved: bool = False
    old_index: int | None = None
    new_index: int | None = None
    step_id: str
    old_step_id: str | None = None
    matched_by: Literal["id", "similarity"] | None = None
    kind: str
    title: str
    old_title: str | None = None
    summary: str
    fields: tuple[FieldChange, ...] = ()
    locators: tuple[LocatorChange, ...] = ()
    fingerprint: str | None = None
    number: str | None = None
    old_number: str | None = None
    where: str | None = None
    old_where: str | None = None

    @property
    def noteworthy(self) -> bool:
        """Whether a reviewer needs to see this step (anything but unchanged and in place)."""
        return self.status != "unchanged" or self.moved


class WorkflowDiff(FrozenModel):
    """Everything one version changes compared with another (or with nothing, for a first one)."""

    workflow_id: str
    name: str
    old_version: int | None
    new_version: int
    fields: tuple[FieldChange, ...] = ()
    parameters: tuple[ParameterChange, ...] = ()
    steps: tuple[StepChange, ...] = ()

    @property
    def is_empty(self) -> bool:
        """Whether the two versions have the same content."""
        return not self.fields and not self.parameters and not self.changed_steps

    @property
    def changed_steps(self) -> tuple[StepChange, ...]:
        """The steps a reviewer needs to see, in display order."""
        return tuple(s for s in self.steps if s.noteworthy)

    def counts(self) -> dict[str, int]:
        """How many steps were added, removed, changed and moved."""
        counts = {"added": 0, "removed": 0, "changed": 0, "moved": 0}
        for step in self.steps:
            if step.status != "unchanged":
                counts[step.status] += 1
            if step.moved:
                counts["moved"] += 1
        return counts

    def summary(self) -> str:
        """One line: ``3 steps changed, 1 added; 1 parameter renamed``."""
        parts: list[str] = []
        steps = [(what, n) for what, n in self.counts().items() if n]
        if steps:
            parts.append(_counted("step", steps))
        if self.parameters:
            by_change: dict[str, int] = {}
            for p in self.parameters:
                by_change[p.change] = by_change.get(p.change, 0) + 1
            parts.append(_counted("parameter", list(by_change.items())))
        if self.fields:
            labels = list(dict.fromkeys(f.label for f in self.fields))
            parts.append(", ".join(labels) + " changed")
        if self.old_version is None:
            return (
                f"first version: {len(self.steps)} step{'' if len(self.steps) == 1 else 's'}, "
                f"{len(self.parameters)} parameter{'' if len(self.parameters) == 1 else 's'}"
            )
        return "; ".join(parts) if parts else "no changes"


def _counted(noun: str, items: Sequence[tuple[str, int]]) -> str:
    """``2 steps changed, 1 added``: the noun goes with the first count."""
    (first, n), *rest = items
    head = f"{n} {noun}{'' if n == 1 else 's'} {first}"
    return ", ".join([head, *(f"{m} {what}" for what, m in rest)])
