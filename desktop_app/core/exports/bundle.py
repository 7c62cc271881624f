"""Bundles: a workflow, its version history, the workflows it calls and its screenshots, in a zip.

Layout of a ``.procedura`` file (described for people in ``docs/export-bundle.md``)::

    manifest.json                    what is inside: every other member with its size and sha256
    workflows/<id>/v<N>.json         a workflow document: one carried version
    workflows/<id>/versions.json     that workflow's version history (metadata, no content)
    media/<sha256>.<ext>             a screenshot or image anchor a carried version references

Reading checks everything (the archive, every name, size and hash, every document) before it
returns; importing plans every write before making the first one. Errors::

    DocumentError
    └── BundleError              a bundle is malformed, hostile, inconsistent or incomplete
        └── BundleConflictError  workflows of the bundle exist here and no choice was made
    StoreError
    └── BundleWriteError         writing stopped midway; the message says what was written
"""

from __future__ import annotations

import hashlib
import io
import re
import stat
import zipfile
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from typing import Final, Literal, TypeVar

from pydantic import AwareDatetime, Field, model_validator

from desktop_app.core.documents import dump_document, load_workflow, parse_document
from desktop_app.core.errors import DocumentError, ProceduraError, StoreError
from desktop_app.core.library import WorkflowLibrary
from desktop_app.core.models.common import (
    ID_CHARACTERS,
    MEDIA_REF_PATTERN,
    SCHEMA_VERSION,
    FrozenModel,
    MediaRef,
    new_id,
    utcnow,
)
from desktop_app.core.models.target import LocatorStrategy, Target
from desktop_app.core.models.workflow import (
    AssertStep,
    CallStep,
    ElementHidden,
    ElementVisible,
    Expectation,
    ImageVisible,
    ParameterType,
    StatusTransition,
    WaitForStep,
    Workflow,
    WorkflowStatus,
    WorkflowVersion,
)
from desktop_app.core.ports import MediaStore

__all__ = [
    "BUNDLE_SUFFIX",
    "MAX_BUNDLE_BYTES",
    "MAX_COMPRESSION_RATIO",
    "MAX_MEMBERS",
    "MAX_MEMBER_BYTES",
    "Bundle",
    "BundleConflictError",
    "BundleError",
    "BundleManifest",
    "BundleWriteError",
    "Conflict",
    "ImportAction",
    "ImportPlan",
    "ImportReport",
    "ImportedWorkflow",
    "ManifestMember",
    "OnConflict",
    "Resolution",
    "VersionHistory",
    "VersionRecord",
    "build_bundle",
    "import_bundle",
    "is_bundle",
    "media_refs",
    "plan_import",
    "read_bundle",
]

#: The file name suffix of a bundle.
BUNDLE_SUFFIX: Final = ".procedura"
#: The largest bundle read, and the most its members may add up to once uncompressed.
MAX_BUNDLE_BYTES: Final = 512 * 1024 * 1024
#: The largest member (uncompressed): a screenshot of a very large screen fits.
MAX_MEMBER_BYTES: Final = 32 * 1024 * 1024
#: The most members a bundle may have.
MAX_MEMBERS: Final = 10_000
#: The most a member larger than 1 MiB may expand when decompressed (zip bombs expand ~1000×).
MAX_COMPRESSION_RATIO: Final = 100

_RATIO_FLOOR: Final = 1024 * 1024
_MAX_JSON_BYTES: Final = 16 * 1024 * 1024
_CHUNK: Final = 64 * 1024
_MANIFEST: Final = "manifest.json"
_FORMAT: Final = "procedura-bundle"
_HISTORY: Final = "workflow_history"
_ID: Final = ID_CHARACTERS
_SAFE_ID: Final = re.compile(_ID)
_WORKFLOW_MEMBER: Final = re.compile(rf"workflows/(?P<id>{_ID})/v(?P<n>[1-9][0-9]{{0,8}})\.json")
_HISTORY_MEMBER: Final = re.compile(rf"workflows/(?P<id>{_ID})/versions\.json")
_MEDIA_MEMBER: Final = re.compile(r"media/(?P<ref>[0-9a-f]{64}\.(?:png|jpg|webp))")
_FOLDER: Final = re.compile(rf"(?:workflows/(?:{_ID}/)?|media/)")
_REF: Final = re.compile(MEDIA_REF_PATTERN)
_ZIP_MAGIC: Final = (b"PK\x03\x04", b"PK\x05\x06")

_M = TypeVar("_M", bound=FrozenModel)

Resolution = Literal["keep-both", "replace", "skip"]
"""What to do with a workflow of the bundle whose id exists here with other content."""

OnConflict = Literal["ask", "keep-both", "replace", "skip"]
"""A :data:`Resolution`, or ``ask``: raise :class:`BundleConflictError` so a person chooses."""


# ── errors ──────────────────────────────────────────────────────────────────────────────────


