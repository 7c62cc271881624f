"""A team's PostgreSQL database: its roles, what each may do, and the audit log.

Who may do what is enforced by the server, not by the app: a member logs in as a PostgreSQL
user who belongs to one of the team's group roles (``<database>_recorder``, ``_analyst``,
``_approver``, ``_runner``, ``_admin``), and

- **grants** say which tables each role may write (a runner writes runs, experiences and
  media, never trajectories; nobody but the database's owner deletes an audit row);
- a **trigger on versions** checks every status a version is given against the role of the
  user giving it (into review: analyst; approved, archived, sent back, restored: approver),
  refuses any change to a saved version's content, and sets who saved or moved it from the
  login, not from what the client says;
- a **trigger on workflows** recomputes the columns that decide what runs (status, approved
  version) from the versions, so no client can make a version runnable by writing them;
- every version saved and every status change is written to ``audit_log`` (who, when, what)
  by a ``SECURITY DEFINER`` function: members read the log and cannot write it.

The group roles are per database, so one server can hold several teams; a user can be an
analyst in one and a runner in another.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from sqlalchemy import Connection, Engine, text

from desktop_app.core.errors import StoreError

__all__ = [
    "ROLE_RIGHTS",
    "Membership",
    "TeamRole",
    "add_member",
    "group_role",
    "membership",
    "secure",
]


class TeamRole(StrEnum):
    """What a member of a team may do."""

    RECORDER = "recorder"  # record, and save drafts
    ANALYST = "analyst"  # edit, and submit for review
    APPROVER = "approver"  # approve, archive, send back, restore
    RUNNER = "runner"  # run approved versions (runs, repairs remembered)
    ADMIN = "admin"  # everything, and delete


#: What each role may do, in a person's words (``procedura team status``, docs/team.md).
ROLE_RIGHTS: Final[dict[TeamRole, str]] = {
    TeamRole.RECORDER: "record demonstrations and save drafts",
    TeamRole.ANALYST: "edit workflows and submit them for review",
    TeamRole.APPROVER: "approve, archive, send back and restore versions",
    TeamRole.RUNNER: "run approved versions",
    TeamRole.ADMIN: "everything, including deleting workflows and adding members",
}

#: The roles each role includes (PostgreSQL role membership: a member of ``analyst`` is a
#: member of ``recorder`` too).
_INCLUDES: Final[dict[TeamRole, tuple[TeamRole, ...]]] = {
    TeamRole.ANALYST: (TeamRole.RECORDER,),
    TeamRole.APPROVER: (TeamRole.ANALYST,),
    TeamRole.ADMIN: (TeamRole.APPROVER, TeamRole.RUNNER),
}

_ALL_TABLES: Final = (
    "workflows",
    "workflow_versions",
    "workflow_transitions",
    "trajectories",
    "trajectory_events",
    "trajectory_raw_events",
    "runs",
    "run_steps",
    "experiences",
    "index_pending",
    "text_index_entries",
    "text_index",
    "media",
    "alembic_version",
    "audit_log",
    "fleet_jobs",
    "fleet_rows",
    "fleet_schedules",
)

#: Tables each role may write (INSERT, UPDATE, DELETE), beyond those of the roles it includes.
_WRITES: Final[dict[TeamRole, tuple[str, ...]]] = {
    # A schedule runs unattended, irreversible steps included: an approver's decision.
    TeamRole.APPROVER: ("fleet_schedules",),
    TeamRole.RUNNER: (
        "fleet_jobs",
        "fleet_rows",
        "runs",
        "run_steps",
        "experiences",
        "media",
        "index_pending",
        # A run's repairs propose a draft (the version trigger lets a runner save drafts only).
        "workflows",
        "workflow_versions",
        "workflow_transitions",
        "text_index_entries",
        "text_index",
    ),
    TeamRole.RECORDER: (
        "fleet_jobs",
        "fleet_rows",
        "trajectories",
        "trajectory_events",
        "trajectory_raw_events",
        "workflows",
        "workflow_versions",
        "workflow_transitions",
        "runs",
        "run_steps",
        "experiences",
        "media",
        "index_pending",
        "text_index_entries",
        "text_index",
    ),
}


def group_role(database: str, role: TeamRole) -> str:
    """The PostgreSQL group role of *role* in the team of *database*."""
    return f"{database}_{role.value}"


def _quote(conn: Connection, name: str) -> str:
    return conn.dialect.identifier_preparer.quote_identifier(name)


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def secure(engine: Engine) -> None:
    """Set up the team's roles, grants, triggers and audit log in a migrated database
    (``procedura team init``, as the database's owner). Running it again changes nothing but
    what a newer release adds.

    Raises:
        StoreError: the user is not allowed to (it must own the database and may create roles).
    """
    from sqlalchemy.exc import DBAPIError

    try:
        with engine.begin() as conn:
            _secure(conn)
    except DBAPIError as exc:
        raise StoreError(f"cannot set up the team database: {_first_line(exc.orig)}") from None


def _secure(conn: Connection) -> None:
    database = str(conn.exec_driver_sql("SELECT current_database()").scalar_one())
    driver = conn.connection.driver_connection
    assert driver is not None

    def run(statement: str) -> None:
        # Straight to psycopg, with no parameters: the functions' bodies hold % signs.
        driver.execute(statement)

    for role in TeamRole:
        name = group_role(database, role)
        exists = conn.execute(text("SELECT 1 FROM pg_roles WHERE rolname = :n"), {"n": name})
        if exists.first() is None:
            run(f"CREATE ROLE {_quote(conn, name)} NOLOGIN")
    for role, included in _INCLUDES.items():
        for other in included:
            run(
                f"GRANT {_quote(conn, group_role(database, other))} "
                f"TO {_quote(conn, group_role(database, role))}"
            )
    run(_AUDIT_TABLE)
    run(f"REVOKE ALL ON DATABASE {_quote(conn, database)} FROM PUBLIC")
    run("REVOKE ALL ON SCHEMA public FROM PUBLIC")
    members = [_quote(conn, group_role(database, r)) for r in TeamRole]
    run(f"GRANT CONNECT ON DATABASE {_quote(conn, database)} TO {', '.join(members)}")
    run(f"GRANT USAGE ON SCHEMA public TO {', '.join(members)}")
    tables = ", ".join(_ALL_TABLES)
    run(f"REVOKE ALL ON {tables} FROM PUBLIC")
    run(f"GRANT SELECT ON {tables} TO {', '.join(members)}")
    run(f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {', '.join(members)}")
    for role, written in _WRITES.items():
        grantee = _quote(conn, group_role(database, role))
        run(f"GRANT INSERT, UPDATE, DELETE ON {', '.join(written)} TO {grantee}")
    admin = _quote(conn, group_role(database, TeamRole.ADMIN))
    run(f"GRANT INSERT, UPDATE, DELETE ON {', '.join(t for t in _ALL_TABLES if t != 'audit_log')}"
        f" TO {admin}")  # fmt: skip
    # The scheduler (any member who writes jobs) notes when a schedule fired, and nothing else.
    for role in (TeamRole.RECORDER, TeamRole.RUNNER):
        grantee = _quote(conn, group_role(database, role))
        run(f"GRANT UPDATE (last_fired_at) ON fleet_schedules TO {grantee}")
    # Only an admin deletes a workflow (its versions, runs and repairs go with it).
    for role in (TeamRole.RECORDER, TeamRole.RUNNER):
        run(f"REVOKE DELETE ON workflows FROM {_quote(conn, group_role(database, role))}")
    for statement in _TRIGGERS:
        run(statement)


_AUDIT_TABLE: Final = """
CREATE TABLE IF NOT EXISTS audit_log (
    id bigserial PRIMARY KEY,
    at timestamptz NOT NULL DEFAULT now(),
    who text NOT NULL DEFAULT session_user,
    action text NOT NULL,
    workflow_id text NOT NULL,
    version integer,
    from_status text,
    to_status text
)
"""

#: The role a version's new status needs: the version trigger's table.
_STATUS_ROLE: Final = """
CASE
    WHEN new_status = 'draft' AND old_status IS NULL THEN 'recorder'
    WHEN new_status = 'draft' AND old_status = 'draft' THEN 'recorder'
    WHEN new_status = 'in_review' THEN 'analyst'
    ELSE 'approver'
END
"""

_TRIGGERS: Final = (
    f"""
CREATE OR REPLACE FUNCTION procedura_needed_role(old_status text, new_status text)
RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT {_STATUS_ROLE} $$
""",
    """
CREATE OR REPLACE FUNCTION procedura_may(role_suffix text) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT pg_has_role(session_user, current_database() || '_' || role_suffix, 'MEMBER')
        OR pg_has_role(session_user, current_database() || '_admin', 'MEMBER')
        OR session_user = (SELECT pg_get_userbyid(datdba) FROM pg_database
                           WHERE datname = current_database())
$$
""",
    """
CREATE OR REPLACE FUNCTION procedura_guard_version() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    old_status text := CASE WHEN TG_OP = 'UPDATE' THEN OLD.status END;
    needed text;
BEGIN
    IF TG_OP = 'UPDATE' AND (NEW.document IS DISTINCT FROM OLD.document
            OR NEW.content_hash IS DISTINCT FROM OLD.content_hash
            OR NEW.workflow_id IS DISTINCT FROM OLD.workflow_id
            OR NEW.version IS DISTINCT FROM OLD.version
            OR NEW.created_by IS DISTINCT FROM OLD.created_by) THEN
        RAISE EXCEPTION 'a saved version never changes: save a new one'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF TG_OP = 'INSERT' THEN
        NEW.created_by := session_user;
    END IF;
    IF TG_OP = 'UPDATE' AND NEW.status = OLD.status THEN
        RETURN NEW;
    END IF;
    needed := procedura_needed_role(old_status, NEW.status);
    IF NOT procedura_may(needed) THEN
        RAISE EXCEPTION 'only a member with the % role may make a version %', needed,
            replace(NEW.status, '_', ' ')
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END $$
""",
    """
CREATE OR REPLACE FUNCTION procedura_audit_version() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO audit_log (who, action, workflow_id, version, to_status)
        VALUES (session_user, 'save', NEW.workflow_id, NEW.version, NEW.status);
    ELSIF NEW.status IS DISTINCT FROM OLD.status THEN
        INSERT INTO audit_log (who, action, workflow_id, version, from_status, to_status)
        VALUES (session_user, 'status', NEW.workflow_id, NEW.version, OLD.status, NEW.status);
    END IF;
    RETURN NULL;
END $$
""",
    """
CREATE OR REPLACE FUNCTION procedura_audit_delete() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
BEGIN
    INSERT INTO audit_log (who, action, workflow_id) VALUES (session_user, 'delete', OLD.id);
    RETURN NULL;
END $$
""",
    """
CREATE OR REPLACE FUNCTION procedura_actor() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.actor := session_user;
    RETURN NEW;
END $$
""",
    """
CREATE OR REPLACE FUNCTION procedura_runnable() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    total integer;
    archived integer;
    newest_status text;
BEGIN
    SELECT max(version) INTO NEW.approved_version FROM workflow_versions
        WHERE workflow_id = NEW.id AND status = 'approved';
    SELECT count(*), count(*) FILTER (WHERE status = 'archived') INTO total, archived
        FROM workflow_versions WHERE workflow_id = NEW.id;
    SELECT status INTO newest_status FROM workflow_versions
        WHERE workflow_id = NEW.id ORDER BY version DESC LIMIT 1;
    IF total = 0 THEN
        RETURN NEW;  -- the row comes first, its first version right after
    ELSIF archived = total THEN
        NEW.status := 'archived';
        NEW.approved_version := NULL;
    ELSIF NEW.approved_version IS NOT NULL THEN
        NEW.status := 'approved';
    ELSE
        NEW.status := newest_status;
    END IF;
    RETURN NEW;
END $$
""",
    "DROP TRIGGER IF EXISTS procedura_guard ON workflow_versions",
    """CREATE TRIGGER procedura_guard BEFORE INSERT OR UPDATE ON workflow_versions
       FOR EACH ROW EXECUTE FUNCTION procedura_guard_version()""",
    "DROP TRIGGER IF EXISTS procedura_audit ON workflow_versions",
    """CREATE TRIGGER procedura_audit AFTER INSERT OR UPDATE ON workflow_versions
       FOR EACH ROW EXECUTE FUNCTION procedura_audit_version()""",
    "DROP TRIGGER IF EXISTS procedura_audit_delete ON workflows",
    """CREATE TRIGGER procedura_audit_delete AFTER DELETE ON workflows
       FOR EACH ROW EXECUTE FUNCTION procedura_audit_delete()""",
    "DROP TRIGGER IF EXISTS procedura_actor ON workflow_transitions",
    """CREATE TRIGGER procedura_actor BEFORE INSERT ON workflow_transitions
       FOR EACH ROW EXECUTE FUNCTION procedura_actor()""",
    "DROP TRIGGER IF EXISTS procedura_runnable ON workflows",
    """CREATE TRIGGER procedura_runnable BEFORE INSERT OR UPDATE ON workflows
       FOR EACH ROW EXECUTE FUNCTION procedura_runnable()""",
    "REVOKE ALL ON FUNCTION procedura_audit_version() FROM PUBLIC",
    "REVOKE ALL ON FUNCTION procedura_audit_delete() FROM PUBLIC",
)


def add_member(engine: Engine, user: str, password: str | None, roles: Iterable[TeamRole]) -> None:
    """Make *user* a member of the team with *roles* (as an admin of the team). A new user is
    created with *password*; an existing one keeps theirs (unless *password* is given) and
    gains the roles.

    Raises:
        StoreError: not allowed, or *user* is not a valid name.
    """
    from sqlalchemy.exc import DBAPIError

    if not user or len(user) > 63 or not all(c.isalnum() or c in "_.-@" for c in user):
        raise StoreError(f"{user!r} is not a user name (letters, digits and _ . - @)")
    try:
        with engine.begin() as conn:
            database = str(conn.exec_driver_sql("SELECT current_database()").scalar_one())
            name = _quote(conn, user)
            exists = conn.execute(text("SELECT 1 FROM pg_roles WHERE rolname = :n"), {"n": user})
            if exists.first() is None:
                if password is None:
                    raise StoreError(f"{user} is a new user: give a password")
                conn.exec_driver_sql(f"CREATE ROLE {name} LOGIN PASSWORD {_literal(password)}")
            elif password is not None:
                conn.exec_driver_sql(f"ALTER ROLE {name} PASSWORD {_literal(password)}")
            for role in roles:
                conn.exec_driver_sql(f"GRANT {_quote(conn, group_role(database, role))} TO {name}")
    except DBAPIError as exc:
        raise StoreError(f"cannot add {user} to the team: {_first_line(exc.orig)}") from None


@dataclass(frozen=True)
class Membership:
    """Who this connection is in the team, and what they may do."""

    user: str
    database: str
    roles: frozenset[TeamRole]
    owner: bool

    def may(self, role: TeamRole) -> bool:
        """Whether the user holds *role* (directly, through a role that includes it, or as
        the database's owner)."""
        return self.owner or role in self.roles or TeamRole.ADMIN in self.roles


def membership(engine: Engine) -> Membership:
    """The connected user's roles in the team.

    Raises:
        StoreError: the server cannot be reached or refuses the login.
    """
    from sqlalchemy.exc import DBAPIError

    try:
        with engine.connect() as conn:
            row: Any = conn.exec_driver_sql(
                "SELECT session_user, current_database(), "
                "session_user = (SELECT pg_get_userbyid(datdba) FROM pg_database "
                "WHERE datname = current_database())"
            ).one()
            user, database, owner = str(row[0]), str(row[1]), bool(row[2])
            names = {group_role(database, role): role for role in TeamRole}
            held = {
                names[str(name)]
                for (name,) in conn.execute(
                    text(
                        "SELECT rolname FROM pg_roles WHERE rolname = ANY(:names) "
                        "AND pg_has_role(session_user, oid, 'MEMBER')"
                    ),
                    {"names": list(names)},
                )
            }
    except DBAPIError as exc:
        reason = _first_line(exc.orig)
        if "permission denied for database" in reason:
            login = engine.url.username
            raise StoreError(
                f"{login} is no member of the team of {engine.url.database} (the server refused "
                f"the connection): an admin runs procedura team add-member {login} --role …"
            ) from None
        raise StoreError(f"cannot reach the team database: {reason}") from None
    return Membership(user=user, database=database, roles=frozenset(held), owner=owner)


def _first_line(error: BaseException | None) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
