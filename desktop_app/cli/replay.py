"""``procedura run`` and ``procedura runs``: replay a workflow, and read the run records.

Exit codes of ``run``: 0 the run succeeded (every step done and the workflow's success check
held); 1 it failed, was aborted or interrupted; 2 bad input (an unknown workflow, a missing or
ill-typed parameter, named in the message); 3 done, unverified (every step ran, but nothing showed
the task was done: no success check, or a step a person skipped).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import click

from desktop_app.adapters.secrets import remember_parameter_secrets
from desktop_app.core.errors import (
    AmbiguousReferenceError,
    ConfirmationRequired,
    NotFoundError,
    ProceduraError,
)
from desktop_app.core.models.common import utcnow
from desktop_app.core.models.run import (
    Run,
    RunStatus,
    RunStep,
    RunTrigger,
    StepStatus,
    run_status_label,
)
from desktop_app.core.models.workflow import ParameterType, Workflow, WorkflowVersion
from desktop_app.core.outcomes import (
    UNVERIFIED_WORDS,
    failure_lines,
    outcome_reason,
    outcome_words,
    verification_words,
    verified,
)
from desktop_app.core.replay.engine import ReplayEvent
from desktop_app.core.replay.parameters import parse_assignments
from desktop_app.core.replay.render import check_base_url
from desktop_app.ops.run import RunPlan, replay_options, version_to_run
from desktop_app.ops.secrets import remember_secrets

if TYPE_CHECKING:
    from desktop_app.app import Services
from desktop_app.cli.running import (
    TerminalPerson,
    exit_code,
    json_text,
    open_for_run,
    runnable_version,
    secret_values,
)

__all__ = ["run_command", "runs_group"]

_MARKS = {StepStatus.SUCCEEDED: "✓", StepStatus.FAILED: "✗", StepStatus.SKIPPED: "–"}
#: A step that waited this long for the page says so (a ready page costs a look or two).
_WAIT_SHOWN_MS = 100


def _check_values(workflow: Workflow, given: dict[str, str]) -> None:
    """Check the non-secret values before anything is asked or run (raises ParameterError)."""
    from desktop_app.core.replay.parameters import bind_parameters

    stand_ins = {p.name: "-" for p in workflow.parameters if p.type is ParameterType.SECRET}
    bind_parameters(workflow, given, secrets=stand_ins)


def _shown_values(workflow: Workflow, given: dict[str, str]) -> str:
    """Every non-secret value the run will use (given, else the default)."""
    shown = []
    for param in workflow.parameters:
        if param.type is ParameterType.SECRET:
            continue
        value = given.get(param.name, param.default)
        mark = "" if param.name in given else " (default)"
        shown.append(f"{param.name}={value}{mark}")
    return ", ".join(shown) or "no values"


def _print_event(event: ReplayEvent) -> None:
    if event.step is not None:
        _print_step(event.step, err=True)


def _print_step(step: RunStep, *, err: bool) -> None:
    how = step.resolution.value if step.resolution else "not found"
    extra = f", {step.llm_calls} LLM call(s)" if step.llm_calls else ""
    took = f"{step.duration_ms:.0f} ms"
    if step.waited_ms >= _WAIT_SHOWN_MS:
        took += f", {step.waited_ms:.0f} ms of it waiting for the page"
    click.echo(
        f"{_MARKS[step.status]} {step.index + 1:>2} {'  ' * step.depth}{step.title}  "
        f"({how}, {took}{extra})",
        err=err,
    )
    if step.status is StepStatus.FAILED and step.error:
        click.echo(f"     {step.error}", err=err)
        for line in failure_lines(step):
            click.echo(f"     {line}", err=err)
    elif step.detail:
        click.echo(f"     {step.detail}", err=err)


def _run_json(run: Run) -> dict[str, Any]:
    data = run.model_dump(mode="json")
    data["llm_calls"] = run.llm_calls
    data["tokens"] = run.tokens
    return data


#: The options ``run`` and ``workflows verify`` share, as they read on both.
_PARAM = click.option(
    "-p", "--param", "params", multiple=True, metavar="NAME=VALUE", help="A parameter."
)
_SECRET_ENV = click.option(
    "--secret-env",
    "secret_env",
    multiple=True,
    metavar="NAME=VARIABLE",
    help="Read a secret parameter from an environment variable.",
)
_BASE_URL = click.option(
    "--base-url", help="Run against another origin (a staging copy, another port)."
)
_HEADLESS = click.option("--headless", is_flag=True, help="No browser window.")
_NO_LLM = click.option(
    "--no-llm", is_flag=True, help="Never call the LLM (rungs 1–3 and a person only)."
)
_NON_INTERACTIVE = click.option(
    "--non-interactive", is_flag=True, help="Never ask: fail with a report instead."
)
_JSON = click.option("--json", "as_json", is_flag=True, help="Print the run record as JSON.")


@click.command("run")
@click.argument("workflow", required=False)
@_PARAM
@click.option("--intent", help="Find the workflow and its values from a sentence.")
@click.option(
    "--agent-from",
    metavar="URL",
    help="With --intent: when no workflow does it, the agent tries from this page; "
    "a run that finishes proposes a new workflow for review.",
)
@_SECRET_ENV
@click.option("--save-secrets", is_flag=True, help="Keep prompted secrets in the OS keyring.")
@_BASE_URL
@_HEADLESS
@_NO_LLM
@click.option("--yes", is_flag=True, help="Confirm in advance (irreversible steps, the intent).")
@click.option("--allow-draft", is_flag=True, help="Run the latest version even if not approved.")
@_NON_INTERACTIVE
@_JSON
@click.option(
    "--params-csv",
    type=click.Path(dir_okay=False),
    help="Run once per row of a CSV file whose columns name the parameters (docs/batch.md).",
)
@click.option(
    "--parallel",
    type=click.IntRange(1, 16),
    default=1,
    show_default=True,
    help="With --params-csv: rows run at once (over 1: headless, no one is asked).",
)
@click.pass_context
def run_command(
    ctx: click.Context,
    workflow: str | None,
    params: tuple[str, ...],
    intent: str | None,
    agent_from: str | None,
    secret_env: tuple[str, ...],
    save_secrets: bool,
    base_url: str | None,
    headless: bool,
    no_llm: bool,
    yes: bool,
    allow_draft: bool,
    non_interactive: bool,
    as_json: bool,
    params_csv: str | None,
    parallel: int,
) -> None:
    """Replay WORKFLOW (an id, id prefix or name), or the one --intent describes."""
    if workflow is None and not intent:
        raise click.UsageError("name a WORKFLOW or describe what to do with --intent")
    if agent_from is not None and (workflow is not None or not intent or params_csv):
        raise click.UsageError("--agent-from goes with --intent alone (no WORKFLOW, no CSV)")
    given = parse_assignments(params)
    from_env = parse_assignments(secret_env)
    if params_csv is not None or parallel > 1:
        from desktop_app.cli.batch import run_csv

        code = run_csv(
            ctx,
            workflow,
            params_csv,
            given,
            intent=intent,
            from_env=from_env,
            save_secrets=save_secrets,
            base_url=base_url,
            headless=headless,
            use_llm=not no_llm,
            yes=yes,
            allow_draft=allow_draft,
            interactive=not non_interactive,
            parallel=parallel,
            as_json=as_json,
        )
        sys.exit(code)
    settings = ctx.obj["settings"]()
    with open_for_run(settings) as services:
        run = _run(
            services,
            workflow,
            given,
            intent=intent,
            from_env=from_env,
            save_secrets=save_secrets,
            base_url=base_url,
            headless=headless,
            use_llm=not no_llm,
            yes=yes,
            allow_draft=allow_draft,
            interactive=not non_interactive,
            as_json=as_json,
            agent_from=agent_from,
        )
    if as_json:
        click.echo(json_text(_run_json(run)))
    else:
        _print_summary(run)
    sys.exit(exit_code(run))


def _run(
    services: Services,
    ref: str | None,
    given: dict[str, str],
    *,
    intent: str | None,
    from_env: dict[str, str],
    save_secrets: bool,
    base_url: str | None,
    headless: bool,
    use_llm: bool,
    yes: bool,
    allow_draft: bool,
    interactive: bool,
    as_json: bool,
    verify: Verify | None = None,
    agent_from: str | None = None,
) -> Run:
    from desktop_app.app import make_structured_llm, replay
    from desktop_app.core.replay.intent import bind_values, check_bound, find_workflow
    from desktop_app.core.replay.parameters import bind_parameters

    trigger = RunTrigger.CLI
    llm = make_structured_llm(services.settings) if intent and use_llm else None
    by_agent = False
    if ref is None:
        assert intent is not None
        trigger = RunTrigger.INTENT
        try:
            choice = asyncio.run(find_workflow(services.workflows, intent, llm))
        except NotFoundError as exc:
            if agent_from is None:
                raise NotFoundError(f"{exc}; or {_NO_MATCH_HINT}") from None
            ref, by_agent, allow_draft = _agent_tries(services, intent, agent_from), True, True
        else:
            ref = choice.workflow.id
            click.echo(f"Found '{choice.workflow.name}' (by {choice.reason})", err=True)
    if verify is not None:
        trigger = RunTrigger.VERIFY
        version = version_to_run(services.workflows, ref, version=verify.version, allow_draft=True)
    else:
        version = runnable_version(services, ref, allow_draft=allow_draft)
    workflow = version.workflow
    if base_url is not None:
        check_base_url(base_url)
    if intent:
        binding = asyncio.run(bind_values(workflow, intent, llm))
        given = {**binding.values, **given}
        check_bound(workflow, given)  # never the recorded values for what the sentence omits
        _check_values(workflow, given)
        source = f"from the {binding.source}" if binding.values else binding.problem
        click.echo(
            f"Will run '{workflow.name}' (version {version.version}) with "
            f"{_shown_values(workflow, given)} ({source})",
            err=True,
        )
        if not yes:
            if not interactive:
                raise ConfirmationRequired("running by intent needs --yes under --non-interactive")
            if not click.confirm("Run it?", default=True, err=True):
                raise ConfirmationRequired("not confirmed; nothing was run")
    _check_values(workflow, given)
    secrets, prompted = secret_values(workflow, from_env, interactive=interactive)
    bound = bind_parameters(workflow, given, secrets=secrets)
    missed = remember_secrets(
        remember_parameter_secrets, workflow.id, secrets, asked=save_secrets, given=prompted
    )
    if missed is not None:  # the run goes on with the values typed
        click.echo(f"warning: {missed}", err=True)
    options = replay_options(
        services.settings,
        trigger=trigger,
        confirm=not yes,
        use_llm=use_llm,
        stop_before_irreversible=verify is not None and not verify.through_irreversible,
    )
    if not services.writable:  # the desktop app holds the stores: it runs it (docs/tray.md)
        from desktop_app.handoff import hand_off_run

        click.echo(
            f"The desktop app is open: it runs '{workflow.name}' version {version.version}…",
            err=True,
        )
        plan = RunPlan.of(
            version,
            given,
            options,
            base_url=base_url,
            headless=headless,
            interactive=interactive,
        )
        return hand_off_run(
            services.settings,
            plan,
            secrets,
            on_step=None if as_json else lambda step: _print_step(step, err=True),
            on_note=lambda text: click.echo(text, err=True),
        )
    doing = "Verifying" if verify is not None else "Running"
    click.echo(f"{doing} '{workflow.name}' version {version.version}…", err=True)

    async def go() -> Run | None:
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, task.cancel)
        try:
            result = await replay(
                services,
                version,
                bound,
                options=options,
                person=TerminalPerson(services.media) if interactive else None,
                base_url=base_url,
                headless=headless,
                on_event=None if as_json else _print_event,
            )
        except asyncio.CancelledError:
            return None  # the run record says "interrupted"
        return result.run

    began = utcnow()
    finished = asyncio.run(go())
    if finished is None:
        latest = services.runs.runs(workflow.id, limit=1)
        if not latest or latest[0].started_at < began:
            raise ProceduraError("stopped before the run began; nothing was done")
        finished = latest[0]
    if by_agent and intent:
        finished = _propose_from_agent(services, version, finished, intent)
    return finished


_NO_MATCH_HINT: Final = (
    "show it once: procedura record web --url URL --intent SENTENCE; "
    "or let the agent try: --agent-from URL"
)


def _agent_tries(services: Services, intent: str, start_url: str) -> str:
    """Save the agent doing *intent* from *start_url* as a draft; its id."""
    from desktop_app.ops.changes import Origin
    from desktop_app.ops.online import agent_workflow

    version, _ = agent_workflow(
        services.workflows, intent, start_url, actor=services.settings.actor, origin=Origin.CLI
    )
    click.echo(
        f"No workflow does this: the agent tries it from {start_url} "
        f"(draft '{version.workflow.name}', {version.workflow_id[:8]})",
        err=True,
    )
    return version.workflow_id


def _propose_from_agent(services: Services, version: WorkflowVersion, run: Run, intent: str) -> Run:
    """The run, with the workflow its agent's actions propose (saved for review), if any."""
    from desktop_app.ops.changes import Origin
    from desktop_app.ops.online import propose_from_agent

    proposed = propose_from_agent(services.workflows, version, run, intent, origin=Origin.CLI)
    if proposed.version is None:
        if run.status in (RunStatus.SUCCEEDED, RunStatus.UNVERIFIED):
            click.echo("The agent's actions could not all be recorded: nothing proposed", err=True)
        return run
    run = run.model_copy(update={"proposed_version": proposed.version.version})
    services.runs.save_run(run)
    return run


