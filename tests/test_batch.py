"""Batch runs in the core: reading the CSV, mapping columns, the report, results and resuming."""

from __future__ import annotations

import asyncio
import csv
from pathlib import Path

import pytest

from desktop_app.core.batch import (
    BatchFileError,
    BatchPlan,
    BatchSummary,
    PlannedRow,
    ResultsFile,
    RowOutcome,
    RowResult,
    RowStatus,
    default_mapping,
    parse_table,
    plan_batch,
    read_results,
    read_table,
    results_path,
    run_batch,
)
from desktop_app.core.errors import ProceduraError
from desktop_app.core.models.run import MASK, Run, RunStatus
from desktop_app.core.models.workflow import Parameter, ParameterType, Workflow
from desktop_app.core.replay.parameters import ParameterError

SECRET = "s3cr3t-Pa55"

WORKFLOW = Workflow(
    name="Create a contact",
    parameters=(
        Parameter(name="full_name"),
        Parameter(name="email", type=ParameterType.EMAIL, default="jane@example.test"),
        Parameter(name="company", type=ParameterType.CHOICE, choices=("Acme", "Globex")),
        Parameter(name="seats", type=ParameterType.NUMBER, required=False),
        Parameter(name="password", type=ParameterType.SECRET),
    ),
)


def _plan(text: str, **kwargs: object) -> BatchPlan:
    return plan_batch(WORKFLOW, parse_table(text, source="people.csv"), **kwargs)  # type: ignore[arg-type]


# ── reading ─────────────────────────────────────────────────────────────────────────────────


def test_a_spreadsheet_export_is_read_whatever_its_separator_and_encoding(tmp_path: Path) -> None:
    excel = tmp_path / "people.csv"  # Excel's "CSV UTF-8" in a comma-decimal locale
    excel.write_bytes(
        '\ufeffFull name;Company;Notes\r\nZoë Ångström;Acme;"Likes; semicolons\r\nand lines"\r\n'
        "\r\n;;\r\nBob Stone;Globex;\r\n".encode()
    )
    table = read_table(excel)
    assert table.columns == ("Full name", "Company", "Notes")
    assert table.delimiter == ";"
    assert [(r.line, r.cells[0]) for r in table.rows] == [(2, "Zoë Ångström"), (6, "Bob Stone")]
    assert table.rows[0].cells[2] == "Likes; semicolons\r\nand lines"

    tabs = parse_table("full_name\tcompany\nAnn\tAcme\n", source="t.tsv")
    assert tabs.delimiter == "\t" and tabs.rows[0].cells == ("Ann", "Acme")
    one_column = parse_table("full_name\nAnn Lee, Jr.\n", source="one.csv")
    assert one_column.columns == ("full_name",)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "people.csv: is empty"),
        (b"full_name\n", "people.csv: has no rows under the column names"),
        (b"full_name\nZo\xeb\n", "people.csv at line 2: is not UTF-8 text"),
        (b'full_name,email\nAnn,a@b.cc\n"Bob "B" Stone",b@b.cc\n', "at line 3: a quote"),
        (b'full_name,email\nAnn,"a@b.cc\nBob,b@b.cc\n', "at line 2: a quoted cell is never closed"),
        (b"full_name,email,full_name\nA,b,c\n", "at line 1: column 'full_name' appears twice"),
        (b"full_name,,email\nA,x,c\n", "at line 1: column 2 has values but no name"),
    ],
)
def test_a_malformed_file_is_refused_in_one_line_naming_where(data: bytes, message: str) -> None:
    with pytest.raises(BatchFileError) as caught:
        parse_table(data, source="people.csv")
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_an_unnamed_empty_column_as_spreadsheets_leave_them_is_dropped() -> None:
    table = parse_table("full_name,company,\nAnn,Acme,\n", source="x.csv")
    assert table.columns == ("full_name", "company")
    assert _plan("full_name,company,\nAnn,Acme,\n").ok


# ── mapping ─────────────────────────────────────────────────────────────────────────────────


