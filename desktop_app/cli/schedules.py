"""``procedura schedule`` and ``procedura fleet scheduler``: the fleet's schedules from the
command line (docs/team.md).

    procedura schedule add WORKFLOW --cron "0 9 * * 1-5" [--tz ZONE] [-p NAME=VALUE ...] [--yes]
    procedura schedule list [--json]             every schedule and when it fires next
    procedura schedule enable ID / disable ID / remove ID
    procedura fleet scheduler                    the team's scheduler alone, until stopped

Writing schedules is an approver's (the team's server refuses anyone else, exit 1).
"""

from __future__ import annotations

from datetime import datetime

import click

from desktop_app.cli.common import emit_json, fail, open_stores, print_table

__all__ = ["schedule", "scheduler_command"]


def _team(ctx: click.Context) -> None:
    if not ctx.obj["settings"]().team:
        fail("schedules are a team's: procedura team join URL first", 2)


@click.group("schedule")
def schedule() -> None:
    """Run approved workflows on the team's fleet at set times (cron fields, a time zone)."""


@schedule.command("add")
@click.argument("workflow")
@click.option("--cron", required=True, metavar="FIELDS",
              help='Minute hour day-of-month month day-of-week: "0 9 * * 1-5".')  # fmt: skip
@click.option("--tz", "timezone", metavar="ZONE",
              help="An IANA time zone (Europe/Paris); default: this machine's.")  # fmt: skip
@click.option("-p", "--param", "params", multiple=True, metavar="NAME=VALUE",
              help="A value for each run (repeat for each parameter).")  # fmt: skip
@click.option("--yes", is_flag=True, help="Do irreversible steps without asking (nobody attends).")
@click.option("--json", "as_json", is_flag=True, help="Print the schedule as JSON.")
@click.pass_context
def add_command(
    ctx: click.Context,
    workflow: str,
    cron: str,
    timezone: str | None,
    params: tuple[str, ...],
    yes: bool,
    as_json: bool,
) -> None:
    """Run the approved version of WORKFLOW on the fleet whenever CRON's fields match.

    Everything is checked first (the fields, the zone, the workflow approved, the values);
    nothing is stored while one is bad (exit 2). Each firing runs the version approved then.
    """
    from desktop_app.core.replay.parameters import parse_assignments
    from desktop_app.fleet.schedules import add_schedule, local_zone, parse_timing

    _team(ctx)
    zone = timezone or local_zone()
    if zone is None:
        fail("this machine's time zone cannot be told: give --tz (like Europe/Paris)", 2)
    values = parse_assignments(params)
    with open_stores(ctx, write=True) as services:
        added = add_schedule(services, workflow, cron, zone, values, assume_yes=yes)
        name = services.workflows.summary(added.workflow_id).name
    if as_json:
        emit_json(added.model_dump(mode="json"))
        return
    upcoming = parse_timing(added.cron, added.timezone).next_after(datetime.now().astimezone())
    click.echo(
        f"schedule {added.id[:8]}: {name!r} at {added.cron!r} in {added.timezone}; "
        f"next {_when(upcoming)}"
    )


def _when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M %Z") if moment is not None else ""


@schedule.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def list_command(ctx: click.Context, as_json: bool) -> None:
    """Every schedule: its workflow, fields, zone, whether it is on, and its last and next
    firing (in its zone)."""
    from zoneinfo import ZoneInfo

    from desktop_app.fleet.schedules import list_schedules

    _team(ctx)
    with open_stores(ctx, write=False) as services:
        views = list_schedules(services)
    if as_json:
        emit_json([v.as_dict() for v in views])
        return
    rows = []
    for view in views:
        s = view.schedule
        last = s.last_fired_at.astimezone(ZoneInfo(s.timezone)) if s.last_fired_at else None
        rows.append([s.id[:8], view.workflow, s.cron, s.timezone, "yes" if s.enabled else "no",
                     _when(last) or "never", _when(view.next_fire) or "-"])  # fmt: skip
    print_table(rows, ["ID", "WORKFLOW", "CRON", "ZONE", "ENABLED", "LAST FIRED", "NEXT"])


@schedule.command("enable")
@click.argument("schedule_id")
@click.pass_context
def enable_command(ctx: click.Context, schedule_id: str) -> None:
    """Let a schedule fire again (from its next time on)."""
    _switch(ctx, schedule_id, True)


@schedule.command("disable")
@click.argument("schedule_id")
@click.pass_context
def disable_command(ctx: click.Context, schedule_id: str) -> None:
    """Stop a schedule firing (the scheduler sees it within seconds); it stays listed."""
    _switch(ctx, schedule_id, False)


def _switch(ctx: click.Context, schedule_id: str, enabled: bool) -> None:
    from desktop_app.fleet.schedules import set_enabled

    _team(ctx)
    with open_stores(ctx, write=True) as services:
        changed = set_enabled(services, schedule_id, enabled)
    click.echo(f"schedule {changed.id[:8]}: {'enabled' if enabled else 'disabled'}")


@schedule.command("remove")
@click.argument("schedule_id")
@click.pass_context
def remove_command(ctx: click.Context, schedule_id: str) -> None:
    """Delete a schedule (the jobs it made stay)."""
    from desktop_app.fleet.schedules import remove_schedule

    _team(ctx)
    with open_stores(ctx, write=True) as services:
        removed = remove_schedule(services, schedule_id)
    click.echo(f"schedule {removed.id[:8]}: removed")


@click.command("scheduler")
@click.pass_context
def scheduler_command(ctx: click.Context) -> None:
    """Run the team's scheduler alone, until stopped: it makes a job at each schedule's times.

    One per team is the rule (procedura worker --schedules runs one too); a second one
    running is harmless: each time fires once.
    """
    from desktop_app.fleet.beat import run_scheduler

    _team(ctx)
    run_scheduler(ctx.obj["settings"]())
