"""``procedura worker`` and ``procedura fleet``: the team's runner fleet from the command line
(docs/team.md).

    procedura worker [--concurrency N]           run rows on this machine until stopped
                     [--schedules]               ... and the team's scheduler
    procedura fleet submit WORKFLOW --csv FILE   one run per row, by the fleet
    procedura fleet jobs                         the newest jobs and their progress
    procedura fleet status JOB                   a job's rows
    procedura fleet cancel JOB / resume JOB
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from desktop_app.cli.common import emit_json, fail, open_stores, print_table, stdin_is_terminal
from desktop_app.core.models.fleet import ROW_STATE_LABELS, FleetJob, RowState

__all__ = ["fleet", "worker_command"]


@click.command("worker")
@click.option("--concurrency", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Rows run at once on this machine (a browser each).")  # fmt: skip
@click.option("--name", help="This worker's name (default: the host's).")
@click.option("--schedules", is_flag=True,
              help="Run the team's scheduler here too (one per team: docs/team.md).")  # fmt: skip
@click.pass_context
def worker_command(ctx: click.Context, concurrency: int, name: str | None, schedules: bool) -> None:
    """Run the team's fleet rows on this machine, in headless Chromium, until stopped.

    Needs team mode and a queue (team_queue). Ctrl+C lets the rows under way finish first.
    """
    from desktop_app.fleet.worker import run_worker

    settings = ctx.obj["settings"]()
    if not settings.team:
        fail("a worker runs a team's rows: procedura team join URL first", 2)
    run_worker(settings, concurrency=concurrency, name=name, schedules=schedules)


@click.group("fleet")
def fleet() -> None:
    """Hand runs to the team's fleet, and follow them."""


def _progress(job: FleetJob) -> str:
    return f"{job.ended}/{job.total} ({job.states_in_words()})"


@fleet.command("submit")
@click.argument("workflow")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path),
              required=True, help="One run per row; the first line names the columns.")  # fmt: skip
@click.option("-p", "--param", "params", multiple=True, metavar="NAME=VALUE",
              help="A value for every row (a row's own cell wins).")  # fmt: skip
@click.option("--yes", is_flag=True, help="Do irreversible steps without asking (nobody attends).")
@click.option("--json", "as_json", is_flag=True, help="Print the job as JSON.")
@click.pass_context
def submit_command(
    ctx: click.Context,
    workflow: str,
    csv_path: Path,
    params: tuple[str, ...],
    yes: bool,
    as_json: bool,
) -> None:
    """Run the approved version of WORKFLOW once per row of a CSV file, on the fleet.

    Every row is checked first; nothing is queued while one is bad (exit 2).
    """
    from desktop_app.core.batch import plan_batch, read_table
    from desktop_app.core.replay.parameters import parse_assignments
    from desktop_app.fleet.jobs import submit_job

    with open_stores(ctx, write=True) as services:
        version = services.workflows.runnable(workflow)
        plan = plan_batch(
            version.workflow, read_table(csv_path), defaults=parse_assignments(params)
        )
        if not plan.ok:
            for problem in plan.problems:
                click.echo(f"error: {csv_path}: {problem}", err=True)
            for issue in plan.issues:
                if issue.blocking:
                    click.echo(f"error: {csv_path}: {issue}", err=True)
            sys.exit(2)
        job = submit_job(services, version, [dict(r.given) for r in plan.rows], assume_yes=yes)
    if as_json:
        emit_json(job.model_dump(mode="json"))
    else:
        click.echo(f"job {job.id}: {job.total} rows of {job.name!r} v{job.version} queued")


@fleet.command("run")
@click.argument("workflow", required=False)
@click.option("--intent", help="Find the workflow and its values from a sentence.")
@click.option("-p", "--param", "params", multiple=True, metavar="NAME=VALUE",
              help="A parameter's value.")  # fmt: skip
