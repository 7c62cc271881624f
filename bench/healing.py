"""Healing without an LLM: a mutation suite generated from the demo app, replayed for real.

Each demo task (tests/data/*.trajectory.json) is induced, approved and replayed once on the
unchanged demo app: the reference. Its run names every element a step acts on (its page, its
action-log key). Then, for each such element and each mutation kind, one more run where only
that element is changed, in the browser, on every page load where it appears
(bench/mutations.js): its id and classes renamed, its words replaced by a synonym, moved
elsewhere in its form or page, wrapped in a new container, a look-alike inserted before it, or
its attributes removed. The real replay engine runs each case with the LLM off (memory off too,
so no case learns from another) in a fresh context of one headless Chromium, against a demo app
reset before every case (a few cases at a time, each on its own demo app). A case is healed
when the run succeeds and the app's action log is the reference's, element for element; acting
on any other element is counted, even if the run then recovers. Time to heal: from the mutated
step's start to the engine acting, where the element was not found by its first recorded
locator.

    .venv/bin/python bench/healing.py [--smoke]
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import json
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from common import Section, isolated_home, median, percentile
from common import main as cli_main
from playwright.async_api import BrowserContext, Error, Page
from replay_support import approved, services

from desktop_app.adapters.browser.launch import BrowserSession, open_browser
from desktop_app.adapters.browser.locators import to_playwright
from desktop_app.adapters.browser.replay_page import PlaywrightPage
from desktop_app.app import Services
from desktop_app.core.llm import StructuredLLM
from desktop_app.core.models.run import Resolution, Run, RunStatus
from desktop_app.core.models.workflow import WorkflowVersion
from desktop_app.core.outcomes import outcome_reason, outcome_words
from desktop_app.core.replay.browser import Handle, PageAction
from desktop_app.core.replay.engine import Replayer, ReplayEvent, ReplayOptions
from desktop_app.core.replay.lessons import Lessons
from desktop_app.core.replay.memory import ExperienceMemory
from desktop_app.core.replay.parameters import BoundParameters, bind_parameters
from desktop_app.core.replay.render import rebase
from desktop_app.demo_site import DEMO_PASSWORD, DemoSite
from desktop_app.resources import resource_path

TASKS: Final = ("create-contact", "expense-report", "filter-orders", "open-contact")
KINDS: Final = ("renamed", "text", "moved", "wrapped", "sibling", "attributes")
SMOKE_TASK: Final = "filter-orders"
SMOKE_KINDS: Final = ("text", "sibling")
SMOKE_TARGETS: Final = 1
"""The smoke run mutates the task's last element only."""

OPTIONS: Final = ReplayOptions(use_llm=False, assume_yes=True)
WORKERS: Final = 3
"""Cases run this many at a time, each on its own demo app (the engine mostly waits)."""
SCRIPT: Final = Path(__file__).with_name("mutations.js")
SETTLE_S: Final = 0.3
"""The action log is quiet this long after a run: every record the pages sent has arrived."""
POLL_S: Final = 0.05

#: The demo app's words and a synonym a redesign could use instead.
SYNONYMS: Final[dict[str, str]] = {
    "Username": "Login name",
    "Password": "Passphrase",
    "Sign in": "Log in",
    "New contact": "Add contact",
    "Full name": "Name",
    "Email": "Email address",
    "Company": "Organisation",
    "Subscribe to newsletter": "Send me the newsletter",
    "Save": "Store",
    "Expenses": "Spending",
    "New expense report": "Start a report",
    "Report title": "Title",
    "Date": "Expense date",
    "Category": "Type",
    "Next": "Continue",
    "Description": "Item",
    "Amount (USD)": "Cost (USD)",
    "Add item": "Add line",
    "Submit report": "Send report",
    "Orders": "Sales",
    "Status": "Show",
    "Filter": "Apply",
    "Search contacts": "Find contacts",
}

