"""The interfaces the core needs from the outside world; adapters implement them.

Every store method either does all it says or nothing (one transaction), and raises
:class:`~desktop_app.core.errors.NotFoundError` for an unknown id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Literal, Protocol

from desktop_app.core.models.experience import Experience
from desktop_app.core.models.run import Run
from desktop_app.core.models.trajectory import Event, Trajectory
from desktop_app.core.models.workflow import StatusTransition, WorkflowStatus, WorkflowVersion
from desktop_app.core.views import (
    IndexedEntries,
    IndexedWorkflow,
    ReviewItem,
    RunQuery,
    RunStats,
    SearchHit,
    TrajectorySummary,
    WordMatches,
    WorkflowSummary,
)

__all__ = [
    "ExperienceStore",
    "IndexKind",
    "IndexQueue",
    "MediaStore",
    "RunStore",
    "SearchIndex",
    "TrajectoryImport",
    "TrajectoryStore",
    "WorkflowStore",
]


#: What the search index holds: workflows and experiences.
IndexKind = Literal["workflow", "experience"]


class WorkflowStore(Protocol):
    """Workflows, their immutable versions and their review history. A change to what the
    search index holds (a version added, a status, a deletion) marks the workflow in the
    :class:`IndexQueue`, in the same transaction."""

    def add_version(self, version: WorkflowVersion) -> None:
        """Insert a new version (creating the workflow on version 1). Never replaces one."""

    def get_version(self, workflow_id: str, version: int | None = None) -> WorkflowVersion:
        """One version (the latest when *version* is None)."""

    def versions(self, workflow_id: str) -> list[WorkflowVersion]:
        """Every version, oldest first."""

    def record_transition(
        self, workflow_id: str, version: int, transition: StatusTransition
    ) -> WorkflowVersion:
        """Set a version's status and append the transition to its history."""

    def summary(self, workflow_id: str) -> WorkflowSummary:
        """One workflow's summary."""

    def summaries(
        self,
        *,
        status: WorkflowStatus | None = None,
        ids: Sequence[str] | None = None,
        by_name: bool = False,
        limit: int | None = None,
    ) -> list[WorkflowSummary]:
        """Summaries, pinned first, then most recently updated first (*by_name*: by name),
        optionally only *status* or only *ids*, and only the first *limit*."""

    def find(self, ref: str) -> list[tuple[str, str]]:
        """``(id, name)`` of workflows whose id is or starts with *ref*, or whose name is *ref*."""

    def names(self) -> list[str]:
        """Every workflow's name (for "did you mean" suggestions)."""

    def set_pinned(self, workflow_id: str, pinned: bool) -> None:
        """Pin or unpin a workflow."""

    def delete_workflow(self, workflow_id: str) -> None:
        """Remove a workflow with its versions, history, runs and experiences."""

    def review_queue(self, *, offset: int = 0, limit: int = 200) -> list[ReviewItem]:
        """The versions in review, most recently submitted first (a page of them)."""

    def review_count(self) -> int:
        """How many versions are in review."""

    def count(self) -> tuple[int, int]:
        """How many workflows and versions."""


class TrajectoryStore(Protocol):
    """Recorded demonstrations. Events can be appended while a recording is under way."""

    def add(self, trajectory: Trajectory) -> None:
        """Insert a whole trajectory (an import). Fails if the id exists."""

    def importing(self, trajectory_id: str) -> AbstractContextManager[TrajectoryImport]:
        """Insert a trajectory in one transaction, its events a batch at a time (an import of a
        large file). Nothing is kept unless :meth:`TrajectoryImport.finish` is called in the
        block: leaving it otherwise, or by an error, rolls everything back. Fails if the id
        exists."""

    def begin(self, trajectory: Trajectory) -> None:
        """Insert a trajectory's header to append events to as they happen."""

    def append_events(self, trajectory_id: str, events: Sequence[Event]) -> None:
        """Append events to a trajectory, in order."""

    def append_raw_events(self, trajectory_id: str, events: Sequence[Event]) -> None:
        """Append events to the raw stream a recorder captured (kept for debugging)."""

    def raw_events(self, trajectory_id: str) -> list[Event]:
        """The raw stream, in order."""

    def replace_raw_events(self, trajectory_id: str, events: Mapping[int, Event]) -> None:
        """Rewrite raw events by position (only to take something out, such as a secret)."""

    def finish(self, trajectory: Trajectory) -> None:
        """Write a begun trajectory's header and its (clean) events, replacing any there."""

    def get(self, trajectory_id: str) -> Trajectory:
        """A trajectory with all its events."""

    def summaries(self) -> list[TrajectorySummary]:
        """Every trajectory, newest first."""

    def find(self, ref: str) -> list[tuple[str, str]]:
        """``(id, intent)`` of trajectories whose id is or starts with *ref*."""

    def delete(self, trajectory_id: str) -> None:
        """Remove a trajectory and its events."""

    def count(self) -> int:
        """How many trajectories."""


class TrajectoryImport(Protocol):
    """A trajectory being inserted (see :meth:`TrajectoryStore.importing`)."""

    def append(self, events: Sequence[Event]) -> None:
        """Add events after those added so far."""

    def finish(self, trajectory: Trajectory) -> None:
        """Write *trajectory*'s header (its events are those appended, not its own) and commit."""