@click.option("--yes", is_flag=True, help="Irreversible steps and the intent, without asking.")
@click.pass_context
def run_command(
    ctx: click.Context, workflow: str | None, intent: str | None, params: tuple[str, ...], yes: bool
) -> None:
    """Run the approved version of WORKFLOW once on the fleet, or the one --intent describes.

    By intent, the workflow and its values are decided here and shown; a worker runs exactly
    that. Without --yes it asks first (at a terminal; elsewhere it refuses, exit 2).
    """
    from desktop_app.core.errors import ConfirmationRequired
    from desktop_app.core.models.fleet import JobKind
    from desktop_app.core.replay.parameters import parse_assignments
    from desktop_app.fleet.jobs import by_intent, submit_job

    if (workflow is None) == (intent is None):
        raise click.UsageError("name a WORKFLOW or describe what to do with --intent (not both)")
    given = parse_assignments(params)
    with open_stores(ctx, write=True) as services:
        if intent is not None:
            version, values, source = by_intent(services, intent)
            given = {**values, **given}
            shown = ", ".join(f"{k}={v}" for k, v in given.items()) or "no values"
            click.echo(f"Will run {version.workflow.name!r} v{version.version} with {shown} "
                       f"(from the {source}) on the fleet", err=True)  # fmt: skip
            if not yes and not (stdin_is_terminal() and click.confirm("Queue it?", err=True)):
                raise ConfirmationRequired("running by intent needs --yes; nothing was queued")
            kind = JobKind.INTENT
        else:
            assert workflow is not None
            version, kind = services.workflows.runnable(workflow), JobKind.BATCH
        job = submit_job(services, version, [given], kind=kind, assume_yes=yes)
    click.echo(f"job {job.id}: {job.name!r} v{job.version} queued")


@fleet.command("jobs")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def jobs_command(ctx: click.Context, as_json: bool) -> None:
    """The newest jobs and how far each is."""
    from desktop_app.adapters.sql.fleet_store import SqlFleetStore

    with open_stores(ctx, write=False) as services:
        jobs = SqlFleetStore(services.engine).jobs()
    if as_json:
        emit_json([j.model_dump(mode="json") for j in jobs])
        return
    print_table(
        [[j.id[:8], f"{j.name} v{j.version}", j.kind.value, j.created_by, _progress(j)]
         for j in jobs],
        ["JOB", "WORKFLOW", "KIND", "BY", "PROGRESS"],
    )  # fmt: skip


@fleet.command("status")
@click.argument("job_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def status_command(ctx: click.Context, job_id: str, as_json: bool) -> None:
    """A job's rows: state, worker, attempts, error. Exit 1 while rows need attention."""
    from desktop_app.adapters.sql.fleet_store import SqlFleetStore

    with open_stores(ctx, write=False) as services:
        store = SqlFleetStore(services.engine)
        job = store.job(_job_id(store, job_id))
        rows = store.rows(job.id)
    if as_json:
        emit_json(
            {"job": job.model_dump(mode="json"), "rows": [r.model_dump(mode="json") for r in rows]}
        )
    else:
        click.echo(f"job {job.id}: {job.name!r} v{job.version}, {_progress(job)}")
        print_table(
            [[str(r.row), ROW_STATE_LABELS[r.state], r.worker or "", str(r.attempt),
              (r.error or "")[:80]] for r in rows],
            ["ROW", "STATE", "WORKER", "TRIES", "ERROR"],
        )  # fmt: skip
    if any(r.state is RowState.NEEDS_ATTENTION for r in rows):
        sys.exit(1)


def _job_id(store: object, prefix: str) -> str:
    from desktop_app.adapters.sql.fleet_store import SqlFleetStore

    assert isinstance(store, SqlFleetStore)
    found = [j.id for j in store.jobs(limit=1000) if j.id.startswith(prefix)]
    if len(found) != 1:
        fail(f"no fleet job {prefix}" if not found else f"{prefix} names several jobs", 2)
    return found[0]


@fleet.command("cancel")
@click.argument("job_id")
@click.pass_context
def cancel_command(ctx: click.Context, job_id: str) -> None:
    """Stop a job: queued rows now, running rows before their next step."""
    from desktop_app.adapters.sql.fleet_store import SqlFleetStore
    from desktop_app.fleet.jobs import cancel_job

    with open_stores(ctx, write=True) as services:
        full = _job_id(SqlFleetStore(services.engine), job_id)
        cancelled = cancel_job(services, full)
    click.echo(f"job {full}: {cancelled} queued rows cancelled; running rows stop after their step")


@fleet.command("resume")
@click.argument("job_id")
@click.pass_context
def resume_command(ctx: click.Context, job_id: str) -> None:
    """Queue again a job's cancelled rows and failed rows that began no irreversible step."""
    from desktop_app.adapters.sql.fleet_store import SqlFleetStore
    from desktop_app.fleet.jobs import resume_job

    with open_stores(ctx, write=True) as services:
        full = _job_id(SqlFleetStore(services.engine), job_id)
        rows = resume_job(services, full)
    click.echo(f"job {full}: {len(rows)} rows queued again")
