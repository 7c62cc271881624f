"""Team mode on a real PostgreSQL server: members, roles the server enforces, two analysts
editing at once, the audit log, shared media."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from factories import full_workflow
from postgres_server import PostgresServer

from desktop_app.app import Services, open_services
from desktop_app.core.errors import ConflictError, NotAllowedError
from desktop_app.core.models.workflow import WorkflowStatus
from desktop_app.ops.changes import Origin
from desktop_app.ops.edit import save_draft
from desktop_app.settings import Settings, load_settings

pytestmark = pytest.mark.slow

MEMBERS = {"ann": "analyst", "bob": "analyst", "amy": "approver", "rita": "runner"}


@pytest.fixture
def team_db(postgres: PostgresServer, procedura) -> str:  # type: ignore[no-untyped-def]
    """A team's database with four members (set up through the command line)."""
    database = postgres.new_database()
    done = procedura("team", "init", postgres.url(database))
    assert done.exit_code == 0, done.output
    admin = postgres.url(database)
    from desktop_app.adapters.sql.database import open_database
    from desktop_app.adapters.sql.team import TeamRole, add_member

    engine = open_database(admin)
    for user, role in MEMBERS.items():
        add_member(engine, user, f"{user}-pw", [TeamRole(role)])
    engine.dispose()
    return database


def member(postgres: PostgresServer, database: str, user: str, tmp_path: Path) -> Settings:
    """The settings of *user*'s machine (a data folder of its own)."""
    return load_settings(
        home=tmp_path / f"machine-{user}",
        team_database=f"postgresql://{user}@127.0.0.1:{postgres.port}/{database}",
        team_password=f"{user}-pw",
    )


@pytest.fixture
def machines(
    postgres: PostgresServer, team_db: str, tmp_path: Path
) -> Iterator[dict[str, Services]]:
    opened: dict[str, Services] = {}
    stack = []
    for user in MEMBERS:
        context = open_services(member(postgres, team_db, user, tmp_path), write=True)
        opened[user] = context.__enter__()
        stack.append(context)
    yield opened
    for context in reversed(stack):
        context.__exit__(None, None, None)


def test_two_analysts_editing_at_once_never_overwrite_each_other(
    machines: dict[str, Services],
) -> None:
    ann, bob = machines["ann"].workflows, machines["bob"].workflows
    first = ann.save(full_workflow(), actor="ann").version
    wid = first.workflow_id
    # Both open version 1 in their editors...
    ann_draft = first.workflow.model_copy(update={"description": "Ann's wording"})
    bob_draft = first.workflow.model_copy(update={"description": "Bob's wording"})
    saved = save_draft(
        ann, ann_draft, actor="ann", origin=Origin.WINDOW, parent_version=1, expected_latest=1
    )
    assert saved.version.version == 2
    # ...and Bob's save, begun before Ann's version 2, is refused: nothing of his is stored.
    with pytest.raises(ConflictError, match=r"ann saved version 2 .* nothing was saved"):
        save_draft(
            bob, bob_draft, actor="bob", origin=Origin.WINDOW, parent_version=1, expected_latest=1
        )
    assert [v.version for v in bob.versions(wid)] == [1, 2]
    assert bob.get(wid).workflow.description == "Ann's wording"


