"""``procedura run WORKFLOW --params-csv FILE [--parallel N]``: one run per row of a CSV file.

Every row is checked before anything runs (exit 2 with every bad row named by its line); then the
rows run one or N at a time, a line is printed as each ends, and the results go to
``<FILE stem>.results.csv`` beside the file after every row. Running the same command again
resumes: rows that succeeded are skipped (rows done, unverified run again). Exit codes: 0 every
row succeeded (now or before); 1 some row failed, was aborted or interrupted, or the batch was
stopped; 2 bad input (nothing ran); 3 no row failed, but some ended "done, unverified" (every step
ran, nothing showed the task was done).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from desktop_app.adapters.secrets import remember_parameter_secrets
from desktop_app.core.batch import (
    BatchPlan,
    BatchSummary,
    PlannedRow,
    ResultsFile,
    RowOutcome,
    RowResult,
    RowStatus,
    plan_batch,
    previous_successes,
    read_table,
    results_path,
    run_batch,
)
from desktop_app.core.batch.plan import one_line
from desktop_app.core.models.run import RunTrigger
from desktop_app.core.models.workflow import WorkflowVersion
from desktop_app.core.outcomes import UNVERIFIED_WORDS
from desktop_app.core.replay.parameters import bind_parameters
from desktop_app.core.replay.render import check_base_url
from desktop_app.ops.run import RunPlan, replay_options
from desktop_app.ops.secrets import remember_secrets

if TYPE_CHECKING:
    from desktop_app.app import Services

__all__ = ["run_csv"]

_MARKS = {
    RowStatus.SUCCEEDED: "✓",
    RowStatus.UNVERIFIED: "⚠",
    RowStatus.FAILED: "✗",
    RowStatus.ABORTED: "✗",
    RowStatus.INTERRUPTED: "■",
    RowStatus.PENDING: "·",
}


def run_csv(
    ctx: click.Context,
    ref: str | None,
    csv_path: str | Path | None,
    defaults: dict[str, str],
    *,
    intent: str | None,
    from_env: dict[str, str],
    save_secrets: bool,
    base_url: str | None,
    headless: bool,
    use_llm: bool,
    yes: bool,
    allow_draft: bool,
    interactive: bool,
    parallel: int,
    as_json: bool,
) -> int:
    """Run workflow *ref* once per row of *csv_path*; the exit code (0, 1, 2 or 3, as the module
    docstring says).

    *defaults* (``-p``) apply to every row where its cell is blank. With *parallel* > 1 the
    browsers are headless and no one is asked during the runs (a step that needs a person fails).

    Raises:
        click.UsageError: --intent was given, no workflow, or --parallel without a file.
        ProceduraError: the file, the workflow, a secret or the base URL is wrong (the command
            line exits 2 for these, naming the problem).
    """
    from desktop_app.cli.running import open_for_run, runnable_version

    if csv_path is None:
        raise click.UsageError("--parallel runs the rows of a CSV file: give it with --params-csv")
    csv_path = Path(csv_path)
    if intent:
        raise click.UsageError(
            "--params-csv gives the values of each run; it cannot be combined with --intent"
        )
    if ref is None:
        raise click.UsageError("name the WORKFLOW to run over the rows of --params-csv")
    if base_url is not None:
        check_base_url(base_url)
    table = read_table(csv_path)
    with open_for_run(ctx.obj["settings"]()) as services:
        version = runnable_version(services, ref, allow_draft=allow_draft)
        plan = plan_batch(version.workflow, table, defaults=defaults)
        _echo_plan(plan, version)
        if not plan.ok:
            for line in plan.report():
                click.echo(f"error: {line}", err=True)
            bad = len(plan.bad_lines)
            rows = len(table.rows)
            click.echo(
                f"error: {bad} of {rows} row{'s' if rows != 1 else ''} cannot run"
                + (
                    " and the columns need fixing"
                    if len(plan.report()) > len(plan.problems)
                    else ""
                )
                + "; nothing was run",
                err=True,
            )
            return 2
        out = ResultsFile(results_path(csv_path), plan.input_columns, delimiter=table.delimiter)
        previous = out.read()
        done = previous_successes(plan, previous)
        if done:
            click.echo(
                f"Resuming: {len(done)} of {len(plan.rows)} row(s) succeeded before "
                f"({out.path.name}); they are skipped.",
                err=True,
            )
        if len(done) == len(plan.rows):
            click.echo(f"Every row has succeeded already; nothing to run. Results: {out.path}")
            return 0
        return _run_rows(
            services,
            version,
            plan,
            out,
            previous,
            from_env=from_env,
            save_secrets=save_secrets,
            base_url=base_url,
            headless=headless or parallel > 1,
            use_llm=use_llm,
            yes=yes,
            interactive=interactive,
            parallel=parallel,
            as_json=as_json,
        )


def _echo_plan(plan: BatchPlan, version: WorkflowVersion) -> None:
    """Which column gives which parameter, and what the others use (standard error)."""
    workflow = version.workflow
    click.echo(
        f"'{workflow.name}' version {version.version} over {len(plan.table.rows)} row(s) of "
        f"{Path(plan.table.source).name}",
        err=True,
    )
    pairs = [
        f"{c} → {plan.mapping[c]}" if c != plan.mapping[c] else c
        for c in plan.table.columns
        if plan.mapping.get(c) and plan.mapping[c] in {p.name for p in workflow.parameters}
    ]
    if pairs:
        click.echo(f"  columns: {', '.join(pairs)}", err=True)
    others = []
    for param in plan.unmapped():
        if param.name in plan.defaults:
            others.append(f"{param.name}={plan.defaults[param.name]} (-p)")
        elif param.default is not None:
            shown = str(param.default).lower() if isinstance(param.default, bool) else param.default
            others.append(f"{param.name}={shown} (default)")
    if others:
        click.echo(f"  every row: {', '.join(others)}", err=True)
    for note in plan.notes():
        click.echo(f"  note: {note}", err=True)


def _run_rows(
    services: Services,
    version: WorkflowVersion,
    plan: BatchPlan,
    out: ResultsFile,
    previous: tuple[RowResult, ...],
    *,
    from_env: dict[str, str],
    save_secrets: bool,
    base_url: str | None,
    headless: bool,
    use_llm: bool,
    yes: bool,
    interactive: bool,
    parallel: int,
    as_json: bool,
) -> int:
    from desktop_app.adapters.browser.kept import KeptBrowsers
    from desktop_app.app import replay
    from desktop_app.cli.running import TerminalPerson, json_text, secret_values

    workflow = version.workflow
    secrets, prompted = secret_values(workflow, from_env, interactive=interactive)
    first = bind_parameters(workflow, plan.rows[0].given, secrets=secrets)  # a missing secret
    missed = remember_secrets(
        remember_parameter_secrets, workflow.id, secrets, asked=save_secrets, given=prompted
    )
    if missed is not None:  # the run goes on with the values typed
        click.echo(f"warning: {missed}", err=True)
    out = replace(out, secrets=first.secret_values())
    options = replay_options(
        services.settings, trigger=RunTrigger.BATCH, confirm=not yes, use_llm=use_llm
    )
    handed_off = not services.writable  # the desktop app holds the stores: it runs each row
    person = TerminalPerson(services.media) if interactive and parallel == 1 else None
    if handed_off:
        click.echo(
            f"The desktop app is open: it runs each row of '{workflow.name}'"
            + (" (questions open there)." if person is not None else "."),
            err=True,
        )
    if parallel > 1:
        click.echo(
            f"Running {parallel} rows at a time, headless; no one is asked during the runs.",
            err=True,
        )
    started: dict[int, float] = {}
    latest: list[tuple[RowResult, ...]] = [()]

    def save(results: tuple[RowResult, ...]) -> None:
        out.write(results)
        latest[0] = results

    def on_started(row: PlannedRow) -> None:
        started[row.line] = time.monotonic()

    def on_finished(result: RowResult) -> None:
        took = time.monotonic() - started.get(result.line, time.monotonic())
        run = f"run {result.run_id[:8]}" if result.run_id else "no run"
        shown = one_line(result.inputs) or "defaults"
        click.echo(
            f"{_MARKS[result.status]} line {result.line:<3} {result.status.value:<11} {run}  "
            f"{_short(shown, 60)}  ({took:.1f} s)",
            err=as_json,
        )
        if result.status is RowStatus.UNVERIFIED:
            click.echo(f"    {UNVERIFIED_WORDS}: {result.error}", err=as_json)
        elif result.error and result.status is not RowStatus.SUCCEEDED:
            click.echo(f"    {result.error}", err=as_json)

    async def hand_off_row(row: PlannedRow) -> RowOutcome:
        from desktop_app.handoff import hand_off_run

        stop = threading.Event()
        plan = RunPlan.of(
            version,
            row.given,
            options,
            base_url=base_url,
            headless=headless,
            interactive=person is not None,
        )
        waiting = asyncio.ensure_future(
            asyncio.to_thread(
                hand_off_run,
                services.settings,
                plan,
                secrets,
                on_note=lambda text: click.echo(text, err=True),
                stop=stop,
            )
        )
        try:
            run = await asyncio.shield(waiting)
        except asyncio.CancelledError:
            stop.set()  # the app stops the run and answers; wait for that, then stop here too
            with contextlib.suppress(Exception):
                await waiting
            raise
        return RowOutcome.of_run(run)

    # Headless rows run in kept browsers, one per row under way, each page wiped between rows
    # (as the fleet's workers do): no browser start per row.
    kept = (
        KeptBrowsers(parallel, configured=services.settings.browser, withheld=first.secret_values())
        if headless and not handed_off
        else None
    )

    async def run_row(row: PlannedRow) -> RowOutcome:
        if handed_off:
            return await hand_off_row(row)
        bound = bind_parameters(workflow, row.given, secrets=secrets)
        async with contextlib.AsyncExitStack() as stack:
            browser = None if kept is None else await stack.enter_async_context(kept.lend())
            result = await replay(
                services,
                version,
                bound,
                options=options,
                person=person,
                base_url=base_url,
                headless=headless,
                browser_factory=None if browser is None else browser.run_context,
            )
        return RowOutcome.of_run(result.run)

    async def go() -> BatchSummary | None:
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, task.cancel)
        try:
            return await run_batch(
                plan,
                run_row,
                save=save,
                parallel=parallel,
                previous=previous,
                on_started=on_started,
                on_finished=on_finished,
            )
        except asyncio.CancelledError:
            return None
        finally:
            if kept is not None:
                await kept.close()

    summary = asyncio.run(go())
    stopped = summary is None
    if summary is None:
        summary = BatchSummary(results=latest[0], skipped=previous_successes(plan, previous))
    if as_json:
        click.echo(json_text(_summary_json(summary, out.path, stopped=stopped)))
    else:
        click.echo(summary.line() + (" (stopped)" if stopped else ""))
        click.echo(f"  results: {out.path}")
        if stopped:
            click.echo("  run the same command again to go on: rows that succeeded are skipped")
        elif summary.not_done:
            click.echo(
                "  fix what failed and run the same command again: rows that succeeded are skipped"
            )
        elif not summary.all_succeeded:
            click.echo(
                f"  check the {summary.count(RowStatus.UNVERIFIED)} row(s) done, unverified: "
                "nothing showed their task was done, and the same command runs them again "
                "(only rows that succeeded are skipped)"
            )
    return _exit_code(summary, stopped=stopped)


def _exit_code(summary: BatchSummary, *, stopped: bool) -> int:
    """0 every row succeeded; 1 stopped, or a row not done; 3 the others done, unverified."""
    from desktop_app.cli.running import EXIT_UNVERIFIED

    if stopped or summary.not_done:
        return 1
    return 0 if summary.all_succeeded else EXIT_UNVERIFIED


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _summary_json(summary: BatchSummary, path: Path, *, stopped: bool) -> dict[str, Any]:
    return {
        "results_file": str(path),
        "stopped": stopped,
        "counts": {s.value: summary.count(s) for s in RowStatus},
        "skipped": len(summary.skipped),
        "rows": [
            {
                "row": r.line,
                "inputs": dict(r.inputs),
                "status": r.status.value,
                "run_id": r.run_id or None,
                "error": r.error or None,
                "finished_at": r.finished_at.isoformat() if r.finished_at else None,
                "skipped": r.line in summary.skipped,
            }
            for r in summary.results
        ],
    }
