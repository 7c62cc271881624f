"""Batch runs: one workflow over the rows of a CSV file, checked before anything runs, resumable.

    read_table(path)            the CSV: header + rows, dialect sniffed, UTF-8 (a BOM is fine)
    default_mapping(wf, cols)   column → parameter by name (case, spaces, ``_`` and ``-`` ignored)
    plan_batch(wf, table, map)  every row checked with bind_parameters: a BatchPlan and its report
    run_batch(plan, runner)     the rows, one or N at a time; the results file after every row

Decisions a user will notice:

* The first line names the columns. Blank lines (and rows whose cells are all blank) are skipped.
  A blank cell means "not given": the value given for every row (``-p``) is used, else the
  workflow's default.
* A column that names a secret parameter is refused: secrets never come from a file. They come
  from ``--secret-env``, the keyring or one prompt for the whole batch.
* A column that is not a parameter is ignored and reported, except one whose name is close to a
  parameter that no column gives (``emial``): that is almost surely a typo and is refused.
* Every row is checked before anything runs; a report lists every bad row by its line number.
  Nothing runs while one row is bad.
* The results go to ``<input stem>.results.csv`` next to the input, rewritten (atomically) after
  every row: ``row`` (the row's line in the input, as a spreadsheet numbers it), the input values
  of the mapped columns, ``status``, ``run_id``, ``error`` and ``finished_at``. Rows not run yet
  say ``pending``; a row whose run did every step while nothing showed the task was done says
  ``unverified`` (shown as "done, unverified"). Secret values are masked wherever they would
  appear.
* Resuming: a row whose input values equal those of a row that succeeded in the existing
  results file is skipped (the same line first, else any line: inserting rows is fine); failed,
  unverified, interrupted and pending rows run again, and so does a row whose values were edited.
"""

from __future__ import annotations

import asyncio
import csv
import difflib
import io
import os
import re
import tempfile
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Final

from desktop_app.core.errors import DocumentError, ProceduraError
from desktop_app.core.models.common import utcnow
from desktop_app.core.models.run import Run
from desktop_app.core.models.workflow import Parameter, ParameterType, Workflow
from desktop_app.core.outcomes import outcome_reason
from desktop_app.core.redaction import mask_secrets
from desktop_app.core.replay.parameters import ParameterError, bind_parameters

__all__ = [
    "RESULT_COLUMNS",
    "BatchFileError",
    "BatchPlan",
    "BatchRow",
    "BatchSummary",
    "BatchTable",
    "MappingIssue",
    "PlannedRow",
    "ResultsFile",
    "RowOutcome",
    "RowProblem",
    "RowResult",
    "RowRunner",
    "RowStatus",
    "default_mapping",
    "parse_table",
    "plan_batch",
    "previous_successes",
    "read_results",
    "read_table",
    "results_path",
    "run_batch",
    "template_csv",
]

#: The columns a results file has after the input values.
RESULT_COLUMNS: Final = ("status", "run_id", "error", "finished_at")
_ROW_COLUMN: Final = "row"
_RESERVED: Final = frozenset({_ROW_COLUMN, *RESULT_COLUMNS})
_INPUT_PREFIX: Final = "input: "
_DELIMITERS: Final = ",;\t|"
_SNIFF_CHARS: Final = 64 * 1024
_NAME_NOISE: Final = re.compile(r"[\s_\-]+")
_STAND_IN: Final = "-"


class BatchFileError(DocumentError):
    """A CSV (input or results) file cannot be read: missing, not UTF-8, malformed.

    Its message names the file and, where there is one, the line: ``people.csv at line 4: …``.
    """


class RowStatus(StrEnum):
    """Where a row of a batch stands (the results file's ``status`` column)."""

    PENDING = "pending"
    SUCCEEDED = "succeeded"
    UNVERIFIED = "unverified"
    """Every step ran, but nothing showed the task was done ("done, unverified"); it runs again
    when the batch is resumed."""
    FAILED = "failed"
    ABORTED = "aborted"
    INTERRUPTED = "interrupted"


# ── the input file ──────────────────────────────────────────────────────────────────────────


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


# ── mapping columns to parameters ───────────────────────────────────────────────────────────


def _name_key(name: str) -> str:
    return _NAME_NOISE.sub("", name).casefold()


