"""The search index on a Chroma server (team mode): real ``chroma run`` behind an nginx that asks
for a bearer token (tests/chroma_server.py), two machines sharing it, and the failures a person
meets (a wrong or missing token, a server that is down) as one-line errors without the token."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from chroma_server import ProxiedChroma, chroma_behind_proxy, free_port, run_chroma
from test_search_index import ALL, CAKE, CONTACT, EXPENSE, FLIGHT, experience, top_ids

from desktop_app.adapters.search import ChromaServer as ExportedChromaServer
from desktop_app.adapters.search.chroma_index import ChromaSearchIndex
from desktop_app.adapters.search.embeddings import MiniLMEmbeddingFunction
from desktop_app.adapters.search.server import ChromaServer, page_title
from desktop_app.core.errors import StoreError
from desktop_app.core.models.workflow import WorkflowStatus

pytestmark = pytest.mark.slow

TOKEN = "procedura-team-token_7f3a9c41"
WRONG = "not-the-team-token_0b2d5e"


@pytest.fixture(scope="session")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxiedChroma]:
    """One chroma + nginx per test process (per xdist worker); each test takes a database."""
    with chroma_behind_proxy(tmp_path_factory.mktemp("chroma-server"), TOKEN) as servers:
        yield servers


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbeddingFunction:
    return MiniLMEmbeddingFunction()


@pytest.fixture
def database(proxied: ProxiedChroma) -> str:
    """A new, empty database on the shared server, so tests do not see each other's entries."""
    return proxied.new_database()


def collections(proxied: ProxiedChroma, database: str) -> list[str]:
    """The collections of *database*, asked of the server directly (with the right token)."""
    reply = httpx.get(
        f"{proxied.url}/api/v2/tenants/default_tenant/databases/{database}/collections",
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=10.0,
    )
    assert reply.status_code == 200, reply.text
    return sorted(c["name"] for c in reply.json())


def failure(call: Any, *args: Any, **kwargs: Any) -> str:
    """The message of the StoreError *call* raises, checked to be one line without a token."""
    with pytest.raises(StoreError) as err:
        call(*args, **kwargs)
    message = str(err.value)
    assert "\n" not in message and "Traceback" not in message, message
    assert TOKEN not in message and WRONG not in message, message
    return message


class OtherModel(MiniLMEmbeddingFunction):
    """MiniLM's vectors under another model's name (a machine configured differently)."""

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "model": "some-other-model"}


# ── the address ───────────────────────────────────────────────────────────────────────────────


def test_a_server_from_its_url_keeps_the_token_out_of_sight() -> None:
    server = ChromaServer.from_url("http://chroma.example:8000", token=TOKEN)
    assert (server.host, server.port, server.ssl) == ("chroma.example", 8000, False)
    assert (server.tenant, server.database) == ("default_tenant", "default_database")
    assert server.url == "http://chroma.example:8000"
    assert server.describe() == "the Chroma server at http://chroma.example:8000"
    assert TOKEN not in repr(server) and TOKEN not in server.url and "token" not in repr(server)
    assert server.client_settings()["chroma_client_auth_credentials"] == TOKEN
    assert ChromaServer.from_wire(server.to_wire()) == server
    assert ExportedChromaServer is ChromaServer

    secure = ChromaServer.from_url("https://chroma.example/", database="team")
    assert (secure.port, secure.ssl, secure.token) == (443, True, None)
    assert secure.describe() == (
        "the Chroma server at https://chroma.example:443 (tenant default_tenant, database team)"
    )
    assert "chroma_client_auth_provider" not in secure.client_settings()
    assert ChromaServer.from_url("http://10.0.0.5").port == 80

    for bad in ("chroma.example:8000", "ftp://chroma.example", "http://h:8000/chroma", "http://"):
        with pytest.raises(ValueError, match="Chroma server address"):
            ChromaServer.from_url(bad)
    with pytest.raises(ValueError) as err:
        ChromaServer.from_url(f"https://team:{TOKEN}@chroma.example")
    assert TOKEN not in str(err.value) and "give the token separately" in str(err.value)
    with pytest.raises(ValueError) as err:
        ChromaServer("chroma.example", 8000, token=f"{TOKEN} with spaces")
    assert TOKEN not in str(err.value)
    with pytest.raises(ValueError, match="port"):
        ChromaServer("chroma.example", 0)
    assert page_title("<html><head><title>401 Authorization\n Required</title>") == (
        "401 Authorization Required"
    )
    assert page_title("<title>413 Request Entity Too Large</title>").endswith(
        "raise its limit (nginx: client_max_body_size 64m)"
    )
    assert page_title("Collection [x] does not exist") == "Collection [x] does not exist"