class BundleError(DocumentError):
    """A bundle is malformed, hostile, inconsistent or incomplete; nothing was written.

    Args:
        message: what is wrong, in one line.
        member: the member of the archive it concerns (``workflows/…/v3.json``), if one.
        source: the bundle's file name, when known.
        path: where inside the member's JSON, when it is a document.
    """

    def __init__(self, message: str, *, member: str = "", source: str = "", path: str = "") -> None:
        self.member = member
        where = f"{_show(member)} in {source}" if member and source else _show(member) or source
        super().__init__(message, path=path, source=where)


class BundleConflictError(BundleError):
    """Workflows of the bundle already exist here with other content, and no one chose."""

    def __init__(self, conflicts: Sequence[Conflict], *, source: str = "") -> None:
        self.conflicts = tuple(conflicts)
        count = len(self.conflicts)
        listed = "; ".join(c.describe() for c in self.conflicts)
        super().__init__(
            f"{count} workflow{'s' if count > 1 else ''} of the bundle already "
            f"exist{'' if count > 1 else 's'} here: {listed}; nothing was imported — choose "
            "with --on-conflict keep-both (import a copy under a new id), replace (the "
            "bundle's content becomes the latest version) or skip",
            source=source,
        )


class BundleWriteError(StoreError):
    """Writing an import stopped midway. The message says exactly what had been written."""

    def __init__(self, message: str, written: Sequence[str]) -> None:
        self.written = tuple(written)
        super().__init__(message)


# ── documents inside a bundle ───────────────────────────────────────────────────────────────


class ManifestMember(FrozenModel):
    """One member of the archive as the manifest lists it."""

    name: str = Field(min_length=1, max_length=300)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    size: int = Field(ge=0)


class BundleManifest(FrozenModel):
    """``manifest.json``: what the bundle is, who made it, and every other member's hash.

    ``document`` names the format and ``schema_version`` its version. It carries nothing from
    settings, the keyring or the machine it was made on.
    """

    schema_version: Literal[1] = SCHEMA_VERSION
    document: Literal["procedura-bundle"] = "procedura-bundle"
    created_at: AwareDatetime
    generator: str = Field(min_length=1, max_length=200)
    workflow_id: str = Field(min_length=1, max_length=64)
    workflow_version: int = Field(ge=1)
    members: tuple[ManifestMember, ...]
    missing_media: tuple[MediaRef, ...] = ()


class VersionRecord(FrozenModel):
    """One version of a workflow as its library knew it: review state and history, no content."""

    version: int = Field(ge=1)
    status: WorkflowStatus
    created_at: AwareDatetime
    created_by: str = Field(min_length=1)
    parent_version: int | None = Field(default=None, ge=1)
    change_note: str = ""
    transitions: tuple[StatusTransition, ...] = ()

    @classmethod
    def of(cls, version: WorkflowVersion) -> VersionRecord:
        """The record of a stored version."""
        return cls(
            version=version.version,
            status=version.status,
            created_at=version.created_at,
            created_by=version.created_by,
            parent_version=version.parent_version,
            change_note=version.change_note,
            transitions=version.transitions,
        )


