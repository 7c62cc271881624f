"""The ``procedura`` command line as a user drives it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES, REPO, Cli
from factories import full_workflow

from desktop_app.core.documents import load_workflow

WORKFLOW = EXAMPLES / "create-contact.workflow.json"
TRAJECTORY = EXAMPLES / "create-contact.trajectory.json"


def _snapshot(home: Path, procedura: Cli) -> tuple[Any, dict[str, int]]:
    """What a user could see changed: every count, and every file's size."""
    info = procedura("info", "--json")
    assert info.exit_code == 0, info.output
    files = {
        str(p.relative_to(home)): p.stat().st_size
        for p in home.rglob("*")
        if p.is_file() and not p.name.startswith("writer.")
    }
    return json.loads(info.stdout)["counts"], files


def test_info_on_a_fresh_data_dir(procedura: Cli, home: Path) -> None:
    result = procedura("info")
    assert result.exit_code == 0
    assert f"data dir:     {home}" in result.stdout
    assert "workflows:    0 (0 versions)" in result.stdout
    assert "trajectories: 0" in result.stdout
    assert "LLM:          not configured" in result.stdout
    data = json.loads(procedura("info", "--json").stdout)
    assert data["data_dir"] == str(home)
    assert data["counts"]["workflows"] == 0
    assert data["llm"] == {
        "configured": False,
        "base_url": None,
        "model": "gpt-4o-mini",
        "api_key": "none",
    }


