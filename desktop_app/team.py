"""Team mode: setting up a team's database, joining it, and where this machine stands.

Personal mode (the default) needs nothing: one SQLite file and an embedded index in the data
folder. Team mode is two settings, ``team_database`` (a PostgreSQL URL without its password)
and ``team_index`` (the team's Chroma server), with the password and the index token in the OS
keyring (or ``PROCEDURA_TEAM_PASSWORD`` / ``PROCEDURA_TEAM_INDEX_TOKEN`` for a runner with no
keyring). The command line's ``procedura team`` and the Settings screen call these.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import make_url
from sqlalchemy.exc import ArgumentError

from desktop_app.adapters.sql.database import (
    current_revision,
    migrate,
    open_database,
    redacted,
)
from desktop_app.adapters.sql.team import (
    Membership,
    TeamRole,
    add_member,
    membership,
    secure,
)
from desktop_app.app import team_index_server, team_url
from desktop_app.core.errors import StoreError
from desktop_app.settings import Settings

__all__ = [
    "TeamStatus",
    "add_team_member",
    "init_team",
    "join_team",
    "keep_index_token",
    "keep_password",
    "leave_team",
    "team_status",
]


def _split(url: str) -> tuple[str, str | None]:
    """*url* without its password, and the password (None when it holds none)."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise StoreError(f"not a database URL: {redacted(url)}") from None
    if parsed.get_backend_name() != "postgresql":
        raise StoreError(f"a team's database is PostgreSQL (postgresql://user@host/db), not {url}")
    if not parsed.username:
        raise StoreError("the URL names no user: postgresql://USER@host:5432/database")
    bare = parsed.set(password=None).render_as_string(hide_password=False)
    return bare, None if parsed.password is None else str(parsed.password)


def _with_password(url: str, password: str) -> str:
    return make_url(url).set(password=password).render_as_string(hide_password=False)


def init_team(url: str, *, index: str | None = None, token: str | None = None) -> Membership:
    """Make the database *url* names (with its owner's password) a team's: the schema, the
    roles, the grants, the triggers and the audit log; and, with *index* (the team's Chroma
    server, *token* its proxy's), the team's database there. Running it again upgrades the
    schema and changes nothing else.

    Raises:
        StoreError: unreachable, refused, or the user may not create roles.
    """
    if index is not None:
        from desktop_app.adapters.search.server import ensure_database

        ensure_database(team_index_server(index, token, url))
    engine = open_database(url)
    try:
        migrate(engine)
        secure(engine)
        return membership(engine)
    finally:
        engine.dispose()


def join_team(
    url: str,
    password: str | None = None,
    *,
    index: str | None = None,
    token: str | None = None,
) -> tuple[dict[str, Any], Membership]:
    """Check that the user *url* names may log in and belongs to the team, and that the team's
    index (*index*, with *token*) answers; return the settings that put this machine in team
    mode, with the membership found. The password and the token are the caller's to keep
    (:func:`keep_password`, :func:`keep_index_token`).

    Raises:
        StoreError: unreachable, the login or the token is refused, or the user is no member
            of the team.
    """
    bare, inline = _split(url)
    secret = password if password is not None else inline
    if secret is None:
        raise StoreError("give the password (it is kept in the OS keyring, never in a file)")
    engine = open_database(_with_password(bare, secret))
    try:
        member = membership(engine)
        if current_revision(engine) is None:
            raise StoreError(
                f"{redacted(bare)} is not a team's database yet: its owner runs procedura team init"
            )
    finally:
        engine.dispose()
    if index is not None:
        from desktop_app.adapters.search.server import probe

        server = team_index_server(index, token, bare)
        problem = probe(server)
        if problem is not None:
            raise StoreError(f"the team's index at {server.url}: {problem}")
    if not member.roles and not member.owner:
        raise StoreError(
            f"{member.user} may log in but is no member of the team: an admin runs "
            f"procedura team add-member {member.user} --role …"
        )
    return {"team_database": bare, "team_index": index}, member


def keep_password(url: str, password: str) -> None:
    """Keep the team password in the OS keyring.

    Raises:
        StoreError: no usable keyring here (the message says which variable to set instead).
    """
    from desktop_app.adapters.secrets import set_team_secret

    set_team_secret("password", _split(url)[0], password)


def keep_index_token(index: str, token: str) -> None:
    """Keep the team index's token in the OS keyring."""
    from desktop_app.adapters.secrets import set_team_secret

    set_team_secret("token", index, token)


def leave_team(settings: Settings) -> dict[str, Any]:
    """Forget the team's credentials on this machine; the settings that bring back personal
    mode (whose data folder was left as it was)."""
    from desktop_app.adapters.secrets import delete_team_secret

    if settings.team_database is not None:
        delete_team_secret("password", settings.team_database)
    if settings.team_index is not None:
        delete_team_secret("token", settings.team_index)
    return {"team_database": None, "team_index": None}


def add_team_member(
    settings: Settings, user: str, password: str | None, roles: Iterable[TeamRole]
) -> None:
    """Add *user* to the team with *roles* (this machine's user must be an admin)."""
    engine = open_database(team_url(settings))
    try:
        add_member(engine, user, password, roles)
    finally:
        engine.dispose()


@dataclass(frozen=True)
class TeamStatus:
    """Where this machine stands: personal or team mode, and in team mode who it is there."""

    team: bool
    database: str
    index: str | None
    member: Membership | None = None
    schema: str | None = None
    problem: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """For ``--json``."""
        member = self.member
        return {
            "mode": "team" if self.team else "personal",
            "database": self.database,
            "index": self.index,
            "user": member.user if member else None,
            "roles": sorted(r.value for r in member.roles) if member else [],
            "owner": member.owner if member else False,
            "schema": self.schema,
            "problem": self.problem,
        }


def team_status(settings: Settings) -> TeamStatus:
    """This machine's mode and, in team mode, the login's roles (a problem reaching the
    server is reported, not raised)."""
    if not settings.team:
        return TeamStatus(team=False, database=str(settings.database_path), index=None)
    assert settings.team_database is not None
    base = TeamStatus(team=True, database=settings.team_database, index=settings.team_index)
    try:
        engine = open_database(team_url(settings))
    except StoreError as exc:
        return TeamStatus(**{**base.__dict__, "problem": str(exc)})
    try:
        return TeamStatus(
            **{**base.__dict__, "member": membership(engine), "schema": current_revision(engine)}
        )
    except StoreError as exc:
        return TeamStatus(**{**base.__dict__, "problem": str(exc)})
    finally:
        engine.dispose()
