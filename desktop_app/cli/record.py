"""``procedura record`` (web, desktop) and ``procedura induce``: recordings made, and turned into
workflows."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import click

from desktop_app.cli.common import (
    Group,
    fail,
    open_stores,
    print_table,
    shorten,
    write_output,
)
from desktop_app.core.errors import (
    ConfirmationRequired,
)
from desktop_app.core.llm import LLMUnavailable
from desktop_app.core.models.trajectory import Trajectory
from desktop_app.core.recording import PROFILE_NAME_RULE, is_profile_name
from desktop_app.ops.changes import Origin
from desktop_app.ops.induce import NEEDS_AN_LLM, LlmUse, choose_llm
from desktop_app.ops.induce import induce as induce_draft
from desktop_app.ops.record import (
    NOTHING_RECORDED,
    NOTHING_RECORDED_ON_THE_DESKTOP,
    keep_recording,
)

__all__ = ["induce", "record"]


# ── induction ───────────────────────────────────────────────────────────────────────────────


@click.command()
@click.argument("trajectories", nargs=-1, required=True)
@click.option("--name", help="Name the workflow (default: from the stated intent).")
@click.option(
    "--llm/--no-llm",
    default=None,
    help="Have the configured LLM name, describe and title it (default: when one is "
    "configured); --llm fails without one.",
)
@click.option(
    "--compose/--no-compose",
    default=True,
    show_default=True,
    help="Call approved workflows where the recording does what they do.",
)
@click.option("--actor", help="Who (default: the setting `actor`, else your user name).")
@click.pass_context
def induce(
    ctx: click.Context,
    trajectories: tuple[str, ...],
    name: str | None,
    actor: str | None,
    llm: bool | None,
    compose: bool,
) -> None:
    """Induce a draft workflow from recorded demonstrations.

    TRAJECTORIES are trajectory ids or unique prefixes of them. Give several demonstrations of
    the same task to learn what varies: values that differ become parameters, values that agree
    become constants, and the alignment of their steps is printed. The draft is saved as a new
    workflow; review it with `procedura workflows show ID`, then submit and approve it.

    Offline heuristics find the steps and parameters. When an LLM is configured it also names
    and describes the workflow, titles its steps and names its parameters (one call; if it fails
    or answers something the recording does not support, the offline result is kept and you are
    told why); --no-llm stays offline. Steps that do what an approved workflow does become a
    call to it, unless --no-compose.
    """
    from desktop_app.app import make_structured_llm

    use = LlmUse.AUTO if llm is None else LlmUse.ON if llm else LlmUse.OFF
    with open_stores(ctx, write=True) as services:
        settings = services.settings
        try:
            model = choose_llm(use, lambda: make_structured_llm(settings))
        except LLMUnavailable:
            raise click.UsageError(f"--llm needs an LLM: {NEEDS_AN_LLM}") from None
        induced = induce_draft(
            services.trajectories,
            services.workflows,
            trajectories,
            actor=actor or settings.actor,
            origin=Origin.CLI,
            llm=model,
            llm_model=settings.llm_model,
            name=name,
            compose=compose,
        )
    saved, notes, alignment, recordings = (
        induced.saved,
        induced.notes,
        induced.alignment,
        induced.recordings,
    )
    wf = saved.version.workflow
    click.echo(induced.summary)
    if alignment is not None:
        click.echo(
            f"\nalignment of {len(recordings)} demonstrations "
            "(the event each step came from; - where one has no such step):"
        )
        rows = [
            [str(i), shorten(s.title, 44)]
            + ["-" if e is None else str(e) for e in s.events]
            + ["optional" if s.optional else ""]
            for i, s in enumerate(alignment.steps, 1)
        ]
        rows += [
            ["-", shorten(s.title, 44)]
            + ["-" if e is None else str(e) for e in s.events]
            + ["dropped"]
            for s in alignment.dropped
        ]
        print_table(rows, ["#", "step", *(r.id[:8] for r in recordings), ""])
        click.echo()
    for recording in recordings:
        if recording.incomplete:
            what = f"recording {recording.id[:8]}" if len(recordings) > 1 else "the recording"
            click.echo(f"note: {what} is incomplete; check the last steps", err=True)
    for line in notes:
        click.echo(f"note: {line}", err=True)
    click.echo(f"review it with: procedura workflows show {wf.id[:8]}")


# ── recording ───────────────────────────────────────────────────────────────────────────────


@click.group(cls=Group)
def record() -> None:
    """Record a demonstration."""


@record.command("web")
@click.option("--url", help="Where to start (required unless --attach).")
@click.option("--intent", default="", help='What you are about to do, e.g. "Create a contact".')
@click.option(
    "--attach",
    metavar="CDP_URL",
    help="Record in your own running Chrome (started with --remote-debugging-port=9222).",
)
@click.option(
    "--profile",
    help="A named browser profile kept between recordings (cookies and site data stay).",
)
@click.option("--headless", is_flag=True, help="No window (for scripted demonstrations).")
@click.option("-o", "--out", help="Also write the trajectory to this JSON file.")
@click.option("--force", is_flag=True, help="Replace --out if it exists.")
@click.pass_context
def record_web_command(
    ctx: click.Context,
    url: str | None,
    intent: str,
    attach: str | None,
    profile: str | None,
    headless: bool,
    out: str | None,
    force: bool,
) -> None:
    """Record what you do in a browser until you close it, press Ctrl+C, or SIGTERM.

    Passwords and other sensitive fields are never stored: their values are replaced by a secret
    placeholder and masked in screenshots. Press Alt+Shift+S in a field to mark it sensitive.
    """
    if url is None and attach is None:
        raise click.UsageError("give --url to start at, or --attach to use your own browser")
    if out is not None and Path(out).exists() and not force:
        raise ConfirmationRequired(f"{out} exists; pass --force to replace it")
    if profile is not None and not is_profile_name(profile):
        raise click.BadParameter(PROFILE_NAME_RULE, param_hint="--profile")
    from desktop_app.app import record_web

    def started(trajectory_id: str, _page: object) -> None:
        click.echo(
            f"recording {trajectory_id[:8]}: do the task in the browser, then close it "
            "(or press Ctrl+C) to finish",
            err=True,
        )

    _record_until_stopped(
        ctx,
        out,
        lambda services, stop: record_web(
            services,
            url=url,
            intent=intent,
            attach=attach,
            profile=profile,
            headless=headless,
            stop=stop,
            on_started=started,
        ),
    )


def _record_until_stopped(
    ctx: click.Context,
    out: str | None,
    record: Callable[[Any, asyncio.Event], Awaitable[Trajectory]],
    *,
    nothing: str = NOTHING_RECORDED,
) -> None:
    """Run *record* until it ends or Ctrl+C/SIGTERM stops it; then say what was recorded (and
    write it to *out*); an empty recording is not kept, and *nothing* says so (exit 1)."""

    async def run(services: Any) -> Trajectory:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)
        return await record(services, stop)

    with open_stores(ctx, write=True) as services:
        kept = keep_recording(services.trajectories, asyncio.run(run(services)), origin=Origin.CLI)
        trajectory = kept.trajectory
        if trajectory is None:
            fail(nothing, 1)
        text = services.trajectories.export_json(trajectory.id) if out else None
    if text is not None:
        write_output(text, out, force=True)
    click.echo(
        f"recorded {len(trajectory.events)} events as trajectory {trajectory.id}\n"
        f"see it with: procedura trajectories show {trajectory.id[:8]}\n"
        f"induce a workflow from it with: procedura induce {trajectory.id[:8]}"
    )


@record.command("desktop")
@click.option("--intent", default="", help='What you are about to do, e.g. "Create a contact".')
@click.option(
    "--sensitive-window",
    "sensitive_windows",
    metavar="TITLE",
    multiple=True,
    help="Windows whose title or application contains TITLE (wildcards * and ?) are sensitive: "
    "what you type there is never stored and they are masked in screenshots. Repeatable.",
)
@click.option("-o", "--out", help="Also write the trajectory to this JSON file.")
@click.option("--force", is_flag=True, help="Replace --out if it exists.")
@click.pass_context
def record_desktop_command(
    ctx: click.Context,
    intent: str,
    sensitive_windows: tuple[str, ...],
    out: str | None,
    force: bool,
) -> None:
    """Record what you do on the desktop (outside the browser) until Ctrl+C here, or SIGTERM.

    Clicks (with a screenshot and an image of what was clicked), typing and hotkeys in every
    window but this terminal are recorded. Needs an X11 display (DISPLAY).
    """
    if out is not None and Path(out).exists() and not force:
        raise ConfirmationRequired(f"{out} exists; pass --force to replace it")
    from desktop_app.adapters.desktop import require_display
    from desktop_app.app import record_desktop

    require_display()  # before the data directory is opened: nothing is written without one

    def started(trajectory_id: str) -> None:
        click.echo(
            f"recording {trajectory_id[:8]}: do the task on the desktop, then press Ctrl+C in "
            "this terminal to finish",
            err=True,
        )

    _record_until_stopped(
        ctx,
        out,
        lambda services, stop: record_desktop(
            services,
            intent=intent,
            stop=stop,
            on_started=started,
            sensitive_windows=sensitive_windows,
            exclude_terminal=True,
        ),
        nothing=NOTHING_RECORDED_ON_THE_DESKTOP,
    )
