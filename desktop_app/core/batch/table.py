"""A batch's input CSV: reading its header and rows (dialect sniffed), and a template to fill."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from desktop_app.core.errors import DocumentError
from desktop_app.core.models.workflow import ParameterType, Workflow

__all__ = [
    "BatchFileError",
    "BatchRow",
    "BatchTable",
    "parse_table",
    "read_table",
    "template_csv",
]

_DELIMITERS: Final = ",;\t|"
_SNIFF_CHARS: Final = 64 * 1024


class BatchFileError(DocumentError):
    """A CSV (input or results) file cannot be read: missing, not UTF-8, malformed.

    Its message names the file and, where there is one, the line: ``people.csv at line 4: …``.
    """


@dataclass(frozen=True, slots=True)
class BatchRow:
    """One data row as read: the line it starts on and its cells (as many as the line had)."""

    line: int
    cells: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BatchTable:
    """A CSV file: its column names (from the first line) and its non-blank rows.

    Attributes:
        source: the file as named to the user.
        columns: the column names, in order (unique; unnamed empty columns are dropped).
        rows: the data rows, blank ones skipped.
        delimiter: the separator found (``,``, ``;``, tab or ``|``); results use it too.
        path: the file, when the table was read from one.
    """

    source: str
    columns: tuple[str, ...]
    rows: tuple[BatchRow, ...]
    delimiter: str = ","
    path: Path | None = None


def read_table(path: Path, *, delimiter: str | None = None) -> BatchTable:
    """Read the CSV file at *path* (see :func:`parse_table`).

    Raises:
        BatchFileError: the file is missing or unreadable, not UTF-8, or malformed.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise BatchFileError("no such file", source=str(path)) from None
    except IsADirectoryError:
        raise BatchFileError("is a directory, not a CSV file", source=str(path)) from None
    except OSError as exc:
        raise BatchFileError(f"cannot be read ({exc.strerror})", source=str(path)) from None
    table = parse_table(data, source=str(path), delimiter=delimiter)
    return BatchTable(
        source=table.source,
        columns=table.columns,
        rows=table.rows,
        delimiter=table.delimiter,
        path=path,
    )


def parse_table(data: bytes | str, *, source: str, delimiter: str | None = None) -> BatchTable:
    """The header and rows of CSV *data*: UTF-8 (with or without a BOM), *delimiter* sniffed
    unless given.

    Raises:
        BatchFileError: not UTF-8, empty, no rows, a malformed quote, a column named twice, or
            values in a column without a name. The message names the line.
    """
    text = _decode(data, source)
    if not text.strip():
        raise BatchFileError(
            "is empty; its first line must name the columns (the parameters)", source=source
        )
    skip_space = False
    if delimiter is None:
        delimiter, skip_space = _sniff(text)
    reader = csv.reader(
        io.StringIO(text, newline=""),
        delimiter=delimiter,
        quotechar='"',
        doublequote=True,
        skipinitialspace=skip_space,
        strict=True,
    )
    records: list[tuple[int, list[str]]] = []
    previous = 0
    try:
        for record in reader:
            records.append((previous + 1, record))
            previous = reader.line_num
    except csv.Error as exc:
        raise BatchFileError(
            _csv_problem(exc), source=source, path=f"line {previous + 1}"
        ) from None
    first = next(((n, r) for n, r in records if any(c.strip() for c in r)), None)
    if first is None:
        raise BatchFileError(
            "is empty; its first line must name the columns (the parameters)", source=source
        )
    header_line, header = first
    names = [c.strip() for c in header]
    rows = [(n, r) for n, r in records if n > header_line and any(c.strip() for c in r)]
    keep = _named_columns(names, rows, source, header_line)
    if not rows:
        raise BatchFileError(
            "has no rows under the column names; add one line per run", source=source
        )
    return BatchTable(
        source=source,
        columns=tuple(names[i] for i in keep),
        rows=tuple(BatchRow(line=n, cells=_kept_cells(r, keep, len(names))) for n, r in rows),
        delimiter=delimiter,
    )


def _decode(data: bytes | str, source: str) -> str:
    if isinstance(data, str):
        return data.removeprefix("\ufeff")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise BatchFileError(
            f"is not UTF-8 text (byte {exc.start + 1}); save it as “CSV UTF-8”",
            source=source,
            path=f"line {line}",
        ) from None


def _sniff(text: str) -> tuple[str, bool]:
    """The delimiter (and whether spaces follow it) of *text*; a comma when unclear."""
    sample = text[:_SNIFF_CHARS]
    header = sample.splitlines()[0] if sample.splitlines() else ""
    try:
        dialect = csv.Sniffer().sniff(sample, delimiters=_DELIMITERS)
    except csv.Error:
        counts = {d: header.count(d) for d in _DELIMITERS}
        best = max(counts, key=lambda d: counts[d])
        return (best if counts[best] else ","), False
    if dialect.delimiter not in header:  # a header-only or one-column file can fool the sniffer
        counts = {d: header.count(d) for d in _DELIMITERS}
        best = max(counts, key=lambda d: counts[d])
        return (best if counts[best] else ","), False
    return dialect.delimiter, bool(dialect.skipinitialspace)


def _csv_problem(exc: csv.Error) -> str:
    text = str(exc)
    if "expected after" in text:
        return 'a quote (") inside a cell is not escaped; double it ("") or quote the whole cell'
    if "unexpected end of data" in text or "EOF" in text:
        return 'a quoted cell is never closed (a " is missing)'
    if "NUL" in text:
        return "contains a NUL character; is it a CSV text file?"
    if "field larger than field limit" in text:
        return f"a cell is longer than {csv.field_size_limit()} characters"
    return f"is not valid CSV ({text})"


def _named_columns(
    names: list[str], rows: list[tuple[int, list[str]]], source: str, header_line: int
) -> list[int]:
    """The indexes of the named columns; refuse duplicates and data under an unnamed column."""
    seen: dict[str, int] = {}
    keep = []
    for i, name in enumerate(names):
        if not name:
            if any(i < len(r) and r[i].strip() for _, r in rows):
                raise BatchFileError(
                    f"column {i + 1} has values but no name; name it after a parameter or "
                    "delete it",
                    source=source,
                    path=f"line {header_line}",
                )
            continue
        if name in seen:
            raise BatchFileError(
                f"column {name!r} appears twice (columns {seen[name] + 1} and {i + 1})",
                source=source,
                path=f"line {header_line}",
            )
        seen[name] = i
        keep.append(i)
    return keep


def _kept_cells(record: list[str], keep: list[int], width: int) -> tuple[str, ...]:
    """The cells of the named columns; cells past the header stay at the end (for the report)."""
    kept = [record[i] for i in keep if i < len(record)]
    missing = sum(1 for i in keep if i >= len(record))
    if missing:
        return tuple(kept)  # short: the plan reports it
    return tuple(kept) + tuple(record[width:])


def template_csv(workflow: Workflow, *, delimiter: str = ",") -> str:
    """A CSV to fill in for *workflow*: its non-secret parameters as the column names, and a
    first row of their defaults (blank where there is none)."""
    params = [p for p in workflow.parameters if p.type is not ParameterType.SECRET]
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\r\n")
    writer.writerow([p.name for p in params])
    writer.writerow([_cell(p.default) for p in params])
    return buffer.getvalue()


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
