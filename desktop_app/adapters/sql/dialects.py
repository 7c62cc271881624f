"""The few SQL expressions SQLite (personal mode) and PostgreSQL (team mode) spell differently.

Each is a SQLAlchemy construct compiled per dialect (``sqlalchemy.ext.compiler``), so the
stores build one query and it runs on both.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnExpressionArgument
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement
from sqlalchemy.types import Float, String

__all__ = ["Days", "JsonText"]


class JsonText(FunctionElement[str]):
    """The text at a top-level *key* of a JSON document stored in a text column."""

    type = String()
    inherit_cache = False  # the key is not a clause: statements holding one are not cached

    def __init__(self, column: ColumnExpressionArgument[Any], key: str) -> None:
        super().__init__(column)
        self.key = key


@compiles(JsonText, "sqlite")
def _json_text_sqlite(element: JsonText, compiler: SQLCompiler, **kw: Any) -> str:
    column = compiler.process(next(iter(element.clauses)), **kw)
    return f"json_extract({column}, '$.{element.key}')"


@compiles(JsonText, "postgresql")
def _json_text_postgres(element: JsonText, compiler: SQLCompiler, **kw: Any) -> str:
    column = compiler.process(next(iter(element.clauses)), **kw)
    return f"(CAST({column} AS jsonb) ->> '{element.key}')"


class Days(FunctionElement[float]):
    """The days from *start* to *end*, two timestamp columns (NULL when either is)."""

    type = Float()
    inherit_cache = True

    def __init__(
        self, start: ColumnExpressionArgument[Any], end: ColumnExpressionArgument[Any]
    ) -> None:
        super().__init__(start, end)


def _ends(element: Days, compiler: SQLCompiler, **kw: Any) -> tuple[str, str]:
    start, end = list(element.clauses)
    return compiler.process(start, **kw), compiler.process(end, **kw)


@compiles(Days, "sqlite")
def _days_sqlite(element: Days, compiler: SQLCompiler, **kw: Any) -> str:
    start, end = _ends(element, compiler, **kw)
    return f"(julianday({end}) - julianday({start}))"


@compiles(Days, "postgresql")
def _days_postgres(element: Days, compiler: SQLCompiler, **kw: Any) -> str:
    start, end = _ends(element, compiler, **kw)
    return f"(EXTRACT(EPOCH FROM ({end} - {start})) / 86400.0)"
