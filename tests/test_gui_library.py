"""The Library screen: what it lists, semantic search, filters, pinning, archiving and import."""

from __future__ import annotations

from pathlib import Path

import pytest
from gui_support import Gui, until
from PySide6.QtCore import Qt

from desktop_app.core.models.run import Run, RunStatus
from desktop_app.core.models.workflow import GotoStep, Parameter, Workflow, WorkflowStatus
from desktop_app.ui.library_page import LibraryPage

pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"


def _workflow(name: str, description: str, domain: str, *params: str) -> Workflow:
    return Workflow(
        name=name,
        description=description,
        domains=(domain,),
        parameters=tuple(Parameter(name=p) for p in params),
        steps=(GotoStep(title=f"Open {domain}", url=f"https://{domain}/"),),
    )


@pytest.fixture
def seeded(gui: Gui) -> dict[str, str]:
    """Four workflows: approved, in review, draft and archived, on two domains, with runs."""
    library = gui.services.workflows

    def seed() -> dict[str, str]:
        ids = {}
        for key, workflow in {
            "contact": _workflow(
                "Create a contact",
                "Add a new person with their email and company to the CRM",
                "crm.example.test",
                "full_name",
                "email",
            ),
            "expense": _workflow(
                "File an expense report",
                "Submit a receipt amount for reimbursement",
                "expenses.example.test",
                "amount",
            ),
            "orders": _workflow(
                "Filter orders by customer",
                "Show the open orders of one customer",
                "crm.example.test",
                "customer",
            ),
            "old": _workflow("Old export", "Download last year's report", "crm.example.test"),
        }.items():
            library.save(workflow, actor="tester")
            ids[key] = workflow.id
        library.approve(ids["contact"], actor="tester")
        library.submit(ids["expense"], actor="tester")
        library.archive(ids["old"], actor="tester")
        for status in (
            RunStatus.SUCCEEDED,
            RunStatus.SUCCEEDED,
            RunStatus.SUCCEEDED,
            RunStatus.FAILED,
        ):
            gui.services.runs.save_run(
                Run(workflow_id=ids["contact"], workflow_version=1, status=status)
            )
        return ids

    ids = gui.call(seed)
    gui.run(gui.window.library.reload())
    return ids


def _names(page: LibraryPage) -> list[str]:
    return [row.summary.name for row in page.visible_rows()]


def test_the_library_lists_active_workflows_with_status_version_runs_and_domain(
    gui: Gui, seeded: dict[str, str]
) -> None:
    page = gui.window.library
    assert sorted(_names(page)) == [
        "Create a contact",
        "File an expense report",
        "Filter orders by customer",
    ]
    contact = next(r for r in page.visible_rows() if r.summary.id == seeded["contact"])
    model = page.model
    row = model.row_of(seeded["contact"])
    assert row is not None
    shown = [model.index(row, c).data() for c in range(len(model.HEADERS))]
    assert shown[:5] == [
        "Create a contact",
        "Approved",
        "v1",
        "full_name, email",
        "crm.example.test",
    ]
    assert shown[6] == "75% of 4"
    assert contact.stats is not None and contact.stats.runs == 4


def test_a_run_done_unverified_counts_as_finished_but_not_as_a_success(
    gui: Gui, seeded: dict[str, str]
) -> None:
    gui.call(
        lambda: gui.services.runs.save_run(
            Run(
                workflow_id=seeded["contact"],
                workflow_version=1,
                status=RunStatus.UNVERIFIED,
                error="the workflow has no success check to show the task was done",
            )
        )
    )
    page = gui.window.library
    gui.run(page.reload())
    model = page.model
    row = model.row_of(seeded["contact"])
    assert row is not None
    success = model.index(row, model.HEADERS.index("Success"))
    assert success.data() == "60% of 5"  # 3 succeeded; the unverified run is not one of them
    tooltip = success.data(Qt.ItemDataRole.ToolTipRole)
    assert tooltip.startswith("3 of 5 finished runs succeeded; 1 done, unverified")
    page.select(seeded["contact"])
    gui.settle()
    assert "60% of 5 succeeded (1 done, unverified" in page.details.toPlainText()


