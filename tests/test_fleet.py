"""The runner fleet, for real: PostgreSQL, Redis and ``procedura worker`` processes started by
the tests, rows run in headless Chromium against an order desk, judged by the desk's ledger."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from browser_support import CHROMIUM
from fleet_support import OrderDesk, RedisServer, Workers, environment, order_workflow
from postgres_server import PostgresServer, make_team
from replay_support import serving

from desktop_app.adapters.sql.fleet_store import SqlFleetStore
from desktop_app.app import Services, open_services
from desktop_app.core.models.fleet import RowState
from desktop_app.fleet.jobs import cancel_job, resume_job, submit_job
from desktop_app.settings import load_settings

pytestmark = pytest.mark.slow

LEASE_S = 3
REDELIVER_S = 6


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    server = RedisServer()
    yield server
    server.stop()


@pytest.fixture
def desk() -> Iterator[tuple[OrderDesk, str]]:
    orders = OrderDesk()
    with serving(orders.handler()) as url:
        yield orders, url
    orders.release.set()


@pytest.fixture
def fleet(
    postgres: PostgresServer, redis: RedisServer, tmp_path: Path
) -> Iterator[tuple[Services, Workers]]:
    """A team (an approver submits, runners run), its queue, and no worker yet."""
    database = make_team(postgres, {"amy": "approver", "rita": "runner"})
    queue = redis.url(int(database[-2:], 16) % 16)  # a Redis database per test, as far as it goes
    team = {
        "PROCEDURA_TEAM_DATABASE": f"postgresql://rita@127.0.0.1:{postgres.port}/{database}",
        "PROCEDURA_TEAM_PASSWORD": "rita-pw",
        "PROCEDURA_TEAM_QUEUE": queue,
        "PROCEDURA_FLEET_LEASE_S": LEASE_S,
        "PROCEDURA_FLEET_REDELIVER_S": REDELIVER_S,
        "PROCEDURA_BROWSER": CHROMIUM,
        "PROCEDURA_LLM_BASE_URL": "http://127.0.0.1:9/v1",  # no LLM: nothing heals by guessing
    }
    workers = Workers(environment(**team), tmp_path)
    settings = load_settings(
        home=tmp_path / "amy",
        team_database=f"postgresql://amy@127.0.0.1:{postgres.port}/{database}",
        team_password="amy-pw",
        team_queue=queue,
    )
    from celery import Celery

    Celery(broker=queue).connection_for_write().default_channel.client.flushdb()
    with open_services(settings, write=True) as services:
        yield services, workers
        workers.stop()


def until(check: Callable[[], bool], timeout: float, what: str, workers: Workers) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s\n{workers.logs()}")
        time.sleep(0.2)


def _batch(
    services: Services, base: str, customers: list[str], **kw: object
) -> tuple[str, SqlFleetStore]:
    workflow = order_workflow(base)
    saved = services.workflows.save(workflow, actor="amy").version
    services.workflows.submit(workflow.id, actor="amy")
    version = services.workflows.approve(workflow.id, actor="amy", version=saved.version)
    job = submit_job(services, version, [{"customer": c} for c in customers], assume_yes=True)
    return job.id, SqlFleetStore(services.engine)


@pytest.mark.timeout(900)  # 200 rows in Chromium: minutes on 2 busy cores
@pytest.mark.parametrize(
    ("workers_count", "hang"),
    [(2, "hang-after-7"), (4, "hang-before-7")],
    ids=["2 workers, killed in the order", "4 workers, killed before it"],
)
def test_a_batch_on_the_fleet_with_a_worker_killed_mid_row(
    fleet: tuple[Services, Workers],
    desk: tuple[OrderDesk, str],
    workers_count: int,
    hang: str,
) -> None:
    services, workers = fleet
    orders, base = desk
    customers = [f"c{n:03}" for n in range(199)]
    customers.insert(40, hang)
    job_id, store = _batch(services, base, customers)
    workers.start(workers_count)

    until(orders.hanging.is_set, 240, "a worker reached the hanging row", workers)
    row = next(r for r in store.rows(job_id) if r.values["customer"] == hang)
    until(
        lambda: store.rows(job_id)[row.row - 1].state is RowState.RUNNING,
        30,
        "the hanging row was claimed",
        workers,
    )
    worker = store.rows(job_id)[row.row - 1].worker
    assert worker is not None
    workers.kill_running(int(worker.rsplit(":", 1)[1]))
    until(lambda: store.job(job_id).finished, 600, "every row ended", workers)

    ledger = orders.orders()
    states = {r.values["customer"]: r for r in store.rows(job_id)}
    normal = [c for c in customers if c != hang]
    assert all(ledger[c] == 1 for c in normal), [c for c in normal if ledger[c] != 1]
    assert all(states[c].state is RowState.SUCCEEDED for c in normal)
    assert ledger[hang] == 1  # whatever happened to its worker, never twice
    if hang.startswith("hang-after"):  # it began the irreversible order: a person looks
        assert states[hang].state is RowState.NEEDS_ATTENTION
        assert "Place the order" in (states[hang].error or "")
    else:  # killed before anything irreversible: run again, once
        assert states[hang].state is RowState.SUCCEEDED
        assert states[hang].attempt == 2
    assert len({r.worker.split(":")[0] for r in states.values() if r.worker}) >= 1


def test_cancel_stops_queued_rows_and_resume_runs_them(
    fleet: tuple[Services, Workers],
    desk: tuple[OrderDesk, str],
    procedura,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    services, workers = fleet
    orders, base = desk
    job_id, store = _batch(services, base, [f"k{n}" for n in range(20)])
    assert cancel_job(services, job_id) == 20  # no worker yet: every row was queued
    workers.start(1)
    assert set(store.job(job_id).counts) == {RowState.CANCELLED}
    assert resume_job(services, job_id) == list(range(1, 21))
    until(lambda: store.job(job_id).finished, 240, "every row ended", workers)
    assert store.job(job_id).counts == {RowState.SUCCEEDED: 20}
    assert all(orders.orders()[f"k{n}"] == 1 for n in range(20))

    # By intent, from the command line: decided on the submitter's machine, run by the fleet.
    settings = services.settings
    monkeypatch.setenv("PROCEDURA_HOME", str(settings.home))
    monkeypatch.setenv("PROCEDURA_TEAM_DATABASE", str(settings.team_database))
    monkeypatch.setenv("PROCEDURA_TEAM_PASSWORD", "amy-pw")
    monkeypatch.setenv("PROCEDURA_TEAM_QUEUE", str(settings.team_queue))
    refused = procedura("fleet", "run", "--intent", "Place an order for Zed")
    assert refused.exit_code == 2 and "nothing was queued" in refused.output
    done = procedura("fleet", "run", "--intent", "Place an order for Zed", "--yes")
    assert done.exit_code == 0, done.output
    assert "customer=Zed" in done.output
    newest = store.jobs(limit=1)[0]
    assert newest.kind.value == "intent"
    until(lambda: store.job(newest.id).finished, 120, "the intent's run ended", workers)
    assert store.rows(newest.id)[0].state is RowState.SUCCEEDED
    assert orders.orders()["Zed"] == 1
    assert "rita-pw" not in workers.logs()  # the worker's password never reaches its log
