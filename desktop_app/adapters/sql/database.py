"""Opening the database and migrating it to the latest schema.

Personal mode keeps one SQLite file (WAL, foreign keys, a busy timeout); team mode a PostgreSQL
database named by a SQLAlchemy URL (psycopg 3). The stores run the same code on both; what
differs between the two is in :mod:`~desktop_app.adapters.sql.dialects`.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from sqlalchemy import create_engine, event, inspect, make_url
from sqlalchemy.engine import Engine, ExceptionContext
from sqlalchemy.exc import ArgumentError, OperationalError

from desktop_app.core.errors import NotAllowedError, StoreError

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

__all__ = [
    "BUSY_TIMEOUT_MS",
    "CONNECT_TIMEOUT_S",
    "HEAD_REVISION",
    "current_revision",
    "for_writing",
    "head_revision",
    "is_postgres",
    "migrate",
    "open_database",
    "redacted",
]

#: How long a statement waits for another connection's lock before failing.
BUSY_TIMEOUT_MS: Final = 5000
#: How long connecting to a database server may take before it counts as unreachable.
CONNECT_TIMEOUT_S: Final = 10

#: The newest schema revision, known without loading Alembic (a test keeps it equal to the
#: migrations' head), so opening an up-to-date database stays fast.
HEAD_REVISION: Final = "0010"

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


def open_database(target: Path | str) -> Engine:
    """An engine on the SQLite file at *target* (created if missing), or on the PostgreSQL
    database its URL names (``postgresql://user@host:5432/team``), every connection set up.

    The schema is not touched: call :func:`migrate` (as a writer) first.

    Raises:
        StoreError: *target* is a URL of another database than PostgreSQL, or not a URL.
    """
    if isinstance(target, str):
        return _open_server(target)
    path = target
    path.parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(f"sqlite:///{path}", connect_args={"timeout": BUSY_TIMEOUT_MS / 1000})
    event.listen(engine, "connect", _on_connect)
    event.listen(engine, "begin", _on_begin)
    return engine


def _open_server(url: str) -> Engine:
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise StoreError(f"not a database URL: {redacted(url)}") from None
    if parsed.get_backend_name() != "postgresql":
        raise StoreError(
            f"team mode needs PostgreSQL, not {parsed.get_backend_name()} ({redacted(url)})"
        )
    parsed = parsed.set(drivername="postgresql+psycopg")
    # Checked before use: a server restarted under a long-open window is reconnected to, not
    # reported as a failure of whatever ran next.
    engine = create_engine(
        parsed,
        pool_pre_ping=True,
        connect_args={"connect_timeout": CONNECT_TIMEOUT_S, "application_name": "procedura"},
    )
    event.listen(engine, "handle_error", _refused)
    return engine


#: PostgreSQL's error code for "insufficient privilege" (a grant or a team check refused).
_INSUFFICIENT_PRIVILEGE: Final = "42501"


def _refused(context: ExceptionContext) -> BaseException | None:
    """What the server refused for lack of a role, as one line a person understands."""
    original = context.original_exception
    if getattr(original, "sqlstate", None) != _INSUFFICIENT_PRIVILEGE:
        return None
    return NotAllowedError(f"the team's server refused: {_first_line(original)}")


def redacted(url: str) -> str:
    """*url* without its password (for messages and logs)."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "(unreadable URL)"


def is_postgres(engine: Engine) -> bool:
    """Whether *engine* is on PostgreSQL (team mode)."""
    return engine.dialect.name == "postgresql"


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
        raise StoreError(
            f"cannot read the database {engine.url.database}: {_first_line(exc.orig)}"
        ) from None


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
    if is_postgres(engine):
        _migrate_server(engine, cfg, revision)
        return
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


#: The advisory lock that makes team members' clients migrate one at a time.
_MIGRATION_LOCK: Final = 0x70726F63


def _migrate_server(engine: Engine, cfg: Config, revision: str) -> None:
    """Migrate a PostgreSQL database in one transaction (its DDL is transactional), one client
    at a time: the first to start holds the lock; the others wait for it, then find nothing
    left to do."""
    from alembic import command
    from sqlalchemy.exc import DBAPIError

    try:
        with engine.begin() as conn:
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_MIGRATION_LOCK})")
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, revision)
    except DBAPIError as exc:
        raise StoreError(
            f"could not migrate the database {engine.url.database}: {_first_line(exc.orig)}"
        ) from None


def _first_line(error: BaseException | None) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