#: The words of a look-alike put before an element: similar, but meaning something else.
LOOK_ALIKES: Final[dict[str, str]] = {
    "Username": "Username (alternate)",
    "Password": "Password hint",
    "Sign in": "Sign in with SSO",
    "New contact": "New contact list",
    "Full name": "Full name (legal)",
    "Email": "Email (work)",
    "Company": "Company (parent)",
    "Subscribe to newsletter": "Subscribe to offers",
    "Save": "Save draft",
    "Expenses": "Expense policy",
    "New expense report": "New expense template",
    "Report title": "Report subtitle",
    "Date": "Date paid",
    "Category": "Subcategory",
    "Next": "Next (skip checks)",
    "Description": "Description note",
    "Amount (USD)": "Amount (EUR)",
    "Add item": "Add items from file",
    "Submit report": "Submit report later",
    "Orders": "Order archive",
    "Status": "Payment status",
    "Filter": "Filter presets",
    "Search contacts": "Search companies",
}


# ── what a run did ──────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class Touch:
    """One element the engine acted on: in which step, after how long, and which element."""

    step: int
    found_ms: float
    seen: dict[str, Any] | None


@dataclass(slots=True)
class Observed:
    """One run: its record, the app's action log, the engine's touches, the mutation's fate."""

    run: Run
    log: list[dict[str, Any]]
    touches: list[Touch]
    reports: list[dict[str, Any]]
    lessons: Lessons = field(default_factory=Lessons)
    """What the run taught (for a caller that learns from it: bench/mutation_memory.py)."""
    params: BoundParameters | None = None
    """The values the run was given."""


class WatchedPage(PlaywrightPage):
    """The engine's own page adapter, noting which element each step acts on, and when."""

    def __init__(self, page: Page, domains: tuple[str, ...]) -> None:
        super().__init__(page, domains, resource_path("recorder", "capture.js"))
        self.touches: list[Touch] = []
        self._step = -1
        self._started = 0.0

    def on_event(self, event: ReplayEvent) -> None:
        """The engine's progress: a step starts when its event carries no result yet."""
        if event.step is None:
            self._step, self._started = event.index, time.perf_counter()

    async def perform(self, handle: Handle | None, action: PageAction, *, timeout_s: float) -> None:
        if handle is not None:
            found_ms = (time.perf_counter() - self._started) * 1000
            self.touches.append(Touch(self._step, found_ms, await self._inspect(handle)))
        await super().perform(handle, action, timeout_s=timeout_s)

    async def _inspect(self, handle: Handle) -> dict[str, Any] | None:
        if handle.locator is not None:
            locator = to_playwright(self.page, handle.locator)
        else:
            locator = self.page.locator(str(handle.selector))
        try:
            seen = await locator.evaluate("(el) => window.__healingBench.inspect(el)", timeout=1500)
        except Error:
            return None  # the action itself will say what is wrong
        return seen if isinstance(seen, dict) else None


async def replay(
    browser: BrowserSession,
    site: DemoSite,
    sv: Services,
    version: WorkflowVersion,
    spec: dict[str, Any] | None,
    expected: int | None = None,
    *,
    options: ReplayOptions = OPTIONS,
    memory: ExperienceMemory | None = None,
    llm: StructuredLLM | None = None,
) -> Observed:
    """Run *version* once in a fresh context, the element in *spec* mutated (None: no change).

    *expected*: how many actions the reference logged (None: this is the reference).
    *options*, *memory* and *llm* go to the engine (this suite: the LLM and memory off).
    """
    site.reset()
    # Pages of an earlier case still report as they close (a field left mid-edit reports its
    # change on ``pagehide``): their records may arrive after the reset, and are not this run's.
    began_ms = time.time() * 1000
    assert browser.browser is not None
    context = await browser.browser.new_context()
    reports: list[dict[str, Any]] = []
    try:
        await _install(context, spec, reports)
        workflow = version.workflow
        port = WatchedPage(await context.new_page(), workflow.domains)
        await port.install(context)
        secrets = {p.name: DEMO_PASSWORD for p in workflow.parameters if p.type.value == "secret"}
        replayer = Replayer(
            browser=port,
            runs=sv.runs,
            media=sv.media,
            memory=memory,
            llm=llm,
            options=options,
            on_event=port.on_event,
        )
        params = bind_parameters(workflow, {}, secrets=secrets)
        outcome = await replayer.run(version, params)
        log = await _settled_log(site, expected, began_ms)
        with contextlib.suppress(Error):  # closing mid-load leaves the app a broken pipe
            await port.page.wait_for_load_state("load", timeout=2000)
    finally:
        await context.close()
    return Observed(outcome.run, log, port.touches, reports, outcome.lessons, params)


