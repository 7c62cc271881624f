"""Many workflows and runs written straight into the tables in bulk (the screens at scale: the
tests with a few hundred, bench/gui_screens.py with 10,000 workflows and 100,000 runs).

:func:`seed` writes what the stores would have written: 40% of the workflows approved, 20%
approved with a second version in review (half of those repairs a replay proposed), 30%
drafts, 10% archived; the runs are of the approved workflows, spread over 90 days, newest
first, two steps each (one run in five healed its second step).
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from sqlalchemy import insert
from sqlalchemy.engine import Engine

from desktop_app.adapters.sql.tables import (
    RunRow,
    RunStepRow,
    WorkflowRow,
    WorkflowTransitionRow,
    WorkflowVersionRow,
)
from desktop_app.core.models.common import new_id, utcnow
from desktop_app.core.models.run import Resolution, Run, RunStatus, RunStep, StepStatus
from desktop_app.core.models.workflow import Workflow, WorkflowStatus
from desktop_app.core.replay.learning import REPLAY_ACTOR

__all__ = ["seed"]

_VERBS = ("Create", "Update", "Export", "Archive", "Invite", "Approve", "Refund", "Book", "Renew")
_OBJECTS = ("contact", "invoice", "order", "ticket", "lead", "expense report", "supplier", "trip")
_DOMAINS = tuple(f"crm-{k:02d}.example.com" for k in range(20))
_RUN_STATUSES = (
    *(RunStatus.SUCCEEDED,) * 16,
    RunStatus.FAILED,
    RunStatus.FAILED,
    RunStatus.UNVERIFIED,
    RunStatus.ABORTED,
)


def seed(engine: Engine, base: Workflow, workflows: int, runs: int) -> None:
    """*workflows* workflows and *runs* runs written straight into the tables."""
    now = utcnow()
    doc = json.loads(base.model_dump_json())
    wf_rows: list[dict[str, Any]] = []
    versions: list[dict[str, Any]] = []
    transitions: list[dict[str, Any]] = []
    approved: list[str] = []
    for i in range(workflows):
        name = f"{_VERBS[i % len(_VERBS)]} {_OBJECTS[(i // len(_VERBS)) % len(_OBJECTS)]} #{i}"
        domains = [_DOMAINS[i % len(_DOMAINS)]]
        kind = i % 10  # 0-3 approved, 4-5 approved with a version in review, 6-8 draft, 9 archived
        workflow_id = new_id()
        created = now - timedelta(days=120, minutes=i)
        first = {
            WorkflowStatus.APPROVED: kind <= 5,
            WorkflowStatus.DRAFT: 6 <= kind <= 8,
            WorkflowStatus.ARCHIVED: kind == 9,
        }
        status = next(s for s, chosen in first.items() if chosen)
        numbers = [(1, status, "bench", created)]
        if kind in (4, 5):
            who = REPLAY_ACTOR if kind == 5 else "analyst"
            numbers.append((2, WorkflowStatus.IN_REVIEW, who, now - timedelta(minutes=i)))
        for number, version_status, who, at in numbers:
            document = dict(
                doc,
                id=workflow_id,
                version=number,
                name=name,
                description=f"{name} in the {domains[0]} back office",
                domains=domains,
            )
            versions.append(
                {
                    "workflow_id": workflow_id,
                    "version": number,
                    "status": version_status.value,
                    "created_at": at,
                    "created_by": who,
                    "parent_version": number - 1 or None,
                    "change_note": "healed two steps" if who == REPLAY_ACTOR else "",
                    "content_hash": f"{i}-{number}",
                    "document": json.dumps(document),
                }
            )
            transitions.append(
                {
                    "workflow_id": workflow_id,
                    "version": number,
                    "from_status": None,
                    "to_status": version_status.value,
                    "actor": who,
                    "at": at,
                    "comment": "",
                }
            )
        if status is WorkflowStatus.APPROVED:
            approved.append(workflow_id)
        latest, latest_status = numbers[-1][0], numbers[-1][1]
        wf_rows.append(
            {
                "id": workflow_id,
                "name": name,
                "description": f"{name} in the {domains[0]} back office",
                "domains": json.dumps(domains),
                "parameters": json.dumps([p.name for p in base.parameters]),
                "status": status.value,
                "latest_version": latest,
                "latest_status": latest_status.value,
                "approved_version": 1 if status is WorkflowStatus.APPROVED else None,
                "pinned": i % 500 == 0,
                "created_at": created,
                "updated_at": numbers[-1][3],
            }
        )
    run_rows, step_rows = _runs(approved, runs) if approved else ([], [])
    with engine.begin() as conn:
        for table, rows in (
            (WorkflowRow, wf_rows),
            (WorkflowVersionRow, versions),
            (WorkflowTransitionRow, transitions),
            (RunRow, run_rows),
            (RunStepRow, step_rows),
        ):
            if rows:
                conn.execute(insert(table.__table__), rows)  # type: ignore[attr-defined]


def _runs(workflow_ids: list[str], count: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    now = utcnow()
    header = json.loads(Run(workflow_id="w", workflow_version=1).model_dump_json())
    step = json.loads(
        RunStep(
            index=0,
            step_id="s",
            title="Click 'Save'",
            status=StepStatus.SUCCEEDED,
            resolution=Resolution.DIRECT,
            started_at=now,
            duration_ms=120,
        ).model_dump_json()
    )
    runs, steps = [], []
    for i in range(count):
        run_id = new_id()
        started = now - timedelta(seconds=90 * 86400 * i / count)
        finished = started + timedelta(seconds=3 + i % 40)
        status = _RUN_STATUSES[i % len(_RUN_STATUSES)]
        workflow_id = workflow_ids[i % len(workflow_ids)]
        document = dict(
            header,
            id=run_id,
            workflow_id=workflow_id,
            status=status.value,
            started_at=started.isoformat(),
            finished_at=finished.isoformat(),
        )
        runs.append(
            {
                "id": run_id,
                "workflow_id": workflow_id,
                "workflow_version": 1,
                "status": status.value,
                "trigger": ("gui", "tray", "cli", "batch")[i % 4],
                "started_at": started,
                "finished_at": finished,
                "llm_calls": 0,
                "tokens": 0,
                "error": None,
                "header": json.dumps(document),
            }
        )
        for seq in range(2):
            healed = seq == 1 and i % 5 == 0
            resolution = Resolution.FINGERPRINT if healed else Resolution.DIRECT
            steps.append(
                {
                    "run_id": run_id,
                    "seq": seq,
                    "step_id": f"s{seq}",
                    "status": StepStatus.SUCCEEDED.value,
                    "resolution": resolution.value,
                    "duration_ms": 120.0,
                    "document": json.dumps(
                        dict(step, index=seq, step_id=f"s{seq}", resolution=resolution.value)
                    ),
                }
            )
    return runs, steps