def test_info_reports_llm_and_browser_settings(
    procedura: Cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    browser = tmp_path / "my-chrome"
    browser.write_text("#!/bin/sh\n")
    browser.chmod(0o755)
    monkeypatch.setenv("PROCEDURA_BROWSER", str(browser))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-printed")
    monkeypatch.setenv("PROCEDURA_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    result = procedura("info")
    assert f"browser:      {browser} (setting)" in result.stdout
    assert "LLM:          gpt-4o-mini at http://127.0.0.1:9/v1 (key: environment)" in result.stdout
    assert "sk-test" not in result.stdout


def test_import_list_show_export_round_trip(procedura: Cli, tmp_path: Path) -> None:
    imported = procedura("workflows", "import", str(WORKFLOW))
    assert imported.exit_code == 0
    assert imported.stdout == "imported 'Create a contact' as 6f1c2b9a version 1 (draft)\n"
    assert "unchanged" in procedura("workflows", "import", str(WORKFLOW)).stdout

    listed = json.loads(procedura("workflows", "list", "--json").stdout)
    assert [(w["name"], w["status"], w["latest_version"]) for w in listed] == [
        ("Create a contact", "draft", 1)
    ]
    table = procedura("workflows", "list").stdout.splitlines()
    assert table[0].split() == [
        "ID",
        "NAME",
        "STATUS",
        "VERSION",
        "APPROVED",
        "DOMAINS",
        "PARAMETERS",
    ]
    assert table[1].startswith("6f1c2b9a  Create a contact  Draft")

    shown = procedura("workflows", "show", "Create a contact").stdout
    assert "5. Click 'Save contact'  (click) [irreversible]" in shown
    assert "full_name: text  The contact's full name" in shown
    detail = json.loads(procedura("workflows", "show", "6f1c", "--json").stdout)
    assert (
        detail["version"]["workflow"]["intent_template"]
        == "Create a contact for {full_name} at {company}"
    )

    out = tmp_path / "out" / "contact.json"
    assert procedura("workflows", "export", "6f1c", "--out", str(out)).exit_code == 0
    assert load_workflow(out.read_bytes()) == load_workflow(WORKFLOW.read_bytes())

    again = procedura("workflows", "export", "6f1c", "--out", str(out))
    assert again.exit_code == 2
    assert again.stderr == f"error: {out} exists; pass --force to replace it\n"
    assert procedura("workflows", "export", "6f1c", "--out", str(out), "--force").exit_code == 0


def test_review_commands(procedura: Cli) -> None:
    procedura("workflows", "import", str(WORKFLOW))
    assert (
        procedura("workflows", "submit", "6f1c").stdout
        == "'Create a contact' version 1 is in review\n"
    )
    approved = procedura("workflows", "approve", "6f1c", "-m", "checked", "--actor", "bo")
    assert approved.stdout == "'Create a contact' version 1 is approved\n"
    again = procedura("workflows", "approve", "6f1c")
    assert again.exit_code == 2
    assert again.stderr.startswith("error: version 1 of 'Create a contact' is approved;")
    shown = procedura("workflows", "show", "6f1c").stdout
    assert "bo in review → approved: checked" in shown
    archived = procedura("workflows", "archive", "6f1c")
    assert "is archived" in archived.stdout
    assert "no workflows yet" in procedura("workflows", "list").stdout
    assert "Create a contact" in procedura("workflows", "list", "--status", "archived").stdout
    assert procedura("workflows", "restore", "6f1c").exit_code == 0
    assert procedura("workflows", "pin", "6f1c").stdout == "'Create a contact' is pinned\n"


def test_delete_asks_for_confirmation(procedura: Cli) -> None:
    procedura("workflows", "import", str(WORKFLOW))
    refused = procedura("workflows", "delete", "6f1c")
    assert refused.exit_code == 2
    assert "confirm to go ahead (--yes)" in refused.stderr
    assert "Create a contact" in procedura("workflows", "list").stdout
    assert procedura("workflows", "delete", "6f1c", "--yes").exit_code == 0
    assert "no workflows yet" in procedura("workflows", "list").stdout


def test_search_finds_by_meaning(procedura: Cli) -> None:
    procedura("workflows", "import", str(WORKFLOW))
    found = json.loads(
        procedura("workflows", "search", "add a new person to the CRM", "--json").stdout
    )
    assert found[0]["name"] == "Create a contact"
    assert 0 < found[0]["score"] <= 1
    assert (
        procedura("workflows", "search", "x", "--status", "approved").stdout
        == "no matching workflows\n"
    )


def test_trajectory_commands(procedura: Cli, tmp_path: Path) -> None:
    assert procedura("trajectories", "import", str(TRAJECTORY)).stdout == (
        "imported trajectory 0b6d7e2f (5 events)\n"
    )
    listed = json.loads(procedura("trajectories", "list", "--json").stdout)
    assert listed[0]["intent"] == "Create a contact for Jane Doe at Acme"
    shown = procedura("trajectories", "show", "0b6d").stdout
    assert "fill         label=Password = [secret]" in shown
    out = tmp_path / "t.json"
    procedura("trajectories", "export", "0b6d", "-o", str(out))
    assert json.loads(out.read_text())["events"][2]["value"] == {
        "secret": True,
        "label": "Password",
    }
    raw = procedura("trajectories", "show", "0b6d", "--raw")  # an import has no raw stream
    assert "raw stream: 0 events as observed (5 kept)" in raw.stdout
    duplicate = procedura("trajectories", "import", str(out))
    assert duplicate.exit_code == 2
    assert "never overwritten" in duplicate.stderr


def _bad_documents(tmp_path: Path) -> list[tuple[Path, str]]:
    good: dict[str, Any] = json.loads(WORKFLOW.read_text())

    def variant(name: str, change: Any) -> Path:
        data = json.loads(json.dumps(good))
        change(data)
        path = tmp_path / name
        path.write_text(json.dumps(data))
        return path

    malformed = tmp_path / "malformed.json"
    malformed.write_text('{"schema_version": 1, "name": "x",')
    oversized = tmp_path / "huge.json"
    oversized.write_text(json.dumps({**good, "description": "x" * 6_000_000}))
    deep = tmp_path / "deep.json"
    deep.write_text(json.dumps(good)[:-1] + ', "extra": ' + "[" * 60_000 + "]" * 60_000 + "}")
    digits = tmp_path / "digits.json"
    digits.write_text(json.dumps(good)[:-1] + ', "version": ' + "7" * 5_000 + "}")
    return [
        (
            malformed,
            "malformed.json: not valid JSON: Expecting property name enclosed in double quotes "
            "(line 1, column 35)",
        ),
        (
            variant("v3.json", lambda d: d.update(schema_version=3)),
            "v3.json at schema_version: schema_version 3 is newer",
        ),
        (
            variant("kind.json", lambda d: d["steps"][1].update(kind="type")),
            "kind.json at steps[1].kind: unknown step kind 'type'",
        ),
        (
            variant("param.json", lambda d: d["steps"][2].update(value="{mail}")),
            "param.json at steps[2].value: {mail} is not a parameter",
        ),
        (oversized, "huge.json: file is 6.0 MB, larger than the 5 MB a workflow may be"),
        (deep, "deep.json: not a document: arrays or objects nested too deep"),
        (digits, "digits.json: not a document: a number with more digits than any field takes"),
        (
            variant("up.json", lambda d: d.update(id="../../etc/passwd")),
            "up.json at id: an id is 1 to 64 letters, digits, '_', '.' or '-', beginning with",
        ),
        (variant("blank.json", lambda d: d.update(id=" ")), "blank.json at id: an id is 1 to 64"),
        (
            variant("half.json", lambda d: d.update(name="Half \ud800 a pair")),
            "half.json: not text: a \\u escape is half of a surrogate pair, no character",
        ),
        (variant("line.json", lambda d: d.update(id="id\n")), "line.json at id: an id is 1 to 64"),
        (tmp_path / "missing.json", "missing.json: no such file"),
    ]


def test_bad_input_fails_cleanly_with_nothing_written(
    procedura: Cli, home: Path, tmp_path: Path
) -> None:
    procedura("workflows", "import", str(WORKFLOW))
    before = _snapshot(home, procedura)
    for path, message in _bad_documents(tmp_path):
        result = procedura("workflows", "import", str(path))
        assert result.exit_code == 2, path
        assert result.stdout == ""
        assert result.stderr.startswith("error: ") and message in result.stderr, result.stderr
        assert result.stderr.count("\n") == 1
    bad_trajectory = procedura("trajectories", "import", str(WORKFLOW))
    assert bad_trajectory.exit_code == 2
    assert "this is a workflow document, not a trajectory" in bad_trajectory.stderr
    assert _snapshot(home, procedura) == before


def test_unknown_references_exit_2(procedura: Cli) -> None:
    result = procedura("workflows", "show", "nothing-like-this")
    assert result.exit_code == 2
    assert result.stderr == "error: no workflow matches 'nothing-like-this'\n"


def _procedura(
    *args: str, env: dict[str, str] | None = None, **kw: Any
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "desktop_app", *args],
        capture_output=True,
        text=True,
        env=env or dict(os.environ),
        timeout=120,
        cwd=REPO,
        **kw,
    )


def test_module_entry_point_and_help() -> None:
    result = _procedura("--help")
    assert result.returncode == 0
    for command in ("info", "workflows", "trajectories", "reindex"):
        assert command in result.stdout
    sub = _procedura("workflows", "import", "--help")
    assert "Import a workflow document" in sub.stdout
    assert _procedura("--version").stdout.startswith("procedura, version ")


@pytest.mark.slow
def test_a_second_writer_gets_a_clear_message(home: Path) -> None:
    assert _procedura("workflows", "import", str(WORKFLOW)).returncode == 0
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path\n"
            "from desktop_app.adapters.writer_lock import WriterLock\n"
            f"lock = WriterLock(Path({str(home)!r})); lock.acquire()\n"
            "print('ready', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "ready\n"
        result = _procedura("workflows", "import", str(WORKFLOW))
        assert result.returncode == 1
        assert result.stderr == (
            f"error: Procedura process (pid {holder.pid}) is already writing to {home}; close it "
            "first (or set PROCEDURA_HOME to use another data directory)\n"
        )
        reading = _procedura("workflows", "list")
        assert reading.returncode == 0, reading.stderr
    finally:
        assert holder.stdin is not None and holder.stdout is not None
        holder.stdin.close()
        holder.wait(timeout=30)
        holder.stdout.close()
    after = _procedura("workflows", "pin", "6f1c")
    assert after.returncode == 0, after.stderr


@pytest.mark.parametrize("profile", ["..", ".", "a/b", "x" * 65])
def test_record_refuses_a_profile_that_is_not_a_plain_folder_name(
    procedura: Cli, home: Path, profile: str
) -> None:
    result = procedura("record", "web", "--url", "http://127.0.0.1:9/", "--profile", profile)
    assert result.exit_code == 2
    assert "--profile" in result.stderr
    assert not (home / "profiles").exists()


def test_show_lists_a_blocks_own_steps_under_it(procedura: Cli, tmp_path: Path) -> None:
    path = tmp_path / "everything.json"
    path.write_text(full_workflow().model_dump_json(), encoding="utf-8")
    assert procedura("workflows", "import", str(path)).exit_code == 0
    shown = procedura("workflows", "show", "Everything").stdout
    assert "17. If the coupon field is there  (if)" in shown
    assert "\n         1. Fill 'Coupon'  (fill)" in shown
    assert "      otherwise:\n         1. The plan is free  (assert)" in shown
    assert "    for each {invoice} in the rows on the page holding “Unpaid” (at most 100)" in shown


def test_export_writes_the_approved_version_and_says_which(procedura: Cli, tmp_path: Path) -> None:
    procedura("workflows", "import", str(WORKFLOW))
    script = tmp_path / "draft.py"
    drafted = procedura("export", "6f1c", "-f", "playwright", "-o", str(script))
    assert drafted.exit_code == 0, drafted.output
    assert drafted.stderr == (
        'Wrote "Create a contact" v1 (draft: v1 is not approved, and no version of it is) '
        f"to {script}\n"
    )
    assert procedura("workflows", "approve", "6f1c").exit_code == 0
    repair = json.loads(WORKFLOW.read_text(encoding="utf-8"))
    repair["description"] = "An unreviewed repair"
    changed = tmp_path / "repair.workflow.json"
    changed.write_text(json.dumps(repair), encoding="utf-8")
    assert procedura("workflows", "import", str(changed)).exit_code == 0  # v2, not approved

    out = tmp_path / "out.json"
    written = procedura("workflows", "export", "6f1c", "--out", str(out))
    assert written.stderr == f'Wrote "Create a contact" v1 (approved) to {out}\n'
    assert load_workflow(out.read_bytes()).description != "An unreviewed repair"
    guide = procedura("export", "6f1c", "-f", "markdown")  # to standard output
    assert guide.stderr == 'Wrote "Create a contact" v1 (approved) to standard output\n'
    asked = procedura("workflows", "export", "6f1c", "--version", "2")
    assert load_workflow(asked.stdout.encode()).description == "An unreviewed repair"
    assert "v2 is not approved; v1 is" in asked.stderr