async def _install(
    context: BrowserContext, spec: dict[str, Any] | None, reports: list[dict[str, Any]]
) -> None:
    await context.expose_binding("__healingReport", lambda _source, report: reports.append(report))
    script = SCRIPT.read_text(encoding="utf-8")
    await context.add_init_script(script=f"window.__healingSpec = {json.dumps(spec)};\n{script}")


async def _settled_log(
    site: DemoSite, expected: int | None, began_ms: float
) -> list[dict[str, Any]]:
    """The action log of the pages opened since *began_ms* (wall-clock milliseconds) once
    every record they sent has arrived (they come as beacons).

    Polled until it holds *expected* records and is briefly quiet, or is quiet for
    ``SETTLE_S`` (None: the reference run, whose length is not known yet).
    """

    def actions() -> list[dict[str, Any]]:
        return [r for r in site.actions() if r["page"] >= began_ms]

    log = actions()
    quiet_since = time.monotonic()
    while True:
        await asyncio.sleep(POLL_S)
        again, now = actions(), time.monotonic()
        if len(again) != len(log):
            log, quiet_since = again, now
        elif now - quiet_since >= SETTLE_S or (expected is not None and len(log) >= expected):
            return log


# ── the suite ───────────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class Target:
    """An element some steps of a task act on, as the reference run met it."""

    task: str
    steps: tuple[int, ...]
    title: str
    path: str
    key: str
    ordinal: int
    label: str
    renamable: bool

    @property
    def identity(self) -> tuple[str, str, int]:
        return self.path, self.key, self.ordinal


@dataclass(slots=True)
class Result:
    """How one case went (healed, wrong, failed or n/a), why, and how the engine found it."""

    target: Target
    kind: str
    verdict: str
    why: str = ""
    wrong_actions: int = 0
    resolution: Resolution | None = None
    heal_ms: float | None = None
    confirmed: bool = False
    """An irreversible step went ahead on a healed element only because of ``assume_yes``."""


def targets_of(task: str, reference: Observed) -> list[Target]:
    """The elements the reference run acted on, in order, with the steps that act on each."""
    steps: dict[tuple[str, str, int], list[int]] = {}
    described: dict[tuple[str, str, int], dict[str, Any]] = {}
    for touch in reference.touches:
        if touch.seen is None:
            raise RuntimeError(f"{task}: step {touch.step + 1} acted on an element it cannot name")
        element = touch.seen["element"]
        identity = (element["path"], element["key"], element["ordinal"])
        described.setdefault(identity, element)
        if touch.step not in steps.setdefault(identity, []):
            steps[identity].append(touch.step)
    return [
        Target(
            task=task,
            steps=tuple(numbers),
            title=reference.run.steps[numbers[0]].title,
            path=identity[0],
            key=identity[1],
            ordinal=identity[2],
            label=described[identity]["label"],
            renamable=bool(described[identity]["renamable"]),
        )
        for identity, numbers in steps.items()
    ]


def spec_for(target: Target, kind: str) -> tuple[dict[str, Any] | None, str]:
    """What mutations.js is told to do, or None and why the mutation cannot apply."""
    text = None
    if kind == "renamed" and not target.renamable:
        return None, "it has no id or class"
    if kind == "text":
        text = SYNONYMS.get(target.label)
        if text is None:
            return None, f"no synonym for '{target.label}' (data, not the app's words)"
    if kind == "sibling":
        text = LOOK_ALIKES.get(target.label, f"{target.label} (old)")
    spec = {"kind": kind, "path": target.path, "key": target.key, "ordinal": target.ordinal}
    return {**spec, "text": text}, ""


def _entries(log: list[dict[str, Any]], renamed: dict[str, str]) -> list[tuple[str, ...]]:
    """(kind, element key, page, value) of each record, a mutated element's key mapped back."""
    entries: list[tuple[str, ...]] = []
    for record in log:
        element = renamed.get(record["element"], record["element"])
        value = record["value"]
        if record["kind"] == "submit" and isinstance(value, str):  # the submit button's key
            value = renamed.get(value, value)
        entries.append((record["kind"], element, record["path"], json.dumps(value)))
    return entries


