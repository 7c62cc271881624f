"""The semantic search index on an embedded Chroma (PersistentClient) database."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

from desktop_app.core.errors import StoreError
from desktop_app.core.models.experience import Experience
from desktop_app.core.models.workflow import WorkflowStatus
from desktop_app.core.views import IndexedWorkflow, SearchHit

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.collection_configuration import CreateCollectionConfiguration
    from chromadb.api.models.Collection import Collection
    from chromadb.api.types import Documents, EmbeddingFunction, Metadata, Where

__all__ = ["DOMAIN_KEY_PREFIX", "EXPERIENCES", "WORKFLOWS", "ChromaSearchIndex"]

#: Collection names.
WORKFLOWS: Final = "workflows"
EXPERIENCES: Final = "experiences"
#: A workflow entry has one ``True`` metadata key per domain, ``"domain:" + domain``.
DOMAIN_KEY_PREFIX: Final = "domain:"

_CHUNK: Final = 256  # entries embedded and written per call (chroma's limit is ~5,000)


def _domain_key(domain: str) -> str:
    return DOMAIN_KEY_PREFIX + domain.strip().lower()


def _score(distance: float) -> float:
    """Cosine similarity from chroma's cosine distance, clamped to [0, 1]."""
    return min(1.0, max(0.0, 1.0 - float(distance)))


