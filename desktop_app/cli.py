"""The ``procedura`` command line: the same services as the app, without Qt.

Exit codes: 0 success; 1 the stores cannot be used (locked, unreadable); 2 bad input (a malformed
file, an unknown id, a status change review does not allow, a missing confirmation).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import signal
import sys
import tempfile
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, NoReturn, ParamSpec, TypeVar, cast

import click

from desktop_app import __version__
from desktop_app.core.describe import describe_effects, describe_expectation
from desktop_app.core.errors import (
    ConfirmationRequired,
    DocumentError,
    NotFoundError,
    ProceduraError,
    TransitionError,
)
from desktop_app.core.models.trajectory import Trajectory
from desktop_app.core.models.workflow import WorkflowStatus, WorkflowVersion
from desktop_app.core.recording import PROFILE_NAME_RULE, is_profile_name
from desktop_app.core.replay.parameters import ParameterError
from desktop_app.core.replay.render import RebaseError
from desktop_app.core.views import TrajectorySummary, WorkflowSummary
from desktop_app.files import write_atomically
from desktop_app.settings import Settings, SettingsError, load_settings

__all__ = ["cli", "main"]

P = ParamSpec("P")
R = TypeVar("R")

_INPUT_ERRORS = (
    DocumentError,
    NotFoundError,
    TransitionError,
    ConfirmationRequired,
    SettingsError,
    ParameterError,
    RebaseError,
)


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


@contextmanager
def _services(ctx: click.Context, *, write: bool) -> Iterator[Any]:
    from desktop_app.app import open_services

    settings: Settings = ctx.obj["settings"]()
    with open_services(settings, write=write) as services:
        yield services


def _emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def _table(rows: Sequence[Sequence[str]], headers: Sequence[str]) -> None:
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    click.echo(line.rstrip())
    for row in rows:
        click.echo("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _read_input(path: str) -> tuple[bytes, str]:
    if path == "-":
        return sys.stdin.buffer.read(), "<stdin>"
    file = Path(path)
    try:
        return file.read_bytes(), file.name
    except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        raise _input_error(exc, path) from None


@contextmanager
def _open_input(path: str) -> Iterator[tuple[BinaryIO, str]]:
    """:func:`_read_input` as a seekable binary file, for documents read a part at a time.

    Standard input (and a pipe given by name) is copied to a temporary file first, not into
    memory.
    """
    with contextlib.ExitStack() as stack:
        if path == "-":
            stream: BinaryIO = sys.stdin.buffer
            source = "<stdin>"
        else:
            try:
                stream = stack.enter_context(Path(path).open("rb"))
            except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
                raise _input_error(exc, path) from None
            source = Path(path).name
        if path == "-" or not stream.seekable():
            spool = stack.enter_context(tempfile.TemporaryFile())
            shutil.copyfileobj(stream, spool)
            spool.seek(0)
            stream = spool
        yield stream, source


def _input_error(exc: OSError, path: str) -> DocumentError:
    if isinstance(exc, FileNotFoundError):
        return DocumentError("no such file", source=path)
    if isinstance(exc, IsADirectoryError):
        return DocumentError("is a directory, not a file", source=path)
    return DocumentError("permission denied", source=path)


def _write_output(text: str, out: str | None, force: bool) -> None:
    """Print *text*, or write it to *out* atomically, never replacing a file without --force."""
    if out is None or out == "-":
        click.echo(text, nl=False)
        return
    write_atomically(Path(out), text.encode("utf-8"), force=force)
    click.echo(f"wrote {out}", err=True)


class _Group(click.Group):
    """A group that turns Procedura's errors into one line and an exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except _INPUT_ERRORS as exc:
            _fail(str(exc), 2)
        except ProceduraError as exc:
            _fail(str(exc), 1)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="procedura")
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    help="Data directory (default: $PROCEDURA_HOME, else the platform's user data dir).",
)
@click.pass_context
def cli(ctx: click.Context, home: Path | None) -> None:
    """Procedura: turn one demonstration into a reusable, reviewable, self-healing procedure."""
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

    with _services(ctx, write=False) as services:
        data = collect_info(services)
    if as_json:
        _emit_json(data)
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


