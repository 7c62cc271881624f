"""Running a workflow over a CSV file from the window: mapping, the check, then the batch."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
from gui_support import Gui, top_level, until
from PySide6.QtWidgets import QComboBox, QLineEdit
from replay_support import approved

from desktop_app.demo_site import DEMO_PASSWORD, DemoSite
from desktop_app.ui.batch_window import BatchDialog, BatchWindow, MappingModel, open_batch

pytestmark = pytest.mark.slow


def _one(kind: type[Any]) -> Any:
    found = top_level(kind)
    assert len(found) == 1, found
    return found[0]


def _checked(gui: Gui, dialog: BatchDialog) -> None:
    gui.run(until(lambda: dialog.plan is not None and not dialog.planning, what="the check"))


def test_the_mapping_and_every_bad_row_show_before_a_batch_runs_in_its_window(
    gui: Gui, tmp_path: Path
) -> None:
    version = gui.call(lambda: approved(gui.services, "create-contact"))
    people = tmp_path / "people.csv"
    header = "Full name,email,Company,notes\n"
    people.write_text(
        header + "Ann Lee,ann@example.test,Acme,vip\nBob Stone,bob at example,Initech,\n",
        encoding="utf-8",
    )
    open_batch(gui.window, version.workflow_id, people)
    gui.run(until(lambda: len(top_level(BatchDialog)) == 1, what="the batch dialog"))
    dialog: BatchDialog = _one(BatchDialog)
    _checked(gui, dialog)

    model = dialog.mapping_model
    assert model.mapping() == {
        "Full name": "full_name",
        "email": "email",
        "Company": "company",
        "notes": None,
    }
    combo = dialog.mapping_view.indexWidget(model.index(0, MappingModel.PARAMETER))
    assert isinstance(combo, QComboBox) and combo.currentData() == "full_name"
    assert "password" not in [combo.itemData(i) for i in range(combo.count())]  # never a secret
    lines = dialog.report_lines()
    assert "✗ line 3: parameter 'email': 'bob at example' is not an email address" in lines
    assert "⚠ column 'notes' is not a parameter of 'Create a contact'; it is ignored" in lines
    assert not dialog.is_ready() and not dialog.run_button.isEnabled()
    assert dialog.run_button.toolTip().startswith("1 of 2 row(s) cannot run")

    model.set_parameter("notes", "full_name")  # as if picked in the combo box
    _checked(gui, dialog)
    assert (
        "✗ columns 'Full name', 'notes' all give parameter 'full_name'; keep one"
        in dialog.report_lines()
    )
    model.set_parameter("notes", None)
    _checked(gui, dialog)

    people.write_text(
        header + "Ann Lee,ann@example.test,Acme,vip\nBob Stone,bob@example.test,Initech,\n",
        encoding="utf-8",
    )
    dialog.load_csv(people)
    _checked(gui, dialog)
    assert dialog.report_lines()[-1] == "✓ 2 row(s) checked: every value fits its parameter"
    assert not dialog.is_ready()  # the secret: typed once for every row
    assert dialog.secrets_form is not None
    password = dialog.secrets_form.field("password")
    assert isinstance(password, QLineEdit)
    password.setText(DEMO_PASSWORD)
    dialog.parallel.setValue(2)
    assert not dialog.show_browser.isEnabled()  # rows that run at once run headless
    with DemoSite() as site:
        before = len(site.contacts())
        dialog.base_url.setText(site.url)
        assert dialog.is_ready(), dialog.run_button.toolTip()
        assert dialog.run_button.text() == "&Run 2 rows"
        dialog.run_button.click()
        gui.run(until(lambda: len(top_level(BatchWindow)) == 1, what="the batch window"))
        window: BatchWindow = _one(BatchWindow)
        gui.run(until(window.isActiveWindow, what="the batch window in front"))
        gui.run(until(lambda: window.summary.isVisible(), timeout=60, what="the batch's end"))
        names = [c["full_name"] for c in site.contacts()]

    assert window.rows_model.statuses() == {2: "✓ Succeeded", 3: "✓ Succeeded"}
    assert window.outcome.text() == "✓ All 2 rows succeeded"
    assert window.progress.value() == 2
    results = tmp_path / "people.results.csv"
    assert window.results_label.text() == f"Results: {results}"
    assert not window.retry_button.isVisible()
    assert len(names) == before + 2 and {"Ann Lee", "Bob Stone"} <= set(names)
    with results.open(encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["row"], r["status"]) for r in rows] == [("2", "succeeded"), ("3", "succeeded")]
    runs = gui.call(lambda: gui.services.runs.runs(version.workflow_id, limit=5))
    assert {r.trigger.value for r in runs} == {"batch"} and len(runs) == 2
    assert DEMO_PASSWORD not in results.read_text(encoding="utf-8-sig")
    window.close()