def test_columns_map_to_parameters_by_name_ignoring_case_spaces_and_underscores() -> None:
    columns = ["Full Name", "E-mail", "COMPANY", "seats", "notes"]
    assert default_mapping(WORKFLOW, columns) == {
        "Full Name": "full_name",
        "E-mail": "email",
        "COMPANY": "company",
        "seats": "seats",
        "notes": None,
    }
    plan = _plan("Full Name,E-mail,COMPANY,notes\nAnn,a@b.cc,acme,hi\n")
    assert plan.ok
    assert plan.notes() == [
        "column 'notes' is not a parameter of 'Create a contact'; it is ignored"
    ]
    assert plan.input_columns == ("Full Name", "E-mail", "COMPANY")
    assert dict(plan.rows[0].given) == {"full_name": "Ann", "email": "a@b.cc", "company": "acme"}


def test_the_mapping_refuses_secrets_typos_duplicates_and_missing_parameters() -> None:
    plan = _plan(f"full_name,Password,company\nAnn,{SECRET},Acme\n")
    assert not plan.ok and plan.problems == ()
    (refused,) = plan.report()
    assert "column 'Password' would give the secret parameter 'password'" in refused
    assert "--secret-env password=VARIABLE" in refused
    assert SECRET not in " ".join(plan.report())
    assert plan.input_columns == ("full_name", "company")

    typo = _plan("full_name,compnay\nAnn,Acme\n")
    assert any(
        "column 'compnay' is not a parameter; did you mean 'company'?" in line
        for line in typo.report()
    )
    chosen = plan_batch(
        WORKFLOW,
        parse_table("full_name,compnay\nAnn,Acme\n", source="x"),
        {"full_name": "full_name", "compnay": None},
        defaults={"company": "Acme"},
        explicit=["compnay"],
    )
    assert chosen.ok  # a person chose to ignore it, and the company is given for every row

    twice = _plan("full_name,email,E mail,company\nAnn,a@b.cc,a@b.cc,Acme\n")
    assert "columns 'email', 'E mail' all give parameter 'email'; keep one" in twice.report()

    missing = _plan("full_name\nAnn\nBob\n")
    assert missing.report() == [
        "parameter 'company' needs a value and no column gives it; add a column named company "
        "(or give -p company=VALUE for every row)"
    ]  # once, not once per row
    assert _plan("full_name\nAnn\nBob\n", defaults={"company": "globex"}).ok


# ── the report ──────────────────────────────────────────────────────────────────────────────


def test_every_bad_row_is_reported_with_its_line_and_every_reason_before_anything_runs() -> None:
    plan = _plan(
        "full_name,email,company,seats\n"
        "Ann Lee,ann@example.test,Acme,3\n"
        "Bob,bob at example,Contoso,\n"
        ",,Globex,\n"
        "Cy,,globex,1,5\n"
        "Di,,Acme,twelve\n"
        "Ed\n"
    )
    assert not plan.ok
    assert plan.bad_lines == (3, 4, 5, 6, 7)
    assert plan.report() == [
        "line 3: parameter 'email': 'bob at example' is not an email address",
        "line 3: parameter 'company': 'Contoso' is not one of the choices: Acme, Globex",
        "line 4: parameter 'full_name' needs a value; the cell is empty",
        "line 5: has 5 cells but there are only 4 named columns; remove the extra cells or name "
        "their column",
        "line 6: parameter 'seats': 'twelve' is not a number; write digits with an optional '.' "
        "decimal point and no thousands separators, e.g. 1234.5",
        "line 7: has 1 cell(s) but there are 4 columns; add the missing separators",
    ]
    assert [r.line for r in plan.rows] == [2]


def test_values_given_for_every_row_fill_blank_cells_and_are_checked_once() -> None:
    plan = _plan("full_name,company\nAnn,\nBob,Acme\n", defaults={"company": "Globex"})
    assert plan.ok
    assert [r.given["company"] for r in plan.rows] == ["Globex", "Acme"]
    assert [r.given.get("email") for r in plan.rows] == [None, None]  # the workflow's default

    bad = _plan("full_name,company\nAnn,\nBob,Acme\n", defaults={"company": "Initech", "x": "1"})
    assert bad.problems == ()
    assert len(bad.report()) == 2
    assert "parameter 'company': 'Initech' is not one of the choices" in bad.report()[0]
    assert "unknown parameter 'x'" in bad.report()[1]


# ── results and resuming ────────────────────────────────────────────────────────────────────


