"""Content-addressed media files (screenshots, image anchors) under the data directory."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path
from typing import Final, Protocol

from desktop_app.core.errors import NotFoundError, StoreError
from desktop_app.core.models.common import MEDIA_REF_PATTERN
from desktop_app.core.ports import MediaStore

__all__ = ["EXTENSIONS", "AddressedMediaStore", "FileMediaStore"]

#: The image formats the store accepts.
EXTENSIONS: Final = frozenset({"png", "jpg", "webp"})

_REF = re.compile(MEDIA_REF_PATTERN)


class AddressedMediaStore(MediaStore, Protocol):
    """A media store that tells a file's ref before storing it (this folder's, or the team's
    shared one)."""

    def ref_of(self, data: bytes, extension: str) -> str:
        """The ref *data* is (or would be) stored under, without storing it."""
        ...


class FileMediaStore:
    """Files named by the sha256 of their bytes, fanned out as ``ab/cd/<sha256>.<ext>``.

    Writing the same bytes twice stores them once; a file is written to a temporary name and
    renamed into place, so a crash never leaves a half-written file under a valid name.
    """

    def __init__(self, root: Path) -> None:
        self._root = root

    @property
    def root(self) -> Path:
        """The directory holding the files."""
        return self._root

    def ref_of(self, data: bytes, extension: str) -> str:
        """The ref *data* is (or would be) stored under, without storing it.

        Raises:
            StoreError: *extension* is not one the store accepts.
        """
        ext = extension.lower().lstrip(".")
        if ext == "jpeg":
            ext = "jpg"
        if ext not in EXTENSIONS:
            raise StoreError(f"cannot store .{ext} media; expected one of {sorted(EXTENSIONS)}")
        return f"{hashlib.sha256(data).hexdigest()}.{ext}"

    def put(self, data: bytes, extension: str) -> str:
        ref = self.ref_of(data, extension)
        path = self.path(ref)
        if path.exists():
            return ref
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return ref

    def get(self, ref: str) -> bytes:
        path = self.path(ref)
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise NotFoundError(f"media {ref} is not in the media store") from None

    def path(self, ref: str) -> Path:
        if not _REF.match(ref):
            raise StoreError(f"{ref!r} is not a media reference")
        return self._root / ref[:2] / ref[2:4] / ref

    def exists(self, ref: str) -> bool:
        return self.path(ref).is_file()

    def delete(self, ref: str) -> None:
        self.path(ref).unlink(missing_ok=True)

    def count(self) -> tuple[int, int]:
        files = 0
        size = 0
        if self._root.is_dir():
            for path in self._root.glob("*/*/*"):
                if _REF.match(path.name):
                    files += 1
                    size += path.stat().st_size
        return files, size
