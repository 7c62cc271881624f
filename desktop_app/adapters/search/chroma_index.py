"""The semantic search index on Chroma, run in a worker process that never holds a secret."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from desktop_app.adapters.search.server import ChromaServer
from desktop_app.adapters.search.worker import IndexWorker, describe_index
from desktop_app.core.errors import StoreError
from desktop_app.core.models.experience import Experience
from desktop_app.core.models.workflow import WorkflowStatus
from desktop_app.core.views import IndexedEntries, IndexedWorkflow, SearchHit

if TYPE_CHECKING:
    import numpy.typing as npt
    from chromadb.api.types import Documents, EmbeddingFunction

__all__ = [
    "DOMAIN_KEY_PREFIX",
    "EMBEDDING_KEY",
    "EMBEDDING_MODEL_KEY",
    "EXPERIENCES",
    "WORKFLOWS",
    "ChromaSearchIndex",
]

#: Collection names.
WORKFLOWS: Final = "workflows"
EXPERIENCES: Final = "experiences"
#: A workflow entry has one ``True`` metadata key per domain, ``"domain:" + domain``.
DOMAIN_KEY_PREFIX: Final = "domain:"
#: Collection metadata: the name of the embedding function that made its vectors, and its model.
EMBEDDING_KEY: Final = "procedura:embedding"
EMBEDDING_MODEL_KEY: Final = "procedura:embedding_model"

_CHUNK: Final = 256  # entries embedded and written per call (chroma's limit is ~5,000)

_Where = dict[str, Any]


def _domain_key(domain: str) -> str:
    return DOMAIN_KEY_PREFIX + domain.strip().lower()


def _score(distance: float) -> float:
    """Cosine similarity from chroma's cosine distance, clamped to [0, 1]."""
    return min(1.0, max(0.0, 1.0 - float(distance)))


