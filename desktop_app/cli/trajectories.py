"""``procedura trajectories``: the recordings kept, to list, show, import, export and delete."""

from __future__ import annotations

from collections.abc import Sequence

import click

from desktop_app.cli.common import (
    Group,
    emit_json,
    open_input,
    open_stores,
    print_table,
    shorten,
    write_output,
)
from desktop_app.core.describe import describe_effects
from desktop_app.core.views import TrajectorySummary
from desktop_app.ops.changes import Origin
from desktop_app.ops.record import delete_recording

__all__ = ["trajectories"]


# ── trajectories ────────────────────────────────────────────────────────────────────────────


@click.group(cls=Group)
def trajectories() -> None:
    """List, show, import and export recorded demonstrations."""


def _trajectory_rows(items: Sequence[TrajectorySummary]) -> list[list[str]]:
    return [
        [
            t.id[:8],
            t.kind.value,
            f"{t.started_at.astimezone():%Y-%m-%d %H:%M}",
            str(t.event_count),
            shorten(t.intent or "-", 50) + (" [incomplete]" if t.incomplete else ""),
            shorten(t.start or "-", 40),
        ]
        for t in items
    ]


@trajectories.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def trajectories_list(ctx: click.Context, as_json: bool) -> None:
    """List recorded demonstrations, newest first."""
    with open_stores(ctx, write=False) as services:
        items = services.trajectories.list()
    if as_json:
        emit_json([t.model_dump(mode="json") for t in items])
    elif not items:
        click.echo("no recordings yet")
    else:
        print_table(_trajectory_rows(items), ["ID", "KIND", "STARTED", "EVENTS", "INTENT", "START"])


@trajectories.command("show")
@click.argument("ref")
@click.option("--json", "as_json", is_flag=True, help="Print the whole document as JSON.")
@click.option("--raw", is_flag=True, help="The raw stream: every event observed, noise included.")
@click.pass_context
def trajectories_show(ctx: click.Context, ref: str, as_json: bool, raw: bool) -> None:
    """Show a recording's events. REF is an id or a unique id prefix."""
    with open_stores(ctx, write=False) as services:
        t = services.trajectories.get(ref)
        events = services.trajectories.raw_events(t.id) if raw else list(t.events)
    if as_json:
        data = t.model_dump(mode="json")
        if raw:
            data["events"] = [e.model_dump(mode="json") for e in events]
        emit_json(data)
        return
    click.echo(f"{t.intent or '(no intent)'}  [{t.id}]")
    if t.incomplete:
        click.echo("incomplete: the recording ended abruptly; these are the events up to then")
    click.echo(
        f"{t.kind.value}, started {t.started_at.astimezone():%Y-%m-%d %H:%M:%S}, "
        f"from {t.start_url or t.start_app or '-'}"
    )
    if raw:
        click.echo(f"raw stream: {len(events)} events as observed ({len(t.events)} kept)")
    for i, e in enumerate(events):
        what = e.target.locators[0].describe() if e.target else (e.url or "")
        if e.key:
            chord = "+".join([*(m.value for m in e.modifiers), e.key])
            what = f"{chord} in {what}" if what else chord
        value = "" if e.value is None else (" = [secret]" if e.is_secret else f" = {e.value!r}")
        effect = ""
        if raw and e.effects is not None:
            effect = f"  ({describe_effects(e.effects)})"
        elif raw and e.effect is not None:
            effect = "  (changed the page)" if e.effect else "  (no effect)"
        click.echo(
            f"  {i:>3}. {e.action.value:<12} {shorten(what, 60)}{shorten(value, 40)}{effect}"
        )


@trajectories.command("import")
@click.argument("file")
@click.pass_context
def trajectories_import(ctx: click.Context, file: str) -> None:
    """Import a trajectory document (JSON). FILE may be - for stdin."""
    with open_input(file) as (stream, source), open_stores(ctx, write=True) as services:
        t = services.trajectories.import_file(stream, source=source)
    click.echo(f"imported trajectory {t.id[:8]} ({t.event_count} events)")


@trajectories.command("export")
@click.argument("ref")
@click.option("-o", "--out", help="Write to this file instead of standard output.")
@click.option("--force", is_flag=True, help="Replace --out if it exists.")
@click.pass_context
def trajectories_export(ctx: click.Context, ref: str, out: str | None, force: bool) -> None:
    """Export a trajectory as a JSON document."""
    with open_stores(ctx, write=False) as services:
        text = services.trajectories.export_json(ref)
    write_output(text, out, force)


@trajectories.command("delete")
@click.argument("ref")
@click.option("--yes", is_flag=True, help="Confirm: delete the recording for good.")
@click.pass_context
def trajectories_delete(ctx: click.Context, ref: str, yes: bool) -> None:
    """Delete a recording."""
    with open_stores(ctx, write=True) as services:
        done = delete_recording(services.trajectories, ref, confirmed=yes, origin=Origin.CLI)
    click.echo(done.summary)
