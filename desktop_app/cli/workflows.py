"""``procedura workflows``: list, show, search, import, export and review workflows."""

from __future__ import annotations

from collections.abc import Sequence
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
from desktop_app.core.llm import LLMUnavailable
from desktop_app.core.models.workflow import (
    BLOCK_KINDS,
    Step,
    WorkflowStatus,
    branches,
    status_label,
)
from desktop_app.core.step_kinds import describe_step
from desktop_app.core.views import WorkflowSummary
from desktop_app.ops.changes import Origin
from desktop_app.ops.induce import NEEDS_AN_LLM
from desktop_app.ops.library import (
    check_size,
    delete,
    import_incoming,
    incoming_bytes,
    pin,
    search,
    unresolved,
)
from desktop_app.ops.review import Decision, archive, decide
from desktop_app.ops.scores import score

if TYPE_CHECKING:
    from desktop_app.core.exports.bundle import OnConflict, Resolution

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
            status_label(s.status) + (" *" if s.pinned else ""),
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
        scored = score(services.runs, current, stale_after_days=services.settings.stale_after_days)
    if as_json:
        emit_json(
            {
                "summary": _summary_json(summary),
                "version": current.model_dump(mode="json"),
                "record": {
                    **scored.record.model_dump(mode="json"),
                    "success_rate": scored.record.success_rate,
                    "heal_rate": scored.record.heal_rate,
                    "stale": scored.stale,
                },
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
        f"version {wf.version} ({status_label(current.status).lower()}) of "
        f"{summary.latest_version}; "
        f"approved: {summary.approved_version or 'none'}"
    )
    if scored.stale is not None:
        click.echo(f"stale: {scored.stale}")
    if wf.description:
        click.echo(f"\n{wf.description}")
    click.echo("\nrecord:")
    for line in scored.record.lines():
        click.echo(f"  {line}")
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
    _echo_steps(wf.steps, "  ")
    if wf.success:
        click.echo("\ndone when:")
        for expectation in wf.success:
            click.echo(f"  {describe_expectation(expectation)}")
    else:
        click.echo("\ndone when: no success check (runs end 'done, unverified')")
    click.echo("\nhistory:")
    for v in history:
        for t in v.transitions:
            frm = status_label(t.from_status).lower() if t.from_status else "new"
            comment = f": {t.comment}" if t.comment else ""
            click.echo(
                f"  v{v.version} {t.at.astimezone():%Y-%m-%d %H:%M} {t.actor} "
                f"{frm} → {status_label(t.to_status).lower()}{comment}"
            )


@workflows.command("search")
@click.argument("query")
@click.option("--status", type=_STATUS, help="Only workflows with this status.")
@click.option("--domain", help="Only workflows for this domain.")
@click.option("-n", "--limit", type=click.IntRange(1, 100), default=5, show_default=True)
@click.option(
    "--rerank",
    is_flag=True,
    help="Let the configured LLM reorder the best 20 matches (it is sent the query and their "
    "names and descriptions, nothing else).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def workflows_search(
    ctx: click.Context,
    query: str,
    status: str | None,
    domain: str | None,
    limit: int,
    rerank: bool,
    as_json: bool,
) -> None:
    """Find workflows by meaning: QUERY says what you want to do."""
    from desktop_app.app import make_structured_llm

    with open_stores(ctx, write=True) as services:
        llm = make_structured_llm(services.settings) if rerank else None
        if rerank and llm is None:
            raise LLMUnavailable(f"--rerank needs an LLM: {NEEDS_AN_LLM}")
        found = search(
            services.workflows,
            query,
            limit=limit,
            status=WorkflowStatus(status) if status else None,
            domain=domain,
            llm=llm,
        )
    matches = found.matches
    if found.note:
        click.echo(found.note, err=True)
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
    if file != "-" and Path(file).is_file():
        check_size(Path(file))
    incoming = incoming_bytes(*read_input(file))
    if incoming.bundle is None and on_conflict is not None:
        raise click.UsageError("--on-conflict applies to bundles (.procedura files) only")
    choices: dict[str, Resolution] = {}
    with open_stores(ctx, write=True) as services:
        if incoming.bundle is not None and on_conflict is None and stdin_is_terminal():
            while conflicts := unresolved(services.workflows, incoming, choices):
                for conflict in conflicts:
                    click.echo(f"conflict: {conflict.describe()}", err=True)
                    choices[conflict.workflow_id] = click.prompt(
                        "keep-both (import a copy under a new id), replace (a new latest "
                        "version) or skip?",
                        type=click.Choice(_RESOLUTIONS),
                        err=True,
                    )
        done = import_incoming(
            services.workflows,
            services.media,
            incoming,
            actor=services.settings.actor,
            origin=Origin.CLI,
            on_conflict=cast("OnConflict", on_conflict or "ask"),
            choices=choices,
        )
    click.echo(done.summary)
    for line in done.details:
        click.echo(f"  {line}")
    if done.media:
        click.echo(done.media)
    for note in done.notes:
        click.echo(f"note: {note}", err=True)
    if done.workflow_id is not None and incoming.bundle is not None:
        click.echo(f"review it with: procedura workflows show {done.workflow_id[:8]}")


@workflows.command("export")
@click.argument("ref")
@click.option(
    "--version",
    "version",
    type=click.IntRange(min=1),
    help="A version (default: the approved one; without one, the latest).",
)
@click.option("-o", "--out", help="Write to this file instead of standard output.")
@click.option("--force", is_flag=True, help="Replace --out if it exists.")
@click.pass_context
def workflows_export(
    ctx: click.Context, ref: str, version: int | None, out: str | None, force: bool
) -> None:
    """Export a workflow version as a JSON document (the approved one unless --version)."""
    from desktop_app.core.documents import dump_document
    from desktop_app.ops.export import version_to_export

    with open_stores(ctx, write=False) as services:
        choice = version_to_export(services.workflows, ref, version)
    write_output(dump_document(choice.version.workflow), out, force, said=choice.wrote)


def _review_command(name: str, help_text: str, decision: Decision) -> None:
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
            done = decide(
                services.workflows,
                ref,
                decision,
                actor=actor or services.settings.actor,
                origin=Origin.CLI,
                version=version,
                comment=comment,
            )
        click.echo(done.summary)


_review_command("submit", "Submit a draft version for review.", Decision.SUBMIT)
_review_command(
    "approve",
    "Approve a version: it becomes the one that runs from the tray.",
    Decision.APPROVE,
)
_review_command(
    "request-changes",
    "Send a version in review back to draft with a comment (-m) saying what to change.",
    Decision.REQUEST_CHANGES,
)


@workflows.command("archive")
@click.argument("ref")
@click.option("-m", "--comment", default="", help="Why.")
@click.option("--actor", help="Who (default: your user name).")
@click.pass_context
def workflows_archive(ctx: click.Context, ref: str, comment: str, actor: str | None) -> None:
    """Archive a workflow: it leaves the library and the tray, but nothing is deleted."""
    with open_stores(ctx, write=True) as services:
        who = actor or services.settings.actor
        done = archive(services.workflows, ref, actor=who, origin=Origin.CLI, comment=comment)
    click.echo(done.summary)


@workflows.command("restore")
@click.argument("ref")
@click.option("-m", "--comment", default="", help="Why.")
@click.option("--actor", help="Who (default: your user name).")
@click.pass_context
def workflows_restore(ctx: click.Context, ref: str, comment: str, actor: str | None) -> None:
    """Bring an archived workflow back; its latest version becomes a draft to review again."""
    with open_stores(ctx, write=True) as services:
        who = actor or services.settings.actor
        done = decide(
            services.workflows, ref, Decision.RESTORE, actor=who, origin=Origin.CLI, comment=comment
        )
    click.echo(done.summary)


@workflows.command("pin")
@click.argument("ref")
@click.option("--off", is_flag=True, help="Unpin instead.")
@click.pass_context
def workflows_pin(ctx: click.Context, ref: str, off: bool) -> None:
    """Pin a workflow so lists and the tray show it first."""
    with open_stores(ctx, write=True) as services:
        done = pin(services.workflows, ref, not off, origin=Origin.CLI)
    click.echo(done.summary)


@workflows.command("delete")
@click.argument("ref")
@click.option("--yes", is_flag=True, help="Confirm: delete every version and run for good.")
@click.pass_context
def workflows_delete(ctx: click.Context, ref: str, yes: bool) -> None:
    """Delete a workflow with all its versions and runs (archive keeps them instead)."""
    with open_stores(ctx, write=True) as services:
        done = delete(services.workflows, ref, confirmed=yes, origin=Origin.CLI)
    click.echo(done.summary)


def _echo_steps(steps: tuple[Step, ...], indent: str) -> None:
    """*steps* numbered, a block's own steps under it (``otherwise`` said so)."""
    for i, step in enumerate(steps, 1):
        flags = " [irreversible]" if step.irreversible else ""
        flags += " [optional]" if step.optional else ""
        click.echo(f"{indent}{i:>2}. {step.title}  ({step.kind}){flags}")
        target = step.target_or_none
        if target is not None:
            locators = " | ".join(loc.describe() for loc in target.locators[:3])
            click.echo(f"{indent}    target: {locators}")
        if step.kind in BLOCK_KINDS:
            click.echo(f"{indent}    {describe_step(step)}")
        for expectation in step.expectations:
            click.echo(f"{indent}    expect: {describe_expectation(expectation)}")
        for name, inner in branches(step):
            if name == "otherwise":
                click.echo(f"{indent}    otherwise:")
            _echo_steps(inner, indent + "      ")
