"""Workflows, their immutable versions and review history (SQLite or PostgreSQL)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, Final

from sqlalchemy import Engine, func, or_
from sqlalchemy import select as select_columns
from sqlmodel import Session, col, delete, select

from desktop_app.adapters.sql.database import for_writing
from desktop_app.adapters.sql.dialects import JsonText
from desktop_app.adapters.sql.index_queue import mark_pending
from desktop_app.adapters.sql.tables import (
    WorkflowRow,
    WorkflowTransitionRow,
    WorkflowVersionRow,
)
from desktop_app.core.errors import NotFoundError, StoreError
from desktop_app.core.library import conflict
from desktop_app.core.models.workflow import (
    StatusTransition,
    Workflow,
    WorkflowStatus,
    WorkflowVersion,
)
from desktop_app.core.redaction import scrub_workflow
from desktop_app.core.views import ReviewItem, WorkflowSummary

__all__ = ["SqlWorkflowStore", "content_hash"]


def content_hash(workflow: Workflow) -> str:
    """A hash of a workflow's content, ignoring its version number."""
    doc = workflow.model_dump(mode="json", exclude={"version"})
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def _effective_status(rows: Sequence[WorkflowVersionRow]) -> tuple[WorkflowStatus, int | None]:
    statuses = [WorkflowStatus(r.status) for r in rows]
    approved = [r.version for r in rows if r.status == WorkflowStatus.APPROVED]
    if all(s is WorkflowStatus.ARCHIVED for s in statuses):
        return WorkflowStatus.ARCHIVED, None
    if approved:
        return WorkflowStatus.APPROVED, max(approved)
    return WorkflowStatus(max(rows, key=lambda r: r.version).status), None


