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

The modules: ``table`` (the input CSV), ``mapping`` (columns to parameters), ``plan`` (every row
checked), ``results`` (the results file), ``summary`` (how the batch went), ``running``.
"""

from desktop_app.core.batch.mapping import MappingIssue, default_mapping
from desktop_app.core.batch.plan import BatchPlan, PlannedRow, RowProblem, plan_batch
from desktop_app.core.batch.results import (
    RESULT_COLUMNS,
    ResultsFile,
    RowOutcome,
    RowResult,
    RowStatus,
    read_results,
    results_path,
)
from desktop_app.core.batch.running import RowRunner, previous_successes, run_batch
from desktop_app.core.batch.summary import BatchSummary
from desktop_app.core.batch.table import (
    BatchFileError,
    BatchRow,
    BatchTable,
    parse_table,
    read_table,
    template_csv,
)

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
