"""A batch's results file: each row's status, run and error, written atomically and read back."""

from __future__ import annotations

import csv
import io
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Final

from desktop_app.core.batch.table import BatchFileError, read_table
from desktop_app.core.models.run import Run
from desktop_app.core.outcomes import outcome_reason
from desktop_app.core.redaction import mask_secrets

__all__ = [
    "RESULT_COLUMNS",
    "ResultsFile",
    "RowOutcome",
    "RowResult",
    "RowStatus",
    "read_results",
    "results_path",
]

#: The columns a results file has after the input values.
RESULT_COLUMNS: Final = ("status", "run_id", "error", "finished_at")
_ROW_COLUMN: Final = "row"
_RESERVED: Final = frozenset({_ROW_COLUMN, *RESULT_COLUMNS})
_INPUT_PREFIX: Final = "input: "


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
