"""The screens with a few hundred workflows and runs: the Library, the Review queue and the Runs
screen list the right rows, sort by every column by value, filter, and hand out more rows as
one scrolls (the figures at 10,000 belong to bench/gui_screens.py)."""

from __future__ import annotations

import pytest
from gui_support import Gui, until
from PySide6.QtCore import QModelIndex, Qt
from replay_support import DATA
from scale_support import seed

from desktop_app.core.documents import load_trajectory
from desktop_app.core.induction.heuristic import induce
from desktop_app.core.models.run import RunStatus
from desktop_app.core.models.workflow import WorkflowStatus
from desktop_app.core.views import RunQuery
from desktop_app.ui.library_model import LibraryModel
from desktop_app.ui.review_page import ReviewPage, loading
from desktop_app.ui.runs_model import SORT_ROLE
from desktop_app.ui.runs_page import RunColumn, RunsPage

pytestmark = pytest.mark.slow

WORKFLOWS, RUNS = 300, 450


@pytest.fixture
def many(gui: Gui) -> Gui:
    """300 workflows (120 approved, 60 with a version in review, 90 drafts, 30 archived) and
    450 runs of the approved ones, written in bulk."""
    text = (DATA / "create-contact.trajectory.json").read_text(encoding="utf-8")
    base = induce(load_trajectory(text, source="create-contact")).workflow
    gui.call(lambda: seed(gui.services.engine, base, WORKFLOWS, RUNS))
    return gui


def _column(model: LibraryModel, column: int) -> list[object]:
    return [model.index(r, column).data(LibraryModel.SORT_ROLE) for r in range(model.rowCount())]


def test_the_library_sorts_every_column_by_value_filters_and_fills_as_one_scrolls(
    many: Gui,
) -> None:
    page = many.window.library
    many.run(page.reload())
    model = page.model
    assert len(page.visible_rows()) == 270  # every workflow but the 30 archived
    assert model.rowCount() == LibraryModel.PAGE  # the view gets a page at a time
    page.table.scrollToBottom()
    many.run(until(lambda: model.rowCount() == 270, what="the rest handed out on scrolling"))
    names = _column(model, 0)
    assert str(names[0]).startswith("0")  # the pinned one first
    assert names == sorted(names)
    for column in range(1, len(LibraryModel.HEADERS)):
        for order in (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder):
            page.table.sortByColumn(column, order)
            model.reveal(269)
            keys = _column(model, column)
            assert all(isinstance(k, int | float | str) for k in keys)
            assert keys == sorted(keys, reverse=order is Qt.SortOrder.DescendingOrder), column
    # Dates and rates sort as values: the newest run first, the best rate first.
    page.table.sortByColumn(LibraryModel.HEADERS.index("Last run"), Qt.SortOrder.DescendingOrder)
    last = [r.stats.last_run_at for r in page.visible_rows() if r.stats is not None]
    assert last[0] == max(d for d in last if d is not None)
    page.table.sortByColumn(LibraryModel.HEADERS.index("Success"), Qt.SortOrder.DescendingOrder)
    rates = [r.stats.success_rate for r in page.visible_rows() if r.stats is not None]
    assert rates and rates == sorted(rates, reverse=True)

    page.status_filter.setCurrentIndex(page.status_filter.findData(WorkflowStatus.DRAFT))
    assert {r.summary.status for r in page.visible_rows()} == {WorkflowStatus.DRAFT}
    assert len(page.visible_rows()) == 90
    page.status_filter.setCurrentIndex(0)
    assert len(page.visible_rows()) == 270  # back to all, still by success rate
    rates = [r.stats.success_rate for r in page.visible_rows() if r.stats is not None]
    assert rates == sorted(rates, reverse=True)
    domain = page.domain_filter.itemData(3)
    page.domain_filter.setCurrentIndex(3)
    shown = page.visible_rows()
    assert shown and all(domain in r.summary.domains for r in shown)
    assert len(shown) == sum(
        1
        for r in page.model.all_rows()
        if domain in r.summary.domains and r.summary.status is not WorkflowStatus.ARCHIVED
    )


