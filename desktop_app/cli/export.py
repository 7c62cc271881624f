"""``procedura export``: a workflow as a Playwright script, a guide for people, or a bundle.

The approved version is exported unless ``--version`` asks for another (without an approved
version, the latest, said to be unapproved: :func:`~desktop_app.ops.export.version_to_export`);
standard error says which version was written where. Nothing is written unless the whole
export was built; an existing file is replaced only with ``--force``, and then atomically.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

import click

from desktop_app.core.errors import ConfirmationRequired
from desktop_app.files import write_atomically
from desktop_app.ops.export import version_to_export

__all__ = ["export_command"]

FORMATS: Final = ("playwright", "markdown", "html", "bundle")
_SUFFIX: Final = {"playwright": ".py", "markdown": ".md", "html": ".html", "bundle": ".procedura"}


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:60] or "workflow"


@click.command("export")
@click.argument("ref")
@click.option(
    "-f", "--format", "fmt", type=click.Choice(FORMATS), required=True, help="What to write."
)
@click.option(
    "--version",
    type=click.IntRange(min=1),
    help="Which version (default: the approved one; without one, the latest).",
)
@click.option("-o", "--out", help="Where to write (default: standard output for text formats).")
@click.option("--force", is_flag=True, help="Replace --out (and its images) if they exist.")
@click.pass_context
def export_command(
    ctx: click.Context, ref: str, fmt: str, version: int | None, out: str | None, force: bool
) -> None:
    """Export workflow REF as a Playwright script, a Markdown or HTML guide, or a bundle."""
    from desktop_app.app import open_services

    with open_services(ctx.obj["settings"](), write=False) as services:
        choice = version_to_export(services.workflows, ref, version)
        chosen = choice.version
        workflow = chosen.workflow
        default_out = Path(f"{_slug(workflow.name)}{_SUFFIX[fmt]}")
        if fmt == "playwright":
            from desktop_app.core.exports.playwright_script import render_playwright

            text: str | None = render_playwright(workflow)
            files: dict[Path, bytes] = {}
        elif fmt == "html":
            from desktop_app.core.exports.guide import render_html

            text, files = render_html(workflow, services.media), {}
        elif fmt == "markdown":
            from desktop_app.core.exports.guide import render_markdown

            target = Path(out) if out not in (None, "-") else None
            image_dir = f"{(target or default_out).stem}_images"
            text, images = render_markdown(workflow, services.media, image_dir=image_dir)
            if images and target is None:
                raise click.UsageError("a guide with screenshots needs --out FILE.md")
            base = (target or default_out).parent / image_dir
            files = {base / name: data for name, data in images.items()}
        else:
            from desktop_app.core.exports.bundle import build_bundle

            text = None
            bundle = build_bundle(services.workflows, services.media, chosen)
    if fmt == "bundle":
        destination = Path(out) if out not in (None, "-") else default_out
        write_atomically(destination, bundle, force=force)
        click.echo(choice.wrote(str(destination)), err=True)
        return
    assert text is not None
    if out in (None, "-"):
        click.echo(text, nl=False)
        click.echo(choice.wrote("standard output"), err=True)
        return
    for path in [Path(out), *files]:
        if path.exists() and not force:
            raise ConfirmationRequired(f"{path} exists; pass --force to replace it")
    for path, data in files.items():
        write_atomically(path, data, force=True)
    write_atomically(Path(out), text.encode("utf-8"), force=True)
    click.echo(choice.wrote(out) + (f" (and {len(files)} images)" if files else ""), err=True)