class VersionHistory(FrozenModel):
    """``workflows/<id>/versions.json``: every version of a workflow in the exporting library."""

    schema_version: Literal[1] = SCHEMA_VERSION
    document: Literal["workflow_history"] = "workflow_history"
    workflow_id: str = Field(min_length=1, max_length=64)
    name: str = Field(min_length=1, max_length=200)
    versions: tuple[VersionRecord, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _ascending(self) -> VersionHistory:
        numbers = [v.version for v in self.versions]
        if numbers != sorted(set(numbers)):
            raise ValueError("versions must be listed once each, oldest first")
        return self

    def record(self, number: int) -> VersionRecord | None:
        """The record of version *number*, if listed."""
        return next((v for v in self.versions if v.version == number), None)


@dataclass(frozen=True, slots=True)
class Bundle:
    """A bundle that was read and validated in full."""

    manifest: BundleManifest
    workflows: Mapping[tuple[str, int], Workflow]
    histories: Mapping[str, VersionHistory]
    media: Mapping[str, bytes]
    source: str = ""

    @property
    def main(self) -> Workflow:
        """The workflow that was exported (the others are the ones it calls)."""
        return self.workflows[(self.manifest.workflow_id, self.manifest.workflow_version)]

    def status_of(self, workflow_id: str, number: int) -> WorkflowStatus | None:
        """A carried version's status in the library it was exported from."""
        record = self.histories[workflow_id].record(number)
        return None if record is None else record.status


# ── what a workflow references ──────────────────────────────────────────────────────────────


def media_refs(workflow: Workflow) -> set[str]:
    """Every media ref *workflow* uses: step screenshots and image anchors."""
    refs: set[str] = set()
    for step in workflow.steps:
        if step.screenshot is not None:
            refs.add(step.screenshot)
        targets: list[Target] = []
        if (target := step.target_or_none) is not None:
            targets.append(target)
        expectations: list[Expectation] = list(step.expectations)
        if isinstance(step, WaitForStep | AssertStep):
            expectations.append(step.condition)
        for expectation in expectations:
            if isinstance(expectation, ImageVisible):
                refs.add(expectation.anchor)
            elif isinstance(expectation, ElementVisible | ElementHidden):
                targets.append(expectation.target)
        for target in targets:
            refs.update(
                loc.value
                for loc in target.locators
                if loc.strategy is LocatorStrategy.IMAGE_ANCHOR and _REF.fullmatch(loc.value)
            )
    return refs


def _calls(workflow: Workflow) -> Iterator[tuple[int, CallStep]]:
    for i, step in enumerate(workflow.steps):
        if isinstance(step, CallStep):
            yield i, step


def _secret_default(workflow: Workflow) -> str | None:
    """The path of a secret parameter with a default, if any (validation forbids one)."""
    for i, param in enumerate(workflow.parameters):
        if param.type is ParameterType.SECRET and param.default is not None:
            return f"parameters[{i}].default"
    return None


def _media_problem(ref: str, data: bytes) -> str | None:
    if hashlib.sha256(data).hexdigest() != ref[:64]:
        return "its bytes do not match the sha256 in its name"
    ext = ref.rsplit(".", 1)[1]
    if ext == "png":
        ok = data.startswith(b"\x89PNG\r\n\x1a\n")
    elif ext == "jpg":
        ok = data.startswith(b"\xff\xd8\xff")
    else:
        ok = data[:4] == b"RIFF" and data[8:12] == b"WEBP"
    return None if ok else f"it is not a {ext.upper()} image"


def _content(workflow: Workflow) -> object:
    return workflow.model_dump(mode="json", exclude={"version"})


def _callees_first(
    workflows: Mapping[tuple[str, int], Workflow],
) -> tuple[list[str], list[str] | None]:
    """Workflow ids, each after every id it calls; or the ids of a call loop."""
    ids = {wid for wid, _ in workflows}
    graph: dict[str, set[str]] = {wid: set() for wid in ids}
    for (wid, _), wf in workflows.items():
        graph[wid].update(step.workflow_id for _, step in _calls(wf) if step.workflow_id in ids)
    order: list[str] = []
    done: set[str] = set()
    for root in sorted(graph):
        if root in done:
            continue
        path, stack = [root], [iter(sorted(graph[root]))]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
                node = path.pop()
                done.add(node)
                order.append(node)
            elif nxt in path:
                return order, [*path[path.index(nxt) :], nxt]
            elif nxt not in done:
                path.append(nxt)
                stack.append(iter(sorted(graph[nxt])))
    return order, None


def _loop_message(loop: Sequence[str], names: Mapping[str, str]) -> str:
    chain = " → ".join(repr(names.get(wid, wid)) for wid in loop)
    return f"workflows call each other in a loop ({chain}), which can never finish"


# ── writing a bundle ────────────────────────────────────────────────────────────────────────


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
        for i, step in _calls(current.workflow):
            found = history(step.workflow_id)
            where = f"step {i + 1} ({step.title!r}) of {name!r}"
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


# ── reading a bundle ────────────────────────────────────────────────────────────────────────


def is_bundle(name: str, data: bytes) -> bool:
    """Whether a file looks like a bundle: its suffix, or a zip archive's magic bytes."""
    return name.lower().endswith(BUNDLE_SUFFIX) or data[:4] in _ZIP_MAGIC


def _show(name: str) -> str:
    shown = name if name.isprintable() else ascii(name)
    return shown if len(shown) <= 120 else shown[:119] + "…"


def _mb(size: int) -> str:
    return f"{size / 2**20:.1f} MiB" if size >= 100 * 1024 else f"{size} bytes"


def _name_problem(name: str) -> str | None:
    if not name:
        return "a member has an empty name"
    if "\x00" in name or not name.isprintable():
        return "its name holds control characters"
    if "\\" in name:
        return "its name holds a backslash; a bundle uses '/' only"
    if name.startswith("/") or re.match(r"[A-Za-z]:", name):
        return "is an absolute path; refused"
    parts = name.split("/")
    if ".." in parts:
        return "climbs out of the bundle ('..'); refused"
    if any(p in ("", ".") for p in parts[:-1]):
        return "has an empty or '.' folder in its name"
    return None


def _max_stored(info: zipfile.ZipInfo) -> int:
    """The largest compressed size that is consistent with *info*'s uncompressed size."""
    if info.compress_type == zipfile.ZIP_STORED:
        return info.file_size
    return info.file_size + info.file_size // 100 + 64  # deflate's worst case, with room


class _Reader:
    """Reads one archive, raising :class:`BundleError` for anything wrong."""

    def __init__(self, source: str, max_total: int, max_member: int, max_members: int) -> None:
        self.source = source
        self.max_total = max_total
        self.max_member = max_member
        self.max_members = max_members
        self.read_total = 0

    def error(self, message: str, member: str = "", path: str = "") -> BundleError:
        return BundleError(message, member=member, source=self.source, path=path)

    def open(self, data: bytes) -> zipfile.ZipFile:
        if len(data) > self.max_total:
            raise self.error(
                f"the file is {_mb(len(data))}, more than a bundle may be ({_mb(self.max_total)})"
            )
        if data[:4] not in _ZIP_MAGIC:
            raise self.error("not a Procedura bundle: the file is not a zip archive")
        try:
            return zipfile.ZipFile(io.BytesIO(data))
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError):
            raise self.error(
                "not a readable zip archive: the file is truncated or damaged"
            ) from None

    def files(self, archive: zipfile.ZipFile) -> dict[str, zipfile.ZipInfo]:
        """The archive's files by name, once every entry's name, kind and sizes were checked."""
        infos = archive.infolist()
        if len(infos) > self.max_members:
            raise self.error(
                f"the archive has {len(infos)} members; a bundle may have at most "
                f"{self.max_members}"
            )
        files: dict[str, zipfile.ZipInfo] = {}
        seen: set[str] = set()
        declared = 0
        for info in infos:
            name = info.orig_filename
            if (problem := _name_problem(name)) is not None:
                raise self.error(problem, member=name)
            if name in seen or info.filename in seen:
                raise self.error("appears twice in the archive", member=name)
            seen.add(name)
            mode = info.external_attr >> 16 if info.create_system == 3 else 0
            if stat.S_ISLNK(mode):
                raise self.error("is a symbolic link; a bundle holds plain files only", name)
            if info.flag_bits & 0x1:
                raise self.error("is encrypted; a bundle is not", name)
            if name.endswith("/"):
                if not _FOLDER.fullmatch(name) or info.file_size:
                    raise self.error("is a folder outside a bundle's layout", name)
                continue
            if stat.S_IFMT(mode) and not stat.S_ISREG(mode):
                raise self.error("is not a plain file", name)
            if not (
                name == _MANIFEST
                or _WORKFLOW_MEMBER.fullmatch(name)
                or _HISTORY_MEMBER.fullmatch(name)
                or _MEDIA_MEMBER.fullmatch(name)
            ):
                raise self.error(
                    "is not part of a Procedura bundle (expected manifest.json, "
                    "workflows/<id>/v<N>.json, workflows/<id>/versions.json or "
                    "media/<sha256>.<ext>)",
                    name,
                )
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise self.error(
                    f"uses compression method {info.compress_type}; a bundle uses stored or "
                    "deflated members only",
                    name,
                )
            size = info.file_size
            if size > self.max_member:
                raise self.error(
                    f"is {_mb(size)} uncompressed, more than the {_mb(self.max_member)} a member "
                    "may be",
                    name,
                )
            if size > _RATIO_FLOOR and size > MAX_COMPRESSION_RATIO * max(info.compress_size, 1):
                raise self.error(
                    f"expands {size // max(info.compress_size, 1)}× ({_mb(info.compress_size)} "
                    f"to {_mb(size)}): refused as a zip bomb",
                    name,
                )
            if info.compress_size > _max_stored(info):
                raise self.error(
                    f"declares {size} bytes but holds {info.compress_size} compressed bytes: its "
                    "sizes are forged or damaged",
                    name,
                )
            declared += size
            if declared > self.max_total:
                raise self.error(
                    f"the members add up to more than the {_mb(self.max_total)} a bundle may hold"
                )
            files[name] = info
        return files

    def read(self, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
        """A member's bytes, read in chunks and never more than it declares."""
        name = info.orig_filename
        chunks: list[bytes] = []
        size = 0
        try:
            with archive.open(info) as member:
                while chunk := member.read(_CHUNK):
                    size += len(chunk)
                    if size > info.file_size or size > self.max_member:
                        raise self.error("holds more bytes than it declares: refused", name)
                    chunks.append(chunk)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
            raise self.error(f"is damaged or truncated ({exc})", name) from None
        except (RuntimeError, NotImplementedError) as exc:
            raise self.error(f"cannot be read ({exc})", name) from None
        if size != info.file_size:
            raise self.error(f"holds {size} bytes but declares {info.file_size}", name)
        self.read_total += size
        if self.read_total > self.max_total:
            raise self.error(
                f"the members add up to more than the {_mb(self.max_total)} a bundle may hold"
            )
        return b"".join(chunks)

    def document(self, name: str, data: bytes, model: type[_M], kind: str) -> _M:
        try:
            return parse_document(data, model, kind, _MAX_JSON_BYTES, source=name)
        except DocumentError as exc:
            raise self.error(exc.message, name, exc.path) from None


def read_bundle(
    data: bytes,
    *,
    source: str = "",
    max_total_bytes: int = MAX_BUNDLE_BYTES,
    max_member_bytes: int = MAX_MEMBER_BYTES,
    max_members: int = MAX_MEMBERS,
) -> Bundle:
    """Read and validate a whole bundle; nothing about it is trusted until this returns.

    Checks the archive (a truncated or damaged zip), every member's name (no absolute paths,
    ``..``, backslashes, links, duplicates or members outside the layout), sizes (declared and
    read; the compression ratio), every hash against the manifest, every document against its
    schema, media against their names and image types, and that every call step reaches a
    workflow the bundle holds (or, for workflows it does not hold, that import finds here).

    Raises:
        BundleError: one line naming the member and what is wrong.
    """
    reader = _Reader(source, max_total_bytes, max_member_bytes, max_members)
    with reader.open(data) as archive:
        files = reader.files(archive)
        if _MANIFEST not in files:
            raise reader.error("has no manifest.json: not a Procedura bundle")
        manifest = reader.document(
            _MANIFEST, reader.read(archive, files[_MANIFEST]), BundleManifest, _FORMAT
        )
        listed: dict[str, ManifestMember] = {}
        for i, entry in enumerate(manifest.members):
            if entry.name == _MANIFEST or entry.name in listed:
                raise reader.error(f"lists {_show(entry.name)} twice", _MANIFEST, f"members[{i}]")
            listed[entry.name] = entry
        for name in files:
            if name != _MANIFEST and name not in listed:
                raise reader.error("is not listed in manifest.json", name)
        contents: dict[str, bytes] = {}
        for name, entry in listed.items():
            info = files.get(name)
            if info is None:
                raise reader.error("is listed in manifest.json but not in the archive", name)
            if info.file_size != entry.size:
                raise reader.error(
                    f"is {info.file_size} bytes but manifest.json says {entry.size}", name
                )
            content = reader.read(archive, info)
            if hashlib.sha256(content).hexdigest() != entry.sha256:
                raise reader.error(
                    "does not match its sha256 in manifest.json: altered or damaged", name
                )
            contents[name] = content
    return _validate(reader, manifest, contents)


def _validate(reader: _Reader, manifest: BundleManifest, contents: Mapping[str, bytes]) -> Bundle:
    workflows: dict[tuple[str, int], Workflow] = {}
    members: dict[tuple[str, int], str] = {}
    histories: dict[str, VersionHistory] = {}
    media: dict[str, bytes] = {}
    for name, content in contents.items():
        if match := _WORKFLOW_MEMBER.fullmatch(name):
            wid, number = match["id"], int(match["n"])
            try:
                workflow = load_workflow(content, source=name)
            except DocumentError as exc:
                raise reader.error(exc.message, name, exc.path) from None
            if workflow.id != wid:
                raise reader.error(f"holds workflow {workflow.id!r}, not {wid!r}", name, "id")
            if workflow.version != number:
                raise reader.error(
                    f"holds version {workflow.version}, not {number}", name, "version"
                )
            if (path := _secret_default(workflow)) is not None:
                raise reader.error("a secret parameter cannot have a default", name, path)
            workflows[(wid, number)] = workflow
            members[(wid, number)] = name
        elif match := _HISTORY_MEMBER.fullmatch(name):
            history = reader.document(name, content, VersionHistory, _HISTORY)
            if history.workflow_id != match["id"]:
                raise reader.error(
                    f"is the history of {history.workflow_id!r}, not {match['id']!r}",
                    name,
                    "workflow_id",
                )
            histories[match["id"]] = history
        elif match := _MEDIA_MEMBER.fullmatch(name):
            if (problem := _media_problem(match["ref"], content)) is not None:
                raise reader.error(problem, name)
            media[match["ref"]] = content
    for wid, number in members:
        history_name = f"workflows/{wid}/versions.json"
        if wid not in histories:
            raise reader.error("is missing: every workflow carries its history", history_name)
        if histories[wid].record(number) is None:
            raise reader.error(f"does not list version {number}", history_name)
    for wid in histories:
        if not any(key[0] == wid for key in workflows):
            raise reader.error(
                "is the history of a workflow the bundle does not hold",
                f"workflows/{wid}/versions.json",
            )
    main = (manifest.workflow_id, manifest.workflow_version)
    if main not in workflows:
        raise reader.error(
            f"names version {main[1]} of workflow {main[0]!r}, which the bundle does not hold",
            _MANIFEST,
        )
    used: set[str] = set()
    ids = {wid for wid, _ in workflows}
    for key, workflow in workflows.items():
        for ref in sorted(media_refs(workflow)):
            if ref not in media and ref not in manifest.missing_media:
                raise reader.error(
                    f"uses media {ref}, which the bundle does not hold", members[key]
                )
            used.add(ref)
        for i, step in _calls(workflow):
            pinned = step.version
            if (
                step.workflow_id in ids
                and pinned is not None
                and (step.workflow_id, pinned) not in workflows
            ):
                raise reader.error(
                    f"calls version {pinned} of {step.workflow_id!r}, which the bundle does not "
                    "hold",
                    members[key],
                    f"steps[{i}].version",
                )
    for ref in media:
        if ref not in used:
            raise reader.error("is not used by any workflow in the bundle", f"media/{ref}")
    for i, ref in enumerate(manifest.missing_media):
        if ref in media or ref not in used:
            raise reader.error(
                f"lists {ref} as missing, but it is {'held' if ref in media else 'not used'}",
                _MANIFEST,
                f"missing_media[{i}]",
            )
    _, loop = _callees_first(workflows)
    if loop is not None:
        names = {wid: wf.name for (wid, _), wf in workflows.items()}
        raise reader.error(_loop_message(loop, names))
    reached = {main[0]}
    frontier = [main[0]]
    while frontier:
        current = frontier.pop()
        for (wid, _), workflow in workflows.items():
            if wid != current:
                continue
            for _, step in _calls(workflow):
                if step.workflow_id in ids and step.workflow_id not in reached:
                    reached.add(step.workflow_id)
                    frontier.append(step.workflow_id)
    if unreached := sorted(ids - reached):
        raise reader.error("is not called by the bundle's workflow", f"workflows/{unreached[0]}/")
    return Bundle(
        manifest=manifest,
        workflows=dict(sorted(workflows.items())),
        histories=histories,
        media=media,
        source=reader.source,
    )


# ── importing ───────────────────────────────────────────────────────────────────────────────

ImportAction = Literal["imported", "copied", "new version", "unchanged", "skipped"]


@dataclass(frozen=True, slots=True)
class Conflict:
    """A workflow of the bundle whose id exists here, with content that is not already here."""

    workflow_id: str
    name: str
    bundle_version: int
    local_version: int
    local_status: WorkflowStatus
    resolution: Resolution | None

    @property
    def local_is_newer(self) -> bool:
        """Whether the local latest version number is higher than the bundle's."""
        return self.local_version > self.bundle_version

    @property
    def why(self) -> str:
        """How the local workflow differs from the bundle's."""
        local = f"the local version {self.local_version} ({self.local_status.value})"
        if self.local_is_newer:
            return f"{local} is newer than the bundle's version {self.bundle_version}"
        return f"{local} differs from the bundle's version {self.bundle_version}"

    def describe(self) -> str:
        """One line: which workflow and how the local one differs."""
        return f"{self.name!r} ({self.workflow_id[:8]}): {self.why}"


@dataclass(frozen=True, slots=True)
class ImportedWorkflow:
    """What import did (or will do) with one carried version."""

    name: str
    bundle_id: str
    bundle_version: int
    action: ImportAction
    local_id: str
    local_version: int | None
    reason: str = ""

    def describe(self) -> str:
        """One line for a person."""
        head = f"{self.name!r} ({self.bundle_id[:8]} v{self.bundle_version})"
        where = f"{self.local_id[:8]} version {self.local_version}"
        tail = f"; {self.reason}" if self.reason else ""
        if self.action == "imported":
            return f"{head}: imported as {where} (draft){tail}"
        if self.action == "copied":
            return f"{head}: kept both: imported as {where} (draft){tail}"
        if self.action == "new version":
            return f"{head}: replaced: now {where} (draft){tail}"
        if self.action == "unchanged":
            return f"{head}: already here as version {self.local_version}; nothing imported{tail}"
        return f"{head}: skipped{tail}"


@dataclass(frozen=True, slots=True)
class _Write:
    workflow: Workflow
    version: int
    note: str
    outcome: int


@dataclass(frozen=True, slots=True)
class ImportPlan:
    """Everything an import would write, worked out without writing anything."""

    bundle: Bundle
    outcomes: tuple[ImportedWorkflow, ...]
    conflicts: tuple[Conflict, ...]
    warnings: tuple[str, ...]
    media: tuple[str, ...]
    writes: tuple[_Write, ...]

    @property
    def unresolved(self) -> tuple[Conflict, ...]:
        """Conflicts nobody chose a resolution for."""
        return tuple(c for c in self.conflicts if c.resolution is None)


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What an import wrote: each carried version's outcome, media stored, and warnings."""

    main: ImportedWorkflow
    workflows: tuple[ImportedWorkflow, ...]
    media_stored: tuple[str, ...]
    media_present: tuple[str, ...]
    warnings: tuple[str, ...]


class _Planner:
    def __init__(
        self,
        library: WorkflowLibrary,
        bundle: Bundle,
        on_conflict: OnConflict,
        choices: Mapping[str, Resolution],
    ) -> None:
        self.library = library
        self.bundle = bundle
        self.on_conflict = on_conflict
        self.choices = choices
        self.ids: dict[str, str] = {}
        self.numbers: dict[tuple[str, int], int | None] = {}
        self.outcomes: list[ImportedWorkflow] = []
        self.conflicts: list[Conflict] = []
        self.warnings: list[str] = []
        self.writes: list[_Write] = []
        self.names = {wid: wf.name for (wid, _), wf in bundle.workflows.items()}

    def error(self, message: str, member: str = "", path: str = "") -> BundleError:
        return BundleError(message, member=member, source=self.bundle.source, path=path)

    def plan(self) -> ImportPlan:
        self._check_outside_calls()
        order, loop = _callees_first(self.bundle.workflows)
        if loop is not None:  # read_bundle refuses these; a Bundle built by hand might not
            raise self.error(_loop_message(loop, self.names))
        for wid in order:
            keys = sorted(k for k in self.bundle.workflows if k[0] == wid)
            self._plan_workflow(wid, keys)
        refs = sorted(
            {ref for w in self.writes for ref in media_refs(w.workflow)} & set(self.bundle.media)
        )
        return ImportPlan(
            bundle=self.bundle,
            outcomes=tuple(self.outcomes),
            conflicts=tuple(self.conflicts),
            warnings=tuple(dict.fromkeys(self.warnings)),
            media=tuple(refs),
            writes=tuple(self.writes),
        )

    def _check_outside_calls(self) -> None:
        """Calls to workflows the bundle does not hold must reach workflows stored here."""
        ids = {wid for wid, _ in self.bundle.workflows}
        for (wid, number), workflow in self.bundle.workflows.items():
            member = f"workflows/{wid}/v{number}.json"
            for i, step in _calls(workflow):
                if step.workflow_id in ids:
                    continue
                found = self.library.versions_by_id(step.workflow_id)
                if not found:
                    raise self.error(
                        f"calls workflow {step.workflow_id!r}, which is neither in the bundle "
                        "nor in this library",
                        member,
                        f"steps[{i}].workflow_id",
                    )
                if step.version is not None and step.version > found[-1].version:
                    raise self.error(
                        f"calls version {step.version} of {found[-1].workflow.name!r}, which is "
                        f"neither in the bundle nor in this library (it has {found[-1].version})",
                        member,
                        f"steps[{i}].version",
                    )

    def _rewrite(self, workflow: Workflow) -> tuple[Workflow, list[str]]:
        """*workflow* with its calls pointing where the callees were (or will be) imported."""
        notes: list[str] = []
        steps = list(workflow.steps)
        changed = False
        for i, step in _calls(workflow):
            if step.workflow_id not in self.ids:
                continue
            target = self.ids[step.workflow_id]
            number = step.version
            if number is not None:
                number = self.numbers[(step.workflow_id, number)]
                if number is None:
                    notes.append(
                        f"{workflow.name!r} step {i + 1} ({step.title!r}) called version "
                        f"{step.version} of {self.names[step.workflow_id]!r}, which was skipped; "
                        "it now calls the approved version here"
                    )
            if (target, number) != (step.workflow_id, step.version):
                steps[i] = step.model_copy(update={"workflow_id": target, "version": number})
                changed = True
        if not changed:
            return workflow, notes
        data = workflow.model_dump()
        data["steps"] = [s.model_dump() for s in steps]
        return Workflow.model_validate(data), notes

    def _note(self, wid: str, number: int, *, copy: bool) -> str:
        status = self.bundle.status_of(wid, number)
        there = f", {status.value} there" if status is not None else ""
        source = self.bundle.source or "a bundle"
        what = "as a copy of" if copy else "version"
        if copy:
            return f"imported from {source} {what} {wid[:8]} version {number}{there}"
        return f"imported from {source}: {what} {number} of {wid[:8]}{there}"

    def _outcome(self, outcome: ImportedWorkflow) -> int:
        self.outcomes.append(outcome)
        return len(self.outcomes) - 1

    def _plan_workflow(self, wid: str, keys: list[tuple[str, int]]) -> None:
        rewritten = [(key, *self._rewrite(self.bundle.workflows[key])) for key in keys]
        existing = self.library.versions_by_id(wid)
        if not existing:
            self._plan_copy(wid, wid, rewritten, "imported", "")
            return
        matches = [
            next((v for v in reversed(existing) if _content(v.workflow) == _content(wf)), None)
            for _, wf, _ in rewritten
        ]
        latest = existing[-1]
        # A called version already here satisfies its callers; the exported workflow itself is
        # a conflict too when a newer local version exists, so a person decides which is latest.
        newest = matches[-1]
        behind = wid == self.bundle.manifest.workflow_id and (
            newest is None or newest.version != latest.version
        )
        if all(m is not None for m in matches) and not behind:
            self.ids[wid] = wid
            for (key, wf, _), match in zip(rewritten, matches, strict=True):
                assert match is not None
                self.numbers[key] = match.version
                newer = (
                    f"the latest here is version {latest.version}"
                    if match.version != latest.version
                    else ""
                )
                self._outcome(
                    ImportedWorkflow(wf.name, wid, key[1], "unchanged", wid, match.version, newer)
                )
            return
        top = keys[-1][1]
        resolution = self.choices.get(wid)
        if resolution is None and self.on_conflict != "ask":
            resolution = self.on_conflict
        conflict = Conflict(
            workflow_id=wid,
            name=self.names[wid],
            bundle_version=top,
            local_version=latest.version,
            local_status=latest.status,
            resolution=resolution,
        )
        self.conflicts.append(conflict)
        why = conflict.why
        if resolution == "keep-both":
            self._plan_copy(wid, new_id(), rewritten, "copied", f"{wid[:8]} exists here ({why})")
        elif resolution == "replace":
            self.ids[wid] = wid
            number, current = latest.version, latest.workflow
            for key, wf, notes in rewritten:
                if _content(current) == _content(wf):
                    self.numbers[key] = number
                    self._outcome(ImportedWorkflow(wf.name, wid, key[1], "unchanged", wid, number))
                    continue
                number += 1
                self.numbers[key] = number
                self.warnings.extend(notes)
                index = self._outcome(
                    ImportedWorkflow(
                        wf.name, wid, key[1], "new version", wid, number, f"before: {why}"
                    )
                )
                self.writes.append(_Write(wf, number, self._note(wid, key[1], copy=False), index))
                current = wf
        else:
            self.ids[wid] = wid
            reason = why + (" (--on-conflict skip)" if resolution == "skip" else "")
            for (key, wf, _), match in zip(rewritten, matches, strict=True):
                self.numbers[key] = None if match is None else match.version
                local = None if match is None else match.version
                self._outcome(ImportedWorkflow(wf.name, wid, key[1], "skipped", wid, local, reason))

    def _plan_copy(
        self,
        wid: str,
        target: str,
        rewritten: list[tuple[tuple[str, int], Workflow, list[str]]],
        action: ImportAction,
        reason: str,
    ) -> None:
        self.ids[wid] = target
        number = 0
        current: Workflow | None = None
        for key, wf, notes in rewritten:
            workflow = wf if target == wid else wf.model_copy(update={"id": target})
            if current is not None and _content(current) == _content(workflow):
                self.numbers[key] = number
                self._outcome(ImportedWorkflow(wf.name, wid, key[1], "unchanged", target, number))
                continue
            number += 1
            self.numbers[key] = number
            self.warnings.extend(notes)
            index = self._outcome(
                ImportedWorkflow(wf.name, wid, key[1], action, target, number, reason)
            )
            note = self._note(wid, key[1], copy=target != wid)
            self.writes.append(_Write(workflow, number, note, index))
            current = workflow


def _was_saved(library: WorkflowLibrary, write: _Write) -> bool:
    """Whether a save that raised had stored its version (e.g. only re-indexing failed)."""
    try:
        found = library.versions_by_id(write.workflow.id)
    except (ProceduraError, OSError):
        return False
    return any(
        v.version == write.version and _content(v.workflow) == _content(write.workflow)
        for v in found
    )


def plan_import(
    library: WorkflowLibrary,
    bundle: Bundle,
    *,
    on_conflict: OnConflict = "ask",
    choices: Mapping[str, Resolution] | None = None,
) -> ImportPlan:
    """Work out what importing *bundle* would do, writing nothing.

    Workflows are planned callees first, so a caller's call steps follow its callees to where
    they land (a new id for "keep-both", the local version number they get or already have).

    Args:
        on_conflict: the resolution for every conflict not in *choices*; ``ask`` leaves them
            unresolved (see :attr:`ImportPlan.unresolved`) and plans them as skipped.
        choices: a resolution per bundle workflow id.

    Raises:
        BundleError: a call step reaches a workflow neither the bundle nor this library holds.
    """
    return _Planner(library, bundle, on_conflict, dict(choices or {})).plan()


def import_bundle(
    library: WorkflowLibrary,
    media: MediaStore,
    bundle: Bundle,
    *,
    on_conflict: OnConflict,
    actor: str,
    choices: Mapping[str, Resolution] | None = None,
) -> ImportReport:
    """Import a validated bundle: its workflows as new draft versions, its media into the store.

    Nothing is written unless the whole import was planned and every conflict resolved. A
    conflict is a carried workflow whose id exists here while its content is not already one of
    the local versions: "keep-both" imports it under a new id (callers follow), "replace" saves
    it as the next (draft) version of the local workflow, "skip" leaves the local one. No version
    is ever changed or deleted, and nothing arrives approved.

    Raises:
        BundleConflictError: a conflict without a resolution (``on_conflict="ask"``).
        BundleError: see :func:`plan_import`.
        BundleWriteError: a write failed midway; the message lists what had been written.
    """
    plan = plan_import(library, bundle, on_conflict=on_conflict, choices=choices)
    if plan.unresolved:
        raise BundleConflictError(plan.unresolved, source=bundle.source)
    for write in plan.writes:
        if (path := _secret_default(write.workflow)) is not None:
            raise BundleError(
                "a secret parameter cannot have a default", source=bundle.source, path=path
            )
    written: list[str] = []
    stored: list[str] = []
    present: list[str] = []
    current: _Write | None = None
    try:
        for ref in plan.media:
            if media.exists(ref):
                present.append(ref)
                continue
            got = media.put(bundle.media[ref], ref.rsplit(".", 1)[1])
            stored.append(got)
            written.append(f"media {got}")
            if got != ref:
                raise StoreError(f"the media store named {ref} {got}")
        for write in plan.writes:
            current = write
            result = library.save(write.workflow, actor=actor, change_note=write.note)
            current = None
            saved = result.version
            written.append(
                f"{saved.workflow.name!r} as {saved.workflow_id} version {saved.version}"
            )
            if not result.created or saved.version != write.version:
                raise StoreError(
                    f"expected {saved.workflow.name!r} to become version {write.version}, but "
                    f"the library {'made' if result.created else 'has'} version {saved.version}"
                )
    except (ProceduraError, OSError) as exc:
        if current is not None and _was_saved(library, current):
            written.append(
                f"{current.workflow.name!r} as {current.workflow.id} version {current.version}"
            )
        done = ", ".join(written) if written else "nothing"
        raise BundleWriteError(
            f"importing {bundle.source or 'the bundle'} stopped midway ({exc}); written before "
            f"it stopped: {done}",
            written,
        ) from exc
    by_key = {(o.bundle_id, o.bundle_version): o for o in plan.outcomes}
    main = by_key[(bundle.manifest.workflow_id, bundle.manifest.workflow_version)]
    return ImportReport(
        main=main,
        workflows=plan.outcomes,
        media_stored=tuple(stored),
        media_present=tuple(present),
        warnings=plan.warnings,
    )
