"""Run by intent from the command line: a sentence that does not give the template's values is
refused before anything runs (no browser is needed to see it)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import REPO, Cli

DATA = REPO / "tests" / "data"
REFUSED = (
    'error: the sentence gives no value for {names} (say it like: "Create a contact for … at …")\n'
)


@pytest.fixture
def contacts(procedura: Cli) -> str:
    """The workflow induced from the create-contact recording, approved; its id."""
    path = DATA / "create-contact.trajectory.json"
    assert procedura("trajectories", "import", str(path)).exit_code == 0
    induced = procedura("induce", json.loads(path.read_text())["id"][:8])
    assert induced.exit_code == 0, induced.stderr
    assert procedura("workflows", "approve", "Create a contact").exit_code == 0
    listed = json.loads(procedura("workflows", "list", "--json").stdout)
    return str(listed[0]["id"])


def _run(procedura: Cli, *args: str) -> Any:
    return procedura("run", *args, "--yes", "--non-interactive", "--headless", "--no-llm")


def test_a_sentence_that_does_not_give_the_templates_values_is_refused_before_anything_runs(
    procedura: Cli, contacts: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fakes.openai_server import FakeOpenAIServer

    result = _run(procedura, contacts[:8], "--intent", "Please add Carol King from Hooli")
    assert result.exit_code == 2
    assert result.stderr == REFUSED.format(names="full_name, company")  # all it says
    # what -p gives is not asked of the sentence
    partly = _run(procedura, contacts[:8], "--intent", "Add Carol King", "-p", "company=Hooli")
    assert partly.exit_code == 2
    assert partly.stderr == REFUSED.format(names="full_name")
    # an LLM that finds no value in it changes nothing
    with FakeOpenAIServer() as server:
        server.default_chat = lambda body: json.dumps({"values": []})
        monkeypatch.setenv("PROCEDURA_LLM_BASE_URL", server.base_url)
        asked = procedura(
            "run", contacts[:8], "--intent", "Do the usual contact thing", "--yes",
            "--non-interactive", "--headless",
        )  # fmt: skip
        assert server.requests_to("/v1/chat/completions")
    assert asked.exit_code == 2
    assert asked.stderr.endswith(REFUSED.format(names="full_name, company"))
    assert json.loads(procedura("runs", "list", "--json").stdout) == []  # nothing ran


def test_a_sentence_that_fits_whatever_its_punctuation_or_with_p_goes_on_to_run(
    procedura: Cli, contacts: str
) -> None:
    # --non-interactive without --yes stops at the question: after the values were bound
    fits = procedura(
        "run", "--intent", "create a contact for  “Seán O'Brien”, at initech.",
        "--non-interactive", "--no-llm",
    )  # fmt: skip
    assert fits.exit_code == 2 and fits.stderr.endswith("needs --yes under --non-interactive\n")
    assert "Found 'Create a contact' (by template)" in fits.stderr
    assert "full_name=Seán O'Brien, email=jane@example.test (default), company=initech" in (
        fits.stderr
    )
    given = procedura(
        "run", contacts[:8], "--intent", "Add Carol King", "--non-interactive", "--no-llm",
        "-p", "company=Hooli", "-p", "full_name=Carol King",
    )  # fmt: skip
    assert given.exit_code == 2 and given.stderr.endswith("needs --yes under --non-interactive\n")
    assert "full_name=Carol King, email=jane@example.test (default), company=Hooli" in (
        given.stderr
    )
