"""Rung 3: repairs remembered from earlier runs (SQLite; the semantic index for look-alikes)."""

from __future__ import annotations

from collections.abc import Callable

from desktop_app.core.models.experience import Experience
from desktop_app.core.ports import ExperienceStore, IndexQueue, SearchIndex

__all__ = ["ExperienceMemory"]

#: How similar (0–1) another step's experience must be to be tried for this one.
SIMILAR_ENOUGH = 0.8


class ExperienceMemory:
    """Remember repairs and recall them for a step, its own first, then similar steps'.

    Args:
        store: where experiences live (the source of truth).
        index: the semantic index, or a callable opening it; only opened when a step has no
            experience of its own (opening it is slow).
        queue: what the index has yet to be told (the store marks a new experience; it is
            cleared here once indexed).
    """

    def __init__(
        self,
        store: ExperienceStore,
        index: SearchIndex | Callable[[], SearchIndex] | None,
        queue: IndexQueue | None = None,
    ) -> None:
        self._store = store
        self._index_source = index
        self._index: SearchIndex | None = None
        self._queue = queue

    def _search_index(self) -> SearchIndex | None:
        if self._index is None and self._index_source is not None:
            source = self._index_source
            self._index = source() if callable(source) else source
        return self._index

    def own(self, workflow_id: str, step_id: str, *, limit: int = 3) -> list[Experience]:
        """This step's own experiences, newest first (SQLite only: cheap)."""
        own = self._store.find_experiences(workflow_id=workflow_id, step_id=step_id)
        return sorted(own, key=lambda e: e.created_at, reverse=True)[:limit]

    def recall(
        self, workflow_id: str, step_id: str, query: str, *, limit: int = 3
    ) -> list[Experience]:
        """Experiences for this step (newest first), else similar steps' from the index."""
        found = self.own(workflow_id, step_id, limit=limit)
        if found:
            return found
        index = self._search_index()
        if index is None:
            return []
        hits = [
            h for h in index.search_experiences(query, limit=limit) if h.score >= SIMILAR_ENOUGH
        ]
        result = []
        for hit in hits:
            experience = self._store.get_experience(hit.id)
            if experience is not None:
                result.append(experience)
        return result

    def prove(self, experience_id: str) -> None:
        """Note that a run *experience_id* helped succeeded (see :attr:`Experience.trusted`)."""
        self._store.prove_experience(experience_id)

    def remember(self, experience: Experience) -> None:
        """Store *experience* and index it."""
        self._store.add_experience(experience)
        index = self._search_index()
        if index is not None:
            index.upsert_experiences([experience])
            if self._queue is not None:
                self._queue.done("experience", [experience.id])