class SqlWorkflowStore:
    """The workflow store over a migrated database (SQLite or PostgreSQL)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._writer = for_writing(engine)

    # ── writes ──────────────────────────────────────────────────────────────────────────────

    def add_version(self, version: WorkflowVersion) -> None:
        wf = scrub_workflow(version.workflow)  # a secret stated in its texts is never stored
        with Session(self._writer) as session:
            # Locked until commit (PostgreSQL; SQLite's writer already holds the database), so
            # two saves of the same workflow at once are told apart, never both version N.
            row = session.get(WorkflowRow, wf.id, with_for_update=True)
            if row is None:
                if wf.version != 1:
                    raise StoreError(
                        f"workflow {wf.id} does not exist; its first version must be 1"
                    )
                session.add(
                    WorkflowRow(
                        id=wf.id,
                        name=wf.name,
                        status=version.status,
                        latest_version=wf.version,
                        latest_status=version.status,
                        created_at=version.created_at,
                        updated_at=version.created_at,
                    )
                )
                session.flush()
            elif wf.version != row.latest_version + 1:
                latest = session.get(WorkflowVersionRow, (wf.id, row.latest_version))
                if wf.version == row.latest_version and latest is not None:
                    raise conflict(self._version(session, latest))
                raise StoreError(
                    f"workflow {wf.id} is at version {row.latest_version}; "
                    f"cannot add version {wf.version}"
                )
            session.add(
                WorkflowVersionRow(
                    workflow_id=wf.id,
                    version=wf.version,
                    status=version.status,
                    created_at=version.created_at,
                    created_by=version.created_by,
                    parent_version=version.parent_version,
                    change_note=version.change_note,
                    content_hash=content_hash(wf),
                    document=wf.model_dump_json(),
                )
            )
            session.flush()  # rows without ORM relationships: insert parents before children
            for t in version.transitions:
                session.add(_transition_row(wf.id, wf.version, t))
            session.flush()
            self._refresh(session, wf.id, wf)
            mark_pending(session, "workflow", wf.id)
            session.commit()

    def record_transition(
        self, workflow_id: str, version: int, transition: StatusTransition
    ) -> WorkflowVersion:
        with Session(self._writer) as session:
            vrow = session.get(WorkflowVersionRow, (workflow_id, version))
            if vrow is None:
                raise NotFoundError(f"workflow {workflow_id} has no version {version}")
            vrow.status = transition.to_status
            session.add(vrow)
            session.flush()
            session.add(_transition_row(workflow_id, version, transition))
            session.flush()
            self._refresh(session, workflow_id, None)
            mark_pending(session, "workflow", workflow_id)
            session.commit()
        return self.get_version(workflow_id, version)

    def set_pinned(self, workflow_id: str, pinned: bool) -> None:
        """Pin a workflow (the tray lists pinned workflows first) or unpin it."""
        with Session(self._writer) as session:
            row = self._row(session, workflow_id)
            row.pinned = pinned
            session.add(row)
            session.commit()

    def delete_workflow(self, workflow_id: str) -> None:
        with Session(self._writer) as session:
            self._row(session, workflow_id)
            session.exec(delete(WorkflowRow).where(col(WorkflowRow.id) == workflow_id))
            mark_pending(session, "workflow", workflow_id)  # its entry is to go
            session.commit()

    def _refresh(self, session: Session, workflow_id: str, latest: Workflow | None) -> None:
        """Recompute the workflow row's list columns from its versions."""
        row = self._row(session, workflow_id)
        vrows = session.exec(
            select(WorkflowVersionRow).where(col(WorkflowVersionRow.workflow_id) == workflow_id)
        ).all()
        newest = max(vrows, key=lambda r: r.version)
        if latest is None:
            latest = Workflow.model_validate_json(newest.document)
        status, approved = _effective_status(vrows)
        row.name = latest.name
        row.description = latest.description
        row.domains = json.dumps(list(latest.domains))
        row.parameters = json.dumps([p.name for p in latest.parameters])
        row.status = status
        row.latest_version = newest.version
        row.latest_status = newest.status
        row.approved_version = approved
        last_change = session.exec(
            select(func.max(WorkflowTransitionRow.at)).where(
                col(WorkflowTransitionRow.workflow_id) == workflow_id
            )
        ).one()
        row.updated_at = max(d for d in (newest.created_at, last_change) if d is not None)
        session.add(row)

    # ── reads ───────────────────────────────────────────────────────────────────────────────

    def get_version(self, workflow_id: str, version: int | None = None) -> WorkflowVersion:
        with Session(self._engine) as session:
            if version is None:
                version = self._row(session, workflow_id).latest_version
            vrow = session.get(WorkflowVersionRow, (workflow_id, version))
            if vrow is None:
                self._row(session, workflow_id)
                raise NotFoundError(f"workflow {workflow_id} has no version {version}")
            return self._version(session, vrow)

    def versions(self, workflow_id: str) -> list[WorkflowVersion]:
        with Session(self._engine) as session:
            self._row(session, workflow_id)
            rows = session.exec(
                select(WorkflowVersionRow)
                .where(col(WorkflowVersionRow.workflow_id) == workflow_id)
                .order_by(col(WorkflowVersionRow.version))
            ).all()
            return [self._version(session, r) for r in rows]

    def summary(self, workflow_id: str) -> WorkflowSummary:
        with Session(self._engine) as session:
            return _summary(self._row(session, workflow_id))

    def summaries(
        self,
        *,
        status: WorkflowStatus | None = None,
        ids: Sequence[str] | None = None,
        by_name: bool = False,
        limit: int | None = None,
    ) -> list[WorkflowSummary]:
        second = func.lower(WorkflowRow.name) if by_name else col(WorkflowRow.updated_at).desc()
        # Columns, not ORM objects: a list of 10,000 is read in half the time.
        query = select_columns(*_SUMMARY_COLUMNS).order_by(col(WorkflowRow.pinned).desc(), second)
        query = query.limit(limit)
        if status is not None:
            query = query.where(col(WorkflowRow.status) == status)
        if ids is not None:
            query = query.where(col(WorkflowRow.id).in_(list(ids)))
        with Session(self._engine) as session:
            return [_summary(r) for r in session.execute(query).all()]

    def find(self, ref: str) -> list[tuple[str, str]]:
        with Session(self._engine) as session:
            exact = session.get(WorkflowRow, ref)
            if exact is not None:
                return [(exact.id, exact.name)]
            clauses = [func.lower(WorkflowRow.name) == ref.lower()]
            if len(ref) >= 4:
                clauses.append(col(WorkflowRow.id).startswith(ref.lower(), autoescape=True))
            rows = session.exec(select(WorkflowRow).where(or_(*clauses))).all()
            return [(r.id, r.name) for r in rows]

    def names(self) -> list[str]:
        """Every workflow name (for "did you mean" suggestions)."""
        with Session(self._engine) as session:
            return list(session.exec(select(WorkflowRow.name)).all())

    def review_queue(self, *, offset: int = 0, limit: int = 200) -> list[ReviewItem]:
        v, t = WorkflowVersionRow, WorkflowTransitionRow

        def submission(column: Any) -> Any:
            """The newest transition into review of the version on the row (a column of it)."""
            return (
                select_columns(column)
                .where(
                    col(t.workflow_id) == col(v.workflow_id),
                    col(t.version) == col(v.version),
                    col(t.to_status) == WorkflowStatus.IN_REVIEW.value,
                )
                .order_by(col(t.id).desc())
                .limit(1)
                .correlate(v)
                .scalar_subquery()
            )

        submitted_at = submission(t.at)
        query = (
            select_columns(
                col(v.workflow_id),
                col(v.version),
                JsonText(col(v.document), "name"),
                col(v.created_by),
                col(v.created_at),
                col(v.change_note),
                submission(t.actor),
                submitted_at,
            )
            .where(col(v.status) == WorkflowStatus.IN_REVIEW.value)
            .order_by(
                func.coalesce(submitted_at, col(v.created_at)).desc(),
                col(v.workflow_id),
                col(v.version).desc(),
            )
            .offset(offset)
            .limit(limit)
        )
        with Session(self._engine) as session:
            rows = session.execute(query).all()
        return [
            ReviewItem(
                workflow_id=workflow_id,
                version=version,
                name=name,
                created_by=created_by,
                created_at=created_at,
                change_note=change_note,
                submitted_by=by,
                submitted_at=at,
            )
            for workflow_id, version, name, created_by, created_at, change_note, by, at in rows
        ]

    def review_count(self) -> int:
        query = (
            select(func.count())
            .select_from(WorkflowVersionRow)
            .where(col(WorkflowVersionRow.status) == WorkflowStatus.IN_REVIEW.value)
        )
        with Session(self._engine) as session:
            return session.exec(query).one()

    def count(self) -> tuple[int, int]:
        with Session(self._engine) as session:
            workflows = session.exec(select(func.count()).select_from(WorkflowRow)).one()
            versions = session.exec(select(func.count()).select_from(WorkflowVersionRow)).one()
            return workflows, versions

    def _row(self, session: Session, workflow_id: str) -> WorkflowRow:
        row = session.get(WorkflowRow, workflow_id)
        if row is None:
            raise NotFoundError(f"no workflow with id {workflow_id}")
        return row

    def _version(self, session: Session, vrow: WorkflowVersionRow) -> WorkflowVersion:
        trows = session.exec(
            select(WorkflowTransitionRow)
            .where(
                col(WorkflowTransitionRow.workflow_id) == vrow.workflow_id,
                col(WorkflowTransitionRow.version) == vrow.version,
            )
            .order_by(col(WorkflowTransitionRow.id))
        ).all()
        return WorkflowVersion(
            workflow=Workflow.model_validate_json(vrow.document),
            status=WorkflowStatus(vrow.status),
            created_at=vrow.created_at,
            created_by=vrow.created_by,
            parent_version=vrow.parent_version,
            change_note=vrow.change_note,
            transitions=tuple(
                StatusTransition(
                    from_status=WorkflowStatus(t.from_status) if t.from_status else None,
                    to_status=WorkflowStatus(t.to_status),
                    actor=t.actor,
                    at=t.at,
                    comment=t.comment,
                )
                for t in trows
            ),
        )