# ── through the proxy ─────────────────────────────────────────────────────────────────────────


def test_workflows_indexed_through_the_server_are_found(
    proxied: ProxiedChroma, database: str, minilm: MiniLMEmbeddingFunction
) -> None:
    server = proxied.server(database=database)
    with ChromaSearchIndex(server, minilm) as idx:
        assert idx.path is None and idx.server == server
        assert idx.describe() == f"the search index on {server.describe()}"
        idx.upsert_workflows(ALL)
        idx.upsert_experiences(
            [
                experience("e1", "contact", "Save", "New contact", "#save"),
                experience("e2", "expense", "Submit for approval", "New report", "#submit"),
            ]
        )
        assert idx.count() == (5, 2)
        assert top_ids(idx.search_workflows("reserve airline tickets"), 1) == ["flight"]
        assert top_ids(idx.search_workflows("forgot my login"), 1) == ["password"]
        approved = idx.search_workflows("add a person", status=WorkflowStatus.APPROVED, limit=5)
        assert "contact" not in top_ids(approved) and approved
        shared = idx.search_workflows("expense report", domain="app.example.com", limit=5)
        assert set(top_ids(shared)) == {CONTACT.id, EXPENSE.id}
        assert top_ids(idx.search_experiences("save the new contact"), 1) == ["e1"]
        assert top_ids(idx.search_experiences("save", workflow_id="expense")) == ["e2"]
        entries = idx.entries()
        assert entries.workflows[FLIGHT.id] == (1, WorkflowStatus.APPROVED)
        assert entries.experiences == {"e1", "e2"}
        idx.remove_workflow(CONTACT.id)
        assert idx.count() == (4, 1)
        assert CONTACT.id not in top_ids(idx.search_workflows("add a person", limit=5))
    # It went to the server (through the proxy, with the token), not to a directory.
    assert collections(proxied, database) == ["experiences", "workflows"]
    assert f"/databases/{database}/collections" in proxied.access_log.read_text()


def test_two_machines_on_one_server_see_each_others_writes(
    proxied: ProxiedChroma, database: str, minilm: MiniLMEmbeddingFunction
) -> None:
    server = proxied.server(database=database)
    with ChromaSearchIndex(server, minilm) as ann, ChromaSearchIndex(server, minilm) as bob:
        ann.upsert_workflows([FLIGHT])
        assert top_ids(bob.search_workflows("reserve airline tickets"), 1) == ["flight"]
        assert ann.worker_pid != bob.worker_pid  # two workers, two clients
        bob.upsert_workflows([CAKE])
        assert top_ids(ann.search_workflows("chocolate dessert recipe"), 1) == ["cake"]
        assert ann.count() == bob.count() == (2, 0)
        bob.remove_workflow(FLIGHT.id)
        assert top_ids(ann.search_workflows("reserve airline tickets", limit=5)) == ["cake"]
        # Ann rebuilds the index (procedura reindex): the collections are made anew, with new
        # ids; Bob's worker, which held the old ones, goes on with the new.
        ann.clear()
        ann.upsert_workflows([EXPENSE])
        assert top_ids(bob.search_workflows("reimbursement claim")) == ["expense"]
        bob.upsert_workflows([FLIGHT])
        assert ann.count() == (2, 0)


def test_a_machine_with_other_embeddings_is_told_to_reindex(
    proxied: ProxiedChroma, database: str, minilm: MiniLMEmbeddingFunction
) -> None:
    server = proxied.server(database=database)
    with ChromaSearchIndex(server, minilm) as ann:
        ann.upsert_workflows([FLIGHT])
        with ChromaSearchIndex(server, OtherModel()) as bob:
            message = failure(bob.search_workflows, "reserve airline tickets")
            assert message.startswith("the search index was built with local MiniLM")
            assert "run `procedura reindex`" in message
            bob.clear()  # Bob rebuilds it for his model, under Ann's open index
            bob.upsert_workflows([CAKE])
        message = failure(ann.upsert_workflows, [EXPENSE])
        assert message.startswith(f"cannot update the search index on {server.describe()}: ")
        assert "another machine rebuilt it with other embeddings" in message
    with ChromaSearchIndex(server, OtherModel()) as bob:
        assert bob.count() == (1, 0)  # Ann's write after the rebuild went nowhere


# ── failures ──────────────────────────────────────────────────────────────────────────────────


