"""Opening the SQLite database: WAL, foreign keys, busy timeout, migrations to the latest schema."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from sqlalchemy import create_engine, event, inspect
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError

from desktop_app.core.errors import StoreError

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

__all__ = [
    "BUSY_TIMEOUT_MS",
    "HEAD_REVISION",
    "current_revision",
    "for_writing",
    "head_revision",
    "migrate",
    "open_database",
]

#: How long a statement waits for another connection's lock before failing.
BUSY_TIMEOUT_MS: Final = 5000

#: The newest schema revision, known without loading Alembic (a test keeps it equal to the
#: migrations' head), so opening an up-to-date database stays fast.
HEAD_REVISION: Final = "0008"

_MIGRATIONS = Path(__file__).with_name("migrations")


def _alembic_config() -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    return cfg


def _on_connect(dbapi_connection: Any, _record: Any) -> None:
    if not isinstance(dbapi_connection, sqlite3.Connection):  # pragma: no cover
        return
    # Let SQLAlchemy, not the sqlite3 module, decide where transactions begin, so DDL and
    # multi-statement writes are really atomic (SQLAlchemy's documented pysqlite recipe).
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA synchronous=NORMAL")
        # Deleted or rewritten rows (a value scrubbed after the fact) are overwritten on disk,
        # not left in free pages.
        cursor.execute("PRAGMA secure_delete=ON")
    finally:
        cursor.close()


def open_database(path: Path) -> Engine:
    """An engine on the SQLite file at *path* (created if missing), every connection set up.

    The schema is not touched: call :func:`migrate` (as a writer) first.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(f"sqlite:///{path}", connect_args={"timeout": BUSY_TIMEOUT_MS / 1000})
    event.listen(engine, "connect", _on_connect)
    event.listen(engine, "begin", _on_begin)
    return engine


#: The execution option that makes a connection's transactions take the write lock at once.
_WRITES: Final = "procedura_writes"


def _on_begin(conn: Any) -> None:
    writes = conn.get_execution_options().get(_WRITES)
    conn.exec_driver_sql("BEGIN IMMEDIATE" if writes else "BEGIN")


def for_writing(engine: Engine) -> Engine:
    """*engine* for transactions that write: they begin with ``BEGIN IMMEDIATE``.

    A deferred transaction that reads and then writes cannot wait for a writer that committed
    in between: SQLite fails it at once with "database is locked", whatever the busy timeout.
    Taking the write lock at the start makes it wait its turn instead (up to
    :data:`BUSY_TIMEOUT_MS`). Readers keep plain deferred transactions, so they never wait.
    """
    return engine.execution_options(**{_WRITES: True})


def head_revision() -> str:
    """The newest revision among the migrations (loads Alembic; see :data:`HEAD_REVISION`)."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(_alembic_config()).get_current_head()
    assert head is not None
    return head


def current_revision(engine: Engine) -> str | None:
    """The schema revision of the database (``None`` for an empty one)."""
    try:
        with engine.connect() as conn:
            if not inspect(conn).has_table("alembic_version"):
                return None
            rows = conn.exec_driver_sql("SELECT version_num FROM alembic_version").all()
            return str(rows[0][0]) if rows else None
    except OperationalError as exc:
        raise StoreError(f"cannot read the database {engine.url.database}: {exc.orig}") from None


def _known(script: ScriptDirectory, revision: str) -> bool:
    from alembic.util.exc import CommandError

    try:
        return script.get_revision(revision) is not None
    except CommandError:
        return False


def migrate(engine: Engine, revision: str = "head") -> None:
    """Bring the schema up to *revision*, keeping every row. A no-op when already there.

    Raises:
        StoreError: the database is newer than this release, or a migration failed (the
            migration runs in one transaction, so the database is left as it was).
    """
    current = current_revision(engine)
    if revision == "head" and current == HEAD_REVISION:
        return
    from alembic import command
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(_alembic_config())
    if current is not None and not _known(script, current):
        raise StoreError(
            f"the database {engine.url.database} was written by a newer Procedura (schema "
            f"{current}); upgrade Procedura to open it"
        )
    if revision == "head" and current == script.get_current_head():
        return
    cfg = _alembic_config()
    with engine.connect() as conn:
        raw = conn.connection.dbapi_connection
        assert raw is not None
        # SQLite rebuilds a table to alter it (alembic's batch mode); with foreign keys on,
        # dropping the old copy would cascade-delete every child row. Switch them off for the
        # migration (this only works outside a transaction) and check them before committing.
        raw.execute("PRAGMA foreign_keys=OFF")
        try:
            with conn.begin():
                cfg.attributes["connection"] = conn
                command.upgrade(cfg, revision)
                broken = conn.exec_driver_sql("PRAGMA foreign_key_check").all()
                if broken:
                    raise StoreError(
                        f"migrating {engine.url.database} would break {len(broken)} references "
                        f"(first in table {broken[0][0]}); the database was left as it was"
                    )
        except OperationalError as exc:
            raise StoreError(
                f"could not migrate the database {engine.url.database}: {exc.orig}"
            ) from None
        finally:
            raw.execute("PRAGMA foreign_keys=ON")