def _print_summary(run: Run) -> None:
    healed = len(run.healed)
    seconds = (
        (run.finished_at - run.started_at).total_seconds() if run.finished_at is not None else 0.0
    )
    click.echo(
        f"run {run.id[:8]} {outcome_words(run.status)}: {len(run.steps)} steps in {seconds:.1f} s, "
        f"{healed} healed, {run.llm_calls} LLM call(s), {run.tokens} tokens"
    )
    reason = outcome_reason(run)
    if reason:
        click.echo(f"  {reason}")
    if run.proposed_version is not None:
        click.echo(
            f"  proposed as version {run.proposed_version} (in review): "
            f"procedura workflows show {run.workflow_id[:8]} --version {run.proposed_version}"
        )
    click.echo(f"  details: procedura runs show {run.id[:8]}")


# ── verify ─────────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class Verify:
    """A run that verifies a version before it is approved."""

    version: int | None
    through_irreversible: bool


@click.command("verify")
@click.argument("ref")
@click.option(
    "--version", "version", type=click.IntRange(min=1), help="A version (default: the latest)."
)
@_PARAM
@_SECRET_ENV
@click.option(
    "--through-irreversible",
    is_flag=True,
    help="Do the irreversible steps too (it submits, pays, deletes or sends for real).",
)
@_BASE_URL
@_HEADLESS
@_NO_LLM
@click.option("--yes", is_flag=True, help="Confirm irreversible steps in advance.")
@_NON_INTERACTIVE
@_JSON
@click.pass_context
def verify_command(
    ctx: click.Context,
    ref: str,
    version: int | None,
    params: tuple[str, ...],
    secret_env: tuple[str, ...],
    through_irreversible: bool,
    base_url: str | None,
    headless: bool,
    no_llm: bool,
    yes: bool,
    non_interactive: bool,
    as_json: bool,
) -> None:
    """Replay a version before approving it (a draft too) with its recorded values or -p ones,
    stopping before its first irreversible step; Review shows each step's result."""
    settings = ctx.obj["settings"]()
    with open_for_run(settings) as services:
        run = _run(
            services,
            ref,
            parse_assignments(params),
            intent=None,
            from_env=parse_assignments(secret_env),
            save_secrets=False,
            base_url=base_url,
            headless=headless,
            use_llm=not no_llm,
            yes=yes,
            allow_draft=True,
            interactive=not non_interactive,
            as_json=as_json,
            verify=Verify(version=version, through_irreversible=through_irreversible),
        )
    if as_json:
        click.echo(json_text(_run_json(run)))
    else:
        _print_summary(run)
        click.echo(f"  {verification_words(run)}")
    sys.exit(0 if verified(run) else exit_code(run))


