"""``procedura run WORKFLOW --params-csv FILE``: a batch of real replays against the demo app."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from conftest import Cli
from invoices_site import invoices_site
from replay_support import approve, approved, services, without_success_check

from desktop_app.core.models.target import ItemScope, Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import (
    ClickStep,
    ForEachStep,
    GotoStep,
    ListItems,
    Parameter,
    ParameterType,
    TextPresent,
    Workflow,
)
from desktop_app.demo_site import DEMO_PASSWORD, DemoSite


@pytest.fixture(autouse=True)
def quick_healing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A missing element is looked for by its recorded locators for half a second only."""
    monkeypatch.setenv("PROCEDURA_REPLAY_PATIENCE_S", "0.5")
    monkeypatch.setenv("DEMO_SECRET", DEMO_PASSWORD)


def _create_contact() -> str:
    """create-contact, approved, whose sign-in gives up after 2 s when the site refuses the user
    (the recorded 10 s would make the failing row slow; what fails is the same)."""
    with services() as sv:
        version = approved(sv, "create-contact")
        steps = tuple(
            s.model_copy(update={"timeout_s": 2.0}) if s.title == "Click 'Sign in'" else s
            for s in version.workflow.steps
        )
        workflow = version.workflow.model_copy(update={"steps": steps})
        saved = sv.workflows.save(workflow, actor="tester")
        sv.workflows.approve(workflow.id, actor="tester", version=saved.version.version)
        return workflow.id


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as fh:
        return list(csv.DictReader(fh))


def _names(site: DemoSite) -> list[str]:
    return [c["full_name"] for c in site.contacts()]


@pytest.mark.slow
def test_a_batch_with_a_bad_row_and_a_failing_row_reports_both_and_resumes(
    procedura: Cli, tmp_path: Path
) -> None:
    workflow_id = _create_contact()
    people = tmp_path / "people.csv"
    results = tmp_path / "people.results.csv"
    header = "Full name,email,Company,username,notes\n"
    people.write_text(
        header
        + "Ann Lee,ann@example.test,acme,,first\n"
        + "Bob Stone,bob at example,Initech,,\n"
        + "Cy Twombly,cy@example.test,Contoso,,\n",
        encoding="utf-8",
    )
    with DemoSite() as site:
        common = (
            "run", workflow_id[:8], "--params-csv", str(people), "--base-url", site.url,
            "--non-interactive", "--headless", "--secret-env", "password=DEMO_SECRET",
        )  # fmt: skip
        before = len(site.contacts())

        bad = procedura(*common)
        assert bad.exit_code == 2, bad.stderr
        assert "line 3: parameter 'email': 'bob at example' is not an email address" in bad.stderr
        assert "line 4: column 'Company': parameter 'company': 'Contoso' is not one" in bad.stderr
        assert "error: 2 of 3 rows cannot run; nothing was run" in bad.stderr
        assert "columns: Full name → full_name, email, Company → company, username" in bad.stderr
        assert "note: column 'notes' is not a parameter" in bad.stderr
        assert len(site.contacts()) == before and not results.exists()

        # Fixed, except that the site refuses the user of the last row: that run fails.
        people.write_text(
            header
            + "Ann Lee,ann@example.test,acme,,first\n"
            + "Bob Stone,bob@example.test,Initech,,\n"
            + "Cy Twombly,cy@example.test,Hooli,nobody,\n",
            encoding="utf-8",
        )
        first = procedura(*common, "--parallel", "2", "--json")
        assert first.exit_code == 1, first.stderr
        assert "✓ line 2" in first.stderr and "✓ line 3" in first.stderr
        assert "✗ line 4   failed" in first.stderr
        assert "step 4 'Click 'Sign in'' failed" in first.stderr
        report = json.loads(first.stdout)
        assert report["counts"]["succeeded"] == 2 and report["counts"]["failed"] == 1
        assert _names(site).count("Ann Lee") == 1 and _names(site).count("Bob Stone") == 1
        assert "Cy Twombly" not in _names(site)
        rows = _rows(results)
        assert [(r["row"], r["status"]) for r in rows] == [
            ("2", "succeeded"),
            ("3", "succeeded"),
            ("4", "failed"),
        ]
        assert list(rows[0]) == [
            "row", "Full name", "email", "Company", "username",
            "status", "run_id", "error", "finished_at",
        ]  # fmt: skip
        assert all(r["run_id"] and r["finished_at"] for r in rows)
        assert "Sign in" in rows[2]["error"]
        assert DEMO_PASSWORD not in results.read_text(encoding="utf-8-sig")

        # The person fixes the row and runs the same command: only that row runs again.
        people.write_text(
            people.read_text(encoding="utf-8").replace("Hooli,nobody,", "Hooli,,"),
            encoding="utf-8",
        )
        again = procedura(*common)
        assert again.exit_code == 0, again.stdout + again.stderr
        assert "Resuming: 2 of 3 row(s) succeeded before (people.results.csv)" in again.stderr
        assert "✓ line 4" in again.stdout and "line 2" not in again.stdout
        assert "3 rows: 3 succeeded (2 in an earlier run)" in again.stdout
        assert _names(site).count("Ann Lee") == 1 and _names(site).count("Cy Twombly") == 1
        assert len(site.contacts()) == before + 3
        rows_after = _rows(results)
        assert [r["status"] for r in rows_after] == ["succeeded"] * 3
        assert rows_after[0]["run_id"] == rows[0]["run_id"]  # kept, not run again

        done = procedura(*common)
        assert done.exit_code == 0 and "nothing to run" in done.stdout

    listed = json.loads(procedura("runs", "list", "--json").stdout)
    assert len(listed) == 4 and {r["trigger"] for r in listed} == {"batch"}


