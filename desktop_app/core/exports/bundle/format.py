"""The bundle format: its limits, member names, documents and errors."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from pydantic import AwareDatetime, Field, model_validator

from desktop_app.core.errors import DocumentError, StoreError
from desktop_app.core.models.common import (
    ID_CHARACTERS,
    MEDIA_REF_PATTERN,
    SCHEMA_VERSION,
    FrozenModel,
    MediaRef,
)
from desktop_app.core.models.workflow import (
    ParameterType,
    StatusTransition,
    Workflow,
    WorkflowStatus,
    WorkflowVersion,
)

if TYPE_CHECKING:
    from desktop_app.core.exports.bundle.importer import Conflict

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
    "ManifestMember",
    "VersionHistory",
    "VersionRecord",
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


# ── checks on names, sizes and contents ─────────────────────────────────────────────────────


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
