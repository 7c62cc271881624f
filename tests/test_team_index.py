"""A team's library searched from every machine: PostgreSQL for the workflows and their words,
a Chroma server (behind a token-checking proxy) for their meaning, both started by the tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from chroma_server import ProxiedChroma, chroma_behind_proxy
from factories import full_workflow
from postgres_server import PostgresServer

from desktop_app.adapters.sql.database import open_database
from desktop_app.adapters.sql.team import TeamRole, add_member
from desktop_app.app import open_services
from desktop_app.settings import load_settings

pytestmark = pytest.mark.slow

TOKEN = "team-index-token_5b1e"


@pytest.fixture(scope="module")
def chroma(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxiedChroma]:
    with chroma_behind_proxy(tmp_path_factory.mktemp("team-chroma"), TOKEN) as servers:
        yield servers


def test_a_workflow_saved_on_one_machine_is_found_on_another(
    postgres: PostgresServer, chroma: ProxiedChroma, procedura, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    database = postgres.new_database()
    owner = postgres.url(database)
    done = procedura("team", "init", owner, "--index", chroma.url, "--password-stdin",
                     input=f"{postgres.password}\n{TOKEN}\n")  # fmt: skip
    assert done.exit_code == 0, done.output
    engine = open_database(owner)
    add_member(engine, "ann", "ann-pw", [TeamRole.ANALYST])
    add_member(engine, "rita", "rita-pw", [TeamRole.RUNNER])
    engine.dispose()

    def machine(user: str):  # type: ignore[no-untyped-def]
        return open_services(
            load_settings(
                home=tmp_path / user,
                team_database=f"postgresql://{user}@127.0.0.1:{postgres.port}/{database}",
                team_password=f"{user}-pw",
                team_index=chroma.url,
                team_index_token=TOKEN,
            ),
            write=True,
        )

    workflow = full_workflow().model_copy(
        update={"name": "Reimburse travel costs", "description": "File an expense claim"}
    )
    with machine("ann") as ann:
        saved = ann.workflows.save(workflow, actor="ann").version
    with machine("rita") as rita:
        by_meaning = rita.workflows.search("get my money back for a business trip", limit=3)
        assert by_meaning and by_meaning[0].workflow.id == saved.workflow_id
        by_words = rita.workflows.search("reimburse travel", limit=3)
        assert by_words[0].workflow.id == saved.workflow_id
        assert rita.workflows.check_index(fix=False).consistent


def test_a_wrong_index_token_is_refused_at_join_in_one_line(
    postgres: PostgresServer, chroma: ProxiedChroma, procedura
) -> None:  # type: ignore[no-untyped-def]
    database = postgres.new_database()
    assert procedura("team", "init", postgres.url(database)).exit_code == 0
    engine = open_database(postgres.url(database))
    add_member(engine, "bob", "bob-pw", [TeamRole.ANALYST])
    engine.dispose()
    url = f"postgresql://bob@127.0.0.1:{postgres.port}/{database}"
    done = procedura("team", "join", url, "--index", chroma.url, "--password-stdin",
                     input="bob-pw\nnot-the-token\n")  # fmt: skip
    assert done.exit_code == 1
    assert done.output.count("\n") == 1
    assert "refused the token" in done.output and "not-the-token" not in done.output
    assert not load_settings().team  # nothing half-done: still personal mode