class RunStore(Protocol):
    """Run records."""

    def save_run(self, run: Run) -> None:
        """Insert or update a run and its steps.

        A run's steps only grow while it runs: steps already saved are kept as they are and only
        the new ones are written (cheap enough to call after every step).
        """

    def get_run(self, run_id: str) -> Run:
        """One run."""

    def runs(self, workflow_id: str | None = None, limit: int = 100) -> list[Run]:
        """Runs, newest first."""

    def find(self, ref: str) -> list[str]:
        """The ids of runs whose id is or starts with *ref*."""

    def interrupt_running(self, reason: str) -> int:
        """Mark every run still ``running`` as interrupted (its process is gone); how many."""

    def run_stats(self) -> dict[str, RunStats]:
        """Per workflow id, how its runs went (one query, for library lists)."""

    def run_page(self, query: RunQuery, *, offset: int = 0, limit: int = 100) -> list[Run]:
        """A page of the runs *query* selects, in its order (for the history screen)."""

    def run_count(self, query: RunQuery) -> int:
        """How many runs *query* selects (its order aside)."""

    def run_workflows(self, ids: Sequence[str] | None = None) -> list[tuple[str, str]]:
        """``(id, name)`` of the workflows that have runs (only *ids*, if given), by name."""

    def count(self) -> int:
        """How many runs."""


class ExperienceStore(Protocol):
    """Remembered repairs. Adding one marks it in the :class:`IndexQueue`, in the same
    transaction."""

    def add_experience(self, experience: Experience) -> None:
        """Insert an experience."""

    def experiences(self) -> list[Experience]:
        """Every experience, oldest first."""

    def find_experiences(
        self,
        *,
        workflow_id: str | None = None,
        step_id: str | None = None,
        site: str | None = None,
    ) -> list[Experience]:
        """The experiences of one workflow (and one of its steps), or of one site (the host of
        their page, :func:`~desktop_app.core.models.experience.site_of`), oldest first."""

    def site_count(self, site: str) -> int:
        """How many experiences one site has."""

    def delete_experiences(self, ids: Sequence[str]) -> None:
        """Delete these experiences (what the index has of them is left for it to drop)."""

    def get_experience(self, experience_id: str) -> Experience | None:
        """One experience, or None."""

    def get_experiences(self, ids: Sequence[str]) -> dict[str, Experience]:
        """These experiences by id, in one read (an id not stored is left out)."""

    def update_experiences(self, experiences: Sequence[Experience]) -> None:
        """Store what runs taught about these experiences (their outcomes, proof, retirement),
        in one transaction; an id not stored is ignored. Nothing the index reads changes."""

    def count(self) -> int:
        """How many experiences."""


class MediaStore(Protocol):
    """Content-addressed files (screenshots, image anchors)."""

    def put(self, data: bytes, extension: str) -> str:
        """Store *data*; return its media ref (the same bytes always give the same ref)."""

    def get(self, ref: str) -> bytes:
        """The bytes of *ref*."""

    def path(self, ref: str) -> Path:
        """Where *ref* lives on disk."""

    def exists(self, ref: str) -> bool:
        """Whether *ref* is stored."""

    def delete(self, ref: str) -> None:
        """Remove *ref* (nothing happens if it is not stored)."""

    def count(self) -> tuple[int, int]:
        """How many files and how many bytes in all."""


class IndexQueue(Protocol):
    """What the search index has yet to be brought up to date with: marked by the stores in
    the same transaction as the change, cleared once the index has it."""

    def pending(self) -> list[tuple[IndexKind, str]]:
        """Every mark, oldest first."""

    def done(self, kind: IndexKind, ids: Sequence[str]) -> None:
        """Clear the marks of *ids* (the index has them now)."""


class SearchIndex(Protocol):
    """A search index over workflows (by meaning and by words) and experiences (by meaning),
    rebuildable from the stores."""

    def upsert_workflows(self, workflows: Sequence[IndexedWorkflow]) -> None:
        """Add or replace the entries of these workflows."""

    def remove_workflow(self, workflow_id: str) -> None:
        """Drop a workflow's entry (nothing happens if it has none)."""

    def search_workflows(
        self,
        query: str,
        *,
        limit: int = 5,
        status: WorkflowStatus | None = None,
        domain: str | None = None,
    ) -> list[SearchHit]:
        """The workflows most similar to *query*, best first."""

    def search_workflows_every_word(
        self,
        query: str,
        *,
        limit: int = 5,
        status: WorkflowStatus | None = None,
        domain: str | None = None,
    ) -> WordMatches:
        """The workflows holding every word of *query* that the word index holds anywhere
        (BM25 order), with the filters of :meth:`search_workflows`, and whether the index
        holds every word of *query*."""

    def upsert_experiences(self, experiences: Sequence[Experience]) -> None:
        """Add or replace experiences."""

    def search_experiences(
        self, query: str, *, limit: int = 5, workflow_id: str | None = None
    ) -> list[SearchHit]:
        """The experiences most similar to *query*, best first."""

    def remove_experiences(self, ids: Sequence[str]) -> None:
        """Drop these experiences' entries (the ones not there are ignored)."""

    def entries(self) -> IndexedEntries:
        """Every workflow's indexed version and status, and every experience id indexed."""

    def clear(self) -> None:
        """Remove every entry (before a rebuild)."""

    def count(self) -> tuple[int, int]:
        """How many workflows and experiences are indexed."""
