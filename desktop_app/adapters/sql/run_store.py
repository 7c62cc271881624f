"""Run records and remembered repairs (experiences) in SQLite."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC
from typing import Any

from sqlalchemy import Engine, func
from sqlalchemy import select as select_columns
from sqlmodel import Session, col, delete, select

from desktop_app.adapters.sql.database import for_writing
from desktop_app.adapters.sql.dialects import Days
from desktop_app.adapters.sql.index_queue import mark_pending
from desktop_app.adapters.sql.tables import ExperienceRow, RunRow, RunStepRow, WorkflowRow
from desktop_app.core.errors import NotFoundError
from desktop_app.core.models.common import utcnow
from desktop_app.core.models.experience import Experience, site_of
from desktop_app.core.models.run import Resolution, Run, RunStatus, RunStep
from desktop_app.core.scores import FAILING_RUNS
from desktop_app.core.views import RunQuery, RunSort, RunStats

__all__ = ["SqlExperienceStore", "SqlRunStore"]


class SqlRunStore:
    """The run store over a migrated database (SQLite or PostgreSQL)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._writer = for_writing(engine)

    def save_run(self, run: Run) -> None:
        with Session(self._writer) as session:
            row = session.get(RunRow, run.id) or RunRow(
                id=run.id,
                workflow_id=run.workflow_id,
                workflow_version=run.workflow_version,
                status=run.status,
                trigger=run.trigger,
                started_at=run.started_at,
                header="{}",
            )
            row.status = run.status
            row.finished_at = run.finished_at
            row.llm_calls = run.llm_calls
            row.tokens = run.tokens
            row.error = run.error
            row.header = run.model_copy(update={"steps": ()}).model_dump_json()
            session.add(row)
            session.flush()
            stored = session.exec(
                select(func.count()).select_from(RunStepRow).where(col(RunStepRow.run_id) == run.id)
            ).one()
            new_steps = run.steps[stored:]  # a run's steps only grow while it runs
            if stored > len(run.steps) or any(
                s.index != i for i, s in enumerate(new_steps, stored)
            ):
                session.exec(delete(RunStepRow).where(col(RunStepRow.run_id) == run.id))
                new_steps = run.steps
            for step in new_steps:
                session.add(
                    RunStepRow(
                        run_id=run.id,
                        seq=step.index,
                        step_id=step.step_id,
                        status=step.status,
                        resolution=step.resolution,
                        duration_ms=step.duration_ms,
                        document=step.model_dump_json(),
                    )
                )
            session.commit()

    def get_run(self, run_id: str) -> Run:
        with Session(self._engine) as session:
            row = session.get(RunRow, run_id)
            if row is None:
                raise NotFoundError(f"no run with id {run_id}")
            return self._run(session, row)

    def runs(self, workflow_id: str | None = None, limit: int = 100) -> list[Run]:
        query = select(RunRow).order_by(col(RunRow.started_at).desc()).limit(limit)
        if workflow_id is not None:
            query = query.where(col(RunRow.workflow_id) == workflow_id)
        with Session(self._engine) as session:
            return [self._run(session, r) for r in session.exec(query).all()]

    def count(self) -> int:
        with Session(self._engine) as session:
            return session.exec(select(func.count()).select_from(RunRow)).one()

    def run_page(self, query: RunQuery, *, offset: int = 0, limit: int = 100) -> list[Run]:
        key = _sort_key(query.sort)
        # Nothing (a run still going has no duration) sorts below everything, on both engines.
        order = key.desc().nulls_last() if query.descending else key.asc().nulls_first()
        select_rows = (
            _where(select(RunRow), query)
            .order_by(order, col(RunRow.started_at).desc(), col(RunRow.id).desc())
            .offset(offset)
            .limit(limit)
        )
        if query.sort is RunSort.WORKFLOW:
            select_rows = select_rows.outerjoin(
                WorkflowRow, col(WorkflowRow.id) == col(RunRow.workflow_id)
            )
        with Session(self._engine) as session:
            rows = session.exec(select_rows).all()
            steps = session.exec(
                select(RunStepRow.run_id, RunStepRow.document)
                .where(col(RunStepRow.run_id).in_([r.id for r in rows]))
                .order_by(col(RunStepRow.run_id), col(RunStepRow.seq))
            ).all()
        by_run: dict[str, list[RunStep]] = {}
        for run_id, document in steps:
            by_run.setdefault(run_id, []).append(RunStep.model_validate_json(document))
        return [
            Run.model_validate_json(r.header).model_copy(
                update={"steps": tuple(by_run.get(r.id, ()))}
            )
            for r in rows
        ]

    def run_count(self, query: RunQuery) -> int:
        with Session(self._engine) as session:
            count = session.exec(_where(select(func.count()).select_from(RunRow), query)).one()
            return int(count)

    def run_workflows(self, ids: Sequence[str] | None = None) -> list[tuple[str, str]]:
        query = (
            select(WorkflowRow.id, WorkflowRow.name)
            .where(col(WorkflowRow.id).in_(select(RunRow.workflow_id).distinct()))
            .order_by(func.lower(WorkflowRow.name), col(WorkflowRow.id))
        )
        if ids is not None:
            query = query.where(col(WorkflowRow.id).in_(list(ids)))
        with Session(self._engine) as session:
            return [(i, n) for i, n in session.exec(query).all()]

    def find(self, ref: str) -> list[str]:
        query = (
            select(RunRow.id)
            .where(col(RunRow.id).startswith(ref.lower(), autoescape=True))
            .limit(20)
        )
        with Session(self._engine) as session:
            return list(session.exec(query).all())

    def interrupt_running(self, reason: str) -> int:
        with Session(self._writer) as session:
            rows = session.exec(select(RunRow).where(col(RunRow.status) == RunStatus.RUNNING)).all()
            for row in rows:
                run = Run.model_validate_json(row.header)
                finished = run.model_copy(
                    update={
                        "status": RunStatus.INTERRUPTED,
                        "finished_at": utcnow(),
                        "error": reason,
                    }
                )
                row.status = finished.status
                row.finished_at = finished.finished_at
                row.error = reason
                row.header = finished.model_dump_json()
                session.add(row)
            session.commit()
            return len(rows)

    def run_stats(self) -> dict[str, RunStats]:
        # One row per workflow, counted in SQL (a list of 10,000 workflows over 100,000 runs
        # is read in a few hundred milliseconds, most of it in SQLite's C code).
        status = col(RunRow.status)
        query = select_columns(
            col(RunRow.workflow_id),
            func.count(),
            func.count().filter(status != RunStatus.RUNNING.value),
            func.count().filter(status == RunStatus.SUCCEEDED.value),
            func.count().filter(status == RunStatus.UNVERIFIED.value),
            func.max(col(RunRow.started_at)),
        ).group_by(col(RunRow.workflow_id))
        with Session(self._engine) as session:
            rows = session.execute(query).all()
        failing = self._failing()
        return {
            workflow_id: RunStats(
                workflow_id=workflow_id,
                runs=runs,
                finished=finished,
                succeeded=succeeded,
                unverified=unverified,
                last_run_at=last.replace(tzinfo=UTC) if last and last.tzinfo is None else last,
                failing_version=failing.get(workflow_id),
            )
            for workflow_id, runs, finished, succeeded, unverified, last in rows
        }

    def _failing(self) -> dict[str, int]:
        """Workflow id → the version whose last :data:`FAILING_RUNS` finished runs of the
        workflow all failed (one query, newest runs first per workflow; only those workflows
        come back)."""
        newest = (
            select(
                RunRow.workflow_id,
                RunRow.workflow_version,
                RunRow.status,
                func.row_number()
                .over(
                    partition_by=col(RunRow.workflow_id),
                    order_by=col(RunRow.started_at).desc(),
                )
                .label("rank"),
            )
            .where(col(RunRow.status) != RunStatus.RUNNING.value)
            .subquery()
        )
        failed = newest.c.status == RunStatus.FAILED.value
        query = (
            select(newest.c.workflow_id, func.min(newest.c.workflow_version))
            .where(newest.c.rank <= FAILING_RUNS)
            .group_by(newest.c.workflow_id)
            .having(
                (func.count() == FAILING_RUNS)
                & (func.count().filter(failed) == FAILING_RUNS)
                & (func.min(newest.c.workflow_version) == func.max(newest.c.workflow_version))
            )
        )
        with Session(self._engine) as session:
            return {workflow_id: version for workflow_id, version in session.exec(query).all()}

    def _run(self, session: Session, row: RunRow) -> Run:
        steps = session.exec(
            select(RunStepRow.document)
            .where(col(RunStepRow.run_id) == row.id)
            .order_by(col(RunStepRow.seq))
        ).all()
        header = Run.model_validate_json(row.header)
        return header.model_copy(
            update={"steps": tuple(RunStep.model_validate_json(doc) for doc in steps)}
        )


