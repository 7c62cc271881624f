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

__all__ = ["compute", "load_images", "load_queue", "load_workflow"]


@dataclass(frozen=True, slots=True)
class _Queue:
    entries: list[QueueEntry]
    summaries: list[WorkflowSummary]


def load_queue(library: WorkflowLibrary) -> _Queue:
    """The versions in review and every workflow's summary, by name."""
    summaries = library.list()
    entries = [
        QueueEntry(name=v.workflow.name, version=v)
        for s in summaries
        for v in library.versions_by_id(s.id)
        if v.status is WorkflowStatus.IN_REVIEW
    ]
    return _Queue(entries=entries, summaries=sorted(summaries, key=lambda s: s.name.lower()))


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
