"""Replay on apps nobody here wrote, judged by the apps' own data (``make bench-realapps``).

The corpus (``tests/realapps/``): the Django admin, Flask-Admin, SQLAdmin, TodoMVC and NiceGUI,
each in at least two versions, themes or front-end implementations whose DOM differs, each
installed from its package registry into a cached environment of its own. On every (app
variant, task, pace) a scripted person does the task in a real Chromium while
``procedura record web --attach`` records it, at machine speed and at a person's pace; the
recording is induced offline and approved as is, then replayed (no LLM, unattended, ``--yes``)
with new values on fresh instances of the app, look-alike rows included. Each replay is judged
from the app's own storage: **right** (exactly what the task with those values leaves),
**nothing** (no change: a safe stop) or **wrong** (anything else). A **false "succeeded"** is a
run reported succeeded that is not right.

Besides: every workflow recorded on one variant is replayed on the app's other variants (drift
that no one staged), where the time to heal a step that its first locator did not find is
measured; and the happy path's time per step against the demonstration itself run as a
hand-written Playwright script at machine speed, on the same instance kind.

    .venv/bin/python bench/real_apps.py [--smoke] [--only django-admin,todomvc/rename]
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final

from common import ROOT, Section, isolated_home, median
from common import main as cli_main

from browser_support import CHROMIUM, LAUNCH_ARGS, chromium_with_cdp  # isort: skip
from demonstrations import MACHINE, PERSON, Demonstrator, Pace  # isort: skip
from playwright.async_api import async_playwright  # isort: skip
from realapps.corpus import APPS  # isort: skip
from realapps.harness import App, Instance, Task, Values, Variant, Verdict, judge  # isort: skip

from desktop_app.app import Services, open_services, replay
from desktop_app.core.induction.heuristic import induce
from desktop_app.core.induction.intent import bind_intent
from desktop_app.core.models.run import Resolution, Run, RunStatus, StepStatus
from desktop_app.core.models.workflow import ParameterType, Workflow, WorkflowVersion
from desktop_app.core.replay.engine import SUCCESS_TITLE
from desktop_app.core.replay.ladder import ReplayOptions
from desktop_app.core.replay.parameters import bind_parameters
from desktop_app.settings import load_settings

#: What the smoke (CI) records and replays: (app, variant index, task), each replayed with its
#: task's last values (a look-alike case): a server-rendered app with a sign-in and a
#: confirmation page, and a client-side one.
SMOKE: Final = (("django-admin", -1, "bulk-delete"), ("todomvc", 1, "bulk-delete"))
#: Unattended, offline: what the figures are about.
OPTIONS: Final = ReplayOptions(use_llm=False, assume_yes=True)
_RECORDER_START_S: Final = 120


@dataclass
class Unbound:
    """A replay not run: the induced workflow has no parameter for some of its values."""

    variant: str
    task: str
    pace: str
    recorded_on: str
    keys: list[str]


@dataclass
class Replayed:
    """One replay and its verdict."""

    app: str
    variant: str
    task: str
    pace: str
    recorded_on: str
    values: dict[str, str]
    verdict: Verdict
    status: RunStatus
    error: str | None
    steps: int
    step_ms: list[float] = field(default_factory=list)
    healed_ms: list[float] = field(default_factory=list)
    run: Run | None = field(default=None, repr=False)

    @property
    def drift(self) -> bool:
        """Replayed on another variant than it was recorded on."""
        return self.variant != self.recorded_on

    @property
    def false_success(self) -> bool:
        return self.status is RunStatus.SUCCEEDED and self.verdict != "right"


@dataclass
class Report:
    """Everything measured, and what could not be."""

    replays: list[Replayed] = field(default_factory=list)
    unbound: list[Unbound] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # recordings that did not happen
    script_step_ms: dict[tuple[str, str], float] = field(default_factory=dict)
    intent_binds: list[bool] = field(default_factory=list)


# ── recording through ``procedura record web --attach`` ───────────────────────────────────────


def _recorder(cdp: str, url: str, intent: str, log: IO[bytes]) -> subprocess.Popen[bytes]:
    """``procedura record web --attach``, writing what it says to *log* (a file: a pipe
    nobody reads would stall it)."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "desktop_app",
            "record",
            "web",
            "--attach",
            cdp,
            "--url",
            url,
            "--intent",
            intent,
        ],
        cwd=ROOT,
        env=dict(os.environ),
        stdout=subprocess.DEVNULL,
        stderr=log,
    )


