"""File → Export in the editor: a saved version as a script, a guide or a bundle.

The same functions as ``procedura export`` build each format (``desktop_app.core.exports``);
files are written whole or not at all (:class:`QSaveFile`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QSaveFile

from desktop_app.core.errors import StoreError
from desktop_app.core.library import WorkflowLibrary
from desktop_app.core.models.workflow import WorkflowVersion
from desktop_app.core.ports import MediaStore

__all__ = ["EXPORT_FORMATS", "ExportFormat", "build_export", "default_file_name", "write_files"]


@dataclass(frozen=True, slots=True)
class ExportFormat:
    """One thing File → Export can write."""

    key: str
    label: str
    suffix: str
    file_filter: str
    tip: str


EXPORT_FORMATS: tuple[ExportFormat, ...] = (
    ExportFormat(
        "playwright",
        "Playwright script…",
        ".py",
        "Python scripts (*.py)",
        "A standalone Python script that replays the workflow with Playwright",
    ),
    ExportFormat(
        "markdown",
        "Markdown guide…",
        ".md",
        "Markdown (*.md)",
        "Step-by-step instructions for people, with screenshots in a folder beside it",
    ),
    ExportFormat(
        "html",
        "HTML guide…",
        ".html",
        "Web pages (*.html)",
        "Step-by-step instructions in one self-contained page (prints well)",
    ),
    ExportFormat(
        "bundle",
        "Bundle (.procedura)…",
        ".procedura",
        "Procedura bundles (*.procedura)",
        "The workflow, its history, the workflows it calls and its screenshots, to share",
    ),
)


def default_file_name(name: str, fmt: ExportFormat) -> str:
    """A file name for an export of the workflow called *name*."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:60] or "workflow"
    return slug + fmt.suffix


def build_export(
    fmt: str, version: WorkflowVersion, library: WorkflowLibrary, media: MediaStore, target: Path
) -> dict[Path, bytes]:
    """Every file an export of *version* to *target* writes (blocking: reads media).

    A Markdown guide's screenshots go to ``<stem>_images/`` beside it, as the command line does.
    """
    workflow = version.workflow
    if fmt == "playwright":
        from desktop_app.core.exports.playwright_script import render_playwright

        return {target: render_playwright(workflow).encode("utf-8")}
    if fmt == "html":
        from desktop_app.core.exports.guide import render_html

        return {target: render_html(workflow, media).encode("utf-8")}
    if fmt == "markdown":
        from desktop_app.core.exports.guide import render_markdown

        image_dir = f"{target.stem}_images"
        text, images = render_markdown(workflow, media, image_dir=image_dir)
        files = {target.parent / image_dir / name: data for name, data in images.items()}
        return {target: text.encode("utf-8"), **files}
    if fmt == "bundle":
        from desktop_app.core.exports.bundle import build_bundle

        return {target: build_bundle(library, media, version)}
    raise ValueError(f"unknown export format {fmt!r}")


def write_files(files: dict[Path, bytes]) -> None:
    """Write each file atomically (blocking).

    Raises:
        StoreError: a file could not be written (the message names it and says why).
    """
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        out = QSaveFile(str(path))
        if not out.open(QSaveFile.OpenModeFlag.WriteOnly):
            raise StoreError(f"cannot write {path}: {out.errorString()}")
        out.write(data)
        if not out.commit():
            raise StoreError(f"cannot write {path}: {out.errorString()}")
