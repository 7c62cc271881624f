"""Running a batch: its rows one or N at a time, skipping those that succeeded before."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence

from desktop_app.core.batch.plan import BatchPlan, PlannedRow
from desktop_app.core.batch.results import RowOutcome, RowResult, RowStatus
from desktop_app.core.batch.summary import BatchSummary
from desktop_app.core.errors import ProceduraError
from desktop_app.core.models.common import utcnow
from desktop_app.core.replay.parameters import ParameterError

__all__ = ["RowRunner", "previous_successes", "run_batch"]


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