# ── workflows ───────────────────────────────────────────────────────────────────────────────


@cli.group(cls=_Group)
def workflows() -> None:
    """List, show, search, import, export and review workflows."""


_STATUS = click.Choice([s.value for s in WorkflowStatus])


def _summary_json(s: WorkflowSummary) -> dict[str, Any]:
    return s.model_dump(mode="json")


def _summary_rows(items: Sequence[WorkflowSummary]) -> list[list[str]]:
    return [
        [
            s.id[:8],
            _short(s.name, 40),
            s.status.value + (" *" if s.pinned else ""),
            str(s.latest_version),
            str(s.approved_version or "-"),
            ", ".join(s.domains) or "-",
            ", ".join(s.parameters) or "-",
        ]
        for s in items
    ]


_SUMMARY_HEADERS = ["ID", "NAME", "STATUS", "VERSION", "APPROVED", "DOMAINS", "PARAMETERS"]


@workflows.command("list")
@click.option("--status", type=_STATUS, help="Only workflows with this status (archived included).")
@click.option("--domain", help="Only workflows for this domain (or its subdomains).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def workflows_list(
    ctx: click.Context, status: str | None, domain: str | None, as_json: bool
) -> None:
    """List workflows: pinned first, then most recently changed (archived only with --status)."""
    with _services(ctx, write=False) as services:
        items = services.workflows.list(
            status=WorkflowStatus(status) if status else None, domain=domain
        )
    if as_json:
        _emit_json([_summary_json(s) for s in items])
    elif not items:
        click.echo("no workflows yet (record one, or: procedura workflows import FILE)")
    else:
        _table(_summary_rows(items), _SUMMARY_HEADERS)


