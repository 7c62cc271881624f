"""``procedura team``: set up a team's database, join it or leave it, add members, and see
where this machine stands (docs/team.md)."""

from __future__ import annotations

import sys

import click

from desktop_app.cli.common import emit_json, fail, stdin_is_terminal
from desktop_app.core.errors import StoreError

__all__ = ["team"]

_ROLES = ("recorder", "analyst", "approver", "runner", "admin")


def _token(ctx: click.Context, from_stdin: bool) -> str | None:
    """The index's token: the environment's, else the next line of standard input (after the
    password, with ``--password-stdin``), else asked for at a terminal, else None."""
    settings = ctx.obj["settings"]()
    if settings.team_index_token is not None:
        return str(settings.team_index_token.get_secret_value())
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n") or None
    if stdin_is_terminal():
        return str(click.prompt("The index's token", hide_input=True)) or None
    return None


def _password(from_stdin: bool, what: str) -> str | None:
    """A password read from standard input's first line, asked for at a terminal, or None."""
    if from_stdin:
        line = sys.stdin.readline().rstrip("\r\n")
        if not line:
            fail(f"no {what} on standard input", 2)
        return line
    if stdin_is_terminal():
        return str(click.prompt(what.capitalize(), hide_input=True))
    return None


@click.group("team")
def team() -> None:
    """Work as a team: a shared library on PostgreSQL and a Chroma server."""


@team.command("init")
@click.argument("url")
@click.option("--index", "index", metavar="URL", help="The team's Chroma server.")
@click.option(
    "--password-stdin",
    is_flag=True,
    help="Read the owner's password from stdin (and the index's token from the next line).",
)
@click.pass_context
def init_command(ctx: click.Context, url: str, index: str | None, password_stdin: bool) -> None:
    """Make the PostgreSQL database URL names a team's (as its owner).

    Creates the schema, the team's roles (<database>_recorder, _analyst, _approver, _runner,
    _admin), their grants, the checks of who may change a version's status, and the audit
    log. Running it again upgrades the schema and changes nothing else.
    """
    from sqlalchemy import make_url

    from desktop_app.team import init_team

    password = _password(password_stdin, "the owner's password")
    if password is not None:
        url = make_url(url).set(password=password).render_as_string(hide_password=False)
    token = _token(ctx, password_stdin) if index is not None else None
    member = init_team(url, index=index, token=token)
    click.echo(f"{member.database} is a team's database; {member.user} owns it.")
    click.echo("Next: procedura team add-member NAME --role analyst (for each member),")
    click.echo("then each member runs: procedura team join postgresql://NAME@host/database")


@team.command("join")
@click.argument("url")
@click.option("--index", "index", metavar="URL", help="The team's Chroma server.")
@click.option(
    "--password-stdin",
    is_flag=True,
    help="Read the password from stdin (and the index's token from the next line).",
)
@click.pass_context
def join_command(ctx: click.Context, url: str, index: str | None, password_stdin: bool) -> None:
    """Put this machine in team mode as the user URL names.

    The password is checked against the server, then kept in the OS keyring (never in a file);
    without a keyring, set PROCEDURA_TEAM_PASSWORD. This machine's personal data stays where it
    is; `procedura team leave` goes back to it.
    """
    from desktop_app.gui.settings_io import save_settings
    from desktop_app.team import join_team, keep_index_token, keep_password

    settings = ctx.obj["settings"]()
    password = _password(password_stdin, "password")
    if password is None and settings.team_password is not None:
        password = settings.team_password.get_secret_value()
    token = _token(ctx, password_stdin) if index is not None else None
    values, member = join_team(url, password, index=index, token=token)
    try:
        if password:
            keep_password(values["team_database"], password)
    except StoreError:
        if settings.team_password is None:
            raise
    try:
        if index is not None and token:
            keep_index_token(index, token)
    except StoreError:
        if settings.team_index_token is None:
            raise
    save_settings(settings, values)
    roles = ", ".join(sorted(r.value for r in member.roles)) or "owner"
    click.echo(f"joined {member.database} as {member.user} ({roles})")


@team.command("leave")
@click.pass_context
def leave_command(ctx: click.Context) -> None:
    """Go back to personal mode and forget the team's credentials on this machine."""
    from desktop_app.gui.settings_io import save_settings
    from desktop_app.team import leave_team

    settings = ctx.obj["settings"]()
    if not settings.team:
        click.echo("this machine is in personal mode already")
        return
    save_settings(settings, leave_team(settings))
    click.echo(f"left {settings.team_database}; personal mode (data in {settings.home})")


@team.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def status_command(ctx: click.Context, as_json: bool) -> None:
    """Personal or team mode; in team mode, who this machine is there and what it may do.

    Exit status 1 when the team's database cannot be reached or refuses the login.
    """
    from desktop_app.adapters.sql.team import ROLE_RIGHTS
    from desktop_app.team import team_status

    status = team_status(ctx.obj["settings"]())
    if as_json:
        emit_json(status.as_dict())
    elif not status.team:
        click.echo(f"personal mode: {status.database}")
    else:
        click.echo(f"team mode: {status.database}")
        click.echo(f"index:     {status.index or '(none: set one, the team shares its index)'}")
        if status.member is not None:
            member = status.member
            click.echo(f"user:      {member.user}{' (owner)' if member.owner else ''}")
            for role in sorted(member.roles):
                click.echo(f"  {role.value}: {ROLE_RIGHTS[role]}")
            if not member.roles and not member.owner:
                click.echo("  no role: ask an admin to add you")
        if status.problem is not None:
            click.echo(f"problem:   {status.problem}", err=True)
    if status.problem is not None:
        sys.exit(1)


@team.command("add-member")
@click.argument("user")
@click.option(
    "--role",
    "roles",
    type=click.Choice(_ROLES),
    multiple=True,
    required=True,
    help="A role to give (repeatable).",
)
@click.option("--password-stdin", is_flag=True, help="Read the new user's password from stdin.")
@click.pass_context
def add_member_command(
    ctx: click.Context, user: str, roles: tuple[str, ...], password_stdin: bool
) -> None:
    """Add USER to the team with the given roles (an admin's command).

    A new user needs a password (asked for, or from stdin); an existing one keeps theirs.
    """
    from desktop_app.adapters.sql.team import TeamRole
    from desktop_app.team import add_team_member

    settings = ctx.obj["settings"]()
    if not settings.team:
        fail("this machine is not in team mode: procedura team join URL first", 2)
    password = _password(password_stdin, f"{user}'s password")
    add_team_member(settings, user, password, [TeamRole(r) for r in roles])
    click.echo(f"{user}: {', '.join(roles)}")
