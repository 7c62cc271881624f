"""A fleet row's claims, leases and irreversible notes, on a real PostgreSQL server: what keeps
at-least-once delivery from ever doing an irreversible step twice."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from factories import full_workflow, run_for
from postgres_server import PostgresServer
from sqlalchemy import Engine

from desktop_app.adapters.sql.database import migrate, open_database
from desktop_app.adapters.sql.fleet_store import ClaimOutcome, SqlFleetStore
from desktop_app.adapters.sql.run_store import SqlRunStore
from desktop_app.adapters.sql.workflow_store import SqlWorkflowStore
from desktop_app.core.models.fleet import FleetJob, JobKind, RowState
from desktop_app.core.models.run import RunStatus
from desktop_app.core.models.workflow import WorkflowVersion

SHORT = 0.3  # seconds of lease, so that a test sees one run out


@pytest.fixture
def engine(postgres: PostgresServer) -> Iterator[Engine]:
    engine = open_database(postgres.url(postgres.new_database()))
    migrate(engine)
    yield engine
    engine.dispose()


def _job(engine: Engine, rows: int = 3) -> tuple[SqlFleetStore, str]:
    workflow = full_workflow()
    SqlWorkflowStore(engine).add_version(WorkflowVersion(workflow=workflow, created_by="amy"))
    job = FleetJob(kind=JobKind.BATCH, workflow_id=workflow.id, version=1, created_by="amy")
    store = SqlFleetStore(engine)
    assert store.add_job(job, [{"n": n} for n in range(rows)])
    return store, job.id


def _after_lease(store: SqlFleetStore, job: str, row: int, worker: str) -> ClaimOutcome:
    """Claim *row* for *worker* once the lease holding it ran out (the server's clock)."""
    deadline = time.monotonic() + 10
    while True:
        outcome = store.claim(job, row, worker, SHORT).outcome
        if outcome is not ClaimOutcome.BUSY or time.monotonic() > deadline:
            return outcome
        time.sleep(0.05)


def test_a_row_is_one_workers_while_its_lease_holds(engine: Engine) -> None:
    store, job = _job(engine)
    first = store.claim(job, 1, "w1", 30)
    assert first.outcome is ClaimOutcome.RUN and first.row is not None
    assert first.row.attempt == 1 and first.row.values == {"n": 0}
    assert store.claim(job, 1, "w2", 30).outcome is ClaimOutcome.BUSY
    store.finish(job, 1, "w1", RowState.SUCCEEDED, run_id="r1")
    assert store.claim(job, 1, "w2", 30).outcome is ClaimOutcome.GONE
    assert store.rows(job)[0].state is RowState.SUCCEEDED


def test_a_vanished_worker_s_row_runs_again_when_nothing_irreversible_began(
    engine: Engine,
) -> None:
    store, job = _job(engine)
    assert store.claim(job, 1, "w1", SHORT).outcome is ClaimOutcome.RUN
    assert _after_lease(store, job, 1, "w2") is ClaimOutcome.RUN
    row = store.rows(job)[0]
    assert (row.worker, row.attempt, row.state) == ("w2", 2, RowState.RUNNING)
    # The first worker, back from a long pause, may not begin the irreversible step now.
    assert not store.note_irreversible(job, 1, "w1", "Place the order")
    assert store.renew(job, 1, "w1", 30)  # and its heartbeat tells it to stop
    store.finish(job, 1, "w1", RowState.FAILED, error="late")  # changes nothing: not its row
    assert store.rows(job)[0].state is RowState.RUNNING


def test_a_row_whose_worker_vanished_in_an_irreversible_step_needs_attention(
    engine: Engine,
) -> None:
    store, job = _job(engine)
    assert store.claim(job, 2, "w1", SHORT).outcome is ClaimOutcome.RUN
    assert store.note_irreversible(job, 2, "w1", "Place the order")
    assert _after_lease(store, job, 2, "w2") is ClaimOutcome.GONE
    row = store.rows(job)[1]
    assert row.state is RowState.NEEDS_ATTENTION
    assert "Place the order" in (row.error or "") and "not done again" in (row.error or "")
    assert store.resume(job) == []  # a person decides about it: resume leaves it
    assert store.rows(job)[1].state is RowState.NEEDS_ATTENTION


@pytest.mark.parametrize(
    ("run_ended", "row_ends"),
    [
        (RunStatus.SUCCEEDED, RowState.SUCCEEDED),
        (RunStatus.FAILED, RowState.NEEDS_ATTENTION),
        (RunStatus.RUNNING, RowState.NEEDS_ATTENTION),
    ],
)
def test_a_row_whose_worker_vanished_after_its_run_ended_ends_as_the_run_did(
    engine: Engine, run_ended: RunStatus, row_ends: RowState
) -> None:
    """The worker noted the irreversible step of its run, the run ended and its record was
    saved, then the worker vanished before saying how the row went: the run's own record
    says it (a run still going, or failed after the step began, needs a person)."""
    store, job = _job(engine)
    ran = {"status": run_ended, "workflow_id": store.job(job).workflow_id}
    run = run_for(full_workflow()).model_copy(update=ran)
    assert store.claim(job, 3, "w1", SHORT).outcome is ClaimOutcome.RUN
    assert store.note_irreversible(job, 3, "w1", "Place the order", run.id)
    SqlRunStore(engine).save_run(run)
    assert _after_lease(store, job, 3, "w2") is ClaimOutcome.GONE
    row = store.rows(job)[2]
    assert (row.state, row.run_id) == (row_ends, run.id)


def test_cancel_and_resume(engine: Engine) -> None:
    store, job = _job(engine, rows=4)
    assert store.claim(job, 1, "w1", 30).outcome is ClaimOutcome.RUN
    assert store.cancel(job) == 3  # the queued ones; the running one stops at its next step
    assert store.renew(job, 1, "w1", 30)  # its worker hears of it
    store.finish(job, 1, "w1", RowState.CANCELLED)
    assert store.claim(job, 2, "w2", 30).outcome is ClaimOutcome.GONE
    assert store.resume(job) == [1, 2, 3, 4]
    assert store.claim(job, 2, "w2", 30).outcome is ClaimOutcome.RUN
    assert not store.job(job).cancel_requested