def _wait_started(process: subprocess.Popen[bytes], log: Path) -> None:
    """Wait for the recorder's "recording" line."""
    deadline = time.monotonic() + _RECORDER_START_S
    while time.monotonic() < deadline:
        said = log.read_text(errors="replace")
        if any(line.startswith("recording ") for line in said.splitlines()):
            return
        if process.poll() is not None:
            break
        time.sleep(0.05)
    last = log.read_text(errors="replace").strip().splitlines()[-1:]
    raise RuntimeError(f"the recorder did not start: {' '.join(last)}")


async def _demonstrate_attached(cdp: str, task: Task, values: Values, pace: Pace) -> None:
    async with async_playwright() as pw:
        browser = await pw.chromium.connect_over_cdp(cdp)
        page = browser.contexts[0].pages[0]
        await page.wait_for_load_state()
        await task.demonstrate(Demonstrator(page, pace), values)
        await browser.close()  # disconnects; the browser stays for the recorder


def record(instance: Instance, task: Task, pace: Pace) -> str:
    """Record *task* done at *pace* on *instance* with ``record web --attach``; the
    trajectory's id."""
    intent = task.intent.format(**task.recorded)
    with (
        tempfile.TemporaryDirectory(
            prefix="procedura-profile-", ignore_cleanup_errors=True
        ) as profile,
        chromium_with_cdp(Path(profile)) as cdp,
        (Path(profile) / "recorder.log").open("wb") as log,
        _recorder(cdp, instance.url + task.start, intent, log) as recorder,
    ):
        try:
            _wait_started(recorder, Path(log.name))
            asyncio.run(_demonstrate_attached(cdp, task, task.recorded, pace))
            recorder.send_signal(signal.SIGINT)
            recorder.wait(timeout=60)
        finally:
            if recorder.poll() is None:
                recorder.kill()
                recorder.wait()
    if recorder.returncode != 0:
        raise RuntimeError(f"the recorder ended with {recorder.returncode}")
    with open_services(load_settings(), write=False) as services:
        newest = max(services.trajectories.list(), key=lambda t: t.started_at)
        return newest.id


# ── replaying with new values ──────────────────────────────────────────────────────────────────


def unbound(workflow: Workflow, task: Task, values: Values) -> list[str]:
    """The task's keys whose new value no parameter of the workflow takes (the recording did not
    make one of it: a date picked in a calendar, a value the page filled in)."""
    defaults = {str(p.default) for p in workflow.parameters if p.default is not None}
    return [
        key
        for key, value in values.items()
        if key not in task.secrets
        and value != task.recorded.get(key)
        and task.recorded.get(key) not in defaults
    ]


def bound_values(
    workflow: Workflow, task: Task, values: Values
) -> tuple[dict[str, str], dict[str, str]]:
    """The workflow's parameters for *values*: each parameter recorded with one of the task's
    recorded values gets the new value of the same key; secrets in order."""
    given: dict[str, str] = {}
    secrets: dict[str, str] = {}
    secret_keys = [k for k in task.recorded if k in task.secrets]
    for parameter in workflow.parameters:
        if parameter.type is ParameterType.SECRET:
            if secret_keys:
                secrets[parameter.name] = values[secret_keys.pop(0)]
            continue
        key = next(
            (
                k
                for k, v in task.recorded.items()
                if k not in task.secrets
                and parameter.default is not None
                and str(parameter.default) == v
            ),
            None,
        )
        if key is not None and key in values:
            given[parameter.name] = values[key]
    return given, secrets


