"""The shared media store of team mode: content-addressed files in the team's database.

Why the database and not a shared folder or an S3 bucket: a runner on any machine of the team
needs nothing but the database it already reaches (no share to mount, no second service and
credentials to run), the files are written and read under the same logins and grants as the
rest, and one backup holds everything. The files are small (screenshots and image anchors, a
few hundred KB); each is stored once whoever sends it, since its name is the hash of its
bytes. Each machine keeps the files it read in a local cache, so a screen showing them reads
a file, as in personal mode.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from sqlalchemy import Engine, func
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlmodel import Session, col, delete, select

from desktop_app.adapters.media_store import FileMediaStore
from desktop_app.adapters.sql.database import for_writing
from desktop_app.adapters.sql.tables import MediaRow
from desktop_app.core.errors import NotFoundError
from desktop_app.core.models.common import utcnow

__all__ = ["SqlMediaStore"]


class SqlMediaStore:
    """A :class:`~desktop_app.core.ports.MediaStore` in the ``media`` table (PostgreSQL),
    with a local cache of the files read or written here.

    Args:
        engine: the team's database.
        cache: this machine's cache directory.
    """

    def __init__(self, engine: Engine, cache: Path) -> None:
        self._engine = engine
        self._writer = for_writing(engine)
        self._cache = FileMediaStore(cache)

    @property
    def root(self) -> Path:
        """The local cache directory."""
        return self._cache.root

    def ref_of(self, data: bytes, extension: str) -> str:
        """The ref *data* is (or would be) stored under, without storing it."""
        return self._cache.ref_of(data, extension)

    def put(self, data: bytes, extension: str) -> str:
        ref = self._cache.ref_of(data, extension)
        statement = (
            pg_insert(MediaRow)
            .values(ref=ref, size=len(data), created_at=utcnow(), data=data)
            .on_conflict_do_nothing(index_elements=["ref"])
        )
        with Session(self._writer) as session:
            session.execute(statement)
            session.commit()
        self._cache.put(data, extension)
        return ref

    def get(self, ref: str) -> bytes:
        if self._cache.exists(ref):
            return self._cache.get(ref)
        with Session(self._engine) as session:
            data = session.exec(select(MediaRow.data).where(col(MediaRow.ref) == ref)).first()
        if data is None:
            raise NotFoundError(f"media {ref} is not in the team's media store")
        self._cache.put(data, ref.rsplit(".", 1)[1])
        return data

    def path(self, ref: str) -> Path:
        path = self._cache.path(ref)
        if not path.is_file():
            with contextlib.suppress(NotFoundError):  # else where it would be: no file there
                self.get(ref)
        return path

    def exists(self, ref: str) -> bool:
        self._cache.path(ref)  # a malformed ref fails here
        with Session(self._engine) as session:
            found = session.exec(select(MediaRow.ref).where(col(MediaRow.ref) == ref)).first()
        return found is not None

    def delete(self, ref: str) -> None:
        with Session(self._writer) as session:
            session.exec(delete(MediaRow).where(col(MediaRow.ref) == ref))
            session.commit()
        self._cache.delete(ref)

    def count(self) -> tuple[int, int]:
        with Session(self._engine) as session:
            files, size = session.exec(
                select(func.count(), func.coalesce(func.sum(MediaRow.size), 0))
            ).one()
        return int(files), int(size)