@pytest.mark.slow
def test_rows_done_unverified_are_shown_apart_exit_3_and_run_again_on_resume(
    procedura: Cli, tmp_path: Path
) -> None:
    with services() as sv:
        workflow_id = without_success_check(sv, approved(sv, "create-contact")).workflow_id
    people = tmp_path / "people.csv"
    people.write_text("full_name\nUma Verity\n", encoding="utf-8")
    results = tmp_path / "people.results.csv"
    no_check = "the workflow has no success check to show the task was done (add one in the editor)"
    with DemoSite() as site:
        common = (
            "run", workflow_id[:8], "--params-csv", str(people), "--base-url", site.url,
            "--non-interactive", "--headless", "--secret-env", "password=DEMO_SECRET",
        )  # fmt: skip
        first = procedura(*common)
        assert first.exit_code == 3, first.stdout + first.stderr  # not 0, and not 1: no failure
        assert "⚠ line 2   unverified  run " in first.stdout
        assert f"    done, unverified: {no_check}" in first.stdout
        assert "1 row: 0 succeeded, 1 done unverified" in first.stdout
        assert "check the 1 row(s) done, unverified" in first.stdout
        (row,) = _rows(results)
        assert (row["status"], row["error"]) == ("unverified", no_check)

        again = procedura(*common, "--json")  # only rows that succeeded are skipped
        assert again.exit_code == 3, again.stdout + again.stderr
        assert "Resuming" not in again.stderr and "nothing to run" not in again.stdout
        report = json.loads(again.stdout)
        assert report["counts"]["unverified"] == 1 and report["skipped"] == 0
        assert _names(site).count("Uma Verity") == 2
        (rerun,) = _rows(results)
        assert rerun["status"] == "unverified" and rerun["run_id"] != row["run_id"]


def test_the_csv_options_refuse_what_cannot_work(procedura: Cli, tmp_path: Path) -> None:
    workflow_id = _create_contact()
    people = tmp_path / "people.csv"
    people.write_text("full_name,password\nAnn Lee,hunter2\n", encoding="utf-8")
    secret = procedura("run", workflow_id, "--params-csv", str(people), "--non-interactive")
    assert secret.exit_code == 2
    assert "column 'password' would give the secret parameter 'password'" in secret.stderr
    assert "hunter2" not in secret.stdout + secret.stderr

    broken = tmp_path / "broken.csv"
    broken.write_text('full_name,email\n"Ann "the" Lee",ann@example.test\n', encoding="utf-8")
    malformed = procedura("run", workflow_id, "--params-csv", str(broken))
    assert malformed.exit_code == 2
    assert f"{broken} at line 2: a quote" in malformed.stderr

    cases = [
        (("--params-csv", str(people), "--intent", "create a contact"), "--intent"),
        (("--parallel", "2"), "--params-csv"),
        (("--params-csv", str(tmp_path / "missing.csv")), "no such file"),
    ]
    for args, message in cases:
        result = procedura("run", workflow_id, *args, "--non-interactive")
        assert result.exit_code == 2, (args, result.stderr)
        assert message in result.stderr, (args, result.stderr)


@pytest.mark.slow
def test_a_batch_over_a_workflow_with_a_loop_runs_each_rows_list_and_resumes(
    procedura: Cli, tmp_path: Path
) -> None:
    with invoices_site() as (data, url):
        remind = Target(
            locators=(
                Locator(strategy=LocatorStrategy.ROLE, value="button", name="Remind",
                        within=ItemScope(css="tr.invoice", text="{invoice}")),
            )
        )  # fmt: skip
        workflow = Workflow(
            name="Remind the listed invoices",
            domains=("127.0.0.1",),
            parameters=(Parameter(name="invoices", type=ParameterType.LIST),),
            steps=(
                GotoStep(title="Open the invoices", url=f"{url}/"),
                ForEachStep(
                    title="Remind each listed invoice",
                    over=ListItems(value="{invoices}"),
                    item="invoice",
                    steps=(ClickStep(title="Remind {invoice}", target=remind, reacts=True,
                                     timeout_s=2),),
                ),
            ),
            success=(TextPresent(text="reminded"),),
        )  # fmt: skip
        with services() as sv:
            version = approve(sv, workflow)
        sheet = tmp_path / "chase.csv"
        with sheet.open("w", encoding="utf-8", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["invoices"])
            writer.writerow(["INV-001\nINV-002"])  # a list in a cell: one item per line
            writer.writerow(['["INV-003", "INV-099"]'])  # INV-099 is on no row
            writer.writerow(["INV-004"])
        common = (
            "run", version.workflow_id[:8], "--params-csv", str(sheet), "--base-url", url,
            "--non-interactive", "--headless",
        )  # fmt: skip
        first = procedura(*common)
        assert first.exit_code == 1, first.stdout + first.stderr
        assert "✓ line 2   succeeded" in first.stdout
        assert "invoices=INV-001 | INV-002" in first.stdout, "a list on one line"
        assert "✗ line 4   failed" in first.stdout
        assert "item 2 of 2 (INV-099): step 5 'Remind INV-099' failed" in first.stdout
        assert data.reminded == ["INV-001", "INV-002", "INV-003", "INV-004"]

        fixed = sheet.read_text(encoding="utf-8").replace("INV-099", "INV-005")
        sheet.write_text(fixed, encoding="utf-8")
        again = procedura(*common)
        assert again.exit_code == 0, again.stdout + again.stderr
        assert "Resuming: 2 of 3 row(s) succeeded before" in again.stderr
        assert data.reminded[4:] == ["INV-003", "INV-005"], "only the failed row ran again"