class Site:
    """What the rows do: a contact per succeeded row; "Mallory" is refused by the site."""

    def __init__(self, *, browser: bool = False) -> None:
        self.browser = browser
        self.contacts: list[str] = []
        self.started: list[int] = []
        self.running = 0
        self.most_at_once = 0

    async def run(self, row: PlannedRow) -> RowOutcome:
        self.started.append(row.line)
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        try:
            await asyncio.sleep(0.01)
            name = row.given["full_name"]
            if name == "Mallory":
                return RowOutcome(
                    RowStatus.FAILED, f"run-{row.line}", f"the site refused {name} ({SECRET})"
                )
            if name == "Nobody" and not self.browser:
                raise ProceduraError("no browser: install Chromium")
            self.contacts.append(name)
            return RowOutcome(RowStatus.SUCCEEDED, f"run-{row.line}")
        finally:
            self.running -= 1


def _batch(tmp_path: Path, text: str) -> tuple[BatchPlan, ResultsFile]:
    source = tmp_path / "people.csv"
    source.write_text(text, encoding="utf-8")
    table = read_table(source)
    plan = plan_batch(WORKFLOW, table)
    assert plan.ok, plan.report()
    out = ResultsFile(
        results_path(source), plan.input_columns, delimiter=table.delimiter, secrets=(SECRET,)
    )
    return plan, out


def _run(plan: BatchPlan, out: ResultsFile, site: Site, parallel: int = 1) -> BatchSummary:
    return asyncio.run(
        run_batch(plan, site.run, save=out.write, parallel=parallel, previous=out.read())
    )


