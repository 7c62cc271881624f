"""The Chroma search index and its embedding functions: real Chroma, ONNX model and HTTP server."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from chromadb.api.types import Documents, Embeddings

from desktop_app.adapters.search.chroma_index import (
    EMBEDDING_KEY,
    EMBEDDING_MODEL_KEY,
    ChromaSearchIndex,
)
from desktop_app.adapters.search.embeddings import (
    MiniLMEmbeddingFunction,
    OpenAIEmbeddingFunction,
    make_embedding_function,
)
from desktop_app.adapters.search.worker import EF_SEARCH, IndexWorker, child_environment
from desktop_app.core.errors import StoreError
from desktop_app.core.models.experience import Experience
from desktop_app.core.models.run import Resolution
from desktop_app.core.models.target import Locator, LocatorStrategy
from desktop_app.core.models.workflow import WorkflowStatus
from desktop_app.core.views import IndexedWorkflow, SearchHit
from tests.fakes.openai_server import FakeOpenAIServer, embed_text

APPROVED = WorkflowStatus.APPROVED
DRAFT = WorkflowStatus.DRAFT
SECRET_KEY = "sk-test-DO-NOT-LEAK-4f1c9a7e"


def workflow(
    wid: str,
    name: str,
    description: str,
    steps: tuple[str, ...] = (),
    parameters: tuple[str, ...] = (),
    *,
    domains: tuple[str, ...] = (),
    status: WorkflowStatus = APPROVED,
    version: int = 1,
) -> IndexedWorkflow:
    return IndexedWorkflow(
        id=wid,
        version=version,
        status=status,
        name=name,
        description=description,
        domains=domains,
        parameter_names=parameters,
        step_titles=steps,
    )


FLIGHT = workflow(
    "flight",
    "Book a flight",
    "Books airline tickets for a trip on the travel portal.",
    (
        "Open the flights page",
        "Fill 'From' with {origin}",
        "Fill 'To' with {destination}",
        "Click 'Search flights'",
        "Pick the first fare",
        "Click 'Book'",
    ),
    ("origin", "destination", "departure_date"),
    domains=("travel.example.com",),
)
CAKE = workflow(
    "cake",
    "Bake a cake",
    "Finds a chocolate cake recipe and adds the ingredients to the shopping list.",
    ("Search recipes for {cake}", "Open the first recipe", "Click 'Add ingredients to list'"),
    ("cake",),
    domains=("recipes.example.org",),
)
CONTACT = workflow(
    "contact",
    "Create a CRM contact",
    "Adds a new person with their email and company to the customer relationship manager.",
    (
        "Click 'New contact'",
        "Fill 'Name' with {name}",
        "Fill 'Email' with {email}",
        "Fill 'Company' with {company}",
        "Click 'Save'",
    ),
    ("name", "email", "company"),
    domains=("crm.example.com", "app.example.com"),
    status=DRAFT,
)
EXPENSE = workflow(
    "expense",
    "Submit an expense report",
    "Files a reimbursement claim with the receipt amount and the cost center.",
    (
        "Open 'Expenses'",
        "Click 'New report'",
        "Fill 'Amount' with {amount}",
        "Upload the receipt",
        "Click 'Submit for approval'",
    ),
    ("amount", "cost_center"),
    domains=("finance.example.com", "app.example.com"),
)
PASSWORD = workflow(
    "password",
    "Reset a user's password",
    "Sends a password reset link to an employee who is locked out of their account.",
    ("Open 'Users'", "Search for {username}", "Click 'Reset password'", "Click 'Send link'"),
    ("username",),
    domains=("admin.example.com",),
    status=DRAFT,
)
ALL = (FLIGHT, CAKE, CONTACT, EXPENSE, PASSWORD)


def experience(eid: str, workflow_id: str, title: str, page: str, failed: str) -> Experience:
    return Experience(
        id=eid,
        workflow_id=workflow_id,
        workflow_version=1,
        step_id="s1",
        step_title=title,
        step_kind="click",
        page_title=page,
        page_url="https://app.example.com/" + page.lower().replace(" ", "-"),
        failed_locators=(Locator(strategy=LocatorStrategy.CSS, value=failed),),
        repaired_locator=Locator(strategy=LocatorStrategy.ROLE, value="button", name=title),
        resolution=Resolution.LLM,
        reason="the button was renamed",
    )


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbeddingFunction:
    return MiniLMEmbeddingFunction()


@pytest.fixture
def index(tmp_path: Path, minilm: MiniLMEmbeddingFunction) -> Iterator[ChromaSearchIndex]:
    with ChromaSearchIndex(tmp_path / "chroma", minilm) as idx:
        yield idx


@pytest.fixture(scope="module")
def all_indexed(
    tmp_path_factory: pytest.TempPathFactory, minilm: MiniLMEmbeddingFunction
) -> Iterator[ChromaSearchIndex]:
    """ALL, indexed once for the tests that only read (one worker start for them all)."""
    with ChromaSearchIndex(tmp_path_factory.mktemp("all") / "chroma", minilm) as idx:
        idx.upsert_workflows(ALL)
        yield idx


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server


def top_ids(hits: list[SearchHit], n: int | None = None) -> list[str]:
    return [h.id for h in hits][:n]


# ── the local model ───────────────────────────────────────────────────────────────────────────


def test_minilm_vectors_are_normalised_384_and_batch_independent(
    minilm: MiniLMEmbeddingFunction,
) -> None:
    texts = [f"step {i}: " + "fill the field " * (i % 7) + str(i) for i in range(150)]
    batched = np.array(minilm(texts))
    assert batched.shape == (150, 384)
    assert np.allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)
    for i in (0, 63, 64, 149):  # order is kept across sorting and batches of 64
        single = np.array(minilm([texts[i]])[0])
        assert float(single @ batched[i]) > 0.999


def test_minilm_missing_files_say_reinstall(tmp_path: Path) -> None:
    missing_model = MiniLMEmbeddingFunction(model_path=tmp_path / "model.onnx")
    with pytest.raises(StoreError, match="reinstall procedura") as err:
        missing_model(["hello"])
    assert "model" in str(err.value) and "\n" not in str(err.value)
    missing_tokenizer = MiniLMEmbeddingFunction(tokenizer_path=tmp_path / "tokenizer.json")
    with pytest.raises(StoreError, match=r"tokenizer.*reinstall procedura"):
        missing_tokenizer(["hello"])


def test_minilm_loads_once_when_threads_race(tmp_path: Path) -> None:
    from desktop_app.adapters.search import embeddings

    # A copy of the tokenizer is a runtime no other test has loaded yet.
    tokenizer = tmp_path / "tokenizer.json"
    shutil.copyfile(embeddings._default_tokenizer_path(), tokenizer)
    ef = MiniLMEmbeddingFunction(tokenizer_path=tokenizer)
    texts = [f"open the report number {i}" for i in range(8)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(lambda i: np.array(ef(texts[i : i + 3])), range(6)))
    loaded = [key for key in embeddings._RUNTIMES if key[1] == tokenizer]
    assert len(loaded) == 1
    expected = np.array(ef(texts))
    for i, result in enumerate(results):
        assert np.allclose(result, expected[i : i + 3], atol=1e-5)


def test_package_exports_lazily() -> None:
    import desktop_app.adapters.search as search

    assert search.ChromaSearchIndex is ChromaSearchIndex
    assert search.make_embedding_function is make_embedding_function
    with pytest.raises(AttributeError):
        _ = search.Nothing


def test_make_embedding_function() -> None:
    assert isinstance(make_embedding_function("minilm"), MiniLMEmbeddingFunction)
    ef = make_embedding_function("openai", base_url="http://h/v1", model="m", api_key="k")
    assert isinstance(ef, OpenAIEmbeddingFunction)
    assert ef.get_config()["model"] == "m"
    with pytest.raises(StoreError, match="unknown embedding kind"):
        make_embedding_function("word2vec")


def test_registered_with_chroma_and_config_has_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from chromadb.utils.embedding_functions import known_embedding_functions

    assert known_embedding_functions[MiniLMEmbeddingFunction.name()] is MiniLMEmbeddingFunction
    assert known_embedding_functions[OpenAIEmbeddingFunction.name()] is OpenAIEmbeddingFunction
    minilm = MiniLMEmbeddingFunction()
    assert not minilm.is_legacy()
    assert MiniLMEmbeddingFunction.build_from_config(minilm.get_config()).get_config() == (
        minilm.get_config()
    )

    ef = OpenAIEmbeddingFunction("http://127.0.0.1:9/v1", "emb", SECRET_KEY, 3.0)
    assert SECRET_KEY not in json.dumps(ef.get_config()) and SECRET_KEY not in repr(ef)
    monkeypatch.delenv("PROCEDURA_LLM_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    rebuilt = OpenAIEmbeddingFunction.build_from_config(ef.get_config())
    assert rebuilt.get_config() == ef.get_config()
    assert rebuilt._api_key == "sk-from-env"
    monkeypatch.setenv("PROCEDURA_LLM_API_KEY", "sk-procedura")
    assert OpenAIEmbeddingFunction.build_from_config(ef.get_config())._api_key == "sk-procedura"
    assert not ef.is_legacy()


# ── the index with the local model ────────────────────────────────────────────────────────────


def test_constructing_touches_nothing(tmp_path: Path, minilm: MiniLMEmbeddingFunction) -> None:
    ChromaSearchIndex(tmp_path / "chroma", minilm)
    assert not (tmp_path / "chroma").exists()


def test_empty_index_and_empty_query(index: ChromaSearchIndex) -> None:
    assert index.search_workflows("reserve airline tickets") == []
    assert index.search_experiences("click save", workflow_id="x") == []
    assert index.count() == (0, 0)
    index.upsert_workflows([FLIGHT])
    assert index.search_workflows("") == []
    assert index.search_workflows("   ") == []
    assert index.search_workflows("flight", limit=0) == []
    assert index.search_workflows("flight", domain="nowhere.example") == []


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("reserve airline tickets", "flight"),
        ("add a new customer record to the sales database", "contact"),
        ("get my travel costs reimbursed", "expense"),
        ("help someone who forgot their login credentials", "password"),
        ("make a dessert for a birthday", "cake"),
    ],
)
def test_semantic_ranking(all_indexed: ChromaSearchIndex, query: str, expected: str) -> None:
    hits = all_indexed.search_workflows(query, limit=5)
    assert top_ids(hits, 1) == [expected], hits
    assert len(hits) == 5
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scores[0] - scores[1] > 0.02


def test_flight_outranks_cake_and_password(index: ChromaSearchIndex) -> None:
    index.upsert_workflows([CAKE, FLIGHT, PASSWORD])
    hits = index.search_workflows("reserve airline tickets")
    assert top_ids(hits, 1) == ["flight"]
    assert len(hits) == 3 and hits[0].score > hits[1].score + 0.1


def test_status_and_domain_filters(all_indexed: ChromaSearchIndex) -> None:
    index = all_indexed
    query = "fill in a form on the web app"
    approved = set(top_ids(index.search_workflows(query, limit=10, status=APPROVED)))
    assert approved == {"flight", "cake", "expense"}
    drafts = set(top_ids(index.search_workflows(query, limit=10, status=DRAFT)))
    assert drafts == {"contact", "password"}
    assert index.search_workflows(query, status=WorkflowStatus.ARCHIVED) == []

    app = set(top_ids(index.search_workflows(query, limit=10, domain="app.example.com")))
    assert app == {"contact", "expense"}
    assert top_ids(index.search_workflows(query, domain="  CRM.Example.com ")) == ["contact"]
    both = index.search_workflows(query, limit=10, domain="app.example.com", status=APPROVED)
    assert top_ids(both) == ["expense"]
    assert index.search_workflows(query, domain="example.com") == []  # exact host, no suffixes


def test_upsert_replaces_without_duplicates(index: ChromaSearchIndex) -> None:
    index.upsert_workflows(ALL)
    moved = workflow(
        "flight",
        "Book a train",
        "Buys rail tickets.",
        ("Fill 'From' with {origin}",),
        domains=("rail.example.net",),
        status=DRAFT,
        version=2,
    )
    index.upsert_workflows([moved, moved])
    assert index.count() == (5, 0)
    assert index.search_workflows("flight", domain="travel.example.com") == []
    assert top_ids(index.search_workflows("train", domain="rail.example.net")) == ["flight"]
    assert "flight" not in top_ids(index.search_workflows("train", limit=10, status=APPROVED))
    hits = index.search_workflows("buy train tickets", limit=10)
    assert top_ids(hits, 1) == ["flight"] and len(hits) == 5


def test_experiences_search_filter_and_remove(index: ChromaSearchIndex) -> None:
    index.upsert_workflows([CONTACT, EXPENSE])
    save = experience("e1", "contact", "Save", "New contact", "#save-btn")
    submit = experience("e2", "expense", "Submit for approval", "Expense report", "#submit")
    upload = experience("e3", "expense", "Upload the receipt", "Expense report", "input.file")
    index.upsert_experiences([save, submit, upload])
    index.upsert_experiences([save])
    assert index.count() == (2, 3)

    hits = index.search_experiences("click Save on the new contact page")
    assert top_ids(hits, 1) == ["e1"]
    only = index.search_experiences("click Save on the new contact page", workflow_id="expense")
    assert set(top_ids(only)) == {"e2", "e3"}
    assert top_ids(index.search_experiences("attach a receipt file"), 1) == ["e3"]

    index.remove_workflow("expense")
    index.remove_workflow("expense")  # nothing happens the second time
    index.remove_workflow("never-indexed")
    assert index.count() == (1, 1)
    assert top_ids(index.search_workflows("expense report", limit=5)) == ["contact"]
    # An index emptied after it was searched (its count no longer asked) finds nothing.
    index.remove_experiences(["e1"])
    assert index.search_experiences("click Save on the new contact page") == []


def test_clear_and_counts_survive_reopening(
    tmp_path: Path, minilm: MiniLMEmbeddingFunction
) -> None:
    path = tmp_path / "chroma"
    with ChromaSearchIndex(path, minilm) as idx:
        idx.upsert_workflows(ALL)
        idx.upsert_experiences([experience("e1", "contact", "Save", "New contact", "#save")])
        assert idx.count() == (5, 1)
    with ChromaSearchIndex(path, minilm) as idx:
        assert idx.count() == (5, 1)
        assert top_ids(idx.search_workflows("reserve airline tickets"), 1) == ["flight"]
        idx.clear()
        assert idx.count() == (0, 0)
        assert idx.search_workflows("reserve airline tickets") == []
        idx.upsert_workflows([CAKE])
        assert idx.count() == (1, 0)
    with ChromaSearchIndex(path, minilm) as idx:
        assert idx.count() == (1, 0)


def test_other_embeddings_ask_for_reindex(
    tmp_path: Path, minilm: MiniLMEmbeddingFunction, openai_server: FakeOpenAIServer
) -> None:
    path = tmp_path / "chroma"
    with ChromaSearchIndex(path, minilm) as idx:
        idx.upsert_workflows(ALL)
    openai = OpenAIEmbeddingFunction(openai_server.base_url, "fake-embedding", SECRET_KEY, 5.0)
    with ChromaSearchIndex(path, openai) as idx:
        with pytest.raises(StoreError) as err:
            idx.search_workflows("flight")
        message = str(err.value)
        assert message.startswith("the search index was built with local MiniLM embeddings")
        assert "; run `procedura reindex` to rebuild it with " in message
        assert message.endswith("OpenAI-compatible fake-embedding")
        idx.clear()  # what reindex does: works whatever the index was built with
        idx.upsert_workflows(ALL)
        assert top_ids(idx.search_workflows("Book a flight"), 1) == ["flight"]
    with ChromaSearchIndex(path, minilm) as idx, pytest.raises(StoreError, match="reindex"):
        idx.count()


class ShortMiniLM(MiniLMEmbeddingFunction):
    """Says it is MiniLM but gives 8-dimensional vectors (an endpoint that changed its model)."""

    def __call__(self, input: Documents) -> Embeddings:
        return [np.ones(8, np.float32) / np.sqrt(8) for _ in input]


def test_vectors_of_another_size_ask_for_reindex(
    tmp_path: Path, minilm: MiniLMEmbeddingFunction
) -> None:
    path = tmp_path / "chroma"
    with ChromaSearchIndex(path, minilm) as idx:
        idx.upsert_workflows(ALL)
    with ChromaSearchIndex(path, ShortMiniLM()) as idx:
        with pytest.raises(StoreError) as err:
            idx.search_workflows("flight")
        assert str(err.value) == (
            "the search index holds vectors of 384 dimensions but local MiniLM embeddings have 8;"
            " run `procedura reindex` to rebuild it"
        )
        with pytest.raises(StoreError, match="384 dimensions"):
            idx.upsert_workflows([CAKE])
        idx.clear()
        idx.upsert_workflows(ALL)
        assert idx.count() == (5, 0)


# ── the OpenAI-compatible endpoint ────────────────────────────────────────────────────────────


def test_openai_embeddings_through_the_index(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    ef = OpenAIEmbeddingFunction(openai_server.base_url, "fake-embedding", SECRET_KEY, 5.0)
    vectors = ef(["book a flight", ""])
    assert np.allclose(vectors[0], embed_text("book a flight"), atol=1e-6)
    assert len(vectors) == 2 and len(vectors[1]) == 64

    path = tmp_path / "chroma"
    with ChromaSearchIndex(path, ef) as idx:
        idx.upsert_workflows(ALL)
        idx.upsert_experiences([experience("e1", "contact", "Save", "New contact", "#save")])
        assert top_ids(idx.search_workflows("Book a flight"), 1) == ["flight"]
        assert top_ids(idx.search_workflows("Reset password user"), 1) == ["password"]

    requests = openai_server.requests_to("/v1/embeddings")
    assert len(requests) >= 4
    for request in requests:
        assert request.header("Authorization") == f"Bearer {SECRET_KEY}"
        assert request.json["model"] == "fake-embedding"
    assert_not_on_disk(tmp_path, SECRET_KEY)


def assert_not_on_disk(root: Path, secret: str) -> None:
    """*secret* is in no file under *root*: Chroma's HNSW buffers included (ADR 0003)."""
    files = [p for p in root.rglob("*") if p.is_file()]
    assert files, "the index wrote nothing"
    assert any(p.name == "data_level0.bin" for p in files), "no HNSW segment was written"
    for file in files:
        assert secret.encode() not in file.read_bytes(), file