def test_a_wrong_token_is_refused_in_one_line_and_nothing_is_indexed(
    proxied: ProxiedChroma, database: str, minilm: MiniLMEmbeddingFunction
) -> None:
    server = proxied.server(WRONG, database=database)
    with ChromaSearchIndex(server, minilm) as idx:
        message = failure(idx.upsert_workflows, ALL)
        assert message == (
            f"cannot open the search index on {server.describe()}: the server refused the "
            "token (HTTP 401); check it with `procedura team status`"
        )
        assert failure(idx.search_workflows, "reserve airline tickets") == message
        assert idx.worker_pid is not None  # the worker is fine: the server said no
    assert collections(proxied, database) == []
    with ChromaSearchIndex(proxied.server(database=database), minilm) as idx:
        assert idx.count() == (0, 0)
        assert idx.search_workflows("reserve airline tickets") == []
    assert " 401 " in proxied.access_log.read_text()


def test_no_token_for_a_server_that_asks_for_one(
    proxied: ProxiedChroma, minilm: MiniLMEmbeddingFunction
) -> None:
    server = ChromaServer("127.0.0.1", proxied.port)
    with ChromaSearchIndex(server, minilm) as idx:
        assert failure(idx.count).endswith(
            ": the server asks for a token (HTTP 401) and none is set; "
            "check it with `procedura team status`"
        )


def test_a_database_that_does_not_exist_is_named(
    proxied: ProxiedChroma, minilm: MiniLMEmbeddingFunction
) -> None:
    server = proxied.server(database="no_such_database")
    with ChromaSearchIndex(server, minilm) as idx:
        message = failure(idx.count)
        assert message.startswith(f"cannot open the search index on {server.describe()}: ")
        assert "no_such_database" in message.split(": ", 1)[1]


def test_a_server_that_is_not_there_is_one_line(minilm: MiniLMEmbeddingFunction) -> None:
    port = free_port()
    server = ChromaServer("127.0.0.1", port, token=TOKEN)
    with ChromaSearchIndex(server, minilm) as idx:
        assert failure(idx.upsert_workflows, [FLIGHT]) == (
            f"cannot open the search index on the Chroma server at http://127.0.0.1:{port}: "
            "the server cannot be reached (connection refused)"
        )


def test_a_server_that_stops_fails_calls_until_it_is_back(
    tmp_path: Path, minilm: MiniLMEmbeddingFunction
) -> None:
    port = free_port()
    server = ChromaServer("127.0.0.1", port)  # chroma alone: no proxy, no token
    with ChromaSearchIndex(server, minilm) as idx:
        with run_chroma(tmp_path / "chroma", port=port) as chroma:
            idx.upsert_workflows([FLIGHT, CAKE])
            pid = idx.worker_pid
            chroma.stop()
            message = failure(idx.search_workflows, "reserve airline tickets")
            assert message == (
                f"cannot search the search index on {server.describe()}: "
                "the server cannot be reached (connection refused)"
            )
            assert failure(idx.upsert_workflows, [EXPENSE]).startswith("cannot update ")
        # Back on the same port and data: the same worker carries on.
        with run_chroma(tmp_path / "chroma", port=port):
            assert top_ids(idx.search_workflows("reserve airline tickets"), 1) == ["flight"]
            assert idx.count() == (2, 0)
            assert pid is not None and idx.worker_pid == pid


def test_the_token_is_not_in_the_workers_arguments_or_environment(
    proxied: ProxiedChroma, database: str, minilm: MiniLMEmbeddingFunction
) -> None:
    with ChromaSearchIndex(proxied.server(database=database), minilm) as idx:
        idx.upsert_workflows([FLIGHT])  # the token worked: the worker has it
        assert top_ids(idx.search_workflows("reserve airline tickets")) == ["flight"]
        pid = idx.worker_pid
        assert pid is not None and pid != os.getpid()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    assert cmdline.split(b"\0")[-3:-1] == [b"desktop_app.adapters.search.worker", b"--server"]
    assert TOKEN.encode() not in cmdline
    assert TOKEN.encode() not in environ
    names = {entry.split(b"=", 1)[0].upper() for entry in environ.split(b"\0") if entry}
    assert not {name for name in names if name.startswith(b"CHROMA")}


def test_a_proxy_without_its_chroma_says_so(
    tmp_path: Path, minilm: MiniLMEmbeddingFunction
) -> None:
    with chroma_behind_proxy(tmp_path, TOKEN) as servers:
        servers.chroma.stop()
        server = servers.server()
        with ChromaSearchIndex(server, minilm) as idx:
            assert failure(idx.count) == (
                f"cannot open the search index on {server.describe()}: "
                "the server answered HTTP 502 Bad Gateway to a heartbeat"
            )
