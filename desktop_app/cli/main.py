"""The ``procedura`` command line: the same services as the app, without Qt.

Exit codes: 0 success; 1 the stores cannot be used (locked, unreadable); 2 bad input (a malformed
file, an unknown id, a status change review does not allow, a missing confirmation).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from desktop_app import __version__
from desktop_app.cli.common import (
    Group,
    emit_json,
    open_stores,
)
from desktop_app.ops.changes import Origin
from desktop_app.ops.library import reindex as rebuild
from desktop_app.settings import Settings, load_settings
from desktop_app.startup import release_collection

__all__ = ["cli", "main"]


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="procedura")
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    help="Data directory (default: $PROCEDURA_HOME, else the platform's user data dir).",
)
@click.pass_context
def cli(ctx: click.Context, home: Path | None) -> None:
    """Procedura: turn one demonstration into a reusable, reviewable, self-healing procedure."""
    if ctx.invoked_subcommand != "gui":  # the desktop app's collector takes over in its window
        release_collection()
    overrides: dict[str, Any] = {"home": home} if home is not None else {}
    cached: list[Settings] = []

    def settings() -> Settings:
        if not cached:
            cached.append(load_settings(**overrides))
        return cached[0]

    ctx.obj = {"settings": settings}


# ── info ────────────────────────────────────────────────────────────────────────────────────


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def info(ctx: click.Context, as_json: bool) -> None:
    """Version, data directory, counts, browser and LLM set-up."""
    from desktop_app.app import collect_info

    with open_stores(ctx, write=False) as services:
        data = collect_info(services)
    if as_json:
        emit_json(data)
        return
    counts = data["counts"]
    browser = data["browser"]
    llm = data["llm"]
    click.echo(f"Procedura {data['version']}")
    click.echo(f"data dir:     {data['data_dir']}")
    click.echo(f"database:     {data['database']} (schema {data['schema_revision']})")
    click.echo(
        f"workflows:    {counts['workflows']} ({counts['workflow_versions']} versions)\n"
        f"trajectories: {counts['trajectories']}\n"
        f"runs:         {counts['runs']}\n"
        f"experiences:  {counts['experiences']}\n"
        f"media:        {counts['media_files']} files, {counts['media_bytes'] / 1e6:.1f} MB"
    )
    if counts["index_pending"]:
        click.echo(
            f"search index: {counts['index_pending']} change(s) not indexed yet (the next "
            "command that writes finishes them; `procedura doctor` checks everything)"
        )
    if browser["found"]:
        click.echo(f"browser:      {browser['path']} ({browser['source']})")
    else:
        click.echo("browser:      not found (install Chromium or set PROCEDURA_BROWSER)")
    if llm["configured"]:
        where = llm["base_url"] or "OpenAI"
        click.echo(f"LLM:          {llm['model']} at {where} (key: {llm['api_key']})")
    else:
        click.echo(
            "LLM:          not configured (offline heuristics; set OPENAI_API_KEY to enable)"
        )
    click.echo(f"embeddings:   {data['embedding']}")


@cli.command()
@click.option(
    "--tray",
    is_flag=True,
    help="Start with only the tray icon, as at login (minimised where there is no tray).",
)
@click.pass_context
def gui(ctx: click.Context, tray: bool) -> None:
    """Open the desktop app: library, recording, the step editor, review, runs and settings."""
    from desktop_app.gui.main import main as gui_main

    sys.exit(gui_main(ctx.obj["settings"](), minimized=tray))


@cli.command("demo-site")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True)
@click.option(
    "--variant",
    default="",
    help="Drift variants to apply, comma-separated (see docs/demo-site.md).",
)
def demo_site(port: int, variant: str) -> None:
    """Serve the bundled demo web app "Acme CRM" on 127.0.0.1 (Ctrl+C stops it)."""
    from desktop_app.demo_site.server import serve_forever

    serve_forever(port, [v.strip() for v in variant.split(",") if v.strip()])


# ── index ───────────────────────────────────────────────────────────────────────────────────


@cli.command()
@click.pass_context
def reindex(ctx: click.Context) -> None:
    """Rebuild the semantic search index from the database."""
    with open_stores(ctx, write=True) as services:
        done = rebuild(services.workflows, origin=Origin.CLI)
    click.echo(f"indexed {done.workflows} workflows and {done.experiences} experiences")


def _add_commands() -> None:
    from desktop_app.cli.doctor import doctor_command
    from desktop_app.cli.export import export_command
    from desktop_app.cli.fleet import fleet, worker_command
    from desktop_app.cli.record import induce, record
    from desktop_app.cli.replay import run_command, runs_group, verify_command
    from desktop_app.cli.review import diff_command
    from desktop_app.cli.schedules import schedule, scheduler_command
    from desktop_app.cli.team import team
    from desktop_app.cli.trajectories import trajectories
    from desktop_app.cli.workflows import workflows

    for command in (
        workflows,
        trajectories,
        induce,
        record,
        run_command,
        runs_group,
        export_command,
        doctor_command,
        team,
        fleet,
        worker_command,
        schedule,
    ):
        cli.add_command(command)
    fleet.add_command(scheduler_command)
    workflows.add_command(diff_command)
    workflows.add_command(verify_command)


_add_commands()


def main(argv: Sequence[str] | None = None) -> None:
    """Run the command line (the ``procedura`` console script)."""
    cli.main(args=list(argv) if argv is not None else None, prog_name="procedura")