def test_results_go_next_to_the_input_and_a_rerun_skips_rows_that_succeeded(
    tmp_path: Path,
) -> None:
    plan, out = _batch(
        tmp_path,
        "full_name,company,notes\nAnn,Acme,vip\nMallory,Acme,\nNobody,Globex,\nBob,Globex,\n",
    )
    assert out.path == tmp_path / "people.results.csv"
    site = Site()
    summary = _run(plan, out, site, parallel=2)
    assert site.contacts == ["Ann", "Bob"] and site.most_at_once == 2
    assert summary.line() == "4 rows: 2 succeeded, 2 failed"

    text = out.path.read_text(encoding="utf-8-sig")
    assert SECRET not in text and MASK in text
    with out.path.open(encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == [
        "row",
        "full_name",
        "company",
        "status",
        "run_id",
        "error",
        "finished_at",
    ]
    assert [(r["row"], r["full_name"], r["status"], r["run_id"]) for r in rows] == [
        ("2", "Ann", "succeeded", "run-2"),
        ("3", "Mallory", "failed", "run-3"),
        ("4", "Nobody", "failed", ""),
        ("5", "Bob", "succeeded", "run-5"),
    ]
    assert rows[2]["error"] == "no browser: install Chromium"
    assert all(r["finished_at"] for r in rows)

    # Nobody is fixed (a browser is installed); Mallory still fails; a row is inserted.
    (tmp_path / "people.csv").write_text(
        "full_name,company,notes\nAnn,Acme,vip\nZed,Acme,\nMallory,Acme,\nNobody,Globex,\n"
        "Bob,Globex,\n",
        encoding="utf-8",
    )
    plan, out = _batch(tmp_path, (tmp_path / "people.csv").read_text(encoding="utf-8"))
    site = Site(browser=True)
    summary = _run(plan, out, site)
    assert site.started == [3, 4, 5]  # Ann and Bob (now on line 6) are not run again
    assert summary.skipped == frozenset({2, 6})
    assert site.contacts == ["Zed", "Nobody"]
    statuses = [(r.line, r.status, r.run_id) for r in read_results(out.path)]
    assert statuses[0] == (2, RowStatus.SUCCEEDED, "run-2")
    assert statuses[-1] == (6, RowStatus.SUCCEEDED, "run-5")  # the earlier run's record


def test_an_interrupted_batch_loses_nothing_and_resumes_where_it_stopped(tmp_path: Path) -> None:
    plan, out = _batch(tmp_path, "full_name,company\nAnn,Acme\nBob,Acme\nCy,Acme\nDi,Acme\n")
    site = Site()
    seen: list[tuple[RowStatus, ...]] = []

    async def stop_during_bob(row: PlannedRow) -> RowOutcome:
        if row.given["full_name"] == "Bob":
            await asyncio.sleep(60)  # the person presses Stop meanwhile
        return await site.run(row)

    def save(results: tuple[RowResult, ...]) -> None:
        out.write(results)
        seen.append(tuple(r.status for r in results))

    async def go() -> None:
        task = asyncio.ensure_future(run_batch(plan, stop_during_bob, save=save))
        while len(seen) < 2:  # the initial save, then Ann's
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    assert seen[0] == (RowStatus.PENDING,) * 4
    assert [(r.line, r.status) for r in read_results(out.path)] == [
        (2, RowStatus.SUCCEEDED),
        (3, RowStatus.INTERRUPTED),
        (4, RowStatus.PENDING),
        (5, RowStatus.PENDING),
    ]
    resumed = Site()
    summary = _run(plan, out, resumed)
    assert resumed.started == [3, 4, 5] and site.contacts + resumed.contacts == [
        "Ann", "Bob", "Cy", "Di",
    ]  # fmt: skip
    assert summary.all_succeeded


def test_a_batch_with_problems_never_runs_and_a_foreign_results_file_is_not_overwritten(
    tmp_path: Path,
) -> None:
    plan = _plan("full_name,company\nAnn,Contoso\n")
    with pytest.raises(ParameterError, match="nothing was run"):
        asyncio.run(run_batch(plan, Site().run, save=lambda _: None))

    plan, out = _batch(tmp_path, "full_name,company\nAnn,Acme\n")
    out.path.write_text("name,total\nAnn,3\n", encoding="utf-8")
    with pytest.raises(BatchFileError, match="is not a results file of a batch run"):
        out.read()
    assert out.path.read_text(encoding="utf-8") == "name,total\nAnn,3\n"


def test_an_input_column_named_like_a_result_column_keeps_its_value(tmp_path: Path) -> None:
    workflow = Workflow(name="Set status", parameters=(Parameter(name="status"),))
    source = tmp_path / "s.csv"
    source.write_text("status\nopen\n", encoding="utf-8")
    plan = plan_batch(workflow, read_table(source))
    out = ResultsFile(results_path(source), plan.input_columns)
    asyncio.run(run_batch(plan, _done, save=out.write))
    (result,) = out.read()
    assert result.inputs == (("status", "open"),) and result.status is RowStatus.SUCCEEDED
    assert out.path.read_text(encoding="utf-8-sig").splitlines()[0] == (
        "row,input: status,status,run_id,error,finished_at"
    )


async def _done(row: PlannedRow) -> RowOutcome:
    return RowOutcome(RowStatus.SUCCEEDED, "r1")


def test_a_row_done_unverified_is_counted_apart_written_as_such_and_run_again(
    tmp_path: Path,
) -> None:
    plan, out = _batch(
        tmp_path, "full_name,company\nAnn,Acme\nUma,Acme\nBob,Globex\nMallory,Acme\nCy,Acme\n"
    )
    unverified = Run(
        workflow_id=WORKFLOW.id,
        workflow_version=1,
        status=RunStatus.UNVERIFIED,
        error="the workflow has no success check to show the task was done",
    )
    site = Site()

    async def runner(row: PlannedRow) -> RowOutcome:
        if row.given["full_name"] == "Uma":  # every step ran; nothing showed the task was done
            site.started.append(row.line)
            return RowOutcome.of_run(unverified)
        return await site.run(row)

    summary = asyncio.run(run_batch(plan, runner, save=out.write))
    assert summary.line() == "5 rows: 3 succeeded, 1 done unverified, 1 failed"
    assert not summary.all_succeeded and summary.not_done == 1
    rows = {r.line: r for r in read_results(out.path)}
    assert rows[3].status is RowStatus.UNVERIFIED and rows[3].run_id == unverified.id
    assert rows[3].error == (
        "the workflow has no success check to show the task was done (add one in the editor)"
    )
    with out.path.open(encoding="utf-8-sig", newline="") as fh:
        assert [r["status"] for r in csv.DictReader(fh)][1] == "unverified"

    resumed = Site()  # Uma's run is done this time, and Mallory still fails
    summary = _run(plan, out, resumed)
    assert resumed.started == [3, 5]  # only rows that succeeded are skipped: Uma runs again
    assert summary.skipped == frozenset({2, 4, 6})
    assert summary.line() == "5 rows: 4 succeeded (3 in an earlier run), 1 failed"
