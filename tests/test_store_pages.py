"""What the screens read in SQL: the review queue and pages of the run history (the stores)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from factories import full_workflow, run_for
from sqlalchemy import Engine

from desktop_app.adapters.sql.database import migrate, open_database
from desktop_app.adapters.sql.run_store import SqlRunStore
from desktop_app.adapters.sql.workflow_store import SqlWorkflowStore
from desktop_app.core.models.common import utcnow
from desktop_app.core.models.run import RunStatus
from desktop_app.core.models.workflow import StatusTransition, WorkflowStatus, WorkflowVersion
from desktop_app.core.replay.learning import REPLAY_ACTOR
from desktop_app.core.views import RunQuery, RunSort


@pytest.fixture
def engine(store_engine: Engine) -> Engine:
    """SQLite, then PostgreSQL."""
    return store_engine


@pytest.fixture
def sqlite_engine(tmp_path: Path) -> Engine:
    engine = open_database(tmp_path / "db" / "procedura.db")
    migrate(engine)
    return engine


def test_the_review_queue_holds_the_versions_in_review_newest_submission_first(
    engine: Engine,
) -> None:
    store = SqlWorkflowStore(engine)
    now = utcnow()
    ids = []
    for n in range(3):
        workflow = full_workflow(f"Workflow {n}").model_copy(update={"id": f"w{n}"})
        store.add_version(WorkflowVersion(workflow=workflow, created_by="ann", created_at=now))
        ids.append(workflow.id)
    # w0 v1 submitted an hour ago; w1 v2 a repair created in review now; w2 stays a draft.
    store.record_transition(
        "w0",
        1,
        StatusTransition(
            from_status=WorkflowStatus.DRAFT,
            to_status=WorkflowStatus.IN_REVIEW,
            actor="bob",
            at=now - timedelta(hours=1),
        ),
    )
    v2 = full_workflow("Workflow 1 repaired").model_copy(update={"id": "w1", "version": 2})
    store.add_version(
        WorkflowVersion(
            workflow=v2,
            status=WorkflowStatus.IN_REVIEW,
            created_by=REPLAY_ACTOR,
            created_at=now,
            change_note="healed",
        )
    )

    queue = store.review_queue()
    assert [(i.workflow_id, i.version) for i in queue] == [("w1", 2), ("w0", 1)]
    assert queue[0].name == "Workflow 1 repaired" and queue[0].change_note == "healed"
    assert queue[0].submitted_by is None and queue[0].created_by == REPLAY_ACTOR
    assert (queue[1].submitted_by, queue[1].submitted_at) == ("bob", now - timedelta(hours=1))
    assert store.review_count() == 2
    assert [(i.workflow_id, i.version) for i in store.review_queue(offset=1, limit=5)] == [
        ("w0", 1)
    ]


def test_a_page_of_runs_is_filtered_ordered_and_counted_in_sql(engine: Engine) -> None:
    workflows, runs = SqlWorkflowStore(engine), SqlRunStore(engine)
    workflow = full_workflow()
    workflows.add_version(WorkflowVersion(workflow=workflow, created_by="ann"))
    base = run_for(workflow)  # one healed step (an LLM), nine seconds
    now = utcnow()
    saved = []
    for n in range(5):
        run = base.model_copy(
            update={
                "id": f"r{n}",
                "started_at": now - timedelta(minutes=n),
                "finished_at": now - timedelta(minutes=n) + timedelta(seconds=n + 1),
                "status": RunStatus.FAILED if n % 2 else RunStatus.SUCCEEDED,
                "steps": base.steps if n == 3 else base.steps[:1],
            }
        )
        runs.save_run(run)
        saved.append(run)
    running = base.model_copy(
        update={"id": "r9", "started_at": now - timedelta(hours=1), "finished_at": None}
    )
    runs.save_run(running.model_copy(update={"status": RunStatus.RUNNING}))

    def ids(query: RunQuery, **page: int) -> list[str]:
        return [r.id for r in runs.run_page(query, **page)]

    assert ids(RunQuery()) == ["r0", "r1", "r2", "r3", "r4", "r9"]  # newest first
    assert ids(RunQuery(), offset=2, limit=2) == ["r2", "r3"]
    assert runs.run_page(RunQuery(), limit=1)[0] == saved[0]  # with its steps
    assert ids(RunQuery(sort=RunSort.STARTED, descending=False))[0] == "r9"
    assert ids(RunQuery(sort=RunSort.DURATION))[:2] == ["r4", "r3"]  # longest first
    assert ids(RunQuery(sort=RunSort.DURATION, descending=False))[0] == "r9"  # none yet
    assert ids(RunQuery(sort=RunSort.HEALED))[0] == "r3"
    failed = RunQuery(status=RunStatus.FAILED)
    assert ids(failed) == ["r1", "r3"] and runs.run_count(failed) == 2
    assert runs.run_count(RunQuery()) == 6
    assert runs.run_count(RunQuery(workflow_id="nobody")) == 0
    assert runs.run_workflows() == [(workflow.id, workflow.name)]
    assert runs.run_workflows(ids=["nobody"]) == []
