"""``procedura run`` and ``procedura runs`` from the command line, against the demo app."""

from __future__ import annotations

import json

import pytest
from conftest import Cli
from replay_support import approved, services

from desktop_app.demo_site import DemoSite
from desktop_app.demo_site.server import DEMO_PASSWORD


def _approved_id(task: str = "create-contact") -> str:
    with services() as sv:
        return approved(sv, task).workflow.id


@pytest.mark.slow
def test_run_succeeds_prints_the_steps_and_records_the_run(
    procedura: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    workflow_id = _approved_id()
    monkeypatch.setenv("DEMO_SECRET", DEMO_PASSWORD)
    with DemoSite() as site:
        result = procedura(
            "run", workflow_id[:8], "--base-url", site.url, "--headless", "--non-interactive",
            "--secret-env", "password=DEMO_SECRET",
            "-p", "full_name=Cy Twombly", "-p", "email=cy@example.test", "-p", "company=umbrella",
        )  # fmt: skip
        assert result.exit_code == 0, result.stderr
        assert "✓ 10 Click 'Save'" in result.stderr
        assert "succeeded: 10 steps" in result.stdout
        assert any(c["full_name"] == "Cy Twombly" for c in site.contacts())
    listed = procedura("runs", "list", "--json")
    (run,) = json.loads(listed.stdout)
    assert run["status"] == "succeeded" and run["parameters"]["password"] == "••••••"
    assert run["parameters"]["company"] == "Umbrella"
    shown = procedura("runs", "show", run["id"][:6])
    assert shown.exit_code == 0 and "Click 'Save'" in shown.stdout and "direct" in shown.stdout
    assert DEMO_PASSWORD not in shown.stdout + listed.stdout


def test_bad_input_exits_2_naming_the_problem(procedura: Cli) -> None:
    workflow_id = _approved_id()
    cases = [
        (("run", "no-such-workflow"), "no workflow"),
        (("run", workflow_id, "-p", "emial=x@y.z"), "did you mean 'email'"),
        (("run", workflow_id, "-p", "email=not-an-email"), "parameter 'email'"),
        (("run", workflow_id, "-p", "company=Contoso"), "parameter 'company'"),
        (("run", workflow_id, "-p", "password=hunter2"), "secret"),
        (("run", workflow_id, "--secret-env", "password=UNSET_VAR_X"), "UNSET_VAR_X"),
        (("run", workflow_id, "-p", "noequals"), "NAME=VALUE"),
        (("run",), "WORKFLOW"),
        (("runs", "show", "ffffffff"), "no run"),
    ]
    for args, message in cases:
        result = (
            procedura(*args, "--non-interactive")
            if args[0] == "run" and len(args) > 1
            else procedura(*args)
        )
        assert result.exit_code == 2, (args, result.stdout, result.stderr)
        assert message in result.stderr, (args, result.stderr)
        assert "hunter2" not in result.stderr


def test_a_draft_runs_only_when_allowed(procedura: Cli) -> None:
    with services() as sv:
        version = approved(sv, "create-contact")
        sv.workflows.archive(version.workflow.id, actor="tester")
        sv.workflows.restore(version.workflow.id, actor="tester")  # back to a draft
    result = procedura("run", version.workflow.id, "--non-interactive")
    assert result.exit_code == 2
    assert "--allow-draft" in result.stderr
