"""The search index repairs itself: what a process saved but did not get to index (it was
killed in between, or the index refused) is marked in the database with the change, and the
next process that writes finishes it; ``procedura doctor`` compares the index with the
database whole and puts it right. Judged by search, as a user finds workflows.
"""

from __future__ import annotations

import json

import pytest
from conftest import EXAMPLES, Cli
from fakes.openai_server import FakeOpenAIServer

from desktop_app.app import open_services
from desktop_app.core.models.workflow import WorkflowStatus
from desktop_app.core.views import IndexedWorkflow
from desktop_app.settings import load_settings

pytestmark = pytest.mark.slow

WORKFLOW = EXAMPLES / "create-contact.workflow.json"
QUERY = "add a new contact to the CRM"


def _found(procedura: Cli) -> list[str]:
    result = procedura("workflows", "search", QUERY, "--json")
    assert result.exit_code == 0, result.stderr
    return [hit["name"] for hit in json.loads(result.stdout)]


def test_a_workflow_saved_while_the_index_refused_is_indexed_by_the_next_writer(
    procedura: Cli, llm: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROCEDURA_EMBEDDING", "openai")  # the fake server's embeddings
    monkeypatch.setenv("PROCEDURA_LLM_API_KEY", "sk-test-key")
    llm.fail_next(400, "embeddings are down", times=None, path="/v1/embeddings")
    saved = procedura("workflows", "import", str(WORKFLOW))
    assert saved.exit_code != 0
    assert "the search index could not be updated" in saved.stderr
    assert "the next start updates it" in saved.stderr
    llm.reset()
    assert procedura("workflows", "show", "Create a contact").exit_code == 0  # it is saved
    assert procedura.index_pending() == 1  # … and marked for the index, which does not have it
    assert "1 change(s) not indexed yet" in procedura("info").stdout
    with open_services(load_settings(), write=False) as services:
        assert services.workflows.index.entries().workflows == {}

    # The next command that writes (search is one: the index is written by one process at
    # a time) finishes the indexing first.
    assert _found(procedura) == ["Create a contact"]
    assert procedura.index_pending() == 0


def test_a_saved_and_indexed_workflow_leaves_no_mark(procedura: Cli) -> None:
    assert procedura("workflows", "import", str(WORKFLOW)).exit_code == 0
    assert procedura("workflows", "approve", "Create a contact").exit_code == 0
    assert procedura.index_pending() == 0
    assert _found(procedura) == ["Create a contact"]


def test_doctor_finds_and_fixes_what_the_index_lacks_or_holds_wrongly(procedura: Cli) -> None:
    assert procedura("workflows", "import", str(WORKFLOW)).exit_code == 0
    with open_services(load_settings(), write=True) as services:
        workflow_id = services.workflows.list()[0].id
        index = services.workflows.index
        index.remove_workflow(workflow_id)  # lost behind the library's back
        ghost = services.workflows.get(workflow_id).workflow.model_copy(
            update={"id": "ghost0123", "name": "A workflow deleted long ago"}
        )
        index.upsert_workflows([IndexedWorkflow.of(ghost, WorkflowStatus.APPROVED)])
    assert _found(procedura) == []  # the stored workflow is not found (the ghost is no match)

    check = procedura("doctor", "--check")
    assert check.exit_code == 1
    assert check.stdout.splitlines()[0] == "search index: differs from the database"
    assert f"1 workflow(s) missing: {workflow_id[:8]}" in check.stdout
    assert "1 entr(y/ies) of workflows no longer stored: ghost012" in check.stdout

    fixed = procedura("doctor")
    assert fixed.exit_code == 0, fixed.stderr
    assert fixed.stdout.splitlines()[0] == "search index: fixed"
    again = procedura("doctor", "--check", "--json")
    assert again.exit_code == 0 and json.loads(again.stdout)["consistent"] is True
    assert _found(procedura) == ["Create a contact"]