class ChromaSearchIndex:
    """A :class:`~desktop_app.core.ports.SearchIndex` on Chroma, with two cosine collections.

    Chroma runs in a worker process (:mod:`~desktop_app.adapters.search.worker`) that holds no
    secret, because its HNSW files can carry stale bytes of the memory of the process that writes
    them (docs/adr/0003-index-heap-bytes.md). This object embeds documents and queries with
    *embedding_function* (an API key stays here) and sends the worker only vectors, texts, ids
    and metadata.

    Nothing starts and nothing touches the disk until the first call. Each collection records the
    embedding function (name and model) in its metadata; opening it with a different one raises
    :class:`StoreError` that tells to rebuild with ``procedura reindex`` (which calls
    :meth:`clear`, the one method that works whatever the index was built with). Collections of
    earlier versions, which carry the function in their configuration, are read the same way.

    A worker that dies makes the call under way fail with a one-line :class:`StoreError`; the
    next call starts a new one. :meth:`close` stops it, and so does the end of this process.

    In team mode the index is on a Chroma server (:class:`ChromaServer`): the worker is then an
    HTTP client, its token handed over on its stdin; several machines share the collections,
    and a server that cannot be reached or refuses the token fails a call with a one-line
    :class:`StoreError` that says so.

    Args:
        target: the Chroma directory (created on first use), or the Chroma server.
        embedding_function: from
            :func:`~desktop_app.adapters.search.embeddings.make_embedding_function`.
    """

    def __init__(
        self, target: Path | ChromaServer, embedding_function: EmbeddingFunction[Documents]
    ) -> None:
        self._target: Path | ChromaServer = (
            target if isinstance(target, ChromaServer) else Path(target)
        )
        self._where = describe_index(self._target)
        self._ef = embedding_function
        self._lock = threading.RLock()
        self._worker: IndexWorker | None = None
        self._opened: set[str] = set()
        # Collections seen holding entries: a search of one needs no count first (the count
        # costs as much as the search at 100,000 entries). One emptied since finds nothing.
        self._filled: set[str] = set()
        self._dimensions: dict[str, int] = {}  # of the vectors a collection holds, when known

    @property
    def path(self) -> Path | None:
        """The Chroma directory; ``None`` for an index on a server (see :attr:`server`)."""
        return None if isinstance(self._target, ChromaServer) else self._target

    @property
    def server(self) -> ChromaServer | None:
        """The Chroma server the index is on; ``None`` for a local directory."""
        return self._target if isinstance(self._target, ChromaServer) else None

    def describe(self) -> str:
        """Where the index is, for messages: ``the search index at /dir`` or ``the search index
        on the Chroma server at http://host:port`` (never the token)."""
        return self._where

    @property
    def worker_pid(self) -> int | None:
        """The worker process's id while one runs."""
        worker = self._worker
        return None if worker is None or worker.stopped else worker.pid

    # ── the worker ───────────────────────────────────────────────────────────────────────────

    def _call(self, action: str, op: str, /, **args: Any) -> Any:
        with self._lock:
            worker = self._worker
            if worker is None or worker.stopped:
                self._opened.clear()
                target = self._target
                worker = self._worker = IndexWorker(
                    target if isinstance(target, ChromaServer) else target.absolute()
                )
            try:
                return worker.call(action, op, **args)
            finally:
                if worker.stopped:
                    self._worker = None
                    self._opened.clear()

    def _identity(self) -> dict[str, str]:
        return {
            EMBEDDING_KEY: self._ef.name(),
            EMBEDDING_MODEL_KEY: str(self._ef.get_config().get("model", "")),
        }

    def _open(self, name: str) -> None:
        """Open (or create) a collection in the worker and check its embeddings are ours."""
        if name in self._opened:
            return
        with self._lock:
            if name in self._opened:
                return
            info = self._call("open", "open", name=name, metadata=self._identity())
            self._check_embeddings(info["metadata"], info["embedding_function"])
            if info["dimension"]:
                self._dimensions[name] = int(info["dimension"])
            self._opened.add(name)

    def _check_embeddings(
        self, metadata: Mapping[str, Any], legacy: Mapping[str, Any] | None
    ) -> None:
        from desktop_app.adapters.search.embeddings import describe_embeddings

        if EMBEDDING_KEY in metadata:
            name = metadata.get(EMBEDDING_KEY)
            model = metadata.get(EMBEDDING_MODEL_KEY)
        else:  # built before the worker: the function is in chroma's configuration
            name = (legacy or {}).get("name")
            model = ((legacy or {}).get("config") or {}).get("model")
        ours = self._identity()
        if name == ours[EMBEDDING_KEY] and model == ours[EMBEDDING_MODEL_KEY]:
            return
        built = describe_embeddings(name, {"model": model})
        raise StoreError(
            f"the search index was built with {built} embeddings; "
            f"run `procedura reindex` to rebuild it with {self._describe()}"
        )

    def _embed(self, action: str, name: str, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """The vectors of *texts* for collection *name*, one row each, computed here."""
        with self._errors(action):
            vectors = np.asarray(self._ef(list(texts)), dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise StoreError(
                f"cannot {action} {self._where}: the embedding function "
                f"returned {vectors.shape[0] if vectors.ndim else 0} vectors for {len(texts)} texts"
            )
        held = self._dimensions.get(name)
        if held is not None and held != vectors.shape[1]:
            wanted = self._describe()
            raise StoreError(
                f"the search index holds vectors of {held} dimensions but {wanted} embeddings "
                f"have {vectors.shape[1]}; run `procedura reindex` to rebuild it"
            )
        return vectors

    def _describe(self) -> str:
        from desktop_app.adapters.search.embeddings import describe_embeddings

        return describe_embeddings(self._ef.name(), self._ef.get_config())

    @contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        """The embedding function's stray errors as :class:`StoreError`; ours pass through."""
        try:
            yield
        except StoreError:
            raise
        except (OSError, ValueError) as exc:
            detail = " ".join(str(exc).split())[:300] or type(exc).__name__
            raise StoreError(f"cannot {action} {self._where}: {detail}") from exc

    def close(self) -> None:
        """Stop the worker (the next call starts a new one)."""
        with self._lock:
            worker, self._worker = self._worker, None
            self._opened.clear()
            if worker is not None:
                worker.stop()

    def __enter__(self) -> ChromaSearchIndex:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # ── workflows ────────────────────────────────────────────────────────────────────────────

    def upsert_workflows(self, workflows: Sequence[IndexedWorkflow]) -> None:
        """Add or replace the entries of these workflows (the last one wins for a repeated id)."""
        latest = {w.id: w for w in workflows}
        if not latest:
            return
        self._open(WORKFLOWS)
        items = list(latest.values())
        for start in range(0, len(items), _CHUNK):
            chunk = items[start : start + _CHUNK]
            documents = [w.embedding_text() for w in chunk]
            vectors = self._embed("update", WORKFLOWS, documents)
            self._call(
                "update",
                "replace",
                name=WORKFLOWS,
                ids=[w.id for w in chunk],
                documents=documents,
                metadatas=[self._workflow_metadata(w) for w in chunk],
                embeddings=vectors,
            )
            self._dimensions.setdefault(WORKFLOWS, vectors.shape[1])

    @staticmethod
    def _workflow_metadata(workflow: IndexedWorkflow) -> dict[str, str | int | bool]:
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
        self._open(WORKFLOWS)
        self._open(EXPERIENCES)
        self._call("update", "delete", name=WORKFLOWS, ids=[workflow_id])
        self._call("update", "delete", name=EXPERIENCES, where={"workflow_id": workflow_id})

    def search_workflows(
        self,
        query: str,
        *,
        limit: int = 5,
        status: WorkflowStatus | None = None,
        domain: str | None = None,
    ) -> list[SearchHit]:
        """The workflows most similar to *query*, best first, filtered by *status* / *domain*."""
        conditions: list[_Where] = []
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
        self._open(EXPERIENCES)
        items = list(latest.values())
        for start in range(0, len(items), _CHUNK):
            chunk = items[start : start + _CHUNK]
            documents = [e.search_text() for e in chunk]
            vectors = self._embed("update", EXPERIENCES, documents)
            self._call(
                "update",
                "upsert",
                name=EXPERIENCES,
                ids=[e.id for e in chunk],
                documents=documents,
                metadatas=[
                    {
                        "workflow_id": e.workflow_id,
                        "workflow_version": e.workflow_version,
                        "step_kind": e.step_kind,
                    }
                    for e in chunk
                ],
                embeddings=vectors,
            )
            self._dimensions.setdefault(EXPERIENCES, vectors.shape[1])

    def remove_experiences(self, ids: Sequence[str]) -> None:
        """Drop these experiences' entries."""
        if ids:
            self._open(EXPERIENCES)
            self._call("update", "delete", name=EXPERIENCES, ids=list(ids))

    def search_experiences(
        self, query: str, *, limit: int = 5, workflow_id: str | None = None
    ) -> list[SearchHit]:
        """The experiences most similar to *query*, best first, optionally of one workflow."""
        conditions: list[_Where] = []
        if workflow_id is not None:
            conditions.append({"workflow_id": workflow_id})
        return self._search(EXPERIENCES, query, limit, conditions)

    # ── both ─────────────────────────────────────────────────────────────────────────────────

    def _search(
        self, name: str, query: str, limit: int, conditions: list[_Where]
    ) -> list[SearchHit]:
        if not query.strip() or limit <= 0:
            return []
        self._open(name)
        where: _Where | None
        if not conditions:
            where = None
        elif len(conditions) == 1:
            where = conditions[0]
        else:
            where = {"$and": conditions}
        if name not in self._filled:
            if self._call("search", "count", name=name) == 0:
                return []  # nothing to compare with: no need to embed the query
            self._filled.add(name)
        vector = self._embed("search", name, [query])[0]
        ids, distances = self._call(
            "search", "query", name=name, vector=vector, n=limit, where=where
        )
        return [
            SearchHit(id=item_id, score=_score(distance))
            for item_id, distance in zip(ids, distances, strict=True)
        ]

    def clear(self) -> None:
        """Delete and recreate both collections, for this index's embedding function."""
        with self._lock:
            self._opened.clear()
            self._filled.clear()
            self._dimensions.clear()
            self._call("clear", "clear", names=[WORKFLOWS, EXPERIENCES], metadata=self._identity())
            self._opened.update((WORKFLOWS, EXPERIENCES))

    def entries(self) -> IndexedEntries:
        """Every workflow's indexed version and status, and every experience id indexed."""
        self._open(WORKFLOWS)
        self._open(EXPERIENCES)
        workflows: dict[str, tuple[int, WorkflowStatus]] = {}
        for item_id, metadata in self._call("read", "entries", name=WORKFLOWS):
            with contextlib.suppress(KeyError, ValueError, TypeError):  # not ours: stale
                workflows[item_id] = (
                    int(metadata["version"]),
                    WorkflowStatus(metadata["status"]),
                )
            workflows.setdefault(item_id, (0, WorkflowStatus.DRAFT))
        experiences = frozenset(i for i, _ in self._call("read", "entries", name=EXPERIENCES))
        return IndexedEntries(workflows=workflows, experiences=experiences)

    def count(self) -> tuple[int, int]:
        """How many workflows and experiences are indexed."""
        self._open(WORKFLOWS)
        self._open(EXPERIENCES)
        return self._call("read", "count", name=WORKFLOWS), self._call(
            "read", "count", name=EXPERIENCES
        )
