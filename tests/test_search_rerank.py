"""``procedura workflows search --rerank``: the configured LLM (the fake one, a real local server
speaking the OpenAI API) reorders the search's best matches; when it fails or answers nonsense,
the search's own order stands and the command says so."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES, Cli
from fakes.openai_server import FakeOpenAIServer

WORKFLOW = EXAMPLES / "create-contact.workflow.json"
QUERY = "add a new person to the CRM"
#: name, description; the example workflow (Create a contact) is the fourth.
OTHERS = (
    ("Delete a contact", "Remove a contact and its history from the CRM."),
    ("Export contacts", "Download every contact of the CRM as a spreadsheet."),
    ("Log a call", "Note a phone call with a contact in the CRM."),
)


@pytest.fixture
def library(procedura: Cli, tmp_path: Path) -> None:
    """Four CRM workflows: the example and three others on the same records."""
    document = json.loads(WORKFLOW.read_text(encoding="utf-8"))
    assert procedura("workflows", "import", str(WORKFLOW)).exit_code == 0
    for n, (name, description) in enumerate(OTHERS, 1):
        path = tmp_path / f"other-{n}.json"
        other = {**document, "id": f"{n:032x}", "name": name, "description": description}
        path.write_text(json.dumps(other), encoding="utf-8")
        imported = procedura("workflows", "import", str(path))
        assert imported.exit_code == 0, imported.stderr


def _names(procedura: Cli, *options: str) -> tuple[list[str], str]:
    found = procedura("workflows", "search", QUERY, "-n", "4", "--json", *options)
    assert found.exit_code == 0, found.stderr
    return [m["name"] for m in json.loads(found.stdout)], found.stderr


def _listing(body: dict[str, Any]) -> dict[str, int]:
    """The candidates the LLM was shown: name -> number."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return {name: int(n) for n, name in re.findall(r"^(\d+)\. ([^:\n]+):", user, re.M)}


def test_the_llm_reorders_the_matches_and_sees_only_names_and_descriptions(
    procedura: Cli, library: None, llm: FakeOpenAIServer
) -> None:
    plain, note = _names(procedura)
    assert note == ""  # not asked: no LLM call, no note
    assert not llm.requests_to("/v1/chat/completions")
    wanted = ["Log a call", "Export contacts"]  # then the others, in the search's order

    def answer(body: dict[str, Any]) -> str:
        shown = _listing(body)
        return json.dumps({"order": [shown[name] for name in wanted]})

    llm.default_chat = answer
    reranked, note = _names(procedura, "--rerank")
    assert reranked == wanted + [n for n in plain if n not in wanted]
    assert note == "reordered by the LLM\n"
    (request,) = llm.requests_to("/v1/chat/completions")
    prompt = json.dumps(request.json["messages"])
    assert set(_listing(request.json)) == set(plain)
    assert QUERY in prompt and "Download every contact of the CRM" in prompt
    for leak in ("Acme", "full_name", "crm.example", "http"):  # values, inputs, steps, sites
        assert leak not in prompt
    table = procedura("workflows", "search", QUERY, "-n", "2", "--rerank")
    rows = [line for line in table.stdout.splitlines()[1:] if line.strip()]
    assert len(rows) == 2
    assert "Log a call" in rows[0] and "Export contacts" in rows[1]


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (json.dumps({"order": [9, 1]}), "the LLM answered a number outside 1-4"),
        (json.dumps({"order": [2, 2]}), "the LLM gave a match twice"),
        (json.dumps({"order": []}), "the LLM ranked none of the matches"),
    ],
)
def test_a_malformed_answer_leaves_the_search_order(
    procedura: Cli, library: None, llm: FakeOpenAIServer, reply: str, problem: str
) -> None:
    plain, _ = _names(procedura)
    llm.default_chat = reply
    kept, note = _names(procedura, "--rerank")
    assert kept == plain
    assert note == f"not reordered by the LLM ({problem}): the search's own order\n"


def test_an_llm_error_leaves_the_search_order(
    procedura: Cli, library: None, llm: FakeOpenAIServer
) -> None:
    plain, _ = _names(procedura)
    llm.fail_next(500, "the model is down", path="/v1/chat/completions", times=None)
    kept, note = _names(procedura, "--rerank")
    assert kept == plain
    assert note.startswith("not reordered by the LLM (")
    assert note.endswith("): the search's own order\n")
    assert llm.requests_to("/v1/chat/completions")


def test_rerank_needs_an_llm(procedura: Cli, library: None) -> None:
    refused = procedura("workflows", "search", QUERY, "--rerank")
    assert refused.exit_code != 0
    assert "--rerank needs an LLM" in refused.stderr