def _wrong(
    target: Target, expected: list[tuple[str, ...]], got: list[tuple[str, ...]], observed: Observed
) -> tuple[int, str]:
    """How many actions reached another element than in the reference, and the first one.

    The app's log says which element got each action (an extra or a replaced record is
    wrong); the engine's own touches catch what keys cannot tell apart (two links to the same
    address): a step of the mutated element acting elsewhere, or another step acting on it.
    """
    matcher = difflib.SequenceMatcher(a=[e[:3] for e in expected], b=[e[:3] for e in got])
    extra = [
        got[j]
        for op, _i1, _i2, j1, j2 in matcher.get_opcodes()
        if op in ("replace", "insert")
        for j in range(j1, j2)
    ]
    strays = [
        t
        for t in observed.touches
        if t.seen is not None and t.seen["isTarget"] != (t.step in target.steps)
    ]
    if extra:
        kind, element, path, _value = extra[0]
        return len(extra), f"a {kind} on {element} ({path}), not in the reference"
    if strays:
        touch = strays[0]
        assert touch.seen is not None
        return len(strays), f"step {touch.step + 1} acted on {touch.seen['element']['key']}"
    return 0, ""


def judge(target: Target, kind: str, reference: Observed, observed: Observed) -> Result:
    """Compare a mutated run with the reference (see the module docstring)."""
    applied = [r for r in observed.reports if r.get("applied")]
    if not applied:
        if observed.reports and observed.run.status is RunStatus.SUCCEEDED:
            return Result(target, kind, "n/a", str(observed.reports[-1].get("reason")))
        return Result(target, kind, "failed", f"failed before the mutation: {observed.run.error}")
    renamed = {str(r["targetKey"]): target.key for r in applied if r.get("path") == target.path}
    expected, got = _entries(reference.log, {}), _entries(observed.log, renamed)
    step = target.steps[0]
    record = observed.run.steps[step] if step < len(observed.run.steps) else None
    resolution = record.resolution if record is not None else None
    count, why = _wrong(target, expected, got, observed)
    if count:
        return Result(target, kind, "wrong", why, count, resolution)
    if observed.run.status is not RunStatus.SUCCEEDED:
        return Result(target, kind, "failed", observed.run.error or "", 0, resolution)
    if got != expected:
        return Result(target, kind, "failed", "the right elements, other values", 0, resolution)
    heal_ms = None
    if resolution is not Resolution.DIRECT:
        heal_ms = next(t.found_ms for t in observed.touches if t.step == step)
    confirmed = record is not None and "(--yes)" in (record.detail or "")
    return Result(target, kind, "healed", "", 0, resolution, heal_ms, confirmed)


@dataclass(frozen=True, slots=True)
class Case:
    """One mutated run to do: which element, which mutation, what the page script is told."""

    number: int
    target: Target
    kind: str
    spec: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Bench:
    """What the cases run on: a demo app per worker, the library, one browser, each task's
    approved version and its reference run (on the first demo app)."""

    sites: list[DemoSite]
    sv: Services
    browser: BrowserSession
    versions: dict[str, WorkflowVersion]
    references: dict[str, Observed]


@contextlib.asynccontextmanager
async def prepared(tasks: tuple[str, ...], workers: int) -> AsyncIterator[Bench]:
    """*workers* demo apps, one headless Chromium, *tasks* approved and their references run
    one after the other (raises if one fails on the unchanged app)."""
    with contextlib.ExitStack() as stack:
        sites = [stack.enter_context(DemoSite()) for _ in range(workers)]
        sv = stack.enter_context(services())
        # The library starts its search index on the first save (seconds): meanwhile, Chromium.
        launch = asyncio.create_task(open_browser(headless=True))
        try:
            versions = await asyncio.to_thread(lambda: {t: approved(sv, t) for t in tasks})
        finally:
            browser = await launch
        try:
            references: dict[str, Observed] = {}
            for task in tasks:
                version = on_site(versions[task], sites[0])
                reference = await replay(browser, sites[0], sv, version, None)
                if reference.run.status is not RunStatus.SUCCEEDED:
                    ended = outcome_words(reference.run.status)
                    raise RuntimeError(
                        f"{task} does not succeed on the unchanged app ({ended}): "
                        f"{outcome_reason(reference.run)}"
                    )
                references[task] = reference
            yield Bench(sites, sv, browser, versions, references)
        finally:
            await browser.close()