def test_filters_by_status_and_domain_and_shows_archived_only_when_asked(
    gui: Gui, seeded: dict[str, str]
) -> None:
    page = gui.window.library
    page.status_filter.setCurrentIndex(page.status_filter.findData(WorkflowStatus.IN_REVIEW))
    assert _names(page) == ["File an expense report"]
    page.status_filter.setCurrentIndex(page.status_filter.findData(WorkflowStatus.ARCHIVED))
    assert _names(page) == ["Old export"]
    page.status_filter.setCurrentIndex(0)
    page.domain_filter.setCurrentIndex(page.domain_filter.findData("crm.example.test"))
    assert sorted(_names(page)) == ["Create a contact", "Filter orders by customer"]


def test_the_search_box_finds_workflows_by_meaning(gui: Gui, seeded: dict[str, str]) -> None:
    page = gui.window.library
    page.search.setText("add somebody to the customer database")
    gui.run(until(lambda: page.visible_rows() and page.visible_rows()[0].score is not None))
    assert _names(page)[0] == "Create a contact"
    assert page.selected() is not None and page.selected().summary.id == seeded["contact"]
    page.search.setText("get my money back for a taxi receipt")
    gui.run(until(lambda: _names(page) and _names(page)[0] == "File an expense report"))
    page.search.clear()
    gui.run(until(lambda: len(_names(page)) == 3))


def test_run_is_offered_only_for_an_approved_workflow(gui: Gui, seeded: dict[str, str]) -> None:
    page = gui.window.library
    page.select(seeded["expense"])
    assert not page.run_button.isEnabled()
    assert "Approve" in page.run_button.toolTip()
    page.select(seeded["contact"])
    assert page.run_button.isEnabled()
    gui.settle()
    assert "full_name" in page.details.toPlainText()


def test_pinning_puts_a_workflow_first_and_archiving_hides_it(
    gui: Gui, seeded: dict[str, str]
) -> None:
    page = gui.window.library
    page.select(seeded["orders"])
    page.pin_button.click()
    gui.settle()
    assert _names(page)[0] == "Filter orders by customer"
    assert page.model.index(0, 0).data() == "★ Filter orders by customer"
    assert gui.services.workflows.summary(seeded["orders"]).pinned
    page.select(seeded["orders"])
    page.archive_button.click()
    gui.settle()
    assert "Filter orders by customer" not in _names(page)
    assert gui.services.workflows.summary(seeded["orders"]).status is WorkflowStatus.ARCHIVED


def test_import_adds_a_draft_and_an_empty_library_says_what_to_do(gui: Gui) -> None:
    page = gui.window.library
    assert page.empty.isVisible()
    assert "Record" in page.empty.text()
    page.import_file(EXAMPLES / "create-contact.workflow.json")
    gui.settle()
    assert _names(page) == ["Create a contact"]
    assert page.table.isVisible()
    assert page.visible_rows()[0].summary.status is WorkflowStatus.DRAFT


def test_statuses_read_as_words_not_raw_values(gui: Gui, seeded: dict[str, str]) -> None:
    library = gui.services.workflows

    def repair() -> None:  # an unreviewed repair over the approved version
        current = library.get(seeded["contact"]).workflow
        library.save(current.model_copy(update={"description": "Repaired"}), actor="replay")
        library.submit(seeded["contact"], actor="replay")

    gui.call(repair)
    page = gui.window.library
    gui.run(page.reload())
    row = page.model.row_of(seeded["contact"])
    assert row is not None
    version = page.model.index(row, page.model.HEADERS.index("Version")).data()
    assert version == "v1 (v2 in review)"
    page.select(seeded["contact"])
    gui.settle()
    details = page.details.toPlainText()
    assert "Approved · approved v1 · latest v2 (in review)" in details, details
    assert "in_review" not in details