# ── runs ───────────────────────────────────────────────────────────────────────────────────


@click.group("runs")
def runs_group() -> None:
    """Run records: what ran, how each step went, what healed."""


def _find_run(services: Services, ref: str) -> Run:
    found = services.runs.find(ref)
    if not found:
        raise NotFoundError(f"no run with id {ref!r}; see procedura runs list")
    if len(found) > 1 and ref not in found:
        raise AmbiguousReferenceError(f"{ref!r} matches {len(found)} runs; give more of the id")
    return services.runs.get_run(ref if ref in found else found[0])


@runs_group.command("list")
@click.option("--workflow", "ref", help="Only runs of this workflow.")
@click.option("-n", "--limit", type=click.IntRange(1, 10_000), default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def runs_list(ctx: click.Context, ref: str | None, limit: int, as_json: bool) -> None:
    """Runs, newest first."""
    from desktop_app.app import open_services
    from desktop_app.cli.common import print_table

    with open_services(ctx.obj["settings"](), write=False) as services:
        workflow_id = services.workflows.resolve(ref) if ref else None
        runs = services.runs.runs(workflow_id, limit=limit)
        names = {s.id: s.name for s in services.workflows.list(status=None)}
    if as_json:
        click.echo(json_text([_run_json(r) for r in runs]))
        return
    rows = [
        [
            r.id[:8],
            (names.get(r.workflow_id, r.workflow_id[:8]))[:36],
            str(r.workflow_version),
            run_status_label(r.status),
            r.trigger.value,
            f"{r.started_at:%Y-%m-%d %H:%M}",
            str(len(r.steps)),
            str(len(r.healed)),
            str(r.llm_calls),
        ]
        for r in runs
    ]
    print_table(
        rows,
        ["ID", "WORKFLOW", "VERSION", "STATUS", "TRIGGER", "STARTED", "STEPS", "HEALED", "LLM"],
    )


@runs_group.command("show")
@click.argument("ref")
@_JSON
@click.pass_context
def runs_show(ctx: click.Context, ref: str, as_json: bool) -> None:
    """One run: parameters (secrets masked), each step's outcome, rung, time and LLM use."""
    from desktop_app.app import open_services

    with open_services(ctx.obj["settings"](), write=False) as services:
        run = _find_run(services, ref)
        shots = {s.screenshot: services.media.path(s.screenshot) for s in run.steps if s.screenshot}
    if as_json:
        click.echo(json_text(_run_json(run)))
        return
    click.echo(f"run {run.id}  {outcome_words(run.status)}  ({run.trigger.value})")
    click.echo(f"workflow {run.workflow_id} version {run.workflow_version}")
    click.echo(
        f"started {run.started_at:%Y-%m-%d %H:%M:%S}"
        + (f", finished {run.finished_at:%H:%M:%S}" if run.finished_at else "")
    )
    if run.parameters:
        click.echo("parameters: " + ", ".join(f"{k}={v}" for k, v in run.parameters.items()))
    for step in run.steps:
        _print_step(step, err=False)
        if step.screenshot:
            click.echo(f"     screenshot: {shots[step.screenshot]}")
    click.echo(f"LLM calls {run.llm_calls}, tokens {run.tokens}")
    if run.status is RunStatus.UNVERIFIED:
        click.echo(f"{UNVERIFIED_WORDS}: {outcome_reason(run)}")
    elif run.error:
        click.echo(f"error: {run.error}")
    if run.proposed_version is not None:
        click.echo(f"proposed: version {run.proposed_version} (in review)")
