"""``procedura workflows``: list, show, search, import, export and review workflows."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from desktop_app.cli.common import (
    Group,
    emit_json,
    open_stores,
    print_table,
    read_input,
    shorten,
    stdin_is_terminal,
    write_output,
)
from desktop_app.core.describe import describe_expectation
from desktop_app.core.errors import (
    DocumentError,
)
from desktop_app.core.models.workflow import WorkflowStatus, WorkflowVersion
from desktop_app.core.views import WorkflowSummary
from desktop_app.settings import Settings

if TYPE_CHECKING:
    from desktop_app.core.exports.bundle import Resolution

__all__ = ["workflows"]


# ── workflows ───────────────────────────────────────────────────────────────────────────────


@click.group(cls=Group)
def workflows() -> None:
    """List, show, search, import, export and review workflows."""


_STATUS = click.Choice([s.value for s in WorkflowStatus])


def _summary_json(s: WorkflowSummary) -> dict[str, Any]:
    return s.model_dump(mode="json")


def _summary_rows(items: Sequence[WorkflowSummary]) -> list[list[str]]:
    return [
        [
            s.id[:8],
            shorten(s.name, 40),
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
    with open_stores(ctx, write=False) as services:
        items = services.workflows.list(
            status=WorkflowStatus(status) if status else None, domain=domain
        )
    if as_json:
        emit_json([_summary_json(s) for s in items])
    elif not items:
        click.echo("no workflows yet (record one, or: procedura workflows import FILE)")
    else:
        print_table(_summary_rows(items), _SUMMARY_HEADERS)


@workflows.command("show")
@click.argument("ref")
@click.option(
    "--version", "version", type=click.IntRange(min=1), help="A version (default: latest)."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def workflows_show(ctx: click.Context, ref: str, version: int | None, as_json: bool) -> None:
    """Show a workflow: parameters, steps and review history. REF is an id, id prefix or name."""
    with open_stores(ctx, write=False) as services:
        current = services.workflows.get(ref, version)
        summary = services.workflows.summary(current.workflow_id)
        history = services.workflows.versions(current.workflow_id)
    if as_json:
        emit_json(
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
    with open_stores(ctx, write=True) as services:
        matches = services.workflows.search(
            query, limit=limit, status=WorkflowStatus(status) if status else None, domain=domain
        )
    if as_json:
        emit_json([{"score": m.score, **_summary_json(m.workflow)} for m in matches])
    elif not matches:
        click.echo("no matching workflows")
    else:
        rows = [
            [f"{m.score:.2f}", *r]
            for m, r in zip(matches, _summary_rows([m.workflow for m in matches]), strict=True)
        ]
        print_table(rows, ["SCORE", *_SUMMARY_HEADERS])


_RESOLUTIONS: tuple[Resolution, ...] = ("keep-both", "replace", "skip")


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
    data, source = read_input(file)
    if is_bundle(source, data):
        _import_bundle(ctx, data, source, on_conflict)
        return
    if on_conflict is not None:
        raise click.UsageError("--on-conflict applies to bundles (.procedura files) only")
    with open_stores(ctx, write=True) as services:
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
        import_bundle,
        plan_import,
        read_bundle,
    )

    bundle = read_bundle(data, source=source)
    choices: dict[str, Resolution] = {}
    with open_stores(ctx, write=True) as services:
        if on_conflict is None and stdin_is_terminal():
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
    with open_stores(ctx, write=False) as services:
        text = services.workflows.export_json(ref, version)
    write_output(text, out, force)


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
        with open_stores(ctx, write=True) as services:
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
    with open_stores(ctx, write=True) as services:
        s = services.workflows.archive(ref, actor=actor or services.settings.actor, comment=comment)
    click.echo(f"{s.name!r} is archived (restore it with: procedura workflows restore {s.id[:8]})")


@workflows.command("restore")
@click.argument("ref")
@click.option("-m", "--comment", default="", help="Why.")
@click.option("--actor", help="Who (default: your user name).")
@click.pass_context
def workflows_restore(ctx: click.Context, ref: str, comment: str, actor: str | None) -> None:
    """Bring an archived workflow back; its latest version becomes a draft to review again."""
    with open_stores(ctx, write=True) as services:
        v = services.workflows.restore(ref, actor=actor or services.settings.actor, comment=comment)
    click.echo(f"{v.workflow.name!r} version {v.version} is a draft again")


@workflows.command("pin")
@click.argument("ref")
@click.option("--off", is_flag=True, help="Unpin instead.")
@click.pass_context
def workflows_pin(ctx: click.Context, ref: str, off: bool) -> None:
    """Pin a workflow so lists and the tray show it first."""
    with open_stores(ctx, write=True) as services:
        s = services.workflows.set_pinned(ref, not off)
    click.echo(f"{s.name!r} is {'pinned' if s.pinned else 'not pinned'}")


@workflows.command("delete")
@click.argument("ref")
@click.option("--yes", is_flag=True, help="Confirm: delete every version and run for good.")
@click.pass_context
def workflows_delete(ctx: click.Context, ref: str, yes: bool) -> None:
    """Delete a workflow with all its versions and runs (archive keeps them instead)."""
    with open_stores(ctx, write=True) as services:
        s = services.workflows.delete(ref, confirmed=yes)
    click.echo(f"deleted {s.name!r}")
