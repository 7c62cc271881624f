"""The runner fleet: rows per minute with 1, 2 and 4 workers, queue latency, and search on the
team's servers.

Everything is real and on this machine: a PostgreSQL server, a Redis server and ``procedura
worker`` processes (one row at a time each, headless Chromium kept between rows), started here,
in temporary directories; the rows place orders at an order desk of our own on 127.0.0.1
(``tests/fleet_support.py``), and a run counts only when the desk's ledger has its order once.

- throughput: batches of N rows per worker count (a fresh database and queue each time, the
  workers started and ready before the batches are submitted), each timed from the submission
  to the last row's end; rows per minute (the median of three batches), and the scaling ratio of
  each added worker
  (``rate(n) / (n × rate(1))``; goal >= 0.8 while workers <= cores: this machine has
  ``os.cpu_count()``);
- queue latency: single-row jobs submitted one after another to idle workers; from the
  submission to the row's claim by a worker (the server's clock for both), p50 and p95;
- shared search: 10,000 workflows (the retrieval benchmark's distractors) indexed on a Chroma
  server behind a token-checking nginx, through the app in team mode (PostgreSQL for the
  workflows and their words); then ``workflows.search`` from a second machine's services,
  p50 and p95 (goal p95 <= 150 ms: the same search as personal mode's 50 ms goal, plus two
  network round trips and the HTTP server).

    .venv/bin/python bench/fleet.py [--smoke]
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from common import Section, environment, main, median, percentile

from desktop_app.settings import Settings

__all__ = ["measure"]

TOKEN = "bench-fleet-token_41c2"


@contextmanager
def _team(root: Path) -> Iterator[tuple[object, object, object]]:
    """A PostgreSQL server, a Redis server, and the order desk, for the whole benchmark."""
    from fleet_support import OrderDesk, RedisServer
    from postgres_server import PostgresServer
    from replay_support import serving

    postgres = PostgresServer()
    postgres.start()
    redis = RedisServer()
    desk = OrderDesk()
    try:
        with serving(desk.handler()) as url:
            yield postgres, redis, (desk, url)
    finally:
        redis.stop()
        postgres.stop()


def _fleet_database(postgres: object, root: Path, name: str) -> tuple[dict[str, str], Settings]:
    """A new team database with an approved order workflow; the runners' environment, and
    the approver's settings."""
    from postgres_server import PostgresServer, make_team

    from desktop_app.settings import load_settings

    assert isinstance(postgres, PostgresServer)
    database = make_team(postgres, {"amy": "approver", "rita": "runner"})
    base = f"postgresql://{{}}@127.0.0.1:{postgres.port}/{database}"
    settings = load_settings(
        home=root / f"amy-{name}", team_database=base.format("amy"), team_password="amy-pw"
    )
    env = {
        "PROCEDURA_TEAM_DATABASE": base.format("rita"),
        "PROCEDURA_TEAM_PASSWORD": "rita-pw",
        "PROCEDURA_FLEET_LEASE_S": "30",
        "PROCEDURA_LLM_BASE_URL": "http://127.0.0.1:9/v1",
    }
    return env, settings


def _throughput(
    team: tuple[object, object, object], root: Path, workers: int, rows: int, trials: int
) -> tuple[float, int]:
    """Rows per minute of *workers* on a batch of *rows* (the median of *trials* batches, one
    after another), and how many rows were not right."""
    from browser_support import CHROMIUM
    from fleet_support import OrderDesk, RedisServer, Workers, order_workflow
    from fleet_support import environment as worker_env

    from desktop_app.adapters.sql.fleet_store import SqlFleetStore
    from desktop_app.app import open_services
    from desktop_app.core.models.fleet import RowState
    from desktop_app.fleet.jobs import submit_job

    postgres, redis, (desk, url) = team
    assert isinstance(redis, RedisServer) and isinstance(desk, OrderDesk)
    env, settings = _fleet_database(postgres, root, f"w{workers}")
    queue = redis.url(workers)
    fleet = Workers(
        worker_env(**env, PROCEDURA_TEAM_QUEUE=queue, PROCEDURA_BROWSER=CHROMIUM),
        root / f"workers-{workers}",
    )
    (root / f"workers-{workers}").mkdir()
    prefix = f"w{workers}-"
    with open_services(settings.model_copy(update={"team_queue": queue}), write=True) as sv:
        workflow = order_workflow(str(url))
        saved = sv.workflows.save(workflow, actor="amy").version
        version = sv.workflows.approve(workflow.id, actor="amy", version=saved.version)
        store = SqlFleetStore(sv.engine)
        fleet.start(workers)
        try:
            # Ready: each worker has run a row of its own (its browser up, its stores open).
            warm_rows = [{"customer": f"{prefix}warm{n}"} for n in range(workers)]
            warm = submit_job(sv, version, warm_rows, assume_yes=True)
            _wait(lambda: store.job(warm.id).finished, 300)
            rates: list[float] = []
            names: list[str] = []
            states: dict[str, RowState] = {}
            for trial in range(trials):
                batch = [f"{prefix}{trial}-{n}" for n in range(rows)]
                began = time.perf_counter()
                job = submit_job(sv, version, [{"customer": c} for c in batch], assume_yes=True)
                _wait(lambda job=job: store.job(job.id).finished, 1800)
                rates.append(rows / (time.perf_counter() - began) * 60)
                names += batch
                states |= {str(r.values["customer"]): r.state for r in store.rows(job.id)}
            ledger = desk.orders()
        finally:
            fleet.stop()
    wrong = sum(1 for c in names if ledger[c] != 1 or states.get(c) is not RowState.SUCCEEDED)
    return median(rates), wrong