def _where(query: Any, runs: RunQuery) -> Any:
    """*query* over the runs table restricted to the runs *runs* selects."""
    if runs.workflow_id is not None:
        query = query.where(col(RunRow.workflow_id) == runs.workflow_id)
    if runs.status is not None:
        query = query.where(col(RunRow.status) == runs.status.value)
    return query


#: Resolutions that are not heals (:attr:`Resolution.is_heal`).
_NOT_HEALS = [r.value for r in Resolution if not r.is_heal]


def _sort_key(sort: RunSort) -> Any:
    """The SQL expression a page of runs is ordered by."""
    if sort is RunSort.WORKFLOW:
        return func.lower(WorkflowRow.name)
    if sort is RunSort.DURATION:  # a run still going has none: first, as the table's -1 was
        return Days(col(RunRow.started_at), col(RunRow.finished_at))
    if sort is RunSort.HEALED:
        return (
            select(func.count())
            .select_from(RunStepRow)
            .where(
                col(RunStepRow.run_id) == col(RunRow.id),
                col(RunStepRow.resolution).is_not(None),
                col(RunStepRow.resolution).not_in(_NOT_HEALS),
            )
            .correlate(RunRow)
            .scalar_subquery()
        )
    columns: dict[RunSort, Any] = {
        RunSort.VERSION: RunRow.workflow_version,
        RunSort.STATUS: RunRow.status,
        RunSort.TRIGGER: RunRow.trigger,
        RunSort.STARTED: RunRow.started_at,
        RunSort.LLM_CALLS: RunRow.llm_calls,
    }
    return col(columns[sort])


