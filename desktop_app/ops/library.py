"""The library's own verbs — pin, delete, import — the same checks and words for the command
line (``workflows pin|delete|import``) and the Library screen.

Importing reads what came in once (its size first, then a workflow document or a bundle, checked
whole), lets the front end settle a bundle's conflicts its own way (a prompt, a dialog, an
option), then writes it and says what it did.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from desktop_app.core.errors import DocumentError
from desktop_app.core.exports.bundle import (
    MAX_BUNDLE_BYTES,
    Bundle,
    Conflict,
    OnConflict,
    Resolution,
    import_bundle,
    is_bundle,
    plan_import,
    read_bundle,
)
from desktop_app.core.rerank import RERANK_DEPTH, Reranked, rerank
from desktop_app.ops.changes import MANY, Changes, Origin

if TYPE_CHECKING:
    from collections.abc import Mapping

    from desktop_app.core.library import WorkflowLibrary
    from desktop_app.core.llm import StructuredLLM
    from desktop_app.core.models.workflow import WorkflowStatus
    from desktop_app.core.ports import MediaStore
    from desktop_app.core.views import WorkflowMatch, WorkflowSummary

__all__ = [
    "Changed",
    "Found",
    "Imported",
    "Incoming",
    "Reindexed",
    "check_size",
    "delete",
    "import_incoming",
    "incoming_bytes",
    "incoming_file",
    "pin",
    "reindex",
    "search",
    "unresolved",
]


@dataclass(frozen=True, slots=True)
class Changed:
    """A workflow pinned, unpinned or deleted: what it was, what changed, and one line."""

    workflow: WorkflowSummary
    changes: Changes
    summary: str


def pin(workflows: WorkflowLibrary, ref: str, pinned: bool, *, origin: Origin) -> Changed:
    """Pin or unpin the workflow *ref*: pinned ones come first in lists and the tray."""
    summary = workflows.set_pinned(ref, pinned)
    words = "pinned" if summary.pinned else "not pinned"
    return Changed(
        summary, Changes.of(origin, workflows=[summary.id]), f"{summary.name!r} is {words}"
    )


def delete(workflows: WorkflowLibrary, ref: str, *, confirmed: bool, origin: Origin) -> Changed:
    """Delete the workflow *ref* with every version, run and experience.

    Raises:
        ConfirmationRequired: not *confirmed* (the message says what would go).
    """
    summary = workflows.delete(ref, confirmed=confirmed)
    changes = Changes.of(origin, workflows=[summary.id])
    return Changed(summary, changes, f"deleted {summary.name!r}")


@dataclass(frozen=True, slots=True)
class Reindexed:
    """The search index rebuilt: how many workflows and remembered repairs it holds now."""

    workflows: int
    experiences: int
    changes: Changes


def reindex(workflows: WorkflowLibrary, *, origin: Origin) -> Reindexed:
    """Rebuild the semantic search index from the database (blocking)."""
    workflows_n, experiences_n = workflows.reindex()
    return Reindexed(workflows_n, experiences_n, Changes.of(origin, workflows=[MANY]))


@dataclass(frozen=True, slots=True)
class Found:
    """What a search found, best first, and how the LLM reordered it when it was asked to."""

    matches: list[WorkflowMatch]
    reranked: Reranked | None = None  # None: not asked

    @property
    def note(self) -> str:
        """One line on the order, when the LLM was asked ("" when not)."""
        if self.reranked is None:
            return ""
        if self.reranked.reranked:
            return "reordered by the LLM"
        return f"not reordered by the LLM ({self.reranked.problem}): the search's own order"


def search(
    workflows: WorkflowLibrary,
    query: str,
    *,
    limit: int,
    status: WorkflowStatus | None = None,
    domain: str | None = None,
    llm: StructuredLLM | None = None,
) -> Found:
    """The workflows that do what *query* asks, best first (:meth:`WorkflowLibrary.search`);
    with *llm*, the search's best :data:`RERANK_DEPTH` reordered by it
    (:func:`~desktop_app.core.rerank.rerank`: it sees the query and their names and
    descriptions only; on an error or a malformed answer the search's order stands)."""
    depth = max(limit, RERANK_DEPTH) if llm is not None else limit
    matches = workflows.search(query, limit=depth, status=status, domain=domain)
    if llm is None:
        return Found(matches)
    reranked = rerank(llm, query, matches)
    return Found(reranked.matches[:limit], reranked)


# ── import ──────────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class Incoming:
    """What came in to import: a workflow document, or a bundle read and checked whole."""

    source: str
    data: bytes
    bundle: Bundle | None


def _too_large(source: str) -> DocumentError:
    return DocumentError(
        f"the file is larger than the {MAX_BUNDLE_BYTES // 2**20} MiB an import may be",
        source=source,
    )


def check_size(path: Path) -> None:
    """Refuse a file larger than an import may be, before reading it (blocking).

    Raises:
        DocumentError: it is.
        OSError: it cannot be looked at.
    """
    if path.stat().st_size > MAX_BUNDLE_BYTES:
        raise _too_large(str(path))


def incoming_bytes(data: bytes, source: str) -> Incoming:
    """Check what was read from *source* (a file's name, or ``<stdin>``): a bundle is read and
    validated in full here, before anything is written.

    Raises:
        DocumentError: larger than an import may be.
        BundleError: a damaged or unsafe bundle.
    """
    if len(data) > MAX_BUNDLE_BYTES:
        raise _too_large(source)
    bundle = read_bundle(data, source=source) if is_bundle(source, data) else None
    return Incoming(source, data, bundle)


def incoming_file(path: Path) -> Incoming:
    """Read a file to import, its size checked before it is read (blocking).

    Raises:
        DocumentError: larger than an import may be.
        OSError: it cannot be read.
        BundleError: a damaged or unsafe bundle.
    """
    check_size(path)
    return incoming_bytes(path.read_bytes(), path.name)


def unresolved(
    workflows: WorkflowLibrary, incoming: Incoming, choices: Mapping[str, Resolution]
) -> tuple[Conflict, ...]:
    """The bundle's conflicts nobody has chosen for yet (none for a workflow document): a
    workflow here with the bundle's id and other content. Keyed by ``workflow_id`` in *choices*.

    Raises:
        BundleError: a call step reaches a workflow neither the bundle nor this library holds.
    """
    if incoming.bundle is None:
        return ()
    return plan_import(workflows, incoming.bundle, choices=choices).unresolved


@dataclass(frozen=True, slots=True)
class Imported:
    """What an import wrote, in words.

    Attributes:
        workflow_id: the workflow to review (the bundle's main one), or None when nothing new
            arrived (unchanged, or skipped).
        summary: one line (the status bar's, and the command line's first).
        changes: what changed.
        details: one line per carried workflow (bundles only).
        media: how many screenshots were stored and were here already ("" for none).
        notes: what the person should know (warnings).
    """

    workflow_id: str | None
    summary: str
    changes: Changes
    details: tuple[str, ...] = ()
    media: str = ""
    notes: tuple[str, ...] = ()


def import_incoming(
    workflows: WorkflowLibrary,
    media: MediaStore,
    incoming: Incoming,
    *,
    actor: str,
    origin: Origin,
    on_conflict: OnConflict = "ask",
    choices: Mapping[str, Resolution] | None = None,
) -> Imported:
    """Import a checked document or bundle as new draft versions (blocking).

    Raises:
        DocumentError: the workflow document is not valid (nothing is written).
        BundleConflictError: a conflict without a resolution (``on_conflict="ask"``).
        BundleError, BundleWriteError: see :func:`~desktop_app.core.exports.bundle.import_bundle`.
    """
    if incoming.bundle is None:
        result = workflows.import_json(incoming.data, actor=actor, source=incoming.source)
        v = result.version
        if not result.created:
            return Imported(
                None,
                f"{v.workflow.name!r} is unchanged (version {v.version}); nothing imported",
                Changes(origin),
            )
        return Imported(
            v.workflow_id,
            f"imported {v.workflow.name!r} as {v.workflow_id[:8]} version {v.version} (draft)",
            Changes.of(origin, workflows=[v.workflow_id]),
        )
    bundle = incoming.bundle
    report = import_bundle(
        workflows, media, bundle, on_conflict=on_conflict, choices=choices or {}, actor=actor
    )
    called = len(report.workflows) - 1
    summary = f"bundle {incoming.source}: {report.main.name!r}" + (
        f" and {called} called workflow{'s' if called > 1 else ''}" if called else ""
    )
    media_line = ""
    if report.media_stored or report.media_present:
        stored, present = len(report.media_stored), len(report.media_present)
        media_line = f"media: {stored} stored, {present} already here"
    notes = list(report.warnings)
    if bundle.manifest.missing_media:
        notes.append(
            f"{len(bundle.manifest.missing_media)} screenshot(s) were missing where the bundle "
            "was made; the steps that use them have none"
        )
    arrived = report.main.action in ("imported", "copied", "new version")
    written = [
        o.local_id for o in report.workflows if o.action in ("imported", "copied", "new version")
    ]
    return Imported(
        report.main.local_id if arrived else None,
        summary,
        Changes.of(origin, workflows=written),
        tuple(outcome.describe() for outcome in report.workflows),
        media_line,
        tuple(notes),
    )