class ChromaSearchIndex:
    """A :class:`~desktop_app.core.ports.SearchIndex` on Chroma, with two cosine collections.

    Nothing touches the disk until the first call. The collections remember their embedding
    function (by name and configuration); opening them with a different one raises
    :class:`StoreError` that tells to rebuild with ``procedura reindex`` (which calls
    :meth:`clear`, the one method that works whatever the index was built with).

    Args:
        path: the Chroma directory (created on first use).
        embedding_function: from
            :func:`~desktop_app.adapters.search.embeddings.make_embedding_function`.
    """

    def __init__(self, path: Path, embedding_function: EmbeddingFunction[Documents]) -> None:
        self._path = Path(path)
        self._ef = embedding_function
        self._lock = threading.RLock()
        self._client: ClientAPI | None = None
        self._collections: dict[str, Collection] = {}

    @property
    def path(self) -> Path:
        """The Chroma directory."""
        return self._path

    # ── opening and closing ──────────────────────────────────────────────────────────────────

    def _open_client(self) -> ClientAPI:
        if self._client is None:
            import chromadb
            from chromadb.config import Settings

            # The embedding functions must be registered before chroma reads a configuration.
            import desktop_app.adapters.search.embeddings  # noqa: F401

            with self._errors("open"):
                self._client = chromadb.PersistentClient(
                    path=str(self._path),
                    settings=Settings(anonymized_telemetry=False, allow_reset=False),
                )
        return self._client

    def _collection(self, name: str) -> Collection:
        collection = self._collections.get(name)
        if collection is not None:
            return collection
        with self._lock:
            collection = self._collections.get(name)
            if collection is None:
                collection = self._open_collection(self._open_client(), name)
                self._collections[name] = collection
            return collection

    def _open_collection(self, client: ClientAPI, name: str) -> Collection:
        from chromadb.errors import NotFoundError

        with self._errors("open"):
            try:
                existing = client.get_collection(name, embedding_function=None)
            except NotFoundError:
                return self._create_collection(client, name)
            persisted = existing.configuration_json.get("embedding_function") or {}
            self._check_embeddings(persisted)
            return client.get_collection(name, embedding_function=self._ef)  # type: ignore[arg-type]

    def _create_collection(self, client: ClientAPI, name: str) -> Collection:
        configuration: CreateCollectionConfiguration = {"hnsw": {"space": "cosine"}}
        return client.create_collection(
            name,
            configuration=configuration,
            embedding_function=self._ef,  # type: ignore[arg-type]
        )

    def _check_embeddings(self, persisted: Mapping[str, Any]) -> None:
        from desktop_app.adapters.search.embeddings import describe_embeddings

        name = persisted.get("name")
        config = persisted.get("config") or {}
        ours = self._ef.get_config()
        if name == self._ef.name() and config.get("model") == ours.get("model"):
            return
        built = describe_embeddings(name, config)
        wanted = describe_embeddings(self._ef.name(), ours)
        raise StoreError(
            f"the search index was built with {built} embeddings; "
            f"run `procedura reindex` to rebuild it with {wanted}"
        )

    def close(self) -> None:
        """Release the Chroma client (the next call opens it again)."""
        with self._lock:
            client, self._client = self._client, None
            self._collections.clear()
            close = getattr(client, "close", None)  # chromadb ≥ 1.1 clients have close()
            if callable(close):
                with self._errors("close"):
                    close()

    def __enter__(self) -> ChromaSearchIndex:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        """Chroma's and the OS's errors as :class:`StoreError`; ours pass through."""
        from chromadb.errors import ChromaError

        try:
            yield
        except StoreError:
            raise
        except (ChromaError, OSError, ValueError) as exc:
            detail = " ".join(str(exc).split())[:300] or type(exc).__name__
            raise StoreError(f"cannot {action} the search index at {self._path}: {detail}") from exc

    # ── workflows ────────────────────────────────────────────────────────────────────────────

    def upsert_workflows(self, workflows: Sequence[IndexedWorkflow]) -> None:
        """Add or replace the entries of these workflows (the last one wins for a repeated id)."""
        latest = {w.id: w for w in workflows}
        if not latest:
            return
        collection = self._collection(WORKFLOWS)
        items = list(latest.values())
        for start in range(0, len(items), _CHUNK):
            chunk = items[start : start + _CHUNK]
            ids = [w.id for w in chunk]
            with self._errors("update"):
                # Chroma's upsert merges metadata, which would keep the keys of dropped domains.
                collection.delete(ids=ids)
                collection.add(
                    ids=ids,
                    documents=[w.text() for w in chunk],
                    metadatas=[self._workflow_metadata(w) for w in chunk],
                )

    @staticmethod
    def _workflow_metadata(workflow: IndexedWorkflow) -> Metadata:
        domains = [d.strip().lower() for d in workflow.domains if d.strip()]
        metadata: dict[str, str | int | bool] = {
            "workflow_id": workflow.id,
            "version": workflow.version,
            "status": str(workflow.status.value),
            "name": workflow.name,
            "domain": domains[0] if domains else "",
        }
        for domain in domains:
            metadata[_domain_key(domain)] = True
        return metadata

    def remove_workflow(self, workflow_id: str) -> None:
        """Drop a workflow's entry and the experiences indexed for it."""
        with self._errors("update"):
            self._collection(WORKFLOWS).delete(ids=[workflow_id])
            self._collection(EXPERIENCES).delete(where={"workflow_id": workflow_id})

    def search_workflows(
        self,
        query: str,
        *,
        limit: int = 5,
        status: WorkflowStatus | None = None,
        domain: str | None = None,
    ) -> list[SearchHit]:
        """The workflows most similar to *query*, best first, filtered by *status* / *domain*."""
        conditions: list[Where] = []
        if status is not None:
            conditions.append({"status": str(status.value)})
        if domain is not None and domain.strip():
            conditions.append({_domain_key(domain): True})
        return self._search(WORKFLOWS, query, limit, conditions)

    # ── experiences ──────────────────────────────────────────────────────────────────────────

    def upsert_experiences(self, experiences: Sequence[Experience]) -> None:
        """Add or replace experiences (the last one wins for a repeated id)."""
        latest = {e.id: e for e in experiences}
        if not latest:
            return
        collection = self._collection(EXPERIENCES)
        items = list(latest.values())
        for start in range(0, len(items), _CHUNK):
            chunk = items[start : start + _CHUNK]
            with self._errors("update"):
                collection.upsert(
                    ids=[e.id for e in chunk],
                    documents=[e.search_text() for e in chunk],
                    metadatas=[
                        {
                            "workflow_id": e.workflow_id,
                            "workflow_version": e.workflow_version,
                            "step_kind": e.step_kind,
                        }
                        for e in chunk
                    ],
                )

    def search_experiences(
        self, query: str, *, limit: int = 5, workflow_id: str | None = None
    ) -> list[SearchHit]:
        """The experiences most similar to *query*, best first, optionally of one workflow."""
        conditions: list[Where] = []
        if workflow_id is not None:
            conditions.append({"workflow_id": workflow_id})
        return self._search(EXPERIENCES, query, limit, conditions)

    # ── both ─────────────────────────────────────────────────────────────────────────────────

    def _search(
        self, name: str, query: str, limit: int, conditions: list[Where]
    ) -> list[SearchHit]:
        if not query.strip() or limit <= 0:
            return []
        collection = self._collection(name)
        where: Where | None
        if not conditions:
            where = None
        elif len(conditions) == 1:
            where = conditions[0]
        else:
            where = {"$and": conditions}
        with self._errors("search"):
            if collection.count() == 0:
                return []
            result = collection.query(
                query_texts=[query], n_results=limit, where=where, include=["distances"]
            )
        ids = result["ids"][0] if result["ids"] else []
        distances = result["distances"][0] if result["distances"] else []
        return [
            SearchHit(id=item_id, score=_score(distance))
            for item_id, distance in zip(ids, distances, strict=True)
        ]

    def clear(self) -> None:
        """Delete and recreate both collections, with this index's embedding function."""
        from chromadb.errors import NotFoundError

        with self._lock:
            client = self._open_client()
            self._collections.clear()
            with self._errors("clear"):
                for name in (WORKFLOWS, EXPERIENCES):
                    with suppress(NotFoundError):
                        client.delete_collection(name)
                    self._collections[name] = self._create_collection(client, name)

    def count(self) -> tuple[int, int]:
        """How many workflows and experiences are indexed."""
        with self._errors("read"):
            return self._collection(WORKFLOWS).count(), self._collection(EXPERIENCES).count()