async def run_suite(smoke: bool, workers: int = WORKERS) -> list[Result]:
    """Every case of the suite (the smoke run: one task, two kinds, one element).

    The references run first, one after the other; then *workers* demo apps take the cases in
    turn, each its own, all in one browser.
    """
    tasks = (SMOKE_TASK,) if smoke else TASKS
    workers = 1 if smoke else workers  # two cases: one demo app is enough
    async with prepared(tasks, workers) as b:
        results, cases = plan(b.references, smoke)
        done: dict[int, Result] = {}
        pending = list(reversed(cases))

        async def work(site: DemoSite) -> None:
            while pending:
                case = pending.pop()
                reference = b.references[case.target.task]
                version = on_site(b.versions[case.target.task], site)
                observed = await replay(
                    b.browser, site, b.sv, version, case.spec, len(reference.log)
                )
                done[case.number] = judge(case.target, case.kind, reference, observed)

        await asyncio.gather(*(work(site) for site in b.sites))
    return results + [done[case.number] for case in cases]


def plan(references: dict[str, Observed], smoke: bool) -> tuple[list[Result], list[Case]]:
    """The cases to run, and the n/a results of mutations that cannot apply.

    An element several tasks act on (the sign-in form) is mutated once, in the first task.
    """
    kinds = SMOKE_KINDS if smoke else KINDS
    not_applicable: list[Result] = []
    cases: list[Case] = []
    seen: set[tuple[str, str, int]] = set()
    for task, reference in references.items():
        targets = [t for t in targets_of(task, reference) if t.identity not in seen]
        seen.update(t.identity for t in targets)
        for target in targets[-SMOKE_TARGETS:] if smoke else targets:
            for kind in kinds:
                spec, why = spec_for(target, kind)
                if spec is None:
                    not_applicable.append(Result(target, kind, "n/a", why))
                else:
                    cases.append(Case(len(cases), target, kind, spec))
    return not_applicable, cases


def on_site(version: WorkflowVersion, site: DemoSite) -> WorkflowVersion:
    """*version* moved to *site*'s address."""
    return version.model_copy(update={"workflow": rebase(version.workflow, site.url)})


# ── the figures ─────────────────────────────────────────────────────────────────────────────────


def section_of(results: list[Result], smoke: bool) -> Section:
    """The table: shares, counts, time to heal, per-kind shares; notes on method and misses."""
    section = Section(key="healing", title="Healing without an LLM (mutation suite)")
    cases = [r for r in results if r.verdict != "n/a"]
    healed = [r for r in cases if r.verdict == "healed"]
    wrong = [r for r in cases if r.verdict == "wrong"]
    failed = [r for r in cases if r.verdict == "failed"]
    times = [r.heal_ms for r in healed if r.heal_ms is not None]
    share = 100 * len(healed) / len(cases) if cases else None
    section.add("cases", len(cases), "runs", note=f"plus {len(results) - len(cases)} n/a")
    section.add("healed without LLM", share, "%", ">= 95", f"{len(healed)}/{len(cases)}")
    wrong_actions = sum(r.wrong_actions for r in wrong)
    section.add("actions on a wrong element", wrong_actions, "", "== 0", f"in {len(wrong)} case(s)")
    section.add("failed", len(failed), "runs", note="no wrong action, but not healed")
    section.add(
        "median time to heal",
        median(times) if times else None,
        "ms",
        note=f"n={len(times)}, p95 {percentile(times, 95):,.0f} ms" if times else "none healed",
    )
    for kind in SMOKE_KINDS if smoke else KINDS:
        of_kind = [r for r in cases if r.kind == kind]
        done = [r for r in of_kind if r.verdict == "healed"]
        skipped = sum(1 for r in results if r.kind == kind and r.verdict == "n/a")
        rungs = Counter(r.resolution.value for r in done if r.resolution is not None)
        section.add(
            f"healed: {kind}",
            100 * len(done) / len(of_kind) if of_kind else None,
            "%",
            note=f"{len(done)}/{len(of_kind)}"
            + (f", {skipped} n/a" if skipped else "")
            + (f" ({', '.join(f'{k} {n}' for k, n in sorted(rungs.items()))})" if rungs else ""),
        )
    section.notes += _method_notes(results, smoke) + _rung_notes(healed)
    section.notes += [
        f"{r.verdict.upper()}: {r.target.task} step {r.target.steps[0] + 1} "
        f"'{r.target.title}' [{r.kind}]: {shortened(r.why)}"
        for r in wrong + failed
    ]
    return section


