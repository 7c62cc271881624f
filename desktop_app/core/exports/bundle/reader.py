"""Reading a bundle: every name, size, hash and document checked before it is trusted."""

from __future__ import annotations

import hashlib
import io
import stat
import zipfile
import zlib
from collections.abc import Mapping
from typing import Final, TypeVar

from desktop_app.core.documents import load_workflow, parse_document
from desktop_app.core.errors import DocumentError
from desktop_app.core.exports.bundle.format import (
    _FOLDER,
    _FORMAT,
    _HISTORY,
    _HISTORY_MEMBER,
    _MANIFEST,
    _MEDIA_MEMBER,
    _WORKFLOW_MEMBER,
    _ZIP_MAGIC,
    BUNDLE_SUFFIX,
    MAX_BUNDLE_BYTES,
    MAX_COMPRESSION_RATIO,
    MAX_MEMBER_BYTES,
    MAX_MEMBERS,
    Bundle,
    BundleError,
    BundleManifest,
    ManifestMember,
    VersionHistory,
    _mb,
    _media_problem,
    _name_problem,
    _secret_default,
    _show,
)
from desktop_app.core.exports.bundle.references import (
    _callees_first,
    _calls,
    _loop_message,
    media_refs,
)
from desktop_app.core.models.common import FrozenModel
from desktop_app.core.models.workflow import Workflow

__all__ = ["is_bundle", "read_bundle"]

_RATIO_FLOOR: Final = 1024 * 1024
_MAX_JSON_BYTES: Final = 16 * 1024 * 1024
_CHUNK: Final = 64 * 1024

_M = TypeVar("_M", bound=FrozenModel)


def is_bundle(name: str, data: bytes) -> bool:
    """Whether a file looks like a bundle: its suffix, or a zip archive's magic bytes."""
    return name.lower().endswith(BUNDLE_SUFFIX) or data[:4] in _ZIP_MAGIC


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
        for place, step in _calls(workflow):
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
                    f"{place.path}.version",
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