class SqlExperienceStore:
    """The experience store over a migrated SQLite engine."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._writer = for_writing(engine)

    def add_experience(self, experience: Experience) -> None:
        with Session(self._writer) as session:
            session.add(
                ExperienceRow(
                    id=experience.id,
                    workflow_id=experience.workflow_id,
                    step_id=experience.step_id,
                    site=site_of(experience.page_url),
                    created_at=experience.created_at,
                    document=experience.model_dump_json(),
                )
            )
            mark_pending(session, "experience", experience.id)
            session.commit()

    def experiences(self) -> list[Experience]:
        return self.find_experiences()

    def find_experiences(
        self,
        *,
        workflow_id: str | None = None,
        step_id: str | None = None,
        site: str | None = None,
    ) -> list[Experience]:
        query = select(ExperienceRow.document).order_by(col(ExperienceRow.created_at))
        if workflow_id is not None:
            query = query.where(col(ExperienceRow.workflow_id) == workflow_id)
        if step_id is not None:
            query = query.where(col(ExperienceRow.step_id) == step_id)
        if site is not None:
            query = query.where(col(ExperienceRow.site) == site)
        with Session(self._engine) as session:
            docs = session.exec(query).all()
        return [Experience.model_validate_json(d) for d in docs]

    def get_experience(self, experience_id: str) -> Experience | None:
        with Session(self._engine) as session:
            row = session.get(ExperienceRow, experience_id)
            return Experience.model_validate_json(row.document) if row is not None else None

    def get_experiences(self, ids: Sequence[str]) -> dict[str, Experience]:
        if not ids:
            return {}
        query = select(ExperienceRow.document).where(col(ExperienceRow.id).in_(list(ids)))
        with Session(self._engine) as session:
            docs = session.exec(query).all()
        found = (Experience.model_validate_json(d) for d in docs)
        return {e.id: e for e in found}

    def site_count(self, site: str) -> int:
        query = (
            select(func.count()).select_from(ExperienceRow).where(col(ExperienceRow.site) == site)
        )
        with Session(self._engine) as session:
            return session.exec(query).one()

    def delete_experiences(self, ids: Sequence[str]) -> None:
        if not ids:
            return
        with Session(self._writer) as session:
            session.exec(delete(ExperienceRow).where(col(ExperienceRow.id).in_(list(ids))))
            session.commit()

    def update_experiences(self, experiences: Sequence[Experience]) -> None:
        with Session(self._writer) as session:
            for experience in experiences:
                row = session.get(ExperienceRow, experience.id)
                if row is None:
                    continue
                row.document = experience.model_dump_json()
                row.uses = experience.successes + experience.failures
                row.last_used_at = experience.last_used_at
                session.add(row)
            session.commit()

    def count(self) -> int:
        with Session(self._engine) as session:
            return session.exec(select(func.count()).select_from(ExperienceRow)).one()