def process_alive(pid: int) -> bool:
    """Whether *pid* runs (a zombie no one reaped yet counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if not Path("/proc/self").exists():
        return True  # os.kill found it; without /proc a zombie cannot be told apart
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def found_in_memory(pid: int, *needles: bytes) -> set[bytes] | None:
    """Which *needles* the readable memory of process *pid* holds; None if it cannot be read."""
    try:
        maps = Path(f"/proc/{pid}/maps").read_text().splitlines()
        mem = open(f"/proc/{pid}/mem", "rb", buffering=0)  # noqa: SIM115
    except OSError:
        return None
    found: set[bytes] = set()
    with mem:
        for line in maps:
            fields = line.split()
            if not fields[1].startswith("r") or fields[-1] in ("[vvar]", "[vsyscall]"):
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            try:
                mem.seek(start)
                data = mem.read(end - start)
            except OSError:
                continue
            found.update(needle for needle in needles if needle in data)
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_dead_endpoint_is_a_one_line_store_error(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    ef = OpenAIEmbeddingFunction(url, "fake-embedding", SECRET_KEY, 2.0, max_retries=0)
    with pytest.raises(StoreError) as err:
        ef(["hello"])
    message = str(err.value)
    assert message.startswith(f"cannot reach the embedding endpoint {url}")
    assert "\n" not in message and SECRET_KEY not in message
    with ChromaSearchIndex(tmp_path / "chroma", ef) as idx, pytest.raises(StoreError):
        idx.upsert_workflows([FLIGHT])


def test_http_errors_and_timeouts_are_store_errors(openai_server: FakeOpenAIServer) -> None:
    ef = OpenAIEmbeddingFunction(
        openai_server.base_url, "fake-embedding", SECRET_KEY, 0.5, max_retries=0
    )
    openai_server.fail_next(401, f"Incorrect API key provided: {SECRET_KEY}")
    with pytest.raises(StoreError, match=r"refused the API key \(HTTP 401\)") as err:
        ef(["x"])
    assert SECRET_KEY not in str(err.value)
    openai_server.fail_next(503, "overloaded\nplease retry")
    with pytest.raises(StoreError, match=r"answered HTTP 503: overloaded please retry$"):
        ef(["x"])
    openai_server.fail_next(404, "model not found")
    with pytest.raises(StoreError, match="has no embedding model 'fake-embedding'"):
        ef(["x"])
    openai_server.set_delay(2.0)
    with pytest.raises(StoreError, match=r"did not answer within 0\.5 s"):
        ef(["x"])
    openai_server.set_delay(0)
    assert len(ef(["x"])) == 1


# ── the worker process (docs/adr/0003-index-heap-bytes.md) ────────────────────────────────────


def test_the_worker_starts_on_first_use_and_stops_on_close(
    tmp_path: Path, minilm: MiniLMEmbeddingFunction
) -> None:
    idx = ChromaSearchIndex(tmp_path / "chroma", minilm)
    assert idx.worker_pid is None
    assert idx.search_workflows("") == []  # nothing to do: nothing starts
    assert idx.worker_pid is None
    idx.upsert_workflows([FLIGHT])
    pid = idx.worker_pid
    assert pid is not None and pid != os.getpid()
    idx.close()
    assert idx.worker_pid is None
    assert not process_alive(pid)
    assert idx.count() == (1, 0)  # the next call starts a new worker
    assert idx.worker_pid not in (None, pid)
    idx.close()


def test_the_worker_environment_has_no_api_key(
    tmp_path: Path, minilm: MiniLMEmbeddingFunction, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    monkeypatch.setenv("PROCEDURA_LLM_API_KEY", SECRET_KEY)
    monkeypatch.setenv("HTTPS_PROXY", f"http://user:{SECRET_KEY}@proxy.example:3128")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    env = child_environment(os.environ)
    assert SECRET_KEY not in json.dumps(env)
    assert not {"OPENAI_API_KEY", "PROCEDURA_LLM_API_KEY", "HTTPS_PROXY"} & set(env)
    assert env.get("PATH") == os.environ.get("PATH")

    with ChromaSearchIndex(tmp_path / "chroma", minilm) as idx:
        idx.upsert_workflows([FLIGHT])
        assert top_ids(idx.search_workflows("reserve airline tickets")) == ["flight"]
        # Chroma never reached for its default embedding function (it would fetch a model).
        assert not (home / ".cache" / "chroma").exists()
        environ = Path(f"/proc/{idx.worker_pid}/environ")
        if not environ.exists():
            pytest.skip("reading another process's environment needs /proc")
        raw = environ.read_bytes()
    names = {entry.split(b"=", 1)[0].decode() for entry in raw.split(b"\0") if entry}
    assert SECRET_KEY.encode() not in raw
    assert not {"OPENAI_API_KEY", "PROCEDURA_LLM_API_KEY", "HTTPS_PROXY"} & names


def test_a_killed_worker_fails_the_next_call_then_restarts(
    tmp_path: Path, minilm: MiniLMEmbeddingFunction
) -> None:
    with ChromaSearchIndex(tmp_path / "chroma", minilm) as idx:
        idx.upsert_workflows(ALL)
        pid = idx.worker_pid
        assert pid is not None
        os.kill(pid, getattr(signal, "SIGKILL", signal.SIGTERM))
        with pytest.raises(StoreError) as err:
            idx.search_workflows("reserve airline tickets")
        message = str(err.value)
        assert message.startswith(f"cannot search the search index at {tmp_path / 'chroma'}: ")
        assert "its worker process stopped" in message
        assert message.endswith("the next try starts a new one") and "\n" not in message
        assert idx.worker_pid is None and not process_alive(pid)
        # The next call starts a new worker, on what the first one had written.
        assert top_ids(idx.search_workflows("reserve airline tickets"), 1) == ["flight"]
        assert idx.count() == (5, 0)


def test_the_worker_exits_with_the_process_that_started_it(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import os, sys
        from pathlib import Path
        from desktop_app.adapters.search.chroma_index import ChromaSearchIndex
        from desktop_app.adapters.search.embeddings import MiniLMEmbeddingFunction

        idx = ChromaSearchIndex(Path(sys.argv[1]), MiniLMEmbeddingFunction())
        assert idx.count() == (0, 0)
        print(idx.worker_pid, flush=True)
        os._exit(0)  # no close(), no atexit: as if the process crashed
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "chroma")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    pid = int(done.stdout.split()[-1])
    deadline = time.monotonic() + 10
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not process_alive(pid), "the worker outlived its parent"


def test_a_corrupt_index_is_a_one_line_store_error(
    tmp_path: Path, minilm: MiniLMEmbeddingFunction
) -> None:
    path = tmp_path / "chroma"
    path.mkdir()
    (path / "chroma.sqlite3").write_bytes(b"this is not a database\n" * 100)
    with ChromaSearchIndex(path, minilm) as idx, pytest.raises(StoreError) as err:
        idx.count()
    message = str(err.value)
    assert message.startswith(f"cannot open the search index at {path}: ")
    assert "\n" not in message


def test_the_key_reaches_no_file_nor_the_worker_over_many_rounds(
    tmp_path: Path, openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    monkeypatch.setenv("PROCEDURA_LLM_API_KEY", SECRET_KEY)
    sent: list[bytes] = []
    call = IndexWorker.call

    def spy(worker: IndexWorker, action: str, op: str, /, **args: Any) -> Any:
        sent.append(pickle.dumps((op, args)))
        return call(worker, action, op, **args)

    monkeypatch.setattr(IndexWorker, "call", spy)
    ef = OpenAIEmbeddingFunction(openai_server.base_url, "fake-embedding", SECRET_KEY, 5.0)
    with ChromaSearchIndex(tmp_path / "chroma", ef) as idx:
        for round_ in range(5):  # past the HNSW's first 100 slots: it grows and is rewritten
            renamed = [
                w.model_copy(update={"id": f"{w.id}-{round_}", "version": round_ + 1}) for w in ALL
            ]
            idx.upsert_workflows([*ALL, *renamed])
            saves = [
                experience(f"e{round_}-{i}", "contact", "Save", "New contact", "#s")
                for i in range(30)
            ]
            idx.upsert_experiences(saves)
            assert top_ids(idx.search_workflows("Book a flight"), 1)[0].startswith("flight")
            assert idx.search_experiences("Save the contact", workflow_id="contact")
            assert idx.count() == (5 * (round_ + 2), 30 * (round_ + 1))
        pid = idx.worker_pid
        assert pid is not None
        document, key = FLIGHT.description.encode(), SECRET_KEY.encode()
        found = found_in_memory(pid, document, key)
        # The scan sees what the worker was sent (a document), and the key was never there.
        assert found is None or found == {document}, found
    assert openai_server.requests_to("/v1/embeddings")
    assert sent and not any(SECRET_KEY.encode() in message for message in sent)
    assert_not_on_disk(tmp_path, SECRET_KEY)


# ── what is on disk, and indexes of earlier versions ──────────────────────────────────────────


def test_collections_record_the_embeddings_and_no_function(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    path = tmp_path / "chroma"
    ef = OpenAIEmbeddingFunction(openai_server.base_url, "fake-embedding", SECRET_KEY, 5.0)
    with ChromaSearchIndex(path, ef) as idx:
        idx.upsert_workflows(ALL)
        idx.count()
    collections = read_collections(path)
    assert set(collections) == {"workflows", "experiences"}
    for collection in collections.values():
        assert collection["metadata"] == {
            EMBEDDING_KEY: OpenAIEmbeddingFunction.name(),
            EMBEDDING_MODEL_KEY: "fake-embedding",
        }
        assert collection["embedding_function"] in (None, {"type": "legacy"})
        assert collection["space"] == "cosine"
        assert collection["ef_search"] == EF_SEARCH  # the nearest 50 found exactly, not nearly


# The index as versions before the worker built it: chroma in-process, with Procedura's
# registered embedding function in each collection's configuration.
LEGACY = textwrap.dedent(
    """
    import json, sys
    import chromadb
    from chromadb.config import Settings
    from desktop_app.adapters.search.embeddings import MiniLMEmbeddingFunction

    items = json.loads(sys.stdin.read())
    client = chromadb.PersistentClient(
        path=sys.argv[1], settings=Settings(anonymized_telemetry=False, allow_reset=False)
    )
    ef = MiniLMEmbeddingFunction()
    for name in ("workflows", "experiences"):
        collection = client.create_collection(
            name, configuration={"hnsw": {"space": "cosine"}}, embedding_function=ef
        )
        if name == "workflows":
            collection.add(**items)
    """
)

# The index as the worker made it before it raised the graph search's reach (chroma's default).
EARLIER = textwrap.dedent(
    """
    import json, sys
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(
        path=sys.argv[1], settings=Settings(anonymized_telemetry=False, allow_reset=False)
    )
    for name in ("workflows", "experiences"):
        client.create_collection(
            name,
            configuration={"hnsw": {"space": "cosine"}},
            metadata=json.loads(sys.argv[2]),
            embedding_function=None,
        )
    """
)

READ = textwrap.dedent(
    """
    import json, sys
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(
        path=sys.argv[1], settings=Settings(anonymized_telemetry=False, allow_reset=False)
    )
    print(json.dumps({
        c.name: {
            "metadata": c.metadata,
            "embedding_function": c.configuration_json.get("embedding_function"),
            "space": c.configuration_json["hnsw"]["space"],
            "ef_search": c.configuration_json["hnsw"]["ef_search"],
        }
        for c in client.list_collections()
    }))
    """
)


def run_python(script: str, *args: str, stdin: str = "") -> str:
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def read_collections(path: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(run_python(READ, str(path)).strip().splitlines()[-1])
    return result


def test_an_earlier_index_gets_the_wider_graph_search_when_opened(
    tmp_path: Path, minilm: MiniLMEmbeddingFunction
) -> None:
    path = tmp_path / "chroma"
    identity = {EMBEDDING_KEY: minilm.name(), EMBEDDING_MODEL_KEY: minilm.get_config()["model"]}
    run_python(EARLIER, str(path), json.dumps(identity))
    assert {c["ef_search"] for c in read_collections(path).values()} == {100}
    with ChromaSearchIndex(path, minilm) as idx:
        idx.upsert_workflows(ALL)
        assert top_ids(idx.search_workflows("reserve airline tickets"), 1) == ["flight"]
        assert idx.count() == (5, 0)  # both opened
    assert {c["ef_search"] for c in read_collections(path).values()} == {EF_SEARCH}


@pytest.mark.slow
def test_an_index_built_before_the_worker_is_still_used(
    tmp_path: Path, minilm: MiniLMEmbeddingFunction, openai_server: FakeOpenAIServer
) -> None:
    path = tmp_path / "chroma"
    items = {
        "ids": [w.id for w in ALL],
        "documents": [w.text() for w in ALL],
        "metadatas": [ChromaSearchIndex._workflow_metadata(w) for w in ALL],
    }
    run_python(LEGACY, str(path), stdin=json.dumps(items))
    with ChromaSearchIndex(path, minilm) as idx:
        assert idx.count() == (5, 0)
        assert top_ids(idx.search_workflows("reserve airline tickets"), 1) == ["flight"]
        idx.upsert_workflows([CAKE])
        idx.upsert_experiences([experience("e1", "contact", "Save", "New contact", "#save")])
        assert idx.count() == (5, 1)
        hits = idx.search_workflows("make a dessert for a birthday", domain="recipes.example.org")
        assert top_ids(hits) == ["cake"]
    openai = OpenAIEmbeddingFunction(openai_server.base_url, "fake-embedding", SECRET_KEY, 5.0)
    with ChromaSearchIndex(path, openai) as idx:
        with pytest.raises(StoreError, match="built with local MiniLM embeddings; run `procedura"):
            idx.count()
        idx.clear()  # reindex: the collections are made again, the new way
        idx.upsert_workflows(ALL)
    collections = read_collections(path)
    assert collections["workflows"]["metadata"][EMBEDDING_KEY] == openai.name()
    assert collections["workflows"]["ef_search"] == EF_SEARCH
