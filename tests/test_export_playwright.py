"""``procedura export --format playwright``: a standalone script, run against the demo app."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from browser_support import CHROMIUM
from conftest import Cli
from factories import full_workflow
from replay_support import approved, services

from desktop_app.core.exports.playwright_script import render_playwright
from desktop_app.core.models.target import ItemScope, Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import (
    AgentStep,
    AssertStep,
    CheckStep,
    ClickStep,
    ExtractStep,
    FillStep,
    GotoStep,
    Parameter,
    ParameterType,
    PressStep,
    TextPresent,
    TitleMatches,
    UrlMatches,
    WaitForStep,
    Workflow,
)
from desktop_app.demo_site import DEMO_PASSWORD, DemoSite

RUFF = Path(sys.executable).with_name("ruff")
ROLE = LocatorStrategy.ROLE


def _export(procedura: Cli, tmp_path: Path, task: str) -> Path:
    """Approve the workflow induced from *task*'s fixture and export it through the CLI."""
    with services() as sv:
        workflow_id = approved(sv, task).workflow.id
    out = tmp_path / f"{task}.py"
    result = procedura("export", workflow_id[:8], "--format", "playwright", "--out", str(out))
    assert result.exit_code == 0, result.stderr
    assert result.stderr.startswith("Wrote ") and f"(approved) to {out}" in result.stderr
    return out


