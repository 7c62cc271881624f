"""``procedura doctor``: compare the search index with the database, and put it right."""

from __future__ import annotations

import json
import sys

import click

from desktop_app.core.views import IndexReport

__all__ = ["doctor_command"]


@click.command("doctor")
@click.option("--check", is_flag=True, help="Only report; exit status 1 when the index differs.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def doctor_command(ctx: click.Context, check: bool, as_json: bool) -> None:
    """Find and fix what the search index lacks or holds wrongly.

    The database is the source of truth. Every workflow must be in the index at its latest
    version and status, every remembered repair too, and nothing else. A change the index
    missed (a process killed between saving and indexing) is finished at the next start of
    any command that writes; this looks at everything.
    """
    from desktop_app.app import open_services

    with open_services(ctx.obj["settings"](), write=not check) as services:
        report = services.workflows.check_index(fix=not check)
    if as_json:
        click.echo(json.dumps(report.model_dump(mode="json") | {"consistent": report.consistent}))
    else:
        for line in describe(report):
            click.echo(line)
    if check and not report.consistent:
        sys.exit(1)


def describe(report: IndexReport) -> list[str]:
    """The report in lines a person reads."""
    if report.consistent:
        return ["search index: consistent with the database"]
    parts = [
        (report.missing, "workflow(s) missing"),
        (report.stale, "workflow(s) at an old version or status"),
        (report.extra, "entr(y/ies) of workflows no longer stored"),
        (report.missing_experiences, "remembered repair(s) missing"),
        (report.extra_experiences, "entr(y/ies) of repairs no longer stored"),
    ]
    lines = [
        f"  {len(ids)} {what}: {', '.join(i[:8] for i in ids[:10])}"
        + (" …" if len(ids) > 10 else "")
        for ids, what in parts
        if ids
    ]
    head = "search index: fixed" if report.fixed else "search index: differs from the database"
    tail = [] if report.fixed else ["run `procedura doctor` to fix it"]
    return [head, *lines, *tail]