@workflows.command("show")
@click.argument("ref")
@click.option(
    "--version", "version", type=click.IntRange(min=1), help="A version (default: latest)."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def workflows_show(ctx: click.Context, ref: str, version: int | None, as_json: bool) -> None:
    """Show a workflow: parameters, steps and review history. REF is an id, id prefix or name."""
    with _services(ctx, write=False) as services:
        current = services.workflows.get(ref, version)
        summary = services.workflows.summary(current.workflow_id)
        history = services.workflows.versions(current.workflow_id)
    if as_json:
        _emit_json(
            {
                "summary": _summary_json(summary),
                "version": current.model_dump(mode="json"),
                "versions": [
                    {
                        "version": v.version,
                        "status": v.status.value,
                        "created_at": v.created_at.isoformat(),
                        "created_by": v.created_by,
                        "change_note": v.change_note,
                    }
                    for v in history
                ],
            }
        )
        return
    wf = current.workflow
    click.echo(f"{wf.name}  [{summary.id}]")
    click.echo(
        f"version {wf.version} ({current.status.value}) of {summary.latest_version}; "
        f"approved: {summary.approved_version or 'none'}"
    )
    if wf.description:
        click.echo(f"\n{wf.description}")
    if wf.domains:
        click.echo(f"domains: {', '.join(wf.domains)}")
    if wf.intent_template:
        click.echo(f"intent:  {wf.intent_template}")
    if wf.parameters:
        click.echo("\nparameters:")
        for p in wf.parameters:
            extra = f" = {p.default!r}" if p.default is not None else ""
            req = "" if p.required else " (optional)"
            desc = f"  {p.description}" if p.description else ""
            click.echo(f"  {p.name}: {p.type.value}{extra}{req}{desc}")
    click.echo(f"\nsteps ({len(wf.steps)}):")
    for i, step in enumerate(wf.steps, 1):
        flags = " [irreversible]" if step.irreversible else ""
        flags += " [optional]" if step.optional else ""
        click.echo(f"  {i:>2}. {step.title}  ({step.kind}){flags}")
        target = step.target_or_none
        if target is not None:
            click.echo(f"      target: {' | '.join(loc.describe() for loc in target.locators[:3])}")
        for expectation in step.expectations:
            click.echo(f"      expect: {describe_expectation(expectation)}")
    if wf.success:
        click.echo("\ndone when:")
        for expectation in wf.success:
            click.echo(f"  {describe_expectation(expectation)}")
    else:
        click.echo("\ndone when: no success check (runs end 'done, unverified')")
    click.echo("\nhistory:")
    for v in history:
        for t in v.transitions:
            frm = t.from_status.value if t.from_status else "new"
            comment = f": {t.comment}" if t.comment else ""
            click.echo(
                f"  v{v.version} {t.at.astimezone():%Y-%m-%d %H:%M} {t.actor} "
                f"{frm} → {t.to_status.value}{comment}"
            )


@workflows.command("search")
@click.argument("query")
@click.option("--status", type=_STATUS, help="Only workflows with this status.")
@click.option("--domain", help="Only workflows for this domain.")
@click.option("-n", "--limit", type=click.IntRange(1, 100), default=5, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def workflows_search(
    ctx: click.Context,
    query: str,
    status: str | None,
    domain: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """Find workflows by meaning: QUERY says what you want to do."""
    with _services(ctx, write=True) as services:
        matches = services.workflows.search(
            query, limit=limit, status=WorkflowStatus(status) if status else None, domain=domain
        )
    if as_json:
        _emit_json([{"score": m.score, **_summary_json(m.workflow)} for m in matches])
    elif not matches:
        click.echo("no matching workflows")
    else:
        rows = [
            [f"{m.score:.2f}", *r]
            for m, r in zip(matches, _summary_rows([m.workflow for m in matches]), strict=True)
        ]
        _table(rows, ["SCORE", *_SUMMARY_HEADERS])


_RESOLUTIONS = ("keep-both", "replace", "skip")


def _stdin_is_terminal() -> bool:
    return sys.stdin.isatty()


@workflows.command("import")
@click.argument("file")
@click.option(
    "--on-conflict",
    type=click.Choice(_RESOLUTIONS),
    help="For a bundle: what to do with workflows that exist here with other content "
    "(default: ask at a terminal, else fail and list them).",
)
@click.pass_context
def workflows_import(ctx: click.Context, file: str, on_conflict: str | None) -> None:
    """Import a workflow document (JSON) or a bundle (.procedura) as new draft versions.

    FILE may be - for stdin. A bundle is validated in full before anything is written, its
    workflows arrive as drafts, and it never carries secrets (see docs/export-bundle.md).
    """
    from desktop_app.core.exports.bundle import MAX_BUNDLE_BYTES, is_bundle

    if file != "-" and Path(file).is_file() and Path(file).stat().st_size > MAX_BUNDLE_BYTES:
        raise DocumentError(
            f"the file is larger than the {MAX_BUNDLE_BYTES // 2**20} MiB an import may be",
            source=file,
        )
    data, source = _read_input(file)
    if is_bundle(source, data):
        _import_bundle(ctx, data, source, on_conflict)
        return
    if on_conflict is not None:
        raise click.UsageError("--on-conflict applies to bundles (.procedura files) only")
    with _services(ctx, write=True) as services:
        settings: Settings = services.settings
        result = services.workflows.import_json(data, actor=settings.actor, source=source)
    v = result.version
    if result.created:
        click.echo(
            f"imported {v.workflow.name!r} as {v.workflow_id[:8]} version {v.version} (draft)"
        )
    else:
        click.echo(f"{v.workflow.name!r} is unchanged (version {v.version}); nothing imported")


def _import_bundle(ctx: click.Context, data: bytes, source: str, on_conflict: str | None) -> None:
    from desktop_app.core.exports.bundle import (
        OnConflict,
        Resolution,
        import_bundle,
        plan_import,
        read_bundle,
    )

    bundle = read_bundle(data, source=source)
    choices: dict[str, Resolution] = {}
    with _services(ctx, write=True) as services:
        if on_conflict is None and _stdin_is_terminal():
            while unresolved := plan_import(services.workflows, bundle, choices=choices).unresolved:
                for conflict in unresolved:
                    click.echo(f"conflict: {conflict.describe()}", err=True)
                    choices[conflict.workflow_id] = click.prompt(
                        "keep-both (import a copy under a new id), replace (a new latest "
                        "version) or skip?",
                        type=click.Choice(_RESOLUTIONS),
                        err=True,
                    )
        report = import_bundle(
            services.workflows,
            services.media,
            bundle,
            on_conflict=cast(OnConflict, on_conflict or "ask"),
            choices=choices,
            actor=services.settings.actor,
        )
    called = len(report.workflows) - 1
    click.echo(
        f"bundle {source}: {report.main.name!r}"
        + (f" and {called} called workflow{'s' if called > 1 else ''}" if called else "")
    )
    for outcome in report.workflows:
        click.echo(f"  {outcome.describe()}")
    if report.media_stored or report.media_present:
        click.echo(
            f"media: {len(report.media_stored)} stored, {len(report.media_present)} already here"
        )
    for warning in report.warnings:
        click.echo(f"note: {warning}", err=True)
    if bundle.manifest.missing_media:
        click.echo(
            f"note: {len(bundle.manifest.missing_media)} screenshot(s) were missing where the "
            "bundle was made; the steps that use them have none",
            err=True,
        )
    if report.main.action in ("imported", "copied", "new version"):
        click.echo(f"review it with: procedura workflows show {report.main.local_id[:8]}")


@workflows.command("export")
@click.argument("ref")
@click.option(
    "--version", "version", type=click.IntRange(min=1), help="A version (default: latest)."
)
@click.option("-o", "--out", help="Write to this file instead of standard output.")
@click.option("--force", is_flag=True, help="Replace --out if it exists.")
@click.pass_context
def workflows_export(
    ctx: click.Context, ref: str, version: int | None, out: str | None, force: bool
) -> None:
    """Export a workflow version as a JSON document."""
    with _services(ctx, write=False) as services:
        text = services.workflows.export_json(ref, version)
    _write_output(text, out, force)


def _review_command(
    name: str, help_text: str, action: Callable[..., WorkflowVersion], past: str
) -> None:
    @workflows.command(name, help=help_text)
    @click.argument("ref")
    @click.option(
        "--version", "version", type=click.IntRange(min=1), help="A version (default: latest)."
    )
    @click.option("-m", "--comment", default="", help="Why.")
    @click.option("--actor", help="Who (default: the setting `actor`, else your user name).")
    @click.pass_context
    def command(
        ctx: click.Context, ref: str, version: int | None, comment: str, actor: str | None
    ) -> None:
        with _services(ctx, write=True) as services:
            who = actor or services.settings.actor
            v = action(services.workflows, ref, actor=who, version=version, comment=comment)
        click.echo(f"{v.workflow.name!r} version {v.version} {past}")


_review_command(
    "submit",
    "Submit a draft version for review.",
    lambda lib, ref, **kw: lib.submit(ref, **kw),
    "is in review",
)
_review_command(
    "approve",
    "Approve a version: it becomes the one that runs from the tray.",
    lambda lib, ref, **kw: lib.approve(ref, **kw),
    "is approved",
)
_review_command(
    "request-changes",
    "Send a version in review back to draft with a comment (-m) saying what to change.",
    lambda lib, ref, **kw: lib.request_changes(ref, **kw),
    "is back in draft",
)


@workflows.command("archive")
@click.argument("ref")
@click.option("-m", "--comment", default="", help="Why.")
@click.option("--actor", help="Who (default: your user name).")
@click.pass_context
def workflows_archive(ctx: click.Context, ref: str, comment: str, actor: str | None) -> None:
    """Archive a workflow: it leaves the library and the tray, but nothing is deleted."""
    with _services(ctx, write=True) as services:
        s = services.workflows.archive(ref, actor=actor or services.settings.actor, comment=comment)
    click.echo(f"{s.name!r} is archived (restore it with: procedura workflows restore {s.id[:8]})")


@workflows.command("restore")
@click.argument("ref")
@click.option("-m", "--comment", default="", help="Why.")
@click.option("--actor", help="Who (default: your user name).")
@click.pass_context
def workflows_restore(ctx: click.Context, ref: str, comment: str, actor: str | None) -> None:
    """Bring an archived workflow back; its latest version becomes a draft to review again."""
    with _services(ctx, write=True) as services:
        v = services.workflows.restore(ref, actor=actor or services.settings.actor, comment=comment)
    click.echo(f"{v.workflow.name!r} version {v.version} is a draft again")


@workflows.command("pin")
@click.argument("ref")
@click.option("--off", is_flag=True, help="Unpin instead.")
@click.pass_context
def workflows_pin(ctx: click.Context, ref: str, off: bool) -> None:
    """Pin a workflow so lists and the tray show it first."""
    with _services(ctx, write=True) as services:
        s = services.workflows.set_pinned(ref, not off)
    click.echo(f"{s.name!r} is {'pinned' if s.pinned else 'not pinned'}")


@workflows.command("delete")
@click.argument("ref")
@click.option("--yes", is_flag=True, help="Confirm: delete every version and run for good.")
@click.pass_context
def workflows_delete(ctx: click.Context, ref: str, yes: bool) -> None:
    """Delete a workflow with all its versions and runs (archive keeps them instead)."""
    with _services(ctx, write=True) as services:
        s = services.workflows.delete(ref, confirmed=yes)
    click.echo(f"deleted {s.name!r}")


# ── trajectories ────────────────────────────────────────────────────────────────────────────


@cli.group(cls=_Group)
def trajectories() -> None:
    """List, show, import and export recorded demonstrations."""


def _trajectory_rows(items: Sequence[TrajectorySummary]) -> list[list[str]]:
    return [
        [
            t.id[:8],
            t.kind.value,
            f"{t.started_at.astimezone():%Y-%m-%d %H:%M}",
            str(t.event_count),
            _short(t.intent or "-", 50) + (" [incomplete]" if t.incomplete else ""),
            _short(t.start or "-", 40),
        ]
        for t in items
    ]


@trajectories.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def trajectories_list(ctx: click.Context, as_json: bool) -> None:
    """List recorded demonstrations, newest first."""
    with _services(ctx, write=False) as services:
        items = services.trajectories.list()
    if as_json:
        _emit_json([t.model_dump(mode="json") for t in items])
    elif not items:
        click.echo("no recordings yet")
    else:
        _table(_trajectory_rows(items), ["ID", "KIND", "STARTED", "EVENTS", "INTENT", "START"])


@trajectories.command("show")
@click.argument("ref")
@click.option("--json", "as_json", is_flag=True, help="Print the whole document as JSON.")
@click.option("--raw", is_flag=True, help="The raw stream: every event observed, noise included.")
@click.pass_context
def trajectories_show(ctx: click.Context, ref: str, as_json: bool, raw: bool) -> None:
    """Show a recording's events. REF is an id or a unique id prefix."""
    with _services(ctx, write=False) as services:
        t = services.trajectories.get(ref)
        events = services.trajectories.raw_events(t.id) if raw else list(t.events)
    if as_json:
        data = t.model_dump(mode="json")
        if raw:
            data["events"] = [e.model_dump(mode="json") for e in events]
        _emit_json(data)
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
        click.echo(f"  {i:>3}. {e.action.value:<12} {_short(what, 60)}{_short(value, 40)}{effect}")


@trajectories.command("import")
@click.argument("file")
@click.pass_context
def trajectories_import(ctx: click.Context, file: str) -> None:
    """Import a trajectory document (JSON). FILE may be - for stdin."""
    with _open_input(file) as (stream, source), _services(ctx, write=True) as services:
        t = services.trajectories.import_file(stream, source=source)
    click.echo(f"imported trajectory {t.id[:8]} ({t.event_count} events)")


@trajectories.command("export")
@click.argument("ref")
@click.option("-o", "--out", help="Write to this file instead of standard output.")
@click.option("--force", is_flag=True, help="Replace --out if it exists.")
@click.pass_context
def trajectories_export(ctx: click.Context, ref: str, out: str | None, force: bool) -> None:
    """Export a trajectory as a JSON document."""
    with _services(ctx, write=False) as services:
        text = services.trajectories.export_json(ref)
    _write_output(text, out, force)


@trajectories.command("delete")
@click.argument("ref")
@click.option("--yes", is_flag=True, help="Confirm: delete the recording for good.")
@click.pass_context
def trajectories_delete(ctx: click.Context, ref: str, yes: bool) -> None:
    """Delete a recording."""
    with _services(ctx, write=True) as services:
        s = services.trajectories.delete(ref, confirmed=yes)
    click.echo(f"deleted recording {s.id[:8]}")


# ── induction ───────────────────────────────────────────────────────────────────────────────


@cli.command()
@click.argument("trajectories", nargs=-1, required=True)
@click.option("--name", help="Name the workflow (default: from the stated intent).")
@click.option("--llm", is_flag=True, help="Let the configured LLM name, describe and title it.")
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
    llm: bool,
    compose: bool,
) -> None:
    """Induce a draft workflow from recorded demonstrations (offline heuristics).

    TRAJECTORIES are trajectory ids or unique prefixes of them. Give several demonstrations of
    the same task to learn what varies: values that differ become parameters, values that agree
    become constants, and the alignment of their steps is printed. The draft is saved as a new
    workflow; review it with `procedura workflows show ID`, then submit and approve it.

    With --llm the configured LLM names and describes the workflow, titles its steps and names its
    parameters (one call; if it fails or answers something the recording does not support, the
    offline result is kept and you are told why). Steps that do what an approved workflow does
    become a call to it, unless --no-compose.
    """
    from desktop_app.app import induce as induce_draft
    from desktop_app.app import make_structured_llm

    with _services(ctx, write=True) as services:
        if llm and make_structured_llm(services.settings) is None:
            raise click.UsageError(
                "--llm needs an LLM: set OPENAI_API_KEY or PROCEDURA_LLM_BASE_URL "
                "(see docs/settings.md)"
            )
        induced = induce_draft(
            services,
            list(trajectories),
            name=name,
            use_llm=llm,
            compose=compose,
            actor=actor or services.settings.actor,
        )
    saved, notes, alignment, recordings = (
        induced.saved,
        induced.notes,
        induced.alignment,
        induced.recordings,
    )
    wf = saved.version.workflow
    click.echo(
        f"induced {wf.name!r} as {wf.id[:8]} version {wf.version} (draft): "
        f"{len(wf.parameters)} parameters, {len(wf.steps)} steps"
    )
    if alignment is not None:
        click.echo(
            f"\nalignment of {len(recordings)} demonstrations "
            "(the event each step came from; - where one has no such step):"
        )
        rows = [
            [str(i), _short(s.title, 44)]
            + ["-" if e is None else str(e) for e in s.events]
            + ["optional" if s.optional else ""]
            for i, s in enumerate(alignment.steps, 1)
        ]
        rows += [
            ["-", _short(s.title, 44)]
            + ["-" if e is None else str(e) for e in s.events]
            + ["dropped"]
            for s in alignment.dropped
        ]
        _table(rows, ["#", "step", *(r.id[:8] for r in recordings), ""])
        click.echo()
    for recording in recordings:
        if recording.incomplete:
            what = f"recording {recording.id[:8]}" if len(recordings) > 1 else "the recording"
            click.echo(f"note: {what} is incomplete; check the last steps", err=True)
    for line in notes:
        click.echo(f"note: {line}", err=True)
    click.echo(f"review it with: procedura workflows show {wf.id[:8]}")


# ── recording ───────────────────────────────────────────────────────────────────────────────


@cli.group(cls=_Group)
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
) -> None:
    """Run *record* until it ends or Ctrl+C/SIGTERM stops it; then say what was recorded (and
    write it to *out*)."""

    async def run(services: Any) -> Trajectory:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)
        return await record(services, stop)

    with _services(ctx, write=True) as services:
        trajectory = asyncio.run(run(services))
        text = services.trajectories.export_json(trajectory.id) if out else None
    if text is not None:
        _write_output(text, out, force=True)
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
    )


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
    with _services(ctx, write=True) as services:
        workflows_n, experiences_n = services.workflows.reindex()
    click.echo(f"indexed {workflows_n} workflows and {experiences_n} experiences")


def _add_commands() -> None:
    from desktop_app.cli_doctor import doctor_command
    from desktop_app.cli_export import export_command
    from desktop_app.cli_replay import run_command, runs_group
    from desktop_app.cli_review import diff_command

    cli.add_command(run_command)
    cli.add_command(runs_group)
    cli.add_command(export_command)
    cli.add_command(doctor_command)
    workflows.add_command(diff_command)


_add_commands()


def main(argv: Sequence[str] | None = None) -> None:
    """Run the command line (the ``procedura`` console script)."""
    cli.main(args=list(argv) if argv is not None else None, prog_name="procedura")
