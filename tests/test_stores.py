"""The SQLite stores and the media store, on real files in a temp dir."""

from __future__ import annotations

import asyncio
import hashlib
import threading
from pathlib import Path

import pytest
from factories import experience_for, full_trajectory, full_workflow, run_for
from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import IntegrityError

from desktop_app.adapters.media_store import FileMediaStore
from desktop_app.adapters.sql.database import for_writing, migrate, open_database
from desktop_app.adapters.sql.run_store import SqlExperienceStore, SqlRunStore
from desktop_app.adapters.sql.trajectory_store import SqlTrajectoryStore
from desktop_app.adapters.sql.workflow_store import SqlWorkflowStore
from desktop_app.adapters.write_behind import WriteBehind
from desktop_app.core.errors import ConflictError, NotFoundError, StoreError
from desktop_app.core.models import (
    RunStatus,
    StatusTransition,
    WorkflowStatus,
    WorkflowVersion,
)


@pytest.fixture
def engine(store_engine: Engine) -> Engine:
    """SQLite, then PostgreSQL."""
    return store_engine


@pytest.fixture
def sqlite_engine(tmp_path: Path) -> Engine:
    engine = open_database(tmp_path / "db" / "procedura.db")
    migrate(engine)
    return engine


def _version(number: int = 1, **changes: object) -> WorkflowVersion:
    wf = full_workflow().model_copy(update={"id": "w1", "version": number, **changes})
    return WorkflowVersion(workflow=wf, created_by="ann")


def test_connection_pragmas(sqlite_engine: Engine) -> None:
    with sqlite_engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 5000
        assert conn.exec_driver_sql("PRAGMA secure_delete").scalar() == 1


def test_workflow_versions_round_trip(engine: Engine) -> None:
    store = SqlWorkflowStore(engine)
    v1 = _version(1)
    store.add_version(v1)
    assert store.get_version("w1") == v1
    v2 = _version(2, name="Everything, faster")
    store.add_version(v2)
    assert store.get_version("w1", 1) == v1
    assert store.get_version("w1") == v2
    assert [v.version for v in store.versions("w1")] == [1, 2]
    summary = store.summary("w1")
    assert (summary.name, summary.latest_version, summary.status) == (
        "Everything, faster",
        2,
        WorkflowStatus.DRAFT,
    )
    assert store.count() == (1, 2)


def test_versions_are_never_replaced(engine: Engine) -> None:
    store = SqlWorkflowStore(engine)
    store.add_version(_version(1))
    # Someone else's version 1 is there: told as a conflict, never replaced.
    with pytest.raises(ConflictError, match=r"saved version 1 .* nothing was saved"):
        store.add_version(_version(1, name="overwrite attempt"))
    with pytest.raises(StoreError, match="cannot add version 3"):
        store.add_version(_version(3))
    assert store.get_version("w1", 1).workflow.name == "Everything"


def test_transitions_update_the_effective_status(engine: Engine) -> None:
    store = SqlWorkflowStore(engine)
    store.add_version(_version(1))
    store.record_transition(
        "w1",
        1,
        StatusTransition(
            from_status=WorkflowStatus.DRAFT, to_status=WorkflowStatus.APPROVED, actor="bo"
        ),
    )
    store.add_version(_version(2, name="v2"))
    summary = store.summary("w1")
    # a newer draft does not hide the approved version that runs
    assert (summary.status, summary.latest_status, summary.approved_version) == (
        WorkflowStatus.APPROVED,
        WorkflowStatus.DRAFT,
        1,
    )
    assert store.get_version("w1", 1).transitions[-1].actor == "bo"
    assert [s.id for s in store.summaries(status=WorkflowStatus.APPROVED)] == ["w1"]
    assert store.summaries(status=WorkflowStatus.DRAFT) == []


def test_find_by_id_prefix_and_name(engine: Engine) -> None:
    store = SqlWorkflowStore(engine)
    store.add_version(_version(1))
    assert store.find("w1") == [("w1", "Everything")]
    assert store.find("everything") == [("w1", "Everything")]
    assert store.find("nothing") == []
    with pytest.raises(NotFoundError):
        store.get_version("nope")


def test_trajectory_round_trip_and_incremental_append(engine: Engine) -> None:
    store = SqlTrajectoryStore(engine)
    full = full_trajectory()
    store.add(full)
    assert store.get(full.id) == full

    live = full.model_copy(update={"id": "live", "events": (), "ended_at": None})
    store.begin(live)
    store.append_events("live", full.events[:3])
    store.append_events("live", full.events[3:])
    assert store.get("live").events == full.events
    store.append_raw_events("live", full.events[:2])
    assert store.raw_events("live") == list(full.events[:2])
    store.finish(live.model_copy(update={"ended_at": full.ended_at, "events": full.events}))
    assert store.get("live").ended_at == full.ended_at
    assert store.get("live").events == full.events
    assert {s.id: s.event_count for s in store.summaries()} == {full.id: 16, "live": 16}
    with pytest.raises(StoreError, match="already exists"):
        store.add(full)
    store.delete("live")
    assert store.count() == 1
    with engine.connect() as conn:
        left = conn.execute(
            text("SELECT count(*) FROM trajectory_events WHERE trajectory_id='live'")
        )
        assert left.scalar() == 0