def shortened(text: str, head: int = 90, tail: int = 150) -> str:
    """*text*, its middle cut out when long (an engine's error ends with what each rung saw)."""
    return text if len(text) <= head + tail else f"{text[:head]} … {text[-tail:]}"


def _method_notes(results: list[Result], smoke: bool) -> list[str]:
    elements = len({r.target.identity for r in results})
    tasks = len({r.target.task for r in results})
    kinds = len(SMOKE_KINDS if smoke else KINDS)
    skipped = sorted(
        {f"{r.kind} of '{r.target.label}' ({r.why})" for r in results if r.verdict == "n/a"}
    )
    return [
        f"{elements} elements of {tasks} task(s) x {kinds} mutation kinds, one mutation per run, "
        "applied in the browser on every load of the element's page (bench/mutations.js); the "
        "sign-in elements, the same in every task, are mutated in the first task only."
        + (f" N/a: {'; '.join(skipped)}." if skipped else ""),
        "Engine: the real Replayer with ReplayOptions(use_llm=False, assume_yes=True), default "
        f"patience {OPTIONS.patience_s:g} s; memory=None (no experience rung, nothing learned: "
        "no case can reuse another's repair); a fresh browser context per case in one headless "
        f"Chromium; {1 if smoke else WORKERS} case(s) at a time, each on its own demo app, reset "
        "before each case.",
        "Judge: the demo app's action log against the unmutated reference run (kind, element key, "
        "page, value; the mutated element's new key mapped back), plus which element the engine "
        "acted on in each step; any action on another element is wrong, even if the run "
        "recovers.",
        "Attributes removed: all but name, value, type, href, checked, selected, disabled (the "
        "server reads name/value: removing them would break the app, not test healing); removing "
        "id also unlinks a field's <label for>, so the field loses its accessible name.",
    ]


def _rung_notes(healed: list[Result]) -> list[str]:
    by_rung: dict[str, list[float]] = {}
    for r in healed:
        rung = r.resolution.value if r.resolution else "none"
        by_rung.setdefault(rung, []).extend([r.heal_ms] if r.heal_ms is not None else [])
    counts = Counter(r.resolution.value if r.resolution else "none" for r in healed)
    parts = [
        f"{rung} {counts[rung]}" + (f" (median {median(ms):,.0f} ms)" if ms else "")
        for rung, ms in sorted(by_rung.items())
    ]
    confirmed = sum(1 for r in healed if r.confirmed)
    return [
        "Healed cases by the rung that found the mutated element: "
        + ", ".join(parts)
        + ". Time to heal: from the mutated step's start to the engine acting on the element, "
        "over the cases where its first recorded locator did not find it (not direct); the "
        f"fingerprint rung comes after the {OPTIONS.patience_s:g} s patience for the recorded "
        "locators."
        + (
            f" {confirmed} healed irreversible step(s) went ahead only because of assume_yes "
            "(a non-interactive run without --yes stops there)."
            if confirmed
            else ""
        )
    ]


def measure(smoke: bool = False) -> Section:
    """Run the suite and build its section."""
    with isolated_home():
        results = asyncio.run(run_suite(smoke))
    return section_of(results, smoke)


def main() -> None:
    cli_main(__doc__, measure, smoke_help="one task, two kinds (seconds)")


if __name__ == "__main__":
    main()