def replay_once(
    services: Services, version: WorkflowVersion, task: Task, instance: Instance, values: Values
) -> Run:
    """Replay *version* on *instance* with *values* (rebased onto its origin)."""
    given, secrets = bound_values(version.workflow, task, values)
    params = bind_parameters(version.workflow, given, secrets=secrets)
    result = asyncio.run(
        replay(services, version, params, options=OPTIONS, base_url=instance.url, headless=True)
    )
    return result.run


def _healed_ms(run: Run) -> list[float]:
    return [
        s.duration_ms
        for s in run.steps
        if s.status is StepStatus.SUCCEEDED
        and s.resolution in (Resolution.ALTERNATE, Resolution.FINGERPRINT, Resolution.EXPERIENCE)
    ]


def _action_ms(run: Run) -> list[float]:
    return [s.duration_ms for s in run.steps if s.title != SUCCESS_TITLE]


@contextlib.contextmanager
def _fresh(variant: Variant, task: Task) -> Iterator[Instance]:
    with variant.start() as instance:
        if task.prepare is not None:
            task.prepare(instance)
        yield instance


def run_task(
    app: App,
    variant: Variant,
    task: Task,
    pace: Pace,
    *,
    replays: Sequence[Values],
    other_variants: Sequence[Variant],
    report: Report,
) -> None:
    """Record *task* on *variant* at *pace*, then replay it with each of *replays* there and
    once on each of *other_variants*; everything goes into *report*."""
    try:
        with _fresh(variant, task) as instance:
            trajectory_id = record(instance, task, pace)
    except Exception as exc:  # a recording that did not happen is reported, not fatal
        report.failures.append(f"{variant.name} {task.name} {pace.name}: {exc}")
        return
    with open_services(load_settings(), write=True) as services:
        workflow = induce(services.trajectories.get(trajectory_id)).workflow
        saved = services.workflows.save(workflow, actor="bench")
        version = services.workflows.approve(
            workflow.id, actor="bench", version=saved.version.version
        )
        if version.workflow.intent_template:
            for values in replays:
                bound = bind_intent(version.workflow.intent_template, task.intent.format(**values))
                report.intent_binds.append(bound is not None)
        targets = [(variant, values) for values in replays]
        targets += [(other, replays[0]) for other in other_variants]
        for where, values in targets:
            missing = unbound(version.workflow, task, values)
            if missing:
                report.unbound.append(
                    Unbound(where.name, task.name, pace.name, variant.name, missing)
                )
                continue
            with _fresh(where, task) as instance:
                before = instance.state()
                try:
                    run = replay_once(services, version, task, instance, values)
                except Exception as exc:
                    report.failures.append(f"{where.name} {task.name}: replay crashed: {exc}")
                    continue
                after = instance.state()
            verdict = judge(before, after, task.expected(before, values))
            report.replays.append(
                Replayed(
                    app=app.name,
                    variant=where.name,
                    task=task.name,
                    pace=pace.name,
                    recorded_on=variant.name,
                    values=dict(values),
                    verdict=verdict,
                    status=run.status,
                    error=run.error,
                    steps=len(_action_ms(run)),
                    step_ms=_action_ms(run),
                    healed_ms=_healed_ms(run),
                    run=run,
                )
            )


async def _script(instance: Instance, task: Task, values: Values) -> float:
    """The demonstration run as a hand-written Playwright script at machine speed: seconds."""
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        page = await browser.new_page()
        began = time.perf_counter()
        await page.goto(instance.url + task.start)
        await task.demonstrate(Demonstrator(page, MACHINE), values)
        took = time.perf_counter() - began
        await browser.close()
    return took


