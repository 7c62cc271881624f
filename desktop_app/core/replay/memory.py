"""Rung 3: repairs remembered from earlier runs (SQLite; the semantic index for look-alikes),
each with what later runs taught about it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Final

from desktop_app.core.models.common import utcnow
from desktop_app.core.models.experience import Experience, site_of
from desktop_app.core.ports import ExperienceStore, IndexQueue, SearchIndex

__all__ = ["ExperienceMemory"]

#: How similar (0–1) another step's experience must be to be tried for this one.
SIMILAR_ENOUGH = 0.8
#: The most experiences kept for one site; past it, the least useful go.
PER_SITE: Final = 2000


def _ranked(experiences: Iterable[Experience]) -> list[Experience]:
    """Those still in use, most useful first, then newest."""
    live = [e for e in experiences if not e.expired]
    live.sort(key=lambda e: e.created_at, reverse=True)
    live.sort(key=lambda e: e.utility, reverse=True)
    return live


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
        """This step's own experiences still in use, most useful first, then newest (SQLite
        only: cheap)."""
        return _ranked(self._store.find_experiences(workflow_id=workflow_id, step_id=step_id))[
            :limit
        ]

    def recall(
        self, workflow_id: str, step_id: str, query: str, *, limit: int = 3
    ) -> list[Experience]:
        """Experiences for this step, else similar steps' from the index (those in use), the
        most similar and useful first (similarity times utility)."""
        found = self.own(workflow_id, step_id, limit=limit)
        if found:
            return found
        index = self._search_index()
        if index is None:
            return []
        hits = [
            h for h in index.search_experiences(query, limit=limit * 2) if h.score >= SIMILAR_ENOUGH
        ]
        stored = self._store.get_experiences([h.id for h in hits])
        scored = []
        for hit in hits:
            experience = stored.get(hit.id)
            if experience is not None and not experience.expired:
                scored.append((hit.score * experience.utility, experience))
        scored.sort(key=lambda pair: -pair[0])
        return [experience for _, experience in scored[:limit]]

    def note_uses(self, uses: Iterable[tuple[str, bool]], *, proven: bool) -> None:
        """Count what a run taught: for each ``(experience id, held)``, whether the step that
        used it then held. With *proven* (the run succeeded), those after which the step held
        are proven (see :attr:`Experience.trusted`)."""
        now = utcnow()
        changed: dict[str, Experience] = {}
        for experience_id, held in uses:
            experience = changed.get(experience_id) or self._store.get_experience(experience_id)
            if experience is None:
                continue
            update: dict[str, object] = {"last_used_at": now}
            if held:
                update |= {"successes": experience.successes + 1, "failed_in_row": 0}
                if proven:
                    update["proven"] = True
            else:
                update |= {
                    "failures": experience.failures + 1,
                    "failed_in_row": experience.failed_in_row + 1,
                }
            changed[experience_id] = experience.model_copy(update=update)
        if changed:
            self._store.update_experiences(list(changed.values()))

    def retire(self, workflow_id: str, step_ids: Iterable[str]) -> int:
        """The page changed back for these steps (their recorded locators found the element
        again): their repairs are not used after this. How many were retired."""
        wanted = set(step_ids)
        if not wanted:
            return 0
        now = utcnow()
        retired = [
            e.model_copy(update={"retired_at": now})
            for e in self._store.find_experiences(workflow_id=workflow_id)
            if e.step_id in wanted and e.retired_at is None
        ]
        if retired:
            self._store.update_experiences(retired)
        return len(retired)

    def remember(self, experience: Experience) -> None:
        """Store *experience* and index it; past :data:`PER_SITE` experiences on its site, the
        least useful of them go (:meth:`evict`)."""
        self._store.add_experience(experience)
        index = self._search_index()
        if index is not None:
            index.upsert_experiences([experience])
            if self._queue is not None:
                self._queue.done("experience", [experience.id])
        self.evict(site_of(experience.page_url))

    def evict(self, site: str, *, keep: int = PER_SITE) -> int:
        """Keep at most *keep* experiences of *site*: those no longer used go first, then the
        least useful, the least recently used among equals. How many went."""
        if self._store.site_count(site) <= keep:
            return 0
        found = self._store.find_experiences(site=site)
        found.sort(key=lambda e: e.last_used_at or e.created_at)
        found.sort(key=lambda e: (not e.expired, e.utility))
        going = [e.id for e in found[: len(found) - keep]]
        self._store.delete_experiences(going)
        index = self._search_index() if self._index is not None else None
        if index is not None:
            index.remove_experiences(going)
        return len(going)
