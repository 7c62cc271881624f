"""Recordings kept or let go — the same rules and words for the command line (``record``,
``trajectories delete``), the record dialog and the Recordings screen.

A recording is stored as it is made (a crash keeps what was done). One that ends with nothing in
it is deleted: there is nothing to learn from, and an empty row would only be in the way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from desktop_app.ops.changes import Changes, Origin

if TYPE_CHECKING:
    from desktop_app.core.models.trajectory import Trajectory
    from desktop_app.core.trajectories import TrajectoryLibrary

__all__ = [
    "NOTHING_RECORDED",
    "NOTHING_RECORDED_ON_THE_DESKTOP",
    "Kept",
    "Removed",
    "delete_recording",
    "keep_recording",
    "started",
]

#: What a person is told when a recording ended before anything was done.
NOTHING_RECORDED = (
    "nothing was recorded: the recording ended before anything was done, so none was kept"
)

#: The same for a desktop recording, with what keeps input from being recorded there.
NOTHING_RECORDED_ON_THE_DESKTOP = (
    "nothing was recorded: no click or key press reached the recorder, so none was kept "
    "(what is done in Procedura's own windows, in the terminal it was started from and while "
    "paused is left out; do the task in another application's window)"
)


@dataclass(frozen=True, slots=True)
class Kept:
    """A recording that ended: the recording, or None when it was empty and deleted."""

    trajectory: Trajectory | None
    changes: Changes


@dataclass(frozen=True, slots=True)
class Removed:
    """A recording deleted, in one line."""

    summary: str
    changes: Changes


def started(trajectory_id: str, origin: Origin) -> Changes:
    """What a recording changed as it began (its row appears, live)."""
    return Changes.of(origin, recordings=[trajectory_id])


def keep_recording(
    trajectories: TrajectoryLibrary, trajectory: Trajectory, *, origin: Origin
) -> Kept:
    """Keep a recording that ended, unless nothing is in it: then it is deleted (blocking)."""
    changes = Changes.of(origin, recordings=[trajectory.id])
    if trajectory.events:
        return Kept(trajectory, changes)
    trajectories.delete(trajectory.id, confirmed=True)
    return Kept(None, changes)


def delete_recording(
    trajectories: TrajectoryLibrary, ref: str, *, confirmed: bool, origin: Origin
) -> Removed:
    """Delete a recording (workflows induced from it stay; blocking).

    Raises:
        ConfirmationRequired: not *confirmed* (the message says what would go).
        NotFoundError: no such recording.
    """
    summary = trajectories.delete(ref, confirmed=confirmed)
    shown = f"“{summary.intent}” ({summary.id[:8]})" if summary.intent else summary.id[:8]
    return Removed(f"deleted the recording {shown}", Changes.of(origin, recordings=[summary.id]))