def _script(script: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run *script* with this interpreter; standard input is not a terminal."""
    return subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )


def _browser_args(site: DemoSite) -> list[str]:
    assert CHROMIUM, "Chromium is not installed (bash scripts/test.sh installs it)"
    return ["--base-url", site.url, "--headless", "--browser", CHROMIUM]


def _ruff(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    ruff = str(RUFF) if RUFF.exists() else shutil.which("ruff")
    assert ruff, "ruff is not installed"
    return subprocess.run(
        [ruff, *args, "--isolated", "--no-cache", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )


# ── running the script ──────────────────────────────────────────────────────────────────


@pytest.mark.slow
def test_the_exported_script_creates_the_contact_and_falls_back_on_drift(
    procedura: Cli, tmp_path: Path
) -> None:
    script = _export(procedura, tmp_path, "create-contact")
    values = ["--full-name", "Script Person", "--company", "initech"]
    secret = ["--password-env", "DEMO_SECRET"]
    with DemoSite() as site:
        done = _script(script, *_browser_args(site), *values, *secret, DEMO_SECRET=DEMO_PASSWORD)
        assert done.returncode == 0, done.stderr
        assert " 6/10 Fill 'Full name' with Script Person" in done.stderr
        assert "found by locator" not in done.stderr  # the first locators all matched
        assert done.stderr.rstrip().endswith("done: 10 steps")
        person = next(c for c in site.contacts() if c["full_name"] == "Script Person")
        assert person["company"] == "Initech" and person["newsletter"] is True
    with DemoSite(variants=["relabeled"]) as site:
        drifted = _script(script, *_browser_args(site), *values, *secret, DEMO_SECRET=DEMO_PASSWORD)
        assert drifted.returncode == 0, drifted.stderr
        assert "found by locator 3: css=#full_name" in drifted.stderr
        assert "found by locator 3: test_id=save" in drifted.stderr
        assert any(c["full_name"] == "Script Person" for c in site.contacts())


@pytest.mark.slow
def test_a_step_nothing_finds_exits_1_naming_the_step_and_its_locators(
    procedura: Cli, tmp_path: Path
) -> None:
    script = _export(procedura, tmp_path, "open-contact")
    with DemoSite() as site:
        result = _script(
            script, *_browser_args(site), "--password-env", "DEMO_SECRET",
            "--search-contacts", "Nobody Here", "--timeout", "1.5",
            DEMO_SECRET=DEMO_PASSWORD,
        )  # fmt: skip
    assert result.returncode == 1, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "failed: step 7 'Click 'Nobody Here'': none of the 5 locators matched "
        '(role=link[name="Nobody Here"]: no element; '
    ), last
    assert DEMO_PASSWORD not in result.stderr + result.stdout


@pytest.mark.slow
def test_extracted_values_flow_into_later_steps(tmp_path: Path) -> None:
    script = tmp_path / "search.py"
    script.write_text(render_playwright(_search_workflow()), encoding="utf-8")
    with DemoSite() as site:
        result = _script(
            script, *_browser_args(site), "--password-env", "DEMO_SECRET", "--timeout", "5",
            DEMO_SECRET=DEMO_PASSWORD,
        )  # fmt: skip
        first_names = {c["full_name"].split()[0] for c in site.contacts()}
    assert result.returncode == 0, result.stderr
    found = re.fullmatch(r"page=(\S+)\n", result.stdout)
    assert found is not None and found.group(1) in first_names, result.stdout


@pytest.mark.slow
def test_a_field_found_in_its_wrapper_inside_a_line_item_is_the_one_filled(
    tmp_path: Path,
) -> None:
    from capture_harness import PageServer

    def in_item(number: int) -> Target:
        wrapper = ItemScope(
            css="div.field",
            text="Description",
            outer=ItemScope(css="fieldset.line", text=f"Item {number}"),
        )
        return Target(locators=(Locator(strategy=ROLE, value="textbox", within=wrapper),))

    workflow = Workflow(
        name="Describe the second line item",
        domains=("127.0.0.1",),
        steps=(
            GotoStep(title="Open the form", url="http://127.0.0.1:9/line_items.html"),
            FillStep(title="Describe item 2", target=in_item(2), value="Hotel"),
            ExtractStep(title="Read 1", target=in_item(1), variable="one", attribute="value"),
            ExtractStep(title="Read 2", target=in_item(2), variable="two", attribute="value"),
        ),
    )
    script = tmp_path / "lines.py"
    script.write_text(render_playwright(workflow), encoding="utf-8")
    assert 'outer=("fieldset.line", "Item 2")' in script.read_text(encoding="utf-8")
    server = PageServer()
    try:
        assert CHROMIUM, "Chromium is not installed (bash scripts/test.sh installs it)"
        result = _script(
            script, "--base-url", server.base_url, "--headless", "--browser", CHROMIUM,
            "--timeout", "5",
        )  # fmt: skip
    finally:
        server.close()
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["one=", "two=Hotel"], result.stdout


# ── secrets and arguments ───────────────────────────────────────────────────────────────


def test_the_secret_is_never_in_the_script_nor_taken_from_the_command_line(
    procedura: Cli, tmp_path: Path
) -> None:
    script = _export(procedura, tmp_path, "create-contact")
    text = script.read_text(encoding="utf-8")
    assert DEMO_PASSWORD not in text
    assert '"--password-env"' in text and '"--password"' not in text

    on_the_line = _script(script, "--password", DEMO_PASSWORD)
    assert on_the_line.returncode == 2
    assert "unrecognized arguments: --password" in on_the_line.stderr

    unset = _script(script, "--password-env", "UNSET_VAR_X")
    assert unset.returncode == 2
    assert "--password-env UNSET_VAR_X: the variable is not set" in unset.stderr

    no_terminal = _script(script)  # no --password-env, and nobody to ask
    assert no_terminal.returncode == 2
    assert "'password' is a secret: give --password-env VAR" in no_terminal.stderr


def test_bad_values_exit_2_with_the_reason(procedura: Cli, tmp_path: Path) -> None:
    script = _export(procedura, tmp_path, "create-contact")
    cases = [
        (["--email", "not-an-email"], "argument --email: 'not-an-email' is not an email address"),
        (["--company", "Contoso"], "'Contoso' is not one of: Acme, Globex, Initech"),
        (["--subscribe-to-newsletter", "maybe"], "'maybe' is not true or false"),
        (["--timeout", "0"], "'0' is not a number of seconds above 0"),
        (["--base-url", "ftp://x"], "'ftp://x' is not an http(s) URL"),
    ]
    for args, message in cases:
        result = _script(script, *args, "--password-env", "DEMO_SECRET", DEMO_SECRET="x")
        assert result.returncode == 2, (args, result.stderr)
        assert message in result.stderr, (args, result.stderr)


def test_typed_options_validate_and_normalise_like_procedura_run(tmp_path: Path) -> None:
    script = tmp_path / "typed.py"
    script.write_text(render_playwright(_edge_workflow()), encoding="utf-8")
    namespace: dict[str, object] = {}
    exec(compile(script.read_text(encoding="utf-8"), str(script), "exec"), namespace)
    number, iso_date = namespace["number"], namespace["iso_date"]
    assert callable(number) and callable(iso_date)
    samples = ("12", "12.50", "-0", ".5", "007")
    assert [number(v) for v in samples] == ["12", "12.5", "0", "0.5", "7"]
    assert iso_date("2026-11-30") == "2026-11-30"
    result = _script(script, "--amount", "1,5", "--password-env", "X", X="x")
    assert result.returncode == 2 and "'1,5' is not a number" in result.stderr
    result = _script(script, "--amount", "3", "--when", "30.11.2026", "--password-env", "X", X="x")
    assert result.returncode == 2 and "e.g. 2026-11-30" in result.stderr


# ── the code itself ─────────────────────────────────────────────────────────────────────


def test_exported_scripts_pass_ruff_and_need_only_playwright(tmp_path: Path) -> None:
    with services() as sv:
        workflows = [approved(sv, task).workflow for task in _TASKS]
    for workflow in [*workflows, full_workflow(), _edge_workflow(), _search_workflow()]:
        path = tmp_path / f"{workflow.id}.py"
        text = render_playwright(workflow)
        path.write_text(text, encoding="utf-8")
        compile(text, str(path), "exec")
        checked = _ruff(path, "check")
        assert checked.returncode == 0, (workflow.name, checked.stdout)
        formatted = _ruff(path, "format", "--check")
        assert formatted.returncode == 0, (workflow.name, formatted.stdout)
        imported = {
            (node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
            for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in node.names
        }
        assert imported - set(sys.stdlib_module_names) - {"__future__"} == {"playwright"}
        helped = _script(path, "--help")  # argparse builds: no two options clash
        assert helped.returncode == 0, (workflow.name, helped.stderr)


def test_the_script_reads_like_the_workflow() -> None:
    text = render_playwright(full_workflow())
    assert text.startswith('"""Everything (version 1): a Procedura workflow as a Playwright')
    assert "    python everything.py --user EMAIL --password-env PASSWORD --headless\n" in text
    assert "    # 11. Click 'Sign up'\n    # Irreversible: this step cannot be undone.\n" in text
    assert 'await expect_text(page, step, f"You pay {price}")' in text
    assert 'price = matched(step, r"\\d+", text)' in text
    assert "step 12 (it runs another workflow); step 13 (an agent step)" in text
    assert "it runs workflow invite-team, which is not in this script" in text
    assert 'with Step(page, 16, "Save", timeout, optional=True) as step:' in text
    assert "addon =" not in text  # only a desktop step, which never runs, would read it

    edge = render_playwright(_edge_workflow())
    assert '"--from", dest="from_"' in edge  # a keyword is no attribute name
    assert '"--param-timeout"' in edge and '"--param-headless"' in edge  # the runner's own
    assert "timeout = args.timeout or 10.0" in edge
    assert (
        '    # 2. Open {x} slowly\n    with Step(page, 2, "Open {x} slowly", args.timeout or 30.0)'
        in edge
    )
    assert """By("text", f'Say "hi" to {args.from_} {{braces}}', exact=False, nth=2)""" in edge
    assert "page_ = text.strip()" in edge  # the variable 'page' is not run()'s page
    assert 'await expect_url(page, step, f"{origin}/q/{page_}", match="exact")' in edge
    assert 'page_ = ""  # stays empty if the optional step fails' in edge


# ── workflows built in code ─────────────────────────────────────────────────────────────

_TASKS = ("create-contact", "open-contact", "filter-orders", "expense-report")
_ORIGIN = "http://127.0.0.1:8765"


def _sign_in() -> tuple[GotoStep | FillStep | ClickStep, ...]:
    def field(label: str, css: str) -> Target:
        return Target(
            locators=(
                Locator(strategy=LocatorStrategy.LABEL, value=label),
                Locator(strategy=LocatorStrategy.CSS, value=css),
            )
        )

    return (
        GotoStep(title="Open the sign-in page", url=f"{_ORIGIN}/login"),
        FillStep(title="Fill 'Username'", target=field("Username", "#username"), value="demo"),
        FillStep(
            title="Fill 'Password'", target=field("Password", "#password"), value="{password}"
        ),
        ClickStep(
            title="Click 'Sign in'",
            target=Target(locators=(Locator(strategy=LocatorStrategy.TEST_ID, value="sign-in"),)),
            expectations=(UrlMatches(pattern=f"{_ORIGIN}/contacts"),),
        ),
    )


def _search_workflow() -> Workflow:
    """Sign in, read the first contact's first name into ``page``, search for it."""
    search = Target(
        locators=(
            Locator(strategy=LocatorStrategy.ROLE, value="searchbox", name="Search contacts"),
            Locator(strategy=LocatorStrategy.CSS, value="#q"),
        )
    )
    return Workflow(
        name="Search for the first contact",
        domains=("127.0.0.1",),
        parameters=(Parameter(name="password", type=ParameterType.SECRET),),
        steps=(
            *_sign_in(),
            ExtractStep(
                title="Read the first name",
                target=Target(
                    locators=(
                        Locator(
                            strategy=LocatorStrategy.CSS,
                            value='tr[data-testid="contact-row"] a',
                            nth=0,
                        ),
                    )
                ),
                variable="page",
                pattern=r"^(\S+)",
            ),
            FillStep(title="Search for {page}", target=search, value="{page}"),
            PressStep(
                title="Press Enter",
                key="Enter",
                expectations=(UrlMatches(pattern=r"/contacts\?q=", match="regex"),),
            ),
            AssertStep(title="{page} is listed", condition=TextPresent(text="{page}")),
            WaitForStep(title="The title says Contacts", condition=TitleMatches(text="Contacts")),
        ),
    )


def _edge_workflow() -> Workflow:
    """Names that clash, quotes and braces, odd timeouts, an optional extract."""
    return Workflow(
        name='Edge "cases" {x}',
        description='Backslash \\ and """ quotes.\n\nA second paragraph.',
        domains=("127.0.0.1",),
        parameters=(
            Parameter(name="from", default="Ann"),
            Parameter(name="timeout", default="x"),
            Parameter(name="headless", type=ParameterType.BOOL, required=False),
            Parameter(name="amount", type=ParameterType.NUMBER),
            Parameter(name="when", type=ParameterType.DATE, required=False),
            Parameter(name="password", type=ParameterType.SECRET, required=False),
        ),
        steps=(
            GotoStep(title="Open {{x}}", url=f"{_ORIGIN}/contacts?n={{amount}}"),
            GotoStep(title="Open {{x}} slowly", url=f"{_ORIGIN}/", timeout_s=30),
            ExtractStep(
                title="Read it",
                target=Target(
                    locators=(
                        Locator(
                            strategy=LocatorStrategy.TEXT,
                            value='Say "hi" to {from} {{braces}}',
                            exact=False,
                            nth=2,
                        ),
                        Locator(strategy=LocatorStrategy.IMAGE_ANCHOR, value="a" * 64 + ".png"),
                    )
                ),
                variable="page",
                optional=True,
            ),
            CheckStep(
                title="Set {headless}",
                target=Target(locators=(Locator(strategy=LocatorStrategy.CSS, value="#h"),)),
                checked="{headless}",
                expectations=(UrlMatches(pattern=f"{_ORIGIN}/q/{{page}}", match="exact"),),
            ),
            AgentStep(title="Think", instruction="Think about {page}", output_variable="idea"),
            FillStep(
                title="Write the idea",
                target=Target(locators=(Locator(strategy=LocatorStrategy.CSS, value="#i"),)),
                value="{idea} at {timeout}",
            ),
        ),
    )