def script_time(variant: Variant, task: Task, values: Values, steps: int) -> float | None:
    """Milliseconds per step of the hand-written script (None if it could not run)."""
    if steps <= 0:
        return None
    with _fresh(variant, task) as instance:
        try:
            return asyncio.run(_script(instance, task, values)) * 1000 / steps
        except Exception:
            return None


# ── the figures ──────────────────────────────────────────────────────────────────────────────


def _percent(part: int, whole: int) -> float | None:
    return round(100 * part / whole, 1) if whole else None


def _stops(drifted: Sequence[Replayed]) -> Counter[tuple[str, str]]:
    """Where the replays on another version that were not done right stopped: (failure kind,
    step title), counted."""
    stops: Counter[tuple[str, str]] = Counter()
    for r in drifted:
        if r.verdict == "right" or r.run is None:
            continue
        failed = next((s for s in r.run.steps if s.status is StepStatus.FAILED), None)
        if failed is None:
            stops[(r.status.value, "no step failed")] += 1
        else:
            kind = failed.failure.value if failed.failure is not None else "failed"
            stops[(kind, f"{r.task}: {failed.title}")] += 1
    return stops


def summarize(report: Report, *, smoke: bool) -> Section:
    """The section ``make bench`` prints."""
    section = Section("real_apps", "Replay on apps nobody here wrote (judged by their own data)")
    own = [r for r in report.replays if not r.drift]
    drifted = [r for r in report.replays if r.drift]
    right = sum(r.verdict == "right" for r in own)
    unrun = [u for u in report.unbound if u.variant == u.recorded_on]
    section.add(
        "replays done right (no LLM)",
        _percent(right, len(own) + len(unrun)),
        "%",
        ">= 95",
        f"{right} of {len(own) + len(unrun)} (task, app version) replays with new values",
    )
    section.add(
        "replays whose values the workflow cannot take",
        len(unrun),
        "",
        "",
        "not run: no induced parameter for a value (counted as not done right)",
    )
    wrong = [r for r in report.replays if r.verdict == "wrong"]
    section.add(
        "wrong actions", len(wrong), "", "== 0", f"of {len(report.replays)} replays, drift included"
    )
    false = [r for r in report.replays if r.false_success]
    section.add("false 'succeeded'", len(false), "", "== 0", "a run reported succeeded, not right")
    drift_right = sum(r.verdict == "right" for r in drifted)
    section.add(
        "replays on another version done right",
        _percent(drift_right, len(drifted)),
        "%",
        "",
        f"{drift_right} of {len(drifted)}; the rest stopped with nothing changed"
        if not [r for r in drifted if r.verdict == "wrong"]
        else f"{drift_right} of {len(drifted)}",
    )
    healed = [ms for r in report.replays for ms in r.healed_ms]
    section.add(
        "time to heal a drifted step (median)",
        round(median(healed) / 1000, 2) if healed else None,
        "s",
        "<= 1",
        f"{len(healed)} steps found by a fallback, fingerprint or memory"
        if healed
        else "no step needed healing",
    )
    ratios = []
    for r in own:
        script = report.script_step_ms.get((r.variant, r.task))
        if r.verdict == "right" and r.status is RunStatus.SUCCEEDED and script and r.step_ms:
            ratios.append(median(r.step_ms) / script)
    section.add(
        "happy-path time per step vs a hand-written script",
        round(median(ratios), 2) if ratios else None,
        "x",
        "<= 1.2",
        f"median over {len(ratios)} replays; the script is the demonstration at machine speed",
    )
    binds = report.intent_binds
    section.add(
        "intents with new values that bind",
        _percent(sum(binds), len(binds)),
        "%",
        "",
        f"{sum(binds)} of {len(binds)} sentences",
    )
    apps = sorted({r.app for r in report.replays})
    variants = sorted({r.variant for r in report.replays})
    section.notes.append(
        f"{len(apps)} apps ({', '.join(apps)}), {len(variants)} variants, "
        f"{len({(r.variant, r.task) for r in own})} (task, variant) pairs"
        + (" — smoke: a look-alike delete on two apps, machine speed" if smoke else "")
    )
    for outcome, count in sorted(Counter((r.verdict, r.status.value) for r in own).items()):
        section.notes.append(f"same version: {count} × {outcome[0]} ({outcome[1]})")
    for app in apps:
        mine = [r for r in own if r.app == app]
        theirs = [r for r in drifted if r.app == app]
        section.notes.append(
            f"{app}: {sum(r.verdict == 'right' for r in mine)} of {len(mine)} right on the "
            f"version recorded on, {sum(r.verdict == 'right' for r in theirs)} of {len(theirs)} "
            "on another"
        )
    for (kind, title), count in _stops(drifted).most_common(8):
        section.notes.append(f"stopped on another version: {count} × {kind} at {title!r}"[:300])
    for r in own:
        if r.verdict != "right" and r not in wrong and r not in false:
            section.notes.append(
                f"NOT DONE: {r.task} on {r.variant} ({r.pace}) {r.values}: "
                f"{r.status.value} {r.error or ''}"[:300]
            )
    for r in wrong + [r for r in false if r not in wrong]:
        section.notes.append(
            f"{r.verdict.upper()}: {r.task} on {r.variant} (recorded on {r.recorded_on}, "
            f"{r.pace}) {r.values}: {r.status.value} {r.error or ''}"[:300]
        )
    for u in report.unbound:
        section.notes.append(
            f"NO PARAMETER: {u.task} on {u.variant} ({u.pace}) for {', '.join(u.keys)}"
        )
    for failure in report.failures:
        section.notes.append(f"not measured: {failure}"[:300])
    return section