def _latency(team: tuple[object, object, object], root: Path, jobs: int) -> list[float]:
    """Milliseconds from submitting a single-row job to a worker's claim of it, idle fleet."""
    from browser_support import CHROMIUM
    from fleet_support import RedisServer, Workers, order_workflow
    from fleet_support import environment as worker_env

    from desktop_app.adapters.sql.fleet_store import SqlFleetStore
    from desktop_app.app import open_services
    from desktop_app.fleet.jobs import submit_job

    postgres, redis, (_, url) = team
    assert isinstance(redis, RedisServer)
    env, settings = _fleet_database(postgres, root, "latency")
    queue = redis.url(9)
    (root / "latency").mkdir()
    fleet = Workers(
        worker_env(**env, PROCEDURA_TEAM_QUEUE=queue, PROCEDURA_BROWSER=CHROMIUM), root / "latency"
    )
    samples: list[float] = []
    with open_services(settings.model_copy(update={"team_queue": queue}), write=True) as sv:
        workflow = order_workflow(str(url))
        saved = sv.workflows.save(workflow, actor="amy").version
        version = sv.workflows.approve(workflow.id, actor="amy", version=saved.version)
        store = SqlFleetStore(sv.engine)
        fleet.start(1)
        try:
            for n in range(jobs + 1):
                submitted = store.now()
                job = submit_job(sv, version, [{"customer": f"lat{n}"}], assume_yes=True)
                _wait(lambda job=job: store.job(job.id).finished, 300)
                started = store.rows(job.id)[0].started_at
                assert started is not None
                if n:  # the first waits for the worker to start
                    samples.append((started - submitted).total_seconds() * 1000)
        finally:
            fleet.stop()
    return samples


def _shared_search(
    team: tuple[object, object, object], root: Path, count: int, queries: int
) -> list[float]:
    """Milliseconds per search from a second machine, *count* workflows on the servers."""
    from chroma_server import chroma_behind_proxy
    from retrieval import distractors, fill_store, labeled_set

    from desktop_app.app import open_services

    postgres, _, _ = team
    _, settings = _fleet_database(postgres, root, "search")
    labeled, excluded = labeled_set()
    with chroma_behind_proxy(root / "chroma", TOKEN) as chroma:
        from desktop_app.adapters.search.server import ensure_database
        from desktop_app.app import team_index_server

        ensure_database(team_index_server(chroma.url, TOKEN, settings.team_database))
        shared = settings.model_copy(
            update={"team_index": chroma.url, "team_index_token": _secret(TOKEN)}
        )
        with open_services(shared, write=True) as first:
            fill_store(first, [item.workflow for item in labeled] + distractors(count, excluded))
            first.workflows.reindex()
        other = shared.model_copy(update={"home": root / "second-machine"})
        samples: list[float] = []
        with open_services(other, write=False) as second:
            asked = [q for item in labeled for q in item.queries]
            second.workflows.search(asked[0], limit=20)  # the index worker starts
            while len(samples) < queries:
                for query in asked[: queries - len(samples)]:
                    began = time.perf_counter()
                    second.workflows.search(query, limit=20)
                    samples.append((time.perf_counter() - began) * 1000)
    return samples


def _secret(value: str) -> object:
    from pydantic import SecretStr

    return SecretStr(value)


def _wait(check: object, timeout: float) -> None:
    assert callable(check)
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"not within {timeout:.0f} s")
        time.sleep(0.1)


def measure(smoke: bool = False) -> Section:
    """Throughput with 1, 2 and 4 workers, queue latency, shared search at 10,000 workflows."""
    counts = (1, 2) if smoke else (1, 2, 4)
    rows_per_worker = 4 if smoke else 40
    trials = 1 if smoke else 3
    section = Section("fleet", "Runner fleet: rows per minute, queue latency, shared search")
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp, environment(
        {"ANONYMIZED_TELEMETRY": "False", "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    ):  # fmt: skip
        root = Path(tmp)
        with _team(root) as team:
            rates: dict[int, float] = {}
            wrong = 0
            for n in counts:
                rates[n], bad = _throughput(team, root, n, rows_per_worker * n, trials)
                wrong += bad
            latency = _latency(team, root, 3 if smoke else 20)
            search = _shared_search(team, root, 200 if smoke else 10_000, 20 if smoke else 200)
    section.add("rows not right (by the desk's ledger)", wrong, goal="== 0")
    for n in counts:
        section.add(f"rows per minute, {n} worker{'s' if n > 1 else ''}", rates[n], "rows/min")
    for n in counts[1:]:
        ratio = rates[n] / (n * rates[1])
        goal = ">= 0.8" if n <= cores else ""
        note = "" if n <= cores else f"more workers than the {cores} cores: reported only"
        section.add(f"scaling, {n} workers", ratio, "x", goal=goal, note=note)
    section.add("queue latency p50", median(latency), "ms")
    section.add("queue latency p95", percentile(latency, 95), "ms")
    section.add(
        "shared search p95", percentile(search, 95), "ms", goal="<= 150",
        note=f"{len(search)} searches, {200 if smoke else 10_000} workflows + 68 labeled",
    )  # fmt: skip
    section.notes.append(
        f"{rows_per_worker} rows per worker, the median of {trials} batches; workers are "
        f"`procedura worker` processes on this {cores}-core machine, one row at a time each, "
        "Chromium headless"
    )
    return section


if __name__ == "__main__":
    main(__doc__, measure, smoke_help="1 and 2 workers, 4 rows each; 200 workflows searched")