def test_the_review_queue_lists_exactly_the_versions_awaiting_review(
    many: Gui, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(loading, "QUEUE_PAGE", 25)  # pages of 25: scrolling reads the rest
    page = many.window.show_screen("Review")
    assert isinstance(page, ReviewPage)
    many.run(page.reload())
    many.settle()
    queue = page.queue_model
    assert queue.rowCount() == 25 and queue.total == 60
    while queue.canFetchMore(QModelIndex()):
        page.queue.scrollToBottom()
        held = queue.rowCount()
        many.run(until(lambda n=held: queue.rowCount() > n, what="the next page of the queue"))
    workflows = many.services.workflows

    def awaiting() -> set[tuple[str, int]]:
        return {
            (s.id, v.version)
            for s in workflows.list()
            for v in workflows.versions_by_id(s.id)
            if v.status is WorkflowStatus.IN_REVIEW
        }

    expected = many.call(awaiting)
    entries = queue.entries
    assert len(entries) == 60 and {(e.workflow_id, e.number) for e in entries} == expected
    assert [e.submitted_at for e in entries] == sorted(
        (e.submitted_at for e in entries), reverse=True
    )
    assert sum(e.is_repair for e in entries) == 30
    repair = next(e for e in entries if e.is_repair)
    row = queue.row_of(repair.workflow_id, repair.number)
    assert row is not None
    assert "Repair proposed by a replay" in queue.index(row).data()
    # Approved, it leaves the queue.
    many.call(lambda: workflows.approve(repair.workflow_id, actor="lead", version=2))
    many.window.events.workflows_changed.emit(repair.workflow_id)
    many.run(until(lambda: queue.total == 59, what="the queue without it"))
    assert (repair.workflow_id, 2) not in {(e.workflow_id, e.number) for e in queue.entries}


def test_the_runs_screen_reads_a_page_sorts_filters_and_pages_on_scroll(many: Gui) -> None:
    page = many.window.show_screen("Runs")
    assert isinstance(page, RunsPage)
    many.run(page.reload())
    model = page.model
    shown = page.visible_runs()
    assert len(shown) == 100 and page.count_label.text() == f"{RUNS} runs"
    assert [r.started_at for r in shown] == sorted((r.started_at for r in shown), reverse=True)
    newest = many.call(lambda: many.services.runs.run_page(RunQuery(), limit=1))[0]
    assert shown[0].id == newest.id
    page.table.scrollToBottom()
    many.run(until(lambda: model.rowCount() == 200, what="the next page on scrolling"))
    assert len({r.id for r in page.visible_runs()}) == 200

    def sorted_by(column: int, order: Qt.SortOrder) -> list[object]:
        page.table.sortByColumn(column, order)
        many.run(many.window.tasks.idle())
        assert model.rowCount() == 100
        return [model.index(r, column).data(SORT_ROLE) for r in range(100)]

    started = sorted_by(RunColumn.STARTED, Qt.SortOrder.AscendingOrder)
    assert started == sorted(started)
    assert page.visible_runs()[0].started_at < shown[-1].started_at  # the oldest, from SQL
    healed = sorted_by(RunColumn.HEALED, Qt.SortOrder.DescendingOrder)
    assert healed[0] == 1 and healed == sorted(healed, reverse=True)
    duration = sorted_by(RunColumn.DURATION, Qt.SortOrder.DescendingOrder)
    assert duration == sorted(duration, reverse=True)
    name = sorted_by(RunColumn.WORKFLOW, Qt.SortOrder.AscendingOrder)
    assert name == sorted(name)

    page.set_filter(status=RunStatus.FAILED)
    many.run(until(lambda: "of" in page.count_label.text(), what="the failed runs"))
    failed = many.call(lambda: many.services.runs.run_count(RunQuery(status=RunStatus.FAILED)))
    assert page.count_label.text() == f"{failed} of {RUNS} runs"
    assert {r.status for r in page.visible_runs()} == {RunStatus.FAILED}
    workflow_id = page.workflow_filter.itemData(2)
    page.set_filter(workflow_id=workflow_id)
    many.run(until(lambda: {r.workflow_id for r in page.visible_runs()} == {workflow_id}))
    mine = many.call(lambda: many.services.runs.run_count(RunQuery(workflow_id=workflow_id)))
    assert page.count_label.text() == f"{mine} of {RUNS} runs"