def test_two_saves_at_the_same_moment_one_wins_one_is_told(
    machines: dict[str, Services],
) -> None:
    first = machines["ann"].workflows.save(full_workflow(), actor="ann").version
    barrier = threading.Barrier(2)
    outcomes: dict[str, object] = {}

    def edit(user: str) -> None:
        library = machines[user].workflows
        draft = first.workflow.model_copy(update={"description": f"{user} was here"})
        barrier.wait()
        try:
            outcomes[user] = library.save(draft, actor=user, expected_latest=1).version.version
        except ConflictError as exc:
            outcomes[user] = exc

    threads = [threading.Thread(target=edit, args=(u,)) for u in ("ann", "bob")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(type(o).__name__ for o in outcomes.values()) == ["ConflictError", "int"]
    versions = machines["amy"].workflows.versions(first.workflow_id)
    assert [v.version for v in versions] == [1, 2]


def test_a_runner_cannot_approve_and_the_server_says_so(
    machines: dict[str, Services], postgres: PostgresServer, team_db: str
) -> None:
    ann, rita = machines["ann"].workflows, machines["rita"].workflows
    wid = ann.save(full_workflow(), actor="ann").version.workflow_id
    ann.submit(wid, actor="ann")
    with pytest.raises(NotAllowedError, match="only a member with the approver role"):
        rita.approve(wid, actor="rita")
    # Not through the app either: the runner's own login, straight to the tables.
    with psycopg.connect(
        host="127.0.0.1", port=postgres.port, dbname=team_db, user="rita", password="rita-pw"
    ) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE workflow_versions SET status = 'approved'")
        conn.rollback()
        conn.execute("UPDATE workflows SET approved_version = 1, status = 'approved'")
        conn.commit()
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("DELETE FROM audit_log")
        conn.rollback()
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("DELETE FROM trajectories")
    summary = machines["amy"].workflows.summary(wid)
    assert summary.status is WorkflowStatus.IN_REVIEW and summary.approved_version is None
    with pytest.raises(NotAllowedError):  # an analyst submits, but cannot approve
        ann.approve(wid, actor="ann")
    approved = machines["amy"].workflows.approve(wid, actor="amy")
    assert approved.status is WorkflowStatus.APPROVED
    assert rita.runnable(wid).version == 1


def test_every_save_and_status_change_is_audited_with_the_login(
    machines: dict[str, Services], postgres: PostgresServer, team_db: str
) -> None:
    ann = machines["ann"].workflows
    # The client claims to be someone else: the server records the login.
    wid = ann.save(full_workflow(), actor="mallory").version.workflow_id
    ann.submit(wid, actor="mallory")
    machines["amy"].workflows.approve(wid, actor="amy")
    with postgres.connect(team_db) as conn:
        rows = conn.execute(
            "SELECT who, action, version, from_status, to_status FROM audit_log ORDER BY id"
        ).fetchall()
    assert rows == [
        ("ann", "save", 1, None, "draft"),
        ("ann", "status", 1, "draft", "in_review"),
        ("amy", "status", 1, "in_review", "approved"),
    ]
    version = machines["bob"].workflows.get(wid, 1)
    assert version.created_by == "ann"
    assert [t.actor for t in version.transitions] == ["ann", "ann", "amy"]


def test_media_saved_on_one_machine_is_read_on_another(machines: dict[str, Services]) -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(200))
    ref = machines["rita"].media.put(png, "png")
    other = machines["bob"].media
    assert other.exists(ref)
    assert other.get(ref) == png
    assert other.path(ref).read_bytes() == png  # cached on Bob's machine, for the screens
    assert machines["amy"].media.count() == (1, len(png))


def test_join_status_and_leave_from_the_command_line(
    postgres: PostgresServer, team_db: str, procedura, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    from fakes.keyring_backend import memory_keyring

    url = f"postgresql://bob@127.0.0.1:{postgres.port}/{team_db}"
    wrong = procedura("team", "join", url, "--password-stdin", input="nope\n")
    assert wrong.exit_code == 1
    assert wrong.output.count("\n") == 1 and "password authentication failed" in wrong.output
    with memory_keyring() as keyring:
        joined = procedura("team", "join", url, "--password-stdin", input="bob-pw\n")
        assert joined.exit_code == 0, joined.output
        assert "joined" in joined.output and "analyst" in joined.output
        assert "bob-pw" in keyring.passwords.values()
        settings_file = Path(load_settings().home) / "settings.toml"
        assert "bob-pw" not in settings_file.read_text()
        status = procedura("team", "status", "--json")
        assert status.exit_code == 0, status.output
        data = json.loads(status.output)
        assert data["mode"] == "team" and data["user"] == "bob"
        assert data["roles"] == ["analyst", "recorder"]
        left = procedura("team", "leave")
        assert left.exit_code == 0 and "bob-pw" not in keyring.passwords.values()
    personal = json.loads(procedura("team", "status", "--json").output)
    assert personal["mode"] == "personal"


def test_a_member_of_no_role_is_refused_at_join(
    postgres: PostgresServer, team_db: str, procedura
) -> None:  # type: ignore[no-untyped-def]
    eve = f"eve_{team_db}"  # users are the server's, not the database's
    with postgres.connect(team_db) as conn:
        conn.execute(f"CREATE ROLE {eve} LOGIN PASSWORD 'eve-pw'")
    url = f"postgresql://{eve}@127.0.0.1:{postgres.port}/{team_db}"
    done = procedura("team", "join", url, "--password-stdin", input="eve-pw\n")
    assert done.exit_code == 1
    assert "no member of the team" in done.output
