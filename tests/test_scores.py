"""Every version carries its record (how its runs went) and a version whose recent runs fail,
or that nobody ran for a while, is flagged stale: in ``workflows show``, the Library and Review.
Runs are stored in the real run store; nothing is ever archived for being stale."""

from __future__ import annotations

from datetime import timedelta

import pytest
from conftest import Cli
from gui_support import Gui, until
from replay_support import approve, services

from desktop_app.core.models.common import utcnow
from desktop_app.core.models.run import FailureKind, Run, RunStatus, RunStep, StepStatus
from desktop_app.core.models.workflow import GotoStep, Workflow, WorkflowStatus
from desktop_app.core.scores import FAILING_RUNS, stale_reason, version_record


def _run(workflow_id: str, status: RunStatus, *, version: int = 1, days_ago: float = 0) -> Run:
    start = utcnow() - timedelta(days=days_ago)
    failed = status is RunStatus.FAILED
    step = RunStep(
        index=0,
        step_id="s1",
        title="Click 'Save'",
        status=StepStatus.FAILED if failed else StepStatus.SUCCEEDED,
        started_at=start,
        duration_ms=1000,
        llm_calls=1,
        prompt_tokens=90,
        completion_tokens=10,
        failure=FailureKind.ELEMENT_MISSING if failed else None,
    )
    return Run(
        workflow_id=workflow_id,
        workflow_version=version,
        status=status,
        started_at=start,
        finished_at=start + timedelta(seconds=4 if failed else 2),
        steps=(step,),
    )


def _workflow() -> Workflow:
    return Workflow(name="Send the report", steps=(GotoStep(title="Go", url="https://a.test/"),))


def test_a_record_counts_outcomes_heals_costs_and_the_last_failure() -> None:
    runs = [
        _run("w", RunStatus.SUCCEEDED, days_ago=3),
        _run("w", RunStatus.UNVERIFIED, days_ago=2),
        _run("w", RunStatus.FAILED, days_ago=1),
        _run("w", RunStatus.SUCCEEDED, version=2),
        _run("w", RunStatus.RUNNING),
    ]
    record = version_record("w", 1, runs)
    assert (record.runs, record.succeeded, record.unverified, record.failed) == (3, 1, 1, 1)
    assert record.success_rate == pytest.approx(1 / 3)
    assert (record.llm_calls, record.tokens, record.median_ms) == (3, 300, 2000)
    assert record.last_failure == "step 1 'Click 'Save'': element missing"
    assert record.recent_failures == 1
    assert "3 finished run(s): 1 succeeded (33%), 1 done, unverified, 1 failed" in record.lines()
    assert version_record("w", 3, runs).lines() == ["not run yet"]


def test_stale_when_the_last_runs_fail_or_nobody_runs_it() -> None:
    now = utcnow()
    failing = version_record("w", 1, [_run("w", RunStatus.FAILED) for _ in range(FAILING_RUNS)])
    assert stale_reason(failing, since=now, now=now, stale_after_days=60) == (
        f"its last {FAILING_RUNS} runs failed"
    )
    recovered = version_record(
        "w",
        1,
        [
            *(_run("w", RunStatus.FAILED, days_ago=1) for _ in range(3)),
            _run("w", RunStatus.SUCCEEDED),
        ],
    )
    assert stale_reason(recovered, since=now, now=now, stale_after_days=60) is None
    idle = version_record("w", 1, [_run("w", RunStatus.SUCCEEDED, days_ago=61.5)])
    assert stale_reason(idle, since=now, now=now, stale_after_days=60) == (
        "nobody ran it for 61 days"
    )
    assert stale_reason(idle, since=now, now=now, stale_after_days=0) is None
    never = version_record("w", 1, [])
    month_ago = now - timedelta(days=30)
    assert stale_reason(never, since=month_ago, now=now, stale_after_days=30) == (
        "never run in the 30 days since it was approved"
    )


def test_workflows_show_prints_the_record_and_the_stale_flag(procedura: Cli) -> None:
    with services() as sv:
        version = approve(sv, _workflow())
        for _ in range(FAILING_RUNS):
            sv.runs.save_run(_run(version.workflow_id, RunStatus.FAILED))
    shown = procedura("workflows", "show", version.workflow_id[:8])
    assert shown.exit_code == 0, shown.stderr
    assert f"stale: its last {FAILING_RUNS} runs failed" in shown.stdout
    assert "  3 finished run(s): 0 succeeded (0%), 0 done, unverified, 3 failed" in shown.stdout
    assert "last failure " in shown.stdout and ": step 1 'Click 'Save'': element missing" in (
        shown.stdout
    )
    with services() as sv:  # flagged, never archived
        assert sv.workflows.get(version.workflow_id).status is WorkflowStatus.APPROVED


@pytest.mark.slow
def test_the_library_and_review_show_the_record_and_flag_a_stale_version(gui: Gui) -> None:
    def seed() -> str:
        version = approve(gui.services, _workflow())
        for _ in range(FAILING_RUNS):
            gui.services.runs.save_run(_run(version.workflow_id, RunStatus.FAILED))
        return version.workflow_id

    workflow_id = gui.call(seed)
    page = gui.window.library
    gui.run(page.reload())
    from PySide6.QtCore import Qt

    assert len(page.visible_rows()) == 1  # the list marks it too, saying why when pointed at
    status = page.model.index(0, page.model.HEADERS.index("Status"))
    assert page.model.data(status) == "Approved · stale"
    assert page.model.data(status, Qt.ItemDataRole.ToolTipRole) == (
        f"Stale: its last {FAILING_RUNS} runs failed"
    )
    page.select(workflow_id)
    gui.run(until(lambda: "How version 1's runs went" in page.details.toPlainText()))
    text = page.details.toPlainText()
    assert f"Stale: its last {FAILING_RUNS} runs failed" in text
    assert "Last failure of v1" in text and "element missing" in text

    review = gui.window.review
    review.show_version(workflow_id, 1)
    gui.run(until(lambda: "How its runs went" in review.diff_view.toPlainText()))
    assert f"Stale: its last {FAILING_RUNS} runs failed" in review.diff_view.toPlainText()


def test_the_library_list_marks_stale_only_what_the_details_call_stale() -> None:
    from desktop_app.ui.library_model import LibraryRow

    with services() as sv:
        flaky = approve(sv, _workflow())
        for status in (RunStatus.FAILED, RunStatus.FAILED, RunStatus.SUCCEEDED, RunStatus.FAILED):
            sv.runs.save_run(_run(flaky.workflow_id, status))
        failing_before = approve(sv, _workflow())
        for _ in range(FAILING_RUNS):
            sv.runs.save_run(_run(failing_before.workflow_id, RunStatus.FAILED, days_ago=1))
        fixed = sv.workflows.save(
            failing_before.workflow.model_copy(update={"description": "fixed"}), actor="analyst"
        )
        sv.workflows.approve(fixed.version.workflow_id, actor="analyst", version=2)
        idle = approve(sv, _workflow())
        sv.runs.save_run(_run(idle.workflow_id, RunStatus.SUCCEEDED, days_ago=90))
        stats = sv.runs.run_stats()
        rows = {
            s.id: LibraryRow(s, stats.get(s.id)).with_stale(stale_after_days=60, now=utcnow())
            for s in sv.workflows.list()
        }
    assert rows[flaky.workflow_id].stale is None  # 2 failures in a row, not 3
    assert rows[failing_before.workflow_id].stale is None  # version 1 failed, 2 is approved
    assert rows[idle.workflow_id].stale == "nobody ran it for 90 days"
