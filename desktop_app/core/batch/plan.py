"""A batch's plan: every row of the CSV checked against the workflow before anything runs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from desktop_app.core.batch.mapping import (
    MappingIssue,
    _default_issues,
    _mapping_issues,
    _stand_ins,
    _value_problem,
    default_mapping,
)
from desktop_app.core.batch.table import BatchTable
from desktop_app.core.models.workflow import Parameter, ParameterType, Workflow
from desktop_app.core.replay.parameters import ParameterError, bind_parameters

__all__ = ["BatchPlan", "PlannedRow", "RowProblem", "plan_batch"]


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
        text = one_line(self.inputs) or "no values"
        return text if len(text) <= limit else text[: limit - 1] + "…"


def one_line(inputs: tuple[tuple[str, str], ...]) -> str:
    """A row's values on one line: ``column=value, …``; a list's lines joined by `` | ``."""
    return ", ".join(
        f"{c}={' | '.join(v.splitlines())}" if "\n" in v else f"{c}={v}"
        for c, v in inputs
        if v.strip()
    )


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