def _measure_task(app: App, variant: Variant, task: Task, report: Report, *, smoke: bool) -> None:
    """*task* recorded on *variant* at each pace, replayed, and its script timed."""
    for pace in (MACHINE,) if smoke else (MACHINE, PERSON):
        # Drift: what was recorded at machine speed is also replayed on the other variants.
        others = [] if smoke or pace is PERSON else [v for v in app.variants if v is not variant]
        run_task(
            app,
            variant,
            task,
            pace,
            replays=task.replays[-1:] if smoke else task.replays,
            other_variants=others,
            report=report,
        )
    steps = [
        r.steps
        for r in report.replays
        if r.variant == variant.name and r.task == task.name and not r.drift
    ]
    if steps and not smoke:
        took = script_time(variant, task, task.replays[0], round(median(steps)))
        if took is not None:
            report.script_step_ms[(variant.name, task.name)] = took


def measure(smoke: bool = False, only: str | None = None) -> Section:
    """Record, replay and judge the corpus (*smoke*: :data:`SMOKE`, machine speed only)."""
    wanted = [w.split("/", 1) for w in only.split(",")] if only else None
    chosen = [a for a in APPS if wanted is None or any(w[0] == a.name for w in wanted)]

    def picked(app: App, task: Task) -> bool:
        return wanted is None or any(
            w[0] == app.name and (len(w) == 1 or w[1] == task.name) for w in wanted
        )

    report = Report()
    with isolated_home():
        for app in chosen:
            if smoke:
                for name, index, task_name in SMOKE:
                    if name == app.name:
                        task = next(t for t in app.tasks if t.name == task_name)
                        _measure_task(app, app.variants[index], task, report, smoke=True)
                continue
            for task in (t for t in app.tasks if picked(app, t)):
                for variant in app.variants:
                    _measure_task(app, variant, task, report, smoke=False)
    return summarize(report, smoke=smoke)


def _options(parser: Any) -> None:
    parser.add_argument(
        "--only", help="apps (or app/task) to run, by name, comma-separated: todomvc/rename"
    )


def main() -> None:
    cli_main(__doc__, measure, smoke_help="the CI smoke: two tasks", options=_options)


if __name__ == "__main__":
    main()
