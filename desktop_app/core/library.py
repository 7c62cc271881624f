"""The workflow library: versions, review, search (by meaning and by words), import and export.

SQLite is the source of truth; the semantic index follows it. What the index has yet to be
told is marked in the database with the change itself and cleared once told, so a process
killed in between leaves the mark and the next writer finishes the work
(:meth:`WorkflowLibrary.repair_index`); :meth:`WorkflowLibrary.check_index` compares the two
whole, and :meth:`WorkflowLibrary.reindex` rebuilds the index.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from desktop_app.core.documents import dump_document, load_workflow
from desktop_app.core.errors import (
    ConfirmationRequired,
    ConflictError,
    StoreError,
    TransitionError,
)
from desktop_app.core.fusion import reciprocal_rank_fusion
from desktop_app.core.models.common import utcnow
from desktop_app.core.models.workflow import (
    ALLOWED_TRANSITIONS,
    StatusTransition,
    Workflow,
    WorkflowStatus,
    WorkflowVersion,
)
from desktop_app.core.ports import (
    ExperienceStore,
    IndexKind,
    IndexQueue,
    SearchIndex,
    WorkflowStore,
)
from desktop_app.core.redaction import scrub_workflow
from desktop_app.core.references import resolve_reference
from desktop_app.core.views import (
    IndexedWorkflow,
    IndexReport,
    ReviewItem,
    WorkflowMatch,
    WorkflowSummary,
)

__all__ = ["CANDIDATES", "SaveResult", "WorkflowLibrary", "conflict"]

#: How many workflows search takes from each ranking (by meaning, by words) before fusing them.
CANDIDATES: Final = 50

_KINDS: Final[tuple[IndexKind, IndexKind]] = ("workflow", "experience")


@dataclass(frozen=True, slots=True)
class SaveResult:
    """What a save did: the version now current, and whether a new one was created."""

    version: WorkflowVersion
    created: bool


def conflict(latest: WorkflowVersion) -> ConflictError:
    """The error of a save that found *latest* saved by someone else meanwhile."""
    when = latest.created_at.astimezone().strftime("%H:%M")
    return ConflictError(
        f"{latest.created_by} saved version {latest.version} of {latest.workflow.name!r} at "
        f"{when} while you were editing; nothing was saved and your edits are still here: "
        f"open version {latest.version} to see theirs",
        latest=latest.version,
    )


def _same_content(a: Workflow, b: Workflow) -> bool:
    return a.model_dump(exclude={"version"}) == b.model_dump(exclude={"version"})


class WorkflowLibrary:
    """Every operation on workflows the app, the tray and the command line offer.

    Args:
        store: the workflow store (source of truth).
        index: the semantic index, or a callable returning it (opened on first use, since
            opening it is slow and most commands do not need it).
        experiences: remembered repairs, re-indexed by :meth:`reindex`.
        queue: what the index has yet to be told (the stores mark it); None: nothing marked.
    """

    def __init__(
        self,
        store: WorkflowStore,
        index: SearchIndex | Callable[[], SearchIndex],
        experiences: ExperienceStore,
        queue: IndexQueue | None = None,
    ) -> None:
        self._store = store
        self._index_or_factory = index
        self._index: SearchIndex | None = None
        self._experiences = experiences
        self._queue = queue

    @property
    def index(self) -> SearchIndex:
        """The semantic index (opened on first use)."""
        if self._index is None:
            source = self._index_or_factory
            self._index = source() if callable(source) else source
        return self._index

    # ── references ──────────────────────────────────────────────────────────────────────────

    def resolve(self, ref: str) -> str:
        """The id of the workflow *ref* names: its id, a unique id prefix, or its exact name."""
        return resolve_reference(
            ref, self._store.find(ref), noun="workflow", all_names=self._store.names
        )

    # ── reads ───────────────────────────────────────────────────────────────────────────────

    def get(self, ref: str, version: int | None = None) -> WorkflowVersion:
        """A version of a workflow (the latest when *version* is None)."""
        return self._store.get_version(self.resolve(ref), version)

    def runnable(self, ref: str) -> WorkflowVersion:
        """The version that runs from the tray: the highest approved one.

        Raises:
            TransitionError: no version of the workflow is approved.
        """
        summary = self._store.summary(self.resolve(ref))
        if summary.approved_version is None:
            raise TransitionError(
                f"workflow {summary.name!r} has no approved version; approve one first "
                f"(procedura workflows approve {summary.id[:8]})"
            )
        return self._store.get_version(summary.id, summary.approved_version)

    def versions(self, ref: str) -> list[WorkflowVersion]:
        """Every version of a workflow, oldest first."""
        return self._store.versions(self.resolve(ref))

    def versions_by_id(self, workflow_id: str) -> list[WorkflowVersion]:
        """Every version of the workflow whose id is exactly *workflow_id*, oldest first.

        Unlike :meth:`versions`, no prefix or name matches, and an unknown id gives ``[]``.
        """
        if not any(found == workflow_id for found, _ in self._store.find(workflow_id)):
            return []
        return self._store.versions(workflow_id)

    def summary(self, ref: str) -> WorkflowSummary:
        """One workflow's list entry."""
        return self._store.summary(self.resolve(ref))

    def list(
        self, *, status: WorkflowStatus | None = None, domain: str | None = None
    ) -> list[WorkflowSummary]:
        """Workflows, pinned first then most recently changed; archived ones only when asked."""
        found = self._store.summaries(status=status)
        if status is None:
            found = [s for s in found if s.status is not WorkflowStatus.ARCHIVED]
        if domain is not None:
            found = [s for s in found if _has_domain(s.domains, domain)]
        return found

    def first_by_name(self, limit: int) -> builtins.list[WorkflowSummary]:
        """The first *limit* workflows as the Library lists them first: pinned first, then by
        name (archived ones left out, so maybe fewer)."""
        found = self._store.summaries(by_name=True, limit=limit)
        return [s for s in found if s.status is not WorkflowStatus.ARCHIVED]

    def review_queue(self, *, offset: int = 0, limit: int = 200) -> builtins.list[ReviewItem]:
        """A page of the versions in review, most recently submitted first."""
        return self._store.review_queue(offset=offset, limit=limit)

    def review_count(self) -> int:
        """How many versions are in review."""
        return self._store.review_count()

    def search(
        self,
        query: str,
        *,
        limit: int = 5,
        status: WorkflowStatus | None = None,
        domain: str | None = None,
    ) -> builtins.list[WorkflowMatch]:
        """Workflows that do what *query* asks ("What do you want to do?"), best first.

        The ranking by meaning (embeddings), :data:`CANDIDATES` deep (or *limit*, if more), is
        the search's; words change it only where they are decisive: when a single workflow
        holds every word of the query the library holds anywhere (a name, a field label, a rare
        word the embedding cannot place), it goes first if the embedding ranked it among its
        candidates, and second if not but it holds every word of the query (reciprocal rank
        fusion of the two rankings: :func:`~desktop_app.core.fusion.reciprocal_rank_fusion`).
        Words in common by chance ("details", "client") or shared by several workflows (near
        misses with the same words) leave the embedding's order as it is. A match's score is
        its similarity by meaning (0 when only its words ranked it).
        """
        if not query.strip() or limit <= 0:
            return []
        depth = max(limit, CANDIDATES)
        index = self.index
        by_meaning = index.search_workflows(query, limit=depth, status=status, domain=domain)
        # Two are enough to tell whether the words single out one workflow.
        words = index.search_workflows_every_word(query, limit=2, status=status, domain=domain)
        ranked = [h.id for h in by_meaning]
        decisive = [
            h.id for h in words.hits if len(words.hits) == 1 and (words.complete or h.id in ranked)
        ]
        fused = reciprocal_rank_fusion([ranked, decisive])
        similarity = {h.id: h.score for h in by_meaning}
        summaries = {s.id: s for s in self._store.summaries(ids=[i for i, _ in fused])}
        matches = [
            WorkflowMatch(workflow=summaries[i], score=similarity.get(i, 0.0))
            for i, _ in fused
            if i in summaries
        ]
        if status is None:
            matches = [m for m in matches if m.workflow.status is not WorkflowStatus.ARCHIVED]
        return matches[:limit]

    def count(self) -> tuple[int, int]:
        """How many workflows and versions are stored."""
        return self._store.count()

    def export_json(self, ref: str, version: int | None = None) -> str:
        """A version as a workflow document (JSON text)."""
        return dump_document(self.get(ref, version).workflow)

    # ── writes ──────────────────────────────────────────────────────────────────────────────

    def save(
        self,
        workflow: Workflow,
        *,
        actor: str,
        change_note: str = "",
        parent_version: int | None = None,
        expected_latest: int | None = None,
    ) -> SaveResult:
        """Save *workflow* as a new draft version; never changes an existing version.

        A workflow whose id is new starts at version 1; otherwise it becomes the next version.
        Content identical to the latest version creates nothing. A secret its name, description
        or intent template states is masked first (:func:`scrub_workflow`).

        With *expected_latest* (the latest version when the edit began), a version saved by
        someone else since then stops the save (optimistic versioning: two analysts never
        overwrite each other's edit); the store refuses the same race at the moment of writing.

        Raises:
            ConflictError: another version was saved since *expected_latest*.
        """
        workflow = scrub_workflow(workflow)
        if any(found == workflow.id for found, _ in self._store.find(workflow.id)):
            latest = self._store.get_version(workflow.id)
            if expected_latest is not None and latest.version != expected_latest:
                raise conflict(latest)
            if _same_content(latest.workflow, workflow):
                return SaveResult(latest, created=False)
            number = latest.version + 1
            parent = parent_version if parent_version is not None else latest.version
        else:
            number, parent = 1, None
        stored = workflow.model_copy(update={"version": number})
        now = utcnow()
        version = WorkflowVersion(
            workflow=stored,
            status=WorkflowStatus.DRAFT,
            created_at=now,
            created_by=actor,
            parent_version=parent,
            change_note=change_note,
            transitions=(
                StatusTransition(
                    from_status=None,
                    to_status=WorkflowStatus.DRAFT,
                    actor=actor,
                    at=now,
                    comment=change_note,
                ),
            ),
        )
        self._store.add_version(version)
        self._reindex_one(stored.id)
        return SaveResult(version, created=True)

    def import_json(self, data: bytes | str, *, actor: str, source: str = "") -> SaveResult:
        """Validate a workflow document and save it as a new draft version.

        Nothing is written unless the whole document is valid. An imported workflow is never
        approved on arrival: it goes through review here like any other draft.
        """
        workflow = load_workflow(data, source=source)
        note = f"imported from {source}" if source else "imported"
        return self.save(workflow, actor=actor, change_note=note)

    def submit(
        self, ref: str, *, actor: str, version: int | None = None, comment: str = ""
    ) -> WorkflowVersion:
        """Submit a draft for review."""
        return self._transition(ref, version, WorkflowStatus.IN_REVIEW, actor, comment)

    def approve(
        self, ref: str, *, actor: str, version: int | None = None, comment: str = ""
    ) -> WorkflowVersion:
        """Approve a version (the latest when *version* is None); it becomes the one that runs."""
        return self._transition(ref, version, WorkflowStatus.APPROVED, actor, comment)

    def request_changes(
        self, ref: str, *, actor: str, comment: str, version: int | None = None
    ) -> WorkflowVersion:
        """Send a version in review back to draft, saying what to change."""
        if not comment.strip():
            raise TransitionError("say what should change: a comment is required")
        return self._transition(ref, version, WorkflowStatus.DRAFT, actor, comment)

    def archive(self, ref: str, *, actor: str, comment: str = "") -> WorkflowSummary:
        """Archive every version of a workflow: it leaves the library and the tray, but is kept."""
        workflow_id = self.resolve(ref)
        changed = False
        for v in self._store.versions(workflow_id):
            if v.status is not WorkflowStatus.ARCHIVED:
                self._store.record_transition(
                    workflow_id,
                    v.version,
                    StatusTransition(
                        from_status=v.status,
                        to_status=WorkflowStatus.ARCHIVED,
                        actor=actor,
                        comment=comment,
                    ),
                )
                changed = True
        if not changed:
            raise TransitionError(f"workflow {ref!r} is already archived")
        self._reindex_one(workflow_id)
        return self._store.summary(workflow_id)

    def restore(self, ref: str, *, actor: str, comment: str = "") -> WorkflowVersion:
        """Bring an archived workflow back: its latest version becomes a draft again."""
        workflow_id = self.resolve(ref)
        latest = self._store.get_version(workflow_id)
        return self._transition(workflow_id, latest.version, WorkflowStatus.DRAFT, actor, comment)

    def set_pinned(self, ref: str, pinned: bool) -> WorkflowSummary:
        """Pin or unpin a workflow (pinned ones come first in lists and the tray)."""
        workflow_id = self.resolve(ref)
        self._store.set_pinned(workflow_id, pinned)
        return self._store.summary(workflow_id)

    def delete(self, ref: str, *, confirmed: bool) -> WorkflowSummary:
        """Delete a workflow with every version, run and experience. Needs *confirmed*."""
        summary = self._store.summary(self.resolve(ref))
        if not confirmed:
            raise ConfirmationRequired(
                f"deleting {summary.name!r} removes its {summary.latest_version} version(s) and "
                "their run history for good; confirm to go ahead (--yes)"
            )
        self._store.delete_workflow(summary.id)
        self.index.remove_workflow(summary.id)
        self._done("workflow", [summary.id])
        return summary

    def reindex(self) -> tuple[int, int]:
        """Rebuild the index from the stores; return how many workflows and experiences."""
        marked = self._queue.pending() if self._queue is not None else []
        summaries = self._store.summaries()
        entries = [
            IndexedWorkflow.of(self._store.get_version(s.id).workflow, s.status) for s in summaries
        ]
        experiences = self._experiences.experiences()
        index = self.index
        index.clear()
        index.upsert_workflows(entries)  # the index embeds and writes in batches of its own
        index.upsert_experiences(experiences)
        for kind in _KINDS:
            self._done(kind, [item for k, item in marked if k == kind])
        return len(entries), len(experiences)

    def repair_index(self) -> int:
        """Tell the index what a process that ended before telling it left marked (a workflow
        saved, approved or deleted; an experience learned); how many were marked. Without
        marks the index is not even opened.

        Raises:
            StoreError: the index could not be updated (the marks stay for the next time).
        """
        marked = self._queue.pending() if self._queue is not None else []
        if not marked:
            return 0
        workflow_ids = [item for kind, item in marked if kind == "workflow"]
        present = {s.id: s for s in self._store.summaries(ids=workflow_ids)}
        self.index.upsert_workflows(
            [
                IndexedWorkflow.of(self._store.get_version(i).workflow, present[i].status)
                for i in workflow_ids
                if i in present
            ]
        )
        for gone in (i for i in workflow_ids if i not in present):
            self.index.remove_workflow(gone)
        self._done("workflow", workflow_ids)
        experience_ids = [item for kind, item in marked if kind == "experience"]
        found = list(self._experiences.get_experiences(experience_ids).values())
        self.index.upsert_experiences(found)
        self._done("experience", experience_ids)
        return len(marked)

    def check_index(self, *, fix: bool) -> IndexReport:
        """Compare the index with the stores, whole: workflows it lacks or holds at another
        version or status, entries of workflows that are gone, experiences likewise. With
        *fix*, put each difference right (and clear every mark).

        Raises:
            StoreError: the index could not be read or updated.
        """
        held = self.index.entries()
        summaries = {s.id: s for s in self._store.summaries()}
        missing = sorted(i for i in summaries if i not in held.workflows)
        stale = sorted(
            i
            for i, (version, status) in held.workflows.items()
            if i in summaries
            and (version, status) != (summaries[i].latest_version, summaries[i].status)
        )
        extra = sorted(i for i in held.workflows if i not in summaries)
        stored = {e.id: e for e in self._experiences.experiences()}
        report = IndexReport(
            missing=tuple(missing),
            stale=tuple(stale),
            extra=tuple(extra),
            missing_experiences=tuple(sorted(set(stored) - held.experiences)),
            extra_experiences=tuple(sorted(held.experiences - set(stored))),
        )
        if not fix:
            return report
        marked = self._queue.pending() if self._queue is not None else []
        self.index.upsert_workflows(
            [
                IndexedWorkflow.of(self._store.get_version(i).workflow, summaries[i].status)
                for i in (*missing, *stale)
            ]
        )
        for gone in extra:
            self.index.remove_workflow(gone)
        self.index.upsert_experiences([stored[i] for i in report.missing_experiences])
        self.index.remove_experiences(report.extra_experiences)
        for kind in _KINDS:
            self._done(kind, [item for k, item in marked if k == kind])
        return report.model_copy(update={"fixed": True})

    # ── internals ───────────────────────────────────────────────────────────────────────────

    def _transition(
        self, ref: str, version: int | None, to: WorkflowStatus, actor: str, comment: str
    ) -> WorkflowVersion:
        workflow_id = self.resolve(ref)
        current = self._store.get_version(workflow_id, version)
        if to not in ALLOWED_TRANSITIONS[current.status]:
            raise TransitionError(
                f"version {current.version} of {current.workflow.name!r} "
                f"is {current.status.value}; "
                f"it cannot become {to.value}"
            )
        updated = self._store.record_transition(
            workflow_id,
            current.version,
            StatusTransition(
                from_status=current.status, to_status=to, actor=actor, comment=comment
            ),
        )
        self._reindex_one(workflow_id)
        return updated

    def _reindex_one(self, workflow_id: str) -> None:
        summary = self._store.summary(workflow_id)
        latest = self._store.get_version(workflow_id).workflow
        try:
            self.index.upsert_workflows([IndexedWorkflow.of(latest, summary.status)])
        except StoreError as exc:
            raise StoreError(
                f"saved, but the search index could not be updated ({exc}); the next start "
                "updates it, or run `procedura doctor`"
            ) from None
        self._done("workflow", [workflow_id])

    def _done(self, kind: IndexKind, ids: builtins.list[str]) -> None:
        if self._queue is not None:
            self._queue.done(kind, ids)


def _has_domain(domains: tuple[str, ...], wanted: str) -> bool:
    wanted = wanted.lower()
    return any(d.lower() == wanted or d.lower().endswith("." + wanted) for d in domains)