def test_runs_and_experiences_round_trip_and_cascade(engine: Engine) -> None:
    workflows = SqlWorkflowStore(engine)
    v1 = _version(1)
    workflows.add_version(v1)
    runs = SqlRunStore(engine)
    run = run_for(v1.workflow)
    runs.save_run(run.model_copy(update={"status": RunStatus.RUNNING, "steps": run.steps[:1]}))
    runs.save_run(run)
    assert runs.get_run(run.id) == run
    assert runs.runs("w1") == [run]
    experiences = SqlExperienceStore(engine)
    exp = experience_for(v1.workflow)
    experiences.add_experience(exp)
    assert experiences.experiences() == [exp]

    workflows.delete_workflow("w1")
    assert runs.count() == 0
    assert experiences.count() == 0
    assert workflows.count() == (0, 0)


def test_media_store_is_content_addressed(tmp_path: Path) -> None:
    media = FileMediaStore(tmp_path / "media")
    data = b"\x89PNG fake image bytes"
    ref = media.put(data, "PNG")
    assert ref == hashlib.sha256(data).hexdigest() + ".png"
    assert media.put(data, "png") == ref
    assert media.get(ref) == data
    assert media.path(ref).parent.parent.parent == tmp_path / "media"
    assert media.count() == (1, len(data))
    assert not list((tmp_path / "media").rglob(".tmp-*"))
    with pytest.raises(StoreError, match=r"cannot store \.gif"):
        media.put(data, "gif")
    with pytest.raises(StoreError, match="not a media reference"):
        media.get("../../etc/passwd")
    with pytest.raises(NotFoundError):
        media.get("0" * 64 + ".png")


def test_writes_behind_a_replay_land_in_order_and_reads_see_them(
    engine: Engine, tmp_path: Path
) -> None:
    workflows = SqlWorkflowStore(engine)
    v1 = _version(1)
    workflows.add_version(v1)
    runs, media = SqlRunStore(engine), FileMediaStore(tmp_path / "media")
    writes = WriteBehind(runs, media)
    run = run_for(v1.workflow)
    shot = b"\x89PNG a step's screenshot"
    ref = writes.media.put(shot, "png")
    assert ref == media.ref_of(shot, "png")
    assert writes.media.get(ref) == shot and writes.media.exists(ref)  # on disk or not yet
    for n in range(len(run.steps) + 1):  # as a replay saves its record after every step
        writes.runs.save_run(run.model_copy(update={"steps": run.steps[:n]}))
    assert writes.runs.get_run(run.id) == run  # a read waits for the writes before it
    writes.close()
    assert runs.get_run(run.id) == run and media.get(ref) == shot

    gone = run.model_copy(update={"id": "r-unknown-workflow", "workflow_id": "nope"})
    writes.runs.save_run(gone)  # refused by the database (foreign key), on the writing thread
    writes.settle()
    with pytest.raises(IntegrityError, match=r"(?i)foreign key"):
        writes.runs.save_run(run)  # the next write hears of it...
    writes.runs.save_run(gone)
    with pytest.raises(IntegrityError, match=r"(?i)foreign key"):
        asyncio.run(writes.drain())  # ...or the end of the run does, once
    asyncio.run(writes.drain())
    writes.close()


def test_two_writers_that_read_first_both_land(sqlite_engine: Engine) -> None:
    """A write that reads first (save a run: look it up, then update it) waits for a writer
    that committed meanwhile, instead of failing with "database is locked" (a batch's runs and
    the write-behind thread saved at once)."""
    read = threading.Event()
    errors: list[BaseException] = []

    def first(conn: Connection) -> None:
        with conn.begin():
            conn.execute(text("SELECT count(*) FROM runs")).one()
            read.set()
            # the other writer now wants the lock: it waits for this transaction to end
            conn.execute(text("SELECT count(*) FROM runs")).one()
            conn.execute(text("UPDATE runs SET error = 'x' WHERE 0"))

    def second() -> None:
        read.wait(5)
        try:
            store.save_run(run_for(workflow))
        except BaseException as exc:
            errors.append(exc)

    engine = sqlite_engine
    store = SqlRunStore(engine)
    workflow = _version(1).workflow
    SqlWorkflowStore(engine).add_version(_version(1))
    with for_writing(engine).connect() as conn:
        other = threading.Thread(target=second)
        other.start()
        first(conn)
        other.join(10)
    assert not errors and store.count() == 1


def test_runs_saved_from_two_threads_all_land(engine: Engine) -> None:
    store = SqlRunStore(engine)
    SqlWorkflowStore(engine).add_version(_version(1))
    errors: list[BaseException] = []
    runs = [run_for(_version(1).workflow).model_copy(update={"id": f"r{i}"}) for i in range(2)]

    def save(run_index: int) -> None:
        try:
            run = runs[run_index]
            for n in range(1, 60):
                store.save_run(
                    run.model_copy(update={"steps": run.steps[: n % 3], "error": str(n)})
                )
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=save, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors[0]
    assert store.count() == 2
