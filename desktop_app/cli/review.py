"""``procedura workflows diff``: what one version of a workflow changes compared with another."""

from __future__ import annotations

import json

import click

from desktop_app.core.diff import base_for, diff_workflows, render_text
from desktop_app.core.errors import NotFoundError
from desktop_app.core.models.workflow import status_label

__all__ = ["diff_command"]


@click.command("diff")
@click.argument("ref")
@click.argument("versions", nargs=-1, type=click.IntRange(min=1))
@click.option("--all", "show_all", is_flag=True, help="List the unchanged steps too.")
@click.option("--json", "as_json", is_flag=True, help="Print the diff as JSON.")
@click.pass_context
def diff_command(
    ctx: click.Context, ref: str, versions: tuple[int, ...], show_all: bool, as_json: bool
) -> None:
    """Show what a version changes. REF is an id, id prefix or name.

    \b
    procedura workflows diff REF          the latest version against the one it came from
    procedura workflows diff REF 3        version 3 against the one it came from
    procedura workflows diff REF 2 5      version 5 against version 2

    "The one it came from" is its parent (the version a repair's run replayed, or the latest
    when it was saved), else the approved version, else the one before it.
    """
    if len(versions) > 2:
        raise click.UsageError("give at most two versions: BASE and COMPARED")
    from desktop_app.app import open_services

    with open_services(ctx.obj["settings"](), write=False) as services:
        history = services.workflows.versions(ref)
        by_number = {v.version: v for v in history}
        for number in versions:
            if number not in by_number:
                raise NotFoundError(
                    f"{history[-1].workflow.name!r} has no version {number}; "
                    f"it has versions 1 to {history[-1].version}"
                )
        compared = by_number[versions[-1]] if versions else history[-1]
        base_number = versions[0] if len(versions) == 2 else base_for(compared, history)
    base = by_number[base_number].workflow if base_number is not None else None
    diff = diff_workflows(base, compared.workflow)
    if as_json:
        click.echo(json.dumps(diff.model_dump(mode="json"), indent=2, ensure_ascii=False))
        return
    click.echo(
        f"version {compared.version} is {status_label(compared.status).lower()}, "
        f"by {compared.created_by}" + (f": {compared.change_note}" if compared.change_note else "")
    )
    for line in render_text(diff, unchanged=show_all):
        click.echo(line)
