"""``procedura run`` and ``procedura runs`` from the command line, against the demo app."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import Cli
from fakes.keyring_backend import memory_keyring
from replay_support import approved, services, without_success_check

from desktop_app.core.models.workflow import TextPresent
from desktop_app.demo_site import DEMO_PASSWORD, DemoSite


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
        assert "✓ 11 Check that the task was done" in result.stderr
        assert "succeeded: 11 steps" in result.stdout
        assert any(c["full_name"] == "Cy Twombly" for c in site.contacts())
    listed = procedura("runs", "list", "--json")
    (run,) = json.loads(listed.stdout)
    assert run["status"] == "succeeded" and run["parameters"]["password"] == "••••••"
    assert run["parameters"]["company"] == "Umbrella"
    shown = procedura("runs", "show", run["id"][:6])
    assert shown.exit_code == 0 and "Click 'Save'" in shown.stdout and "direct" in shown.stdout
    assert DEMO_PASSWORD not in shown.stdout + listed.stdout


@pytest.mark.slow
def test_a_run_that_nothing_shows_was_done_ends_done_unverified_and_exits_3(
    procedura: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    with services() as sv:
        version = without_success_check(sv, approved(sv, "create-contact"))
    monkeypatch.setenv("DEMO_SECRET", DEMO_PASSWORD)
    common = (
        "--headless", "--non-interactive", "--secret-env", "password=DEMO_SECRET",
        "-p", "full_name=Uma Verity",
    )  # fmt: skip
    with DemoSite() as site:
        result = procedura("run", version.workflow_id[:8], "--base-url", site.url, *common)
        assert result.exit_code == 3, result.stdout + result.stderr  # not 0: not a success
        assert "✓ 10 Click 'Save'" in result.stderr
        assert "done, unverified: 10 steps" in result.stdout
        assert "succeeded" not in result.stdout and "failed" not in result.stdout
        assert (
            "  the workflow has no success check to show the task was done (add one in the editor)"
            in result.stdout
        )
        assert any(c["full_name"] == "Uma Verity" for c in site.contacts())  # it did happen

        # With a success check that holds on the page the run leaves, the same run succeeds.
        check = TextPresent(text="Contact {full_name} created")
        with services() as sv:
            workflow = version.workflow.model_copy(update={"success": (check,)})
            saved = sv.workflows.save(workflow, actor="tester")
            sv.workflows.approve(workflow.id, actor="tester", version=saved.version.version)
        checked = procedura("run", version.workflow_id[:8], "--base-url", site.url, *common)
        assert checked.exit_code == 0, checked.stdout + checked.stderr
        assert "✓ 11 Check that the task was done" in checked.stderr
        assert "succeeded: 11 steps" in checked.stdout and "unverified" not in checked.stdout

    listed = json.loads(procedura("runs", "list", "--json").stdout)
    assert [r["status"] for r in listed] == ["succeeded", "unverified"]
    unverified = listed[1]
    assert unverified["error"] == "the workflow has no success check to show the task was done"
    table = procedura("runs", "list").stdout.splitlines()
    assert " Done, unverified " in table[2] and " Succeeded " in table[1]  # in words
    shown = procedura("runs", "show", unverified["id"][:8])
    assert shown.exit_code == 0
    assert shown.stdout.startswith(f"run {unverified['id']}  done, unverified  (cli)")
    assert (
        "done, unverified: the workflow has no success check to show the task was done "
        "(add one in the editor)" in shown.stdout
    )
    assert "error:" not in shown.stdout


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


@pytest.mark.slow
def test_run_by_intent_finds_the_workflow_and_binds_its_values(
    procedura: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    _approved_id("create-contact")
    _approved_id("filter-orders")
    monkeypatch.setenv("DEMO_SECRET", DEMO_PASSWORD)
    common = ("--headless", "--non-interactive", "--secret-env", "password=DEMO_SECRET")
    with DemoSite() as site:
        unconfirmed = procedura(
            "run", "--intent", "Create a contact for Bob Smith at Initech", "--base-url", site.url,
            *common,
        )  # fmt: skip
        assert unconfirmed.exit_code == 2 and "--yes" in unconfirmed.stderr
        assert not any(c["full_name"] == "Bob Smith" for c in site.contacts())

        result = procedura(
            "run", "--intent", "create a contact for Bob Smith at Initech", "--yes",
            "--base-url", site.url, "--json", *common,
        )  # fmt: skip
        assert result.exit_code == 0, result.stderr
        assert "Will run 'Create a contact'" in result.stderr
        assert "full_name=Bob Smith, email=jane@example.test (default), company=Initech" in (
            result.stderr
        )
        assert "(from the template)" in result.stderr
        record = json.loads(result.stdout)
        assert record["trigger"] == "intent" and record["llm_calls"] == 0
        bob = next(c for c in site.contacts() if c["full_name"] == "Bob Smith")
        assert bob["company"] == "Initech"


@pytest.mark.slow
def test_run_by_intent_asks_the_llm_when_the_sentence_does_not_fit_the_template(
    procedura: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fakes.openai_server import FakeOpenAIServer

    _approved_id("create-contact")
    _approved_id("open-contact")
    monkeypatch.setenv("DEMO_SECRET", DEMO_PASSWORD)
    values = {
        "values": [
            {"name": "full_name", "value": "Carol King"},
            {"name": "company", "value": "Hooli"},
        ]
    }

    def model(body: dict[str, Any]) -> str:
        user = body["messages"][-1]["content"]
        if "Procedures:" in user:  # which workflow? (asked only when the search is not clear)
            number = next(
                line.split(".")[0] for line in user.splitlines() if "Create a contact" in line
            )
            return json.dumps({"number": int(number), "reason": "it creates contacts"})
        return json.dumps(values)

    with FakeOpenAIServer() as server, DemoSite() as site:
        server.default_chat = model
        monkeypatch.setenv("PROCEDURA_LLM_BASE_URL", server.base_url)
        result = procedura(
            "run", "--intent", "Please add Carol King from Hooli as a new contact", "--yes",
            "--base-url", site.url, "--headless", "--non-interactive",
            "--secret-env", "password=DEMO_SECRET",
        )  # fmt: skip
        assert result.exit_code == 0, result.stderr
        assert "(from the llm)" in result.stderr
        requests = server.requests_to("/v1/chat/completions")
        assert requests and all(DEMO_PASSWORD not in r.raw_body.decode() for r in requests)
        carol = next(c for c in site.contacts() if c["full_name"] == "Carol King")
        assert carol["company"] == "Hooli"


@pytest.mark.slow
def test_a_prompted_secret_can_be_kept_in_the_keyring_for_later_runs(procedura: Cli) -> None:
    workflow_id = _approved_id()
    with DemoSite() as site, memory_keyring() as keys:
        args = ("run", workflow_id, "--base-url", site.url, "--headless", "--no-llm")
        first = procedura(
            *args, "--save-secrets", "-p", "full_name=Ida Ek", input=f"{DEMO_PASSWORD}\n"
        )
        assert first.exit_code == 0, first.stderr
        assert DEMO_PASSWORD not in first.stderr + first.stdout  # the prompt does not echo it
        assert list(keys.passwords.values()) == [DEMO_PASSWORD]
        second = procedura(*args, "--non-interactive", "-p", "full_name=Jo Ek")
        assert second.exit_code == 0, second.stderr
        assert {"Ida Ek", "Jo Ek"} <= {c["full_name"] for c in site.contacts()}


@pytest.mark.slow
def test_a_secret_the_keyring_will_not_keep_is_a_warning_and_the_run_goes_on(
    procedura: Cli,
) -> None:
    workflow_id = _approved_id()  # no keyring on this machine: the tests' default backend
    with DemoSite() as site:
        result = procedura(
            "run", workflow_id, "--base-url", site.url, "--headless", "--no-llm",
            "--save-secrets", "-p", "full_name=Noor Keyless", input=f"{DEMO_PASSWORD}\n",
        )  # fmt: skip
        assert result.exit_code == 0, result.stderr
        assert "Noor Keyless" in {c["full_name"] for c in site.contacts()}
    warning = next(line for line in result.stderr.splitlines() if line.startswith("warning:"))
    assert warning.startswith("warning: Not remembered: password (no usable OS keyring"), warning
    assert DEMO_PASSWORD not in result.stderr + result.stdout


@pytest.mark.slow
def test_on_a_terminal_a_person_points_at_elements_or_aborts(
    procedura: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROCEDURA_REPLAY_PATIENCE_S", "0.5")  # the elements are gone on purpose
    with services() as sv:
        workflow_id = approved(sv, "create-contact", strip_fingerprints=True).workflow.id
    monkeypatch.setenv("DEMO_SECRET", DEMO_PASSWORD)
    with DemoSite(variants=["relabeled", "renamed-ids"]) as site:
        args = (
            "run", workflow_id, "--base-url", site.url, "--headless", "--no-llm",
            "--secret-env", "password=DEMO_SECRET", "-p", "full_name=Kai Lo",
        )  # fmt: skip
        aborted = procedura(*args, input="a\n")
        assert aborted.exit_code == 1
        assert "? Fill 'Username'" in aborted.stderr and "  1. " in aborted.stderr
        listed = [line for line in aborted.stderr.splitlines() if line.startswith("  1. ")]
        assert listed and not any("role=" in line or "css=" in line for line in listed)
        assert "looking for: the element of step" in aborted.stderr  # never a locator
        assert "aborted" in aborted.stdout

        answers = "#login-user\n#contact-fullname\n#contact-company\n#contact-newsletter\n"
        pointed = procedura(*args, input=answers)
        assert pointed.exit_code == 0, pointed.stderr
        assert "(person," in pointed.stderr
        assert any(c["full_name"] == "Kai Lo" for c in site.contacts())
