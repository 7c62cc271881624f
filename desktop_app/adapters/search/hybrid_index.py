"""The search index the app uses: workflows by meaning (Chroma) and by words (SQLite FTS5).

Both halves are written together by every path that writes the index (a save, a review step,
``procedura reindex``, the repair of what a crashed process left marked, ``procedura doctor``),
so they hold the same workflows at the same version and status. Experiences are searched by
meaning only.
"""

from __future__ import annotations

from collections.abc import Sequence

from desktop_app.adapters.search.chroma_index import ChromaSearchIndex
from desktop_app.adapters.sql.text_index import SqlTextIndex
from desktop_app.core.models.experience import Experience
from desktop_app.core.models.workflow import WorkflowStatus
from desktop_app.core.views import IndexedEntries, IndexedWorkflow, SearchHit, WordMatches

__all__ = ["HybridSearchIndex"]

_STALE = (0, WorkflowStatus.DRAFT)  # what check_index sees for a workflow the halves disagree on


class HybridSearchIndex:
    """A :class:`~desktop_app.core.ports.SearchIndex` over an embedding index and a word index.

    Args:
        semantic: the embedding index (workflows and experiences).
        lexical: the word index (workflows).
    """

    def __init__(self, semantic: ChromaSearchIndex, lexical: SqlTextIndex) -> None:
        self.semantic = semantic
        self.lexical = lexical

    def upsert_workflows(self, workflows: Sequence[IndexedWorkflow]) -> None:
        """Add or replace these workflows' entries in both halves (embedding first: it is the
        one that fails, and a failure leaves the change marked for the next repair)."""
        self.semantic.upsert_workflows(workflows)
        self.lexical.upsert_workflows(workflows)

    def remove_workflow(self, workflow_id: str) -> None:
        """Drop a workflow's entries (and the experiences indexed for it)."""
        self.semantic.remove_workflow(workflow_id)
        self.lexical.remove_workflow(workflow_id)

    def search_workflows(
        self,
        query: str,
        *,
        limit: int = 5,
        status: WorkflowStatus | None = None,
        domain: str | None = None,
    ) -> list[SearchHit]:
        """The workflows most similar in meaning to *query*, best first."""
        return self.semantic.search_workflows(query, limit=limit, status=status, domain=domain)

    def search_workflows_every_word(
        self,
        query: str,
        *,
        limit: int = 5,
        status: WorkflowStatus | None = None,
        domain: str | None = None,
    ) -> WordMatches:
        """The workflows holding every word of *query* the word index knows, best first."""
        return self.lexical.search_workflows_every_word(
            query, limit=limit, status=status, domain=domain
        )

    def upsert_experiences(self, experiences: Sequence[Experience]) -> None:
        """Add or replace experiences."""
        self.semantic.upsert_experiences(experiences)

    def search_experiences(
        self, query: str, *, limit: int = 5, workflow_id: str | None = None
    ) -> list[SearchHit]:
        """The experiences most similar to *query*, best first."""
        return self.semantic.search_experiences(query, limit=limit, workflow_id=workflow_id)

    def remove_experiences(self, ids: Sequence[str]) -> None:
        """Drop these experiences' entries."""
        self.semantic.remove_experiences(ids)

    def entries(self) -> IndexedEntries:
        """What both halves hold: a workflow either lacks, or holds at another version or
        status, reads as version 0 (stale), so a check re-indexes it in both."""
        held = self.semantic.entries()
        words = self.lexical.entries()
        workflows = {
            i: entry if words.get(i) == entry else _STALE for i, entry in held.workflows.items()
        }
        for i in words.keys() - workflows.keys():
            workflows[i] = _STALE
        return IndexedEntries(workflows=workflows, experiences=held.experiences)

    def clear(self) -> None:
        """Remove every entry from both halves (before a rebuild)."""
        self.semantic.clear()
        self.lexical.clear()

    def count(self) -> tuple[int, int]:
        """How many workflows (in the embedding index) and experiences are indexed."""
        return self.semantic.count()

    def close(self) -> None:
        """Stop the embedding index's worker."""
        self.semantic.close()
