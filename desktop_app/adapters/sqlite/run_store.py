"""Run records and remembered repairs (experiences) in SQLite."""

from __future__ import annotations

from sqlalchemy import Engine, func
from sqlmodel import Session, col, delete, select

from desktop_app.adapters.sqlite.tables import ExperienceRow, RunRow, RunStepRow
from desktop_app.core.errors import NotFoundError
from desktop_app.core.models.experience import Experience
from desktop_app.core.models.run import Run, RunStep

__all__ = ["SqlExperienceStore", "SqlRunStore"]


class SqlRunStore:
    """The run store over a migrated SQLite engine."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def save_run(self, run: Run) -> None:
        with Session(self._engine) as session:
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
            session.exec(delete(RunStepRow).where(col(RunStepRow.run_id) == run.id))
            for step in run.steps:
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


class SqlExperienceStore:
    """The experience store over a migrated SQLite engine."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def add_experience(self, experience: Experience) -> None:
        with Session(self._engine) as session:
            session.add(
                ExperienceRow(
                    id=experience.id,
                    workflow_id=experience.workflow_id,
                    step_id=experience.step_id,
                    created_at=experience.created_at,
                    document=experience.model_dump_json(),
                )
            )
            session.commit()

    def experiences(self) -> list[Experience]:
        with Session(self._engine) as session:
            docs = session.exec(
                select(ExperienceRow.document).order_by(col(ExperienceRow.created_at))
            ).all()
        return [Experience.model_validate_json(d) for d in docs]

    def count(self) -> int:
        with Session(self._engine) as session:
            return session.exec(select(func.count()).select_from(ExperienceRow)).one()
