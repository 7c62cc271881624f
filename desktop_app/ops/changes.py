"""What an operation changed, and who asked: every front end refreshes from this one value.

An operation in ``ops`` returns its result together with a :class:`Changes`. The desktop app
turns it into its change signals in one place (``AppEvents.announce``), so no screen announces a
change itself and each screen refreshes only what it shows. The command line ignores it.

An id of ``""`` (:data:`MANY`) stands for "several, or not known which": a screen showing any of
that kind refreshes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from desktop_app.core.models.run import Run

__all__ = ["MANY", "Changes", "Origin", "run_changes"]

#: The id of "several things of this kind, or not known which".
MANY = ""


class Origin(StrEnum):
    """Which way in asked for the operation."""

    CLI = "cli"
    WINDOW = "window"
    TRAY = "tray"
    HANDOFF = "handoff"


def _ids(values: Iterable[str]) -> frozenset[str]:
    return frozenset(values)


@dataclass(frozen=True, slots=True)
class Changes:
    """What an operation changed: the ids of workflows, recordings and runs, and the settings.

    Attributes:
        origin: who asked.
        workflows: ids of workflows with a new, changed or deleted version (:data:`MANY`: any).
        recordings: ids of recordings made, changed or deleted.
        runs: ids of runs recorded.
        settings: the settings changed.
    """

    origin: Origin
    workflows: frozenset[str] = field(default_factory=frozenset)
    recordings: frozenset[str] = field(default_factory=frozenset)
    runs: frozenset[str] = field(default_factory=frozenset)
    settings: bool = False

    @classmethod
    def of(
        cls,
        origin: Origin,
        *,
        workflows: Iterable[str] = (),
        recordings: Iterable[str] = (),
        runs: Iterable[str] = (),
        settings: bool = False,
    ) -> Changes:
        """Changes from any iterables of ids."""
        return cls(origin, _ids(workflows), _ids(recordings), _ids(runs), settings)

    @property
    def empty(self) -> bool:
        """Nothing changed."""
        return not (self.workflows or self.recordings or self.runs or self.settings)

    def __or__(self, other: Changes) -> Changes:
        """Both operations' changes (the first one's origin)."""
        return Changes(
            self.origin,
            self.workflows | other.workflows,
            self.recordings | other.recordings,
            self.runs | other.runs,
            self.settings or other.settings,
        )


def run_changes(run: Run | None, origin: Origin) -> Changes:
    """What a run that ended changed: its record, and its workflow when the run proposed a
    repaired version. *run* None: a run that failed before its record could be read back
    (the run lists refresh whole)."""
    if run is None:
        return Changes.of(origin, runs=[MANY])
    proposed = [run.workflow_id] if run.proposed_version is not None else []
    return Changes.of(origin, runs=[run.id], workflows=proposed)