def default_mapping(workflow: Workflow, columns: Iterable[str]) -> dict[str, str | None]:
    """Each column's parameter: the same name, else the same ignoring case, spaces, ``_``
    and ``-`` (``Full name`` → ``full_name``); None for a column that names no parameter.

    Secret parameters are matched too, so that such a column is refused by name (see
    :func:`plan_batch`), not silently ignored.
    """
    exact = {p.name: p.name for p in workflow.parameters}
    loose = {_name_key(p.name): p.name for p in workflow.parameters}
    return {c: exact.get(c) or loose.get(_name_key(c)) for c in columns}


@dataclass(frozen=True, slots=True)
class MappingIssue:
    """Something about the columns or the values given for every row.

    ``blocking`` issues keep the batch from running; the others are for information.
    """

    message: str
    column: str | None = None
    blocking: bool = True

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True, slots=True)
class RowProblem:
    """Why one row cannot run."""

    line: int
    message: str
    parameter: str | None = None

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass(frozen=True, slots=True)
class PlannedRow:
    """A row ready to run.

    Attributes:
        line: where the row starts in the input file (the header is line 1).
        inputs: the mapped columns' cells as written, in column order (the results file
            repeats them, and resuming compares them).
        given: parameter → raw value for :func:`bind_parameters` (the values given for every
            row, overridden by the row's non-blank cells).
    """

    line: int
    inputs: tuple[tuple[str, str], ...]
    given: Mapping[str, str]

    def shown(self, limit: int = 60) -> str:
        """The row's values in one short line (for progress lines)."""
        text = ", ".join(f"{c}={v}" for c, v in self.inputs if v.strip()) or "no values"
        return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class BatchPlan:
    """A CSV checked against a workflow: the rows to run and everything wrong with them."""

    workflow: Workflow
    table: BatchTable
    mapping: Mapping[str, str | None]
    defaults: Mapping[str, str]
    rows: tuple[PlannedRow, ...]
    issues: tuple[MappingIssue, ...] = ()
    problems: tuple[RowProblem, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether the batch may run: no blocking issue and no bad row."""
        return not self.problems and not any(i.blocking for i in self.issues)

    @property
    def input_columns(self) -> tuple[str, ...]:
        """The columns that give a parameter, in file order."""
        return tuple(c for c in self.table.columns if self._gives(c))

    @property
    def bad_lines(self) -> tuple[int, ...]:
        """The lines of the rows that cannot run."""
        return tuple(sorted({p.line for p in self.problems}))

    def report(self) -> list[str]:
        """Every blocking issue and row problem, one line each (empty when the batch is ok)."""
        lines = [str(i) for i in self.issues if i.blocking]
        return lines + [str(p) for p in self.problems]

    def notes(self) -> list[str]:
        """The issues that do not block (ignored columns)."""
        return [str(i) for i in self.issues if not i.blocking]

    def unmapped(self) -> list[Parameter]:
        """The non-secret parameters no column gives (their -p value or default is used)."""
        given = {p for p in self.mapping.values() if p}
        return [
            p
            for p in self.workflow.parameters
            if p.type is not ParameterType.SECRET and p.name not in given
        ]

    def _gives(self, column: str) -> bool:
        name = self.mapping.get(column)
        param = self.workflow.parameter(name) if name else None
        return param is not None and param.type is not ParameterType.SECRET


def plan_batch(
    workflow: Workflow,
    table: BatchTable,
    mapping: Mapping[str, str | None] | None = None,
    *,
    defaults: Mapping[str, str] | None = None,
    explicit: Iterable[str] = (),
) -> BatchPlan:
    """Check every row of *table* against *workflow* before anything runs.

    Args:
        workflow: the version to run.
        table: the CSV.
        mapping: column → parameter (None: ignored); :func:`default_mapping` when not given.
        defaults: raw values for every row (``-p``), used where a row's cell is blank.
        explicit: columns whose mapping a person chose (an ignored one is then not a typo).

    Returns:
        The plan; its ``issues`` and ``problems`` say what is wrong (``ok`` is False then).
    """
    mapping = dict(default_mapping(workflow, table.columns) if mapping is None else mapping)
    for column in table.columns:
        mapping.setdefault(column, None)
    defaults = dict(defaults or {})
    issues = _mapping_issues(workflow, table.columns, mapping, defaults, frozenset(explicit))
    issues += _default_issues(workflow, defaults)
    usable = {
        c: mapping[c]
        for c in table.columns
        if (name := mapping[c]) is not None
        and (param := workflow.parameter(name)) is not None
        and param.type is not ParameterType.SECRET
    }
    width = len(table.columns)
    rows: list[PlannedRow] = []
    problems: list[RowProblem] = []
    for row in table.rows:
        cells = row.cells
        if len(cells) < width:
            problems.append(
                RowProblem(
                    row.line,
                    f"has {len(cells)} cell(s) but there are {width} columns; add the missing "
                    "separators",
                )
            )
            continue
        if any(c.strip() for c in cells[width:]):
            problems.append(
                RowProblem(
                    row.line,
                    f"has {len(cells)} cells but there are only {width} named columns; remove "
                    "the extra cells or name their column",
                )
            )
            continue
        values = dict(zip(table.columns, cells[:width], strict=True))
        inputs = tuple((c, values[c]) for c in table.columns if c in usable)
        given = dict(defaults)
        for column, name in usable.items():
            if values[column].strip():
                assert name is not None
                given[name] = values[column]
        planned = PlannedRow(line=row.line, inputs=inputs, given=MappingProxyType(given))
        found = _row_problems(workflow, planned, usable, defaults)
        problems.extend(found)
        if not found:
            rows.append(planned)
    return BatchPlan(
        workflow=workflow,
        table=table,
        mapping=MappingProxyType(mapping),
        defaults=MappingProxyType(defaults),
        rows=tuple(rows),
        issues=tuple(issues),
        problems=tuple(problems),
    )


def _mapping_issues(
    workflow: Workflow,
    columns: Sequence[str],
    mapping: Mapping[str, str | None],
    defaults: Mapping[str, str],
    explicit: frozenset[str],
) -> list[MappingIssue]:
    issues: list[MappingIssue] = []
    by_param: dict[str, list[str]] = {}
    for column in columns:
        name = mapping[column]
        if name is None:
            continue
        param = workflow.parameter(name)
        if param is None:
            issues.append(
                MappingIssue(
                    f"column {column!r} is mapped to {name!r}, which is not a parameter of "
                    f"{workflow.name!r}",
                    column,
                )
            )
        elif param.type is ParameterType.SECRET:
            issues.append(
                MappingIssue(
                    f"column {column!r} would give the secret parameter {name!r}; secrets are "
                    "never read from a file: delete the column, and give the secret with "
                    f"--secret-env {name}=VARIABLE, the keyring or the prompt",
                    column,
                )
            )
        else:
            by_param.setdefault(name, []).append(column)
    for name, given_by in by_param.items():
        if len(given_by) > 1:
            listed = ", ".join(repr(c) for c in given_by)
            issues.append(
                MappingIssue(f"columns {listed} all give parameter {name!r}; keep one", given_by[1])
            )
    mapped = {n for n in mapping.values() if n}
    open_params = {
        _name_key(p.name): p.name
        for p in workflow.parameters
        if p.type is not ParameterType.SECRET and p.name not in mapped and p.name not in defaults
    }
    for column in columns:
        if mapping[column] is not None:
            continue
        close = difflib.get_close_matches(_name_key(column), list(open_params), n=1, cutoff=0.75)
        if close and column not in explicit:
            issues.append(
                MappingIssue(
                    f"column {column!r} is not a parameter; did you mean "
                    f"{open_params[close[0]]!r}? Rename the column",
                    column,
                )
            )
        else:
            issues.append(
                MappingIssue(
                    f"column {column!r} is not a parameter of {workflow.name!r}; it is ignored",
                    column,
                    blocking=False,
                )
            )
    for param in workflow.parameters:
        if (
            param.type is not ParameterType.SECRET
            and param.required
            and param.default is None
            and param.name not in mapped
            and param.name not in defaults
        ):
            issues.append(
                MappingIssue(
                    f"parameter {param.name!r} needs a value and no column gives it; add a "
                    f"column named {param.name} (or give -p {param.name}=VALUE for every row)"
                )
            )
    return issues


def _default_issues(workflow: Workflow, defaults: Mapping[str, str]) -> list[MappingIssue]:
    """Check the values given for every row, once (not once per row)."""
    issues: list[MappingIssue] = []
    for name, value in defaults.items():
        param = workflow.parameter(name)
        if param is None or param.type is ParameterType.SECRET:
            try:
                bind_parameters(workflow, {name: value}, secrets=_stand_ins(workflow))
            except ParameterError as exc:
                issues.append(MappingIssue(str(exc)))
            continue
        problem = _value_problem(workflow, param, value)
        if problem:
            issues.append(MappingIssue(problem))
    return issues


def _row_problems(
    workflow: Workflow,
    row: PlannedRow,
    usable: Mapping[str, str | None],
    defaults: Mapping[str, str],
) -> list[RowProblem]:
    """Every problem of one row: each bad cell, each empty cell a value is needed in."""
    cells = dict(row.inputs)
    problems: list[RowProblem] = []
    for column, name in usable.items():
        assert name is not None
        param = workflow.parameter(name)
        assert param is not None
        raw = cells[column]
        where = "" if column == name else f"column {column!r}: "
        if not raw.strip():
            if param.required and param.default is None and not defaults.get(name, "").strip():
                problems.append(
                    RowProblem(
                        row.line,
                        f"{where}parameter {name!r} needs a value; the cell is empty",
                        name,
                    )
                )
            continue
        problem = _value_problem(workflow, param, raw)
        if problem:
            problems.append(RowProblem(row.line, where + problem, name))
    if not problems:
        from_cells = {usable[c] for c, v in row.inputs if v.strip()}
        try:
            bind_parameters(workflow, row.given, secrets=_stand_ins(workflow))
        except ParameterError as exc:
            if exc.name is None or exc.name in from_cells:  # else: reported once, above
                problems.append(RowProblem(row.line, str(exc), exc.name))
    return problems


def _value_problem(workflow: Workflow, param: Parameter, raw: str) -> str:
    """Why *raw* does not fit *param* ("" when it does)."""
    alone = workflow.model_copy(update={"parameters": (param,)})
    try:
        bind_parameters(alone, {param.name: raw})
    except ParameterError as exc:
        return str(exc)
    return ""


def _stand_ins(workflow: Workflow) -> dict[str, str]:
    return {p.name: _STAND_IN for p in workflow.parameters if p.type is ParameterType.SECRET}


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


# ── results ─────────────────────────────────────────────────────────────────────────────────


def results_path(csv_path: Path) -> Path:
    """Where the results of a batch over *csv_path* go: ``<stem>.results.csv`` beside it."""
    return csv_path.with_name(f"{csv_path.stem}.results.csv")


@dataclass(frozen=True, slots=True)
class RowResult:
    """One line of the results file."""

    line: int
    inputs: tuple[tuple[str, str], ...]
    status: RowStatus = RowStatus.PENDING
    run_id: str = ""
    error: str = ""
    finished_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class RowOutcome:
    """How running one row went (what a runner returns)."""

    status: RowStatus
    run_id: str = ""
    error: str = ""

    @classmethod
    def of_run(cls, run: Run) -> RowOutcome:
        """The outcome a finished run record describes (for an unverified run, the reason)."""
        return cls(status=RowStatus(run.status.value), run_id=run.id, error=outcome_reason(run))


@dataclass(frozen=True, slots=True)
class ResultsFile:
    """The results file of a batch.

    Args:
        path: where it is (see :func:`results_path`).
        columns: the input columns it repeats (the plan's ``input_columns``).
        delimiter: the separator (the input's).
        secrets: values masked wherever they would appear.
    """

    path: Path
    columns: tuple[str, ...]
    delimiter: str = ","
    secrets: tuple[str, ...] = ()

    def write(self, results: Iterable[RowResult]) -> None:
        """Replace the file with *results*, whole or not at all (UTF-8 with a BOM, for Excel).

        Raises:
            BatchFileError: it cannot be written.
        """
        buffer = io.StringIO(newline="")
        writer = csv.writer(buffer, delimiter=self.delimiter, lineterminator="\r\n")
        writer.writerow([_ROW_COLUMN, *map(_header_name, self.columns), *RESULT_COLUMNS])
        for result in results:
            values = dict(result.inputs)
            writer.writerow(
                self._masked(cell)
                for cell in (
                    str(result.line),
                    *(values.get(c, "") for c in self.columns),
                    result.status.value,
                    result.run_id,
                    _one_line(result.error),
                    result.finished_at.isoformat(timespec="seconds") if result.finished_at else "",
                )
            )
        try:
            _write_atomically(self.path, buffer.getvalue().encode("utf-8-sig"))
        except OSError as exc:
            raise BatchFileError(
                f"cannot be written ({exc.strerror or exc})", source=str(self.path)
            ) from None

    def read(self) -> tuple[RowResult, ...]:
        """The rows of the file as it is now (none when there is no file); see
        :func:`read_results`."""
        return read_results(self.path, delimiter=self.delimiter)

    def _masked(self, text: str) -> str:
        return mask_secrets(text, self.secrets)


def _header_name(column: str) -> str:
    """An input column's name in the results file (``input: status`` if it clashes)."""
    return f"{_INPUT_PREFIX}{column}" if column in _RESERVED else column


def _input_name(header: str) -> str:
    name = header.removeprefix(_INPUT_PREFIX)
    return name if name in _RESERVED else header


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _write_atomically(target: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        Path(tmp).chmod(0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_results(path: Path, *, delimiter: str | None = None) -> tuple[RowResult, ...]:
    """The rows of an existing results file (none when there is no file).

    Raises:
        BatchFileError: the file is not a results file this app wrote, or is malformed.
    """
    if not path.exists():
        return ()
    table = read_table(path, delimiter=delimiter)
    columns = table.columns
    fixed = len(RESULT_COLUMNS)
    if len(columns) < 1 + fixed or columns[0] != _ROW_COLUMN or columns[-fixed:] != RESULT_COLUMNS:
        raise BatchFileError(
            "is not a results file of a batch run (its columns should be row, the inputs, "
            + ", ".join(RESULT_COLUMNS)
            + "); move it away to start over",
            source=str(path),
        )
    inputs = tuple(_input_name(c) for c in columns[1:-fixed])
    results = []
    for row in table.rows:
        cells = row.cells
        where = f"line {row.line}"
        if len(cells) != len(columns):
            raise BatchFileError("has the wrong number of cells", source=str(path), path=where)
        try:
            line = int(cells[0])
            status = RowStatus(cells[-fixed].strip())
            stamp = cells[-1].strip()
            finished = datetime.fromisoformat(stamp) if stamp else None
        except ValueError as exc:
            raise BatchFileError(
                f"cannot be read ({exc}); move the file away to start over",
                source=str(path),
                path=where,
            ) from None
        results.append(
            RowResult(
                line=line,
                inputs=tuple(zip(inputs, cells[1:-fixed], strict=True)),
                status=status,
                run_id=cells[-fixed + 1].strip(),
                error=cells[-fixed + 2],
                finished_at=finished,
            )
        )
    return tuple(results)


def _succeeded_before(plan: BatchPlan, previous: Sequence[RowResult]) -> dict[int, RowResult]:
    """The planned rows (by line) that already succeeded: same input values, same line first."""
    columns = plan.input_columns

    def key(inputs: Iterable[tuple[str, str]]) -> tuple[str, ...] | None:
        values = dict(inputs)
        if any(c not in values for c in columns):
            return None
        return tuple(values[c] for c in columns)

    done = [r for r in previous if r.status is RowStatus.SUCCEEDED and key(r.inputs) is not None]
    kept: dict[int, RowResult] = {}
    used: set[int] = set()
    for same_line in (True, False):
        for row in plan.rows:
            if row.line in kept:
                continue
            wanted = key(row.inputs)
            for i, result in enumerate(done):
                if i in used or key(result.inputs) != wanted:
                    continue
                if same_line and result.line != row.line:
                    continue
                kept[row.line] = RowResult(
                    line=row.line,
                    inputs=row.inputs,
                    status=result.status,
                    run_id=result.run_id,
                    error=result.error,
                    finished_at=result.finished_at,
                )
                used.add(i)
                break
    return kept


# ── running ─────────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class BatchSummary:
    """How a batch went: every row's result, in file order, and the counts."""

    results: tuple[RowResult, ...]
    skipped: frozenset[int] = field(default_factory=frozenset)

    def count(self, status: RowStatus) -> int:
        """How many rows ended with *status* (skipped rows count as succeeded)."""
        return sum(1 for r in self.results if r.status is status)

    @property
    def all_succeeded(self) -> bool:
        """Whether every row has succeeded (now or before)."""
        return all(r.status is RowStatus.SUCCEEDED for r in self.results)

    @property
    def not_done(self) -> int:
        """How many rows failed, were aborted or interrupted, or have not run (the rows done,
        unverified are not among them)."""
        return sum(
            self.count(s)
            for s in (RowStatus.FAILED, RowStatus.ABORTED, RowStatus.INTERRUPTED, RowStatus.PENDING)
        )

    @property
    def ran(self) -> int:
        """How many rows ran this time."""
        return sum(
            1
            for r in self.results
            if r.line not in self.skipped and r.status is not RowStatus.PENDING
        )

    def line(self) -> str:
        """``5 rows: 3 succeeded (1 in an earlier run), 1 done unverified, 1 failed``."""
        total = len(self.results)
        parts = [f"{self.count(RowStatus.SUCCEEDED)} succeeded"]
        if self.skipped:
            parts[0] += f" ({len(self.skipped)} in an earlier run)"
        if self.count(RowStatus.UNVERIFIED):
            parts.append(f"{self.count(RowStatus.UNVERIFIED)} done unverified")
        for status in (RowStatus.FAILED, RowStatus.ABORTED, RowStatus.INTERRUPTED):
            if self.count(status):
                parts.append(f"{self.count(status)} {status.value}")
        if self.count(RowStatus.PENDING):
            parts.append(f"{self.count(RowStatus.PENDING)} not run")
        return f"{total} row{'s' if total != 1 else ''}: " + ", ".join(parts)


RowRunner = Callable[[PlannedRow], Awaitable[RowOutcome]]


def previous_successes(plan: BatchPlan, previous: Sequence[RowResult]) -> frozenset[int]:
    """The lines of the planned rows that an earlier run of the batch already did."""
    return frozenset(_succeeded_before(plan, previous))


async def run_batch(
    plan: BatchPlan,
    runner: RowRunner,
    *,
    save: Callable[[tuple[RowResult, ...]], object],
    parallel: int = 1,
    previous: Sequence[RowResult] = (),
    on_started: Callable[[PlannedRow], object] | None = None,
    on_finished: Callable[[RowResult], object] | None = None,
) -> BatchSummary:
    """Run the rows of *plan* that have not succeeded before, *parallel* at a time.

    *save* gets every row's result (in file order) before the first row starts and after each
    row ends, so an interruption loses nothing. A row whose runner raises a
    :class:`ProceduraError` has failed; the others go on. Cancelling the batch (Ctrl+C, Stop)
    records the rows that were running as interrupted and leaves the others pending.

    Args:
        plan: a plan without problems.
        runner: runs one row; returns its outcome.
        save: writes the results (e.g. :meth:`ResultsFile.write`).
        parallel: how many rows run at once (at least 1).
        previous: the results of an earlier run of this batch (for resuming).
        on_started: called as a row starts.
        on_finished: called with a row's result as it ends.

    Raises:
        ParameterError: the plan has problems (nothing runs).
        asyncio.CancelledError: the batch was stopped (the results are saved first).
    """
    if not plan.ok:
        bad = len(plan.bad_lines)
        raise ParameterError(
            f"the batch has {len(plan.report())} problem(s) ({bad} bad row(s)); nothing was run"
        )
    kept = _succeeded_before(plan, previous)
    results: dict[int, RowResult] = {
        row.line: kept.get(row.line) or RowResult(line=row.line, inputs=row.inputs)
        for row in plan.rows
    }

    def snapshot() -> tuple[RowResult, ...]:
        return tuple(results[row.line] for row in plan.rows)

    def finish(row: PlannedRow, outcome: RowOutcome) -> None:
        result = RowResult(
            line=row.line,
            inputs=row.inputs,
            status=outcome.status,
            run_id=outcome.run_id,
            error=outcome.error,
            finished_at=utcnow(),
        )
        results[row.line] = result
        save(snapshot())
        if on_finished is not None:
            on_finished(result)

    gate = asyncio.Semaphore(max(1, parallel))

    async def one(row: PlannedRow) -> None:
        async with gate:
            if on_started is not None:
                on_started(row)
            try:
                outcome = await runner(row)
            except asyncio.CancelledError:
                finish(row, RowOutcome(RowStatus.INTERRUPTED, error="stopped before it finished"))
                raise
            except ProceduraError as exc:
                outcome = RowOutcome(RowStatus.FAILED, error=str(exc))
            except Exception as exc:  # a bug: recorded for the row, then the batch stops
                finish(row, RowOutcome(RowStatus.FAILED, error=f"unexpected error: {exc!r}"))
                raise
            finish(row, outcome)

    save(snapshot())
    tasks = [asyncio.ensure_future(one(row)) for row in plan.rows if row.line not in kept]
    try:
        if tasks:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                error = None if task.cancelled() else task.exception()
                if error is not None:
                    raise error
    finally:
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        save(snapshot())
    return BatchSummary(results=snapshot(), skipped=frozenset(kept))
