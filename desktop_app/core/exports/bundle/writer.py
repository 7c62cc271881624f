"""Writing a bundle: a workflow version, the versions it calls, their histories and media."""

from __future__ import annotations

import hashlib
import io
import stat
import zipfile
from datetime import UTC, datetime
from importlib import metadata

from desktop_app.core.documents import dump_document
from desktop_app.core.exports.bundle.format import (
    _MANIFEST,
    _SAFE_ID,
    MAX_BUNDLE_BYTES,
    MAX_MEMBER_BYTES,
    BundleError,
    BundleManifest,
    ManifestMember,
    VersionHistory,
    VersionRecord,
    _mb,
    _media_problem,
    _secret_default,
)
from desktop_app.core.exports.bundle.references import (
    _callees_first,
    _calls,
    _loop_message,
    media_refs,
)
from desktop_app.core.library import WorkflowLibrary
from desktop_app.core.models.common import utcnow
from desktop_app.core.models.workflow import WorkflowStatus, WorkflowVersion
from desktop_app.core.ports import MediaStore

__all__ = ["build_bundle"]


def _generator() -> str:
    try:
        return f"Procedura {metadata.version('procedura')}"
    except metadata.PackageNotFoundError:
        return "Procedura"


def _carried(
    library: WorkflowLibrary, root: WorkflowVersion
) -> tuple[dict[tuple[str, int], WorkflowVersion], dict[str, list[WorkflowVersion]]]:
    """The root version and every version its call steps reach, with each workflow's history."""
    histories: dict[str, list[WorkflowVersion]] = {}

    def history(workflow_id: str) -> list[WorkflowVersion]:
        if workflow_id not in histories:
            histories[workflow_id] = library.versions_by_id(workflow_id)
        return histories[workflow_id]

    carried: dict[tuple[str, int], WorkflowVersion] = {}
    pending = [root]
    history(root.workflow_id)
    while pending:
        current = pending.pop()
        key = (current.workflow_id, current.version)
        if key in carried:
            continue
        carried[key] = current
        name = current.workflow.name
        for place, step in _calls(current.workflow):
            found = history(step.workflow_id)
            where = f"step {place.number} ({step.title!r}) of {name!r}"
            if not found:
                raise BundleError(
                    f"{where} calls workflow {step.workflow_id!r}, which is not in this library; "
                    "the bundle would be incomplete"
                )
            if step.version is not None:
                chosen = next((v for v in found if v.version == step.version), None)
                if chosen is None:
                    raise BundleError(
                        f"{where} calls version {step.version} of {found[-1].workflow.name!r}, "
                        f"which does not exist (it has {found[-1].version})"
                    )
            else:
                approved = [v for v in found if v.status is WorkflowStatus.APPROVED]
                chosen = approved[-1] if approved else found[-1]
            pending.append(chosen)
    return carried, histories


def build_bundle(
    library: WorkflowLibrary,
    media: MediaStore,
    version: WorkflowVersion,
    *,
    created_at: datetime | None = None,
    generator: str | None = None,
) -> bytes:
    """A ``.procedura`` archive of *version*, the versions its call steps reach, and their media.

    A call step pinned to a version carries that version; an unpinned one carries the version
    that would run (the highest approved one, else the latest). Each carried workflow also
    carries its version history (metadata only). A referenced media file missing from the store
    is listed as missing in the manifest, never invented.

    Raises:
        BundleError: a workflow cannot be exported (a call to a workflow or version that does
            not exist, a loop of calls, an id unfit for a file name, a secret with a default,
            damaged media, or a bundle larger than :func:`read_bundle` accepts).
    """
    carried, histories = _carried(library, version)
    names = {wid: stored.workflow.name for (wid, _), stored in sorted(carried.items())}
    _, loop = _callees_first({k: v.workflow for k, v in carried.items()})
    if loop is not None:
        raise BundleError(_loop_message(loop, names))
    members: list[tuple[str, bytes, int]] = []
    refs: set[str] = set()
    for (wid, number), stored in sorted(carried.items()):
        workflow = stored.workflow
        if not _SAFE_ID.fullmatch(wid):
            raise BundleError(
                f"workflow {workflow.name!r} has the id {wid!r}, which cannot name a folder in a "
                "bundle (letters, digits, '_', '-' and '.' only)"
            )
        if (path := _secret_default(workflow)) is not None:
            raise BundleError(
                f"workflow {workflow.name!r} has a secret with a default ({path}); secrets never "
                "leave this machine"
            )
        text = dump_document(workflow).encode("utf-8")
        members.append((f"workflows/{wid}/v{number}.json", text, zipfile.ZIP_DEFLATED))
        refs |= media_refs(workflow)
    for wid in sorted({wid for wid, _ in carried}):
        history = VersionHistory(
            workflow_id=wid,
            name=names[wid],
            versions=tuple(
                VersionRecord.of(v)
                for v in histories.get(wid)
                or [v for k, v in sorted(carried.items()) if k[0] == wid]
            ),
        )
        text = dump_document(history).encode("utf-8")
        members.append((f"workflows/{wid}/versions.json", text, zipfile.ZIP_DEFLATED))
    missing: list[str] = []
    for ref in sorted(refs):
        if not media.exists(ref):
            missing.append(ref)
            continue
        data = media.get(ref)
        if (problem := _media_problem(ref, data)) is not None:
            raise BundleError(f"media {ref} in the media store is damaged: {problem}")
        members.append((f"media/{ref}", data, zipfile.ZIP_STORED))
    total = 0
    for name, data, _ in members:
        total += len(data)
        if len(data) > MAX_MEMBER_BYTES:
            raise BundleError(
                f"{name} is {_mb(len(data))}, more than the {_mb(MAX_MEMBER_BYTES)} a member "
                "of a bundle may be"
            )
    if total > MAX_BUNDLE_BYTES:
        raise BundleError(
            f"the bundle would hold {_mb(total)}, more than the {_mb(MAX_BUNDLE_BYTES)} a "
            "bundle may"
        )
    when = created_at or utcnow()
    manifest = BundleManifest(
        created_at=when,
        generator=generator or _generator(),
        workflow_id=version.workflow_id,
        workflow_version=version.version,
        members=tuple(
            ManifestMember(name=name, sha256=hashlib.sha256(data).hexdigest(), size=len(data))
            for name, data, _ in members
        ),
        missing_media=tuple(missing),
    )
    t = when.astimezone(UTC) if when.year > 1980 else datetime(1980, 1, 1, tzinfo=UTC)
    stamp = (t.year, t.month, t.day, t.hour, t.minute, t.second)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        manifest_text = dump_document(manifest).encode("utf-8")
        for name, data, method in [(_MANIFEST, manifest_text, zipfile.ZIP_DEFLATED), *members]:
            info = zipfile.ZipInfo(name, date_time=stamp)
            info.compress_type = method
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            archive.writestr(info, data)
    return buffer.getvalue()