def _transition_row(workflow_id: str, version: int, t: StatusTransition) -> WorkflowTransitionRow:
    return WorkflowTransitionRow(
        workflow_id=workflow_id,
        version=version,
        from_status=t.from_status,
        to_status=t.to_status,
        actor=t.actor,
        at=t.at,
        comment=t.comment,
    )


#: What a summary is made of (see :func:`_summary`).
_SUMMARY_COLUMNS: Final = (
    col(WorkflowRow.id),
    col(WorkflowRow.name),
    col(WorkflowRow.description),
    col(WorkflowRow.domains),
    col(WorkflowRow.parameters),
    col(WorkflowRow.status),
    col(WorkflowRow.latest_version),
    col(WorkflowRow.latest_status),
    col(WorkflowRow.approved_version),
    col(WorkflowRow.pinned),
    col(WorkflowRow.created_at),
    col(WorkflowRow.updated_at),
)


def _summary(row: Any) -> WorkflowSummary:
    """The summary of a workflow row, or of a row of :data:`_SUMMARY_COLUMNS`."""
    return WorkflowSummary(
        id=row.id,
        name=row.name,
        description=row.description,
        domains=tuple(json.loads(row.domains)),
        parameters=tuple(json.loads(row.parameters)),
        status=WorkflowStatus(row.status),
        latest_version=row.latest_version,
        latest_status=WorkflowStatus(row.latest_status),
        approved_version=row.approved_version,
        pinned=row.pinned,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )
