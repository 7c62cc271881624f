"""The word index of workflows, in the app's database: SQLite FTS5 ranked by BM25 (personal
mode), PostgreSQL full-text search ranked by ``ts_rank_cd`` (team mode).

Each indexed workflow has a row in ``text_index_entries`` (version, status and domains, to
filter by) whose id is the rowid of its text in the FTS5 table ``text_index``. The text is
:meth:`~desktop_app.core.views.IndexedWorkflow.text` (name, description, inputs, steps, sites:
more than the embedding index embeds), tokenized by ``porter unicode61 remove_diacritics 2``:
words split at anything not a letter or digit (``full_name`` is "full" and "name"), case and
diacritics folded ("Résumé" matches "resume"), and reduced to their Porter stem ("reimbursed"
matches "reimbursement").

On PostgreSQL, ``text_index`` is a table of the same two columns (``rowid``, ``body``) and a
``words`` column PostgreSQL computes (``to_tsvector('english', body)``, GIN-indexed): words
stemmed by Snowball's English stemmer, case folded, English stop words left out; diacritics
are kept (the ``unaccent`` extension would need a superuser).

A query is taken as words, never as FTS5 syntax: each word is quoted, and every one the index
holds must match (``"travel" AND "costs"``: :meth:`SqlTextIndex.search_workflows_every_word`),
so quotes, ``*``, ``-``, ``AND``, ``NEAR`` or brackets a person types cannot make it fail, and
BM25 weighs the rare words most. English function words ("the",
"for") are left out of the query.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Final

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import OperationalError

from desktop_app.adapters.sql.database import for_writing
from desktop_app.adapters.sql.tables import TEXT_INDEX
from desktop_app.core.errors import StoreError
from desktop_app.core.models.workflow import WorkflowStatus
from desktop_app.core.views import IndexedWorkflow, SearchHit, WordMatches

__all__ = [
    "MAX_QUERY_WORDS",
    "STOP_WORDS",
    "SqlTextIndex",
    "create_text_index",
    "query_words",
    "write_entries",
]

#: Words of a query used (the first ones, each once); the rest are ignored.
MAX_QUERY_WORDS: Final = 32

#: English function words left out of a query: Lucene's default English stop set
#: (``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET``), unchanged. In a small library BM25 would give
#: them the weight of rare words ("for" in two workflows of three).
STOP_WORDS: Final = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    ]
)

# What unicode61 takes for a token: letters and digits (the underscore separates).
_WORD: Final = re.compile(r"[^\W_]+")


def query_words(query: str) -> list[str]:
    """The words of *query* a search uses: lower case, each once, but :data:`STOP_WORDS`, at
    most :data:`MAX_QUERY_WORDS`."""
    found = (w.lower() for w in _WORD.findall(query))
    return list(dict.fromkeys(w for w in found if w not in STOP_WORDS))[:MAX_QUERY_WORDS]


def _domains(workflow: IndexedWorkflow) -> str:
    return json.dumps([d.strip().lower() for d in workflow.domains if d.strip()])


def write_entries(conn: Connection, workflows: Sequence[IndexedWorkflow]) -> None:
    """Add or replace the entries of *workflows* in *conn*'s transaction (the last one wins
    for a repeated id)."""
    for workflow in {w.id: w for w in workflows}.values():
        values: dict[str, Any] = {
            "workflow_id": workflow.id,
            "version": workflow.version,
            "status": str(workflow.status.value),
            "domains": _domains(workflow),
        }
        rowid = conn.execute(
            text("SELECT id FROM text_index_entries WHERE workflow_id = :workflow_id"), values
        ).scalar()
        if rowid is None:
            rowid = conn.execute(
                text(
                    "INSERT INTO text_index_entries (workflow_id, version, status, domains) "
                    "VALUES (:workflow_id, :version, :status, :domains) RETURNING id"
                ),
                values,
            ).scalar_one()
        else:
            conn.execute(
                text(
                    "UPDATE text_index_entries SET version = :version, status = :status, "
                    "domains = :domains WHERE id = :id"
                ),
                {**values, "id": rowid},
            )
            conn.execute(text(f"DELETE FROM {TEXT_INDEX} WHERE rowid = :id"), {"id": rowid})
        conn.execute(
            text(f"INSERT INTO {TEXT_INDEX} (rowid, body) VALUES (:id, :body)"),
            {"id": rowid, "body": workflow.text()},
        )


class SqlTextIndex:
    """The word index over a migrated SQLite engine (the workflow half of a search index: see
    :class:`~desktop_app.adapters.search.hybrid_index.HybridSearchIndex`)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._writer = for_writing(engine)

    @contextmanager
    def _writing(self, action: str) -> Iterator[Connection]:
        with self._errors(action), self._writer.begin() as conn:
            yield conn

    @contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        try:
            yield
        except OperationalError as exc:
            raise StoreError(
                f"cannot {action} the word index in {self._engine.url.database}: {exc.orig}"
            ) from None

    def upsert_workflows(self, workflows: Sequence[IndexedWorkflow]) -> None:
        """Add or replace the entries of these workflows, in one transaction."""
        if workflows:
            with self._writing("update") as conn:
                write_entries(conn, workflows)

    def remove_workflow(self, workflow_id: str) -> None:
        """Drop a workflow's entry (nothing happens if it has none)."""
        with self._writing("update") as conn:
            rowid = conn.execute(
                text("SELECT id FROM text_index_entries WHERE workflow_id = :w"), {"w": workflow_id}
            ).scalar()
            if rowid is not None:
                conn.execute(text(f"DELETE FROM {TEXT_INDEX} WHERE rowid = :id"), {"id": rowid})
                conn.execute(text("DELETE FROM text_index_entries WHERE id = :id"), {"id": rowid})

    def search_workflows_every_word(
        self,
        query: str,
        *,
        limit: int = 5,
        status: WorkflowStatus | None = None,
        domain: str | None = None,
    ) -> WordMatches:
        """The workflows holding every word of *query* that some indexed workflow holds (of any
        status or domain), best first (BM25, higher is better), only those of *status* and
        with *domain* among their domains when given; and whether some workflow holds each word
        of *query*.

        A word no workflow holds cannot tell workflows apart, so it is left out of the match
        (and the matches are not *complete*).
        """
        words = query_words(query)
        dialect = self._engine.dialect.name
        match = _match(dialect)
        with self._errors("search"), self._engine.connect() as conn:
            known = [
                w
                for w in words
                if conn.execute(
                    text(f"SELECT 1 FROM {TEXT_INDEX} WHERE {match} LIMIT 1"),
                    {"query": _expression(dialect, [w])},
                ).first()
                is not None
            ]
            if not known or limit <= 0:
                return WordMatches(hits=(), complete=False)
            expression = _expression(dialect, known)
            hits = _ranked(conn, dialect, expression, limit=limit, status=status, domain=domain)
        return WordMatches(hits=tuple(hits), complete=len(known) == len(words))

    def entries(self) -> dict[str, tuple[int, WorkflowStatus]]:
        """Every indexed workflow's version and status (an unknown status reads as version 0,
        draft: stale)."""
        with self._errors("read"), self._engine.connect() as conn:
            rows = conn.execute(
                text("SELECT workflow_id, version, status FROM text_index_entries")
            ).all()
        held: dict[str, tuple[int, WorkflowStatus]] = {}
        for workflow_id, version, status in rows:
            try:
                held[str(workflow_id)] = (int(version), WorkflowStatus(status))
            except ValueError:
                held[str(workflow_id)] = (0, WorkflowStatus.DRAFT)
        return held

    def text_of(self, workflow_id: str) -> str | None:
        """The text indexed for a workflow, or None."""
        with self._errors("read"), self._engine.connect() as conn:
            found = conn.execute(
                text(
                    f"SELECT t.body FROM {TEXT_INDEX} AS t JOIN text_index_entries AS e "
                    "ON e.id = t.rowid WHERE e.workflow_id = :w"
                ),
                {"w": workflow_id},
            ).scalar()
        return None if found is None else str(found)

    def clear(self) -> None:
        """Remove every entry (before a rebuild)."""
        with self._writing("clear") as conn:
            conn.execute(text(f"DELETE FROM {TEXT_INDEX}"))
            conn.execute(text("DELETE FROM text_index_entries"))

    def count(self) -> int:
        """How many workflows are indexed."""
        with self._errors("read"), self._engine.connect() as conn:
            return int(conn.execute(text("SELECT count(*) FROM text_index_entries")).scalar_one())


#: PostgreSQL's text search configuration for the index (see the module's docstring).
PG_CONFIG: Final = "english"


def _match(dialect: str) -> str:
    """The condition that a text of :data:`TEXT_INDEX` matches the bound ``:query``."""
    if dialect == "postgresql":
        return f"{TEXT_INDEX}.words @@ to_tsquery('{PG_CONFIG}', :query)"
    return f"{TEXT_INDEX} MATCH :query"


def _expression(dialect: str, words: Sequence[str]) -> str:
    """A query that every one of *words* (letters and digits only) must match."""
    if dialect == "postgresql":
        return " & ".join(f"'{w}'" for w in words)
    return " AND ".join(f'"{w}"' for w in words)


def _ranked(
    conn: Connection,
    dialect: str,
    expression: str,
    *,
    limit: int,
    status: WorkflowStatus | None,
    domain: str | None,
) -> list[SearchHit]:
    """The workflows matching *expression* (:func:`_expression`), best first (score: BM25 or
    ``ts_rank_cd``, higher is better), only those of *status* and with *domain* among their
    domains when given."""
    postgres = dialect == "postgresql"
    conditions = [_match(dialect)]
    params: dict[str, Any] = {"query": expression, "limit": limit}
    if status is not None:
        conditions.append("e.status = :status")
        params["status"] = str(status.value)
    if domain is not None and domain.strip():
        if postgres:
            conditions.append("CAST(e.domains AS jsonb) @> CAST(:domain AS jsonb)")
            params["domain"] = json.dumps([domain.strip().lower()])
        else:
            conditions.append(
                "EXISTS (SELECT 1 FROM json_each(e.domains) AS d WHERE d.value = :domain)"
            )
            params["domain"] = domain.strip().lower()
    rank = (
        f"-ts_rank_cd({TEXT_INDEX}.words, to_tsquery('{PG_CONFIG}', :query))"
        if postgres
        else f"bm25({TEXT_INDEX})"
    )
    statement = text(
        f"SELECT e.workflow_id, {rank} AS rank FROM {TEXT_INDEX} "
        f"JOIN text_index_entries AS e ON e.id = {TEXT_INDEX}.rowid "
        f"WHERE {' AND '.join(conditions)} ORDER BY rank, e.workflow_id LIMIT :limit"
    )
    rows = conn.execute(statement, params).all()
    return [SearchHit(id=str(workflow_id), score=-float(rank)) for workflow_id, rank in rows]


def create_text_index(conn: Connection) -> None:
    """Create :data:`TEXT_INDEX` (the migration that brings the word index)."""
    if conn.dialect.name == "postgresql":
        conn.execute(
            text(
                f"CREATE TABLE {TEXT_INDEX} (rowid integer PRIMARY KEY, body text NOT NULL, "
                f"words tsvector GENERATED ALWAYS AS (to_tsvector('{PG_CONFIG}', body)) STORED)"
            )
        )
        conn.execute(text(f"CREATE INDEX ix_{TEXT_INDEX}_words ON {TEXT_INDEX} USING gin (words)"))
    else:
        conn.execute(
            text(
                f"CREATE VIRTUAL TABLE {TEXT_INDEX} USING fts5("
                "body, tokenize = 'porter unicode61 remove_diacritics 2')"
            )
        )
