"""What the Review screen loads on the store thread: the queue, versions, diffs, screenshots."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from desktop_app.core.diff import WorkflowDiff, diff_workflows
from desktop_app.core.errors import ProceduraError
from desktop_app.core.library import WorkflowLibrary
from desktop_app.core.models.run import Run, RunStatus, RunTrigger
from desktop_app.core.models.workflow import WorkflowStatus, WorkflowVersion
from desktop_app.core.ports import MediaStore, RunStore
from desktop_app.core.scores import VersionRecord, version_record
from desktop_app.core.views import WorkflowSummary
from desktop_app.ops.scores import RECENT_RUNS
from desktop_app.ui.review_page.models import QueueEntry

__all__ = [
    "QUEUE_PAGE",
    "compute",
    "is_listed",
    "load_images",
    "load_queue",
    "load_workflow",
    "load_workflows",
]


#: How many versions in review the queue reads at a time (scrolling reads the next page).
QUEUE_PAGE = 200


@dataclass(frozen=True, slots=True)
class _Queue:
    entries: list[QueueEntry]
    total: int


def load_queue(library: WorkflowLibrary, offset: int = 0) -> _Queue:
    """A page of the versions in review (newest submission first) and how many wait in all:
    what the list shows, read in SQL, not every version of every workflow."""
    items = library.review_queue(offset=offset, limit=QUEUE_PAGE)
    return _Queue(entries=[QueueEntry(item) for item in items], total=library.review_count())


def is_listed(library: WorkflowLibrary, workflow_id: str) -> bool:
    """Whether the workflow is still there and not archived (the picker lists it)."""
    try:
        return library.summary(workflow_id).status is not WorkflowStatus.ARCHIVED
    except ProceduraError:
        return False


def load_workflows(library: WorkflowLibrary) -> list[WorkflowSummary]:
    """Every workflow's summary (archived ones aside), by name, for the comparison picker."""
    return sorted(library.list(), key=lambda s: s.name.lower())


@dataclass(frozen=True, slots=True)
class _Workflow:
    versions: list[WorkflowVersion]
    repair_runs: list[Run]
    records: dict[int, VersionRecord]
    verifications: dict[int, Run]


def load_workflow(library: WorkflowLibrary, runs: RunStore, workflow_id: str) -> _Workflow:
    """A workflow's versions, the runs that proposed a repair of it, each version's record and
    newest verification (from the workflow's newest runs)."""
    versions = library.versions_by_id(workflow_id)
    found = runs.runs(workflow_id, limit=RECENT_RUNS)
    proposing = [r for r in found if r.proposed_version is not None]
    records = {v.version: version_record(workflow_id, v.version, found) for v in versions}
    verifications: dict[int, Run] = {}
    for run in found:  # newest first: the newest verification of each version
        if run.trigger is RunTrigger.VERIFY and run.status is not RunStatus.RUNNING:
            verifications.setdefault(run.workflow_version, run)
    return _Workflow(
        versions=versions, repair_runs=proposing, records=records, verifications=verifications
    )


def load_images(media: MediaStore, refs: Sequence[str]) -> dict[str, bytes]:
    """The screenshots *refs* name that the media store still has."""
    images: dict[str, bytes] = {}
    for ref in refs:
        try:
            images[ref] = media.get(ref)
        except ProceduraError:  # a screenshot that is gone: the table says so
            continue
    return images


def compute(
    base: WorkflowVersion | None,
    compared: WorkflowVersion,
    media: MediaStore,
    refs: Sequence[str],
) -> tuple[WorkflowDiff, dict[str, bytes]]:
    """What *compared* changes against *base*, and the screenshots *refs* name."""
    diff = diff_workflows(base.workflow if base is not None else None, compared.workflow)
    return diff, load_images(media, refs)
