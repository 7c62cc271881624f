"""Agent-only baseline: what the demo tasks cost when the LLM does every step, against replay.

Each recorded demo task (create-contact, expense-report, filter-orders, open-contact) is induced
and approved as the tests do, then run by the real replay engine in headless Chromium against
the demo app, with the real OpenAI client talking to the fake OpenAI server, three ways:

- replay: the workflow as approved, the LLM allowed but nothing drifted;
- one drift: the middle step with a target lost its locators and fingerprint (one locator that
  matches nothing is left, as a target must have one), so that step alone climbs to the LLM;
- agent-only: every step with a target lost them, so every such step is done by the LLM rung.

The fake server answers as a scripted good policy: it reads the step's title and the ARIA
snapshot the rung sent and names the ref of the element a careful model would pick. Each way
of a task has a fresh data directory of its own, each run a fresh demo site. Reports LLM calls,
prompt and completion tokens (as the fake counts them: whitespace-separated words) and the
median wall time of each way per task and in total, and the ratios between the ways.

    .venv/bin/python bench/agent_baseline.py [--smoke]
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

import openai  # noqa: F401  (imported on the first LLM call otherwise: inside a timed run)
from common import Section, isolated_home, median
from common import main as cli_main
from fakes.openai_server import FakeOpenAIServer
from replay_support import approved, services

from desktop_app.adapters.browser.launch import BrowserSession, open_browser
from desktop_app.adapters.browser.replay_page import PlaywrightPage
from desktop_app.app import Services, make_structured_llm
from desktop_app.core.models.run import Resolution, RunStatus
from desktop_app.core.models.target import Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import Step, Workflow, WorkflowVersion
from desktop_app.core.replay.engine import Replayer, ReplayOptions
from desktop_app.core.replay.memory import ExperienceMemory
from desktop_app.core.replay.parameters import bind_parameters
from desktop_app.core.replay.render import rebase
from desktop_app.demo_site import DEMO_PASSWORD, DemoSite
from desktop_app.resources import resource_path

TASKS: Final = ("create-contact", "expense-report", "filter-orders", "open-contact")
REPLAY: Final = "replay"
ONE_DRIFT: Final = "one drift"
AGENT: Final = "agent-only"
WAYS: Final = (REPLAY, ONE_DRIFT, AGENT)
#: How long a run waits for recorded locators before healing (the same for every way). The
#: default (3 s) would add 3 s of pure waiting to every stripped step.
PATIENCE_S: Final = 0.1
#: What a stripped target keeps: a locator that finds nothing on any page.
GONE: Final = Locator(strategy=LocatorStrategy.CSS, value="[data-procedura-bench-gone]")
ACTOR: Final = "bench"
CHAT: Final = "/v1/chat/completions"


# ── the scripted good policy ───────────────────────────────────────────────────────────────────

_TITLE = re.compile(r"^Step \d+ of \d+: (.*)$", re.MULTILINE)
_ELEMENT = re.compile(r'^\s*- ([a-z]+) "((?:[^"\\]|\\.)*)"(.*)$')
_REF = re.compile(r"\[ref=([a-z0-9]+)\]")
_INLINE_VALUE = re.compile(r"\]: \S")
_FIELDS: Final = frozenset({"textbox", "searchbox", "combobox", "spinbutton"})
#: A step title as the inducer words it → the label it names, and the roles that can take it.
_INTENTS: Final = (
    (re.compile(r"^Fill '(.+?)' with "), _FIELDS),
    (re.compile(r"^Select .* in '(.+)'$"), frozenset({"combobox", "listbox"})),
    (re.compile(r"^Set '(.+?)' to "), frozenset({"checkbox", "radio", "switch"})),
    (re.compile(r"^Press \S+ in '(.+)'$"), _FIELDS),
    (re.compile(r"^Click '(.+)'$"), frozenset({"button", "link", "menuitem", "tab"})),
)


def _user_message(body: dict[str, Any]) -> str:
    return str(next(m["content"] for m in body["messages"] if m["role"] == "user"))


def _page_of(user: str) -> str:
    return user.split("<page>", 1)[-1].rsplit("</page>", 1)[0]


class _Element(NamedTuple):
    role: str
    name: str
    ref: str
    filled: bool  # it shows a value (inline, or as a text child: a field already typed into)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _children(lines: list[str], index: int) -> Iterator[str]:
    depth = _indent(lines[index])
    return itertools.takewhile(lambda line: _indent(line) > depth, lines[index + 1 :])


def page_elements(page: str) -> list[_Element]:
    """The named elements with a ref in an ARIA snapshot, in page order."""
    lines = page.splitlines()
    found = []
    for i, line in enumerate(lines):
        element, ref = _ELEMENT.match(line), _REF.search(line)
        if element is None or ref is None:
            continue
        filled = bool(_INLINE_VALUE.search(line)) or any(
            child.lstrip().startswith("- text:") for child in _children(lines, i)
        )
        name = element.group(2).replace('\\"', '"')
        found.append(_Element(element.group(1), name, ref.group(1), filled))
    return found


def _intent(title: str) -> tuple[str, frozenset[str]] | None:
    """The label a step's title names (casefolded) and the roles that can take its action."""
    for pattern, roles in _INTENTS:
        wanted = pattern.match(title)
        if wanted is not None:
            return wanted.group(1).casefold(), roles
    return None


def good_policy(body: dict[str, Any]) -> str:
    """A careful model: the element of the snapshot whose role and name the step's title means.

    Among several with that role and name, a fill takes the first field still empty (the second
    "Description" of a form whose first one is filled), anything else the first in page order.
    """
    user = _user_message(body)
    found = _TITLE.search(user)
    title = found.group(1) if found else ""
    intent = _intent(title)
    if intent is None:
        return _answer("not_found", None, f"cannot tell what {title!r} acts on")
    label, roles = intent
    matches = [
        e for e in page_elements(_page_of(user)) if e.role in roles and e.name.casefold() == label
    ]
    if title.startswith("Fill "):
        matches = [e for e in matches if not e.filled] or matches
    if not matches:
        return _answer("not_found", None, f"no element on the page is {label!r}")
    chosen = matches[0]
    return _answer("act", chosen.ref, f'the {chosen.role} "{chosen.name}" is what the step means')


def _answer(action: str, ref: str | None, reason: str) -> str:
    return json.dumps({"action": action, "ref": ref, "reason": reason})


# ── the three ways ─────────────────────────────────────────────────────────────────────────────


def targeted(workflow: Workflow) -> list[Step]:
    """The steps that act on an element (a goto, for one, has none)."""
    return [s for s in workflow.steps if s.target_or_none is not None]


def drifted_steps(workflow: Workflow, way: str) -> set[str]:
    """The ids of the steps *way* strips: none, the middle targeted step, or every one."""
    steps = targeted(workflow)
    if way == REPLAY:
        return set()
    if way == ONE_DRIFT:
        return {steps[len(steps) // 2].id}
    return {s.id for s in steps}


def stripped(workflow: Workflow, step_ids: set[str]) -> Workflow:
    """*workflow* with the targets of *step_ids* reduced to :data:`GONE`, no fingerprint."""
    gone = Target(locators=(GONE,))
    steps = tuple(
        s.model_copy(update={"target": gone}) if s.id in step_ids else s for s in workflow.steps
    )
    return workflow.model_copy(update={"steps": steps})


@dataclass(frozen=True, slots=True)
class Prepared:
    """A task's workflow approved as one way runs it, in a data directory of its own."""

    task: str
    way: str
    services: Services
    version: WorkflowVersion
    stripped_ids: frozenset[str]
    stripped_titles: tuple[str, ...]


@contextlib.contextmanager
def prepared(fake: FakeOpenAIServer, task: str, way: str) -> Iterator[Prepared]:
    """A fresh data directory whose LLM is *fake*, with *task* approved as *way* runs it."""
    llm = {"llm_base_url": fake.base_url, "llm_model": "fake-chat", "llm_api_key": "fake"}
    with isolated_home(), services(**llm) as sv:
        version = approved(sv, task)
        ids = drifted_steps(version.workflow, way)
        if ids:
            saved = sv.workflows.save(stripped(version.workflow, ids), actor=ACTOR)
            version = sv.workflows.approve(
                version.workflow.id, actor=ACTOR, version=saved.version.version
            )
        sv.workflows.index.search_experiences("warm up", limit=1)  # its worker is up
        titles = tuple(s.title for s in version.workflow.steps if s.id in ids)
        yield Prepared(task, way, sv, version, frozenset(ids), titles)


@dataclass(frozen=True, slots=True)
class Figures:
    """One run: what the run record and the fake server say it used."""

    task: str
    way: str
    calls: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    prompt_chars: int
    page_words: int
    system_words: int
    max_calls: int  # the run's LLM call budget (llm_max_calls_per_run)
    stripped: tuple[str, ...]  # the titles of the steps stripped of their target
    problem: str | None  # None: it succeeded as designed


async def run_way(browser: BrowserSession, fake: FakeOpenAIServer, ready: Prepared) -> Figures:
    """Run the prepared workflow once, timed, on a fresh demo site in a fresh browser context."""
    sv = ready.services
    with DemoSite() as site:
        workflow = rebase(ready.version.workflow, site.url)
        version = ready.version.model_copy(update={"workflow": workflow})
        params = bind_parameters(workflow, {}, secrets={"password": DEMO_PASSWORD})
        assert browser.browser is not None, "the benchmark launches its own browser"
        context = await browser.browser.new_context()
        try:
            page = await context.new_page()
            script = resource_path("recorder", "capture.js")
            port = PlaywrightPage(page, workflow.domains, script)
            await port.install(context)
            replayer = Replayer(
                browser=port,
                runs=sv.runs,
                media=sv.media,
                memory=ExperienceMemory(sv.experiences, lambda: sv.workflows.index),
                llm=make_structured_llm(sv.settings, secrets=params.secret_values()),
                options=ReplayOptions(use_llm=True, assume_yes=True, patience_s=PATIENCE_S),
            )
            before = len(fake.requests_to(CHAT))
            began = time.perf_counter()
            outcome = await replayer.run(version, params)
            seconds = time.perf_counter() - began
        finally:
            await context.close()
    requests = fake.requests_to(CHAT)[before:]
    run = outcome.run
    by_llm = {s.step_id for s in run.steps if s.resolution is Resolution.LLM}
    problem = None
    if run.status is not RunStatus.SUCCEEDED:
        problem = f"{run.status.value}: {run.error}"
    elif by_llm != ready.stripped_ids:
        problem = f"{len(by_llm)} step(s) went to the LLM, {len(ready.stripped_ids)} were meant to"
    elif len(requests) != run.llm_calls:
        problem = f"the run counted {run.llm_calls} LLM calls, the server {len(requests)}"
    users = [_user_message(r.json) for r in requests]
    return Figures(
        task=ready.task,
        way=ready.way,
        calls=run.llm_calls,
        prompt_tokens=sum(s.prompt_tokens for s in run.steps),
        completion_tokens=sum(s.completion_tokens for s in run.steps),
        seconds=seconds,
        prompt_chars=sum(len(m["content"]) for r in requests for m in r.json["messages"]),
        page_words=sum(len(_page_of(u).split()) for u in users),
        system_words=sum(len(r.json["messages"][0]["content"].split()) for r in requests),
        max_calls=sv.settings.llm_max_calls_per_run,
        stripped=ready.stripped_titles,
        problem=problem,
    )


async def run_all(tasks: Sequence[str], ways: Sequence[str], rounds: int) -> list[Figures]:
    """Every task every way, *rounds* times; a task's ways alternate within each round."""
    results: list[Figures] = []
    with FakeOpenAIServer(default_chat=good_policy) as fake:
        browser = await open_browser(headless=True)
        try:
            for task in tasks:
                with contextlib.ExitStack() as stack:
                    ready = [stack.enter_context(prepared(fake, task, way)) for way in ways]
                    for _ in range(rounds):
                        for each in ready:
                            results.append(await run_way(browser, fake, each))
        finally:
            await browser.close()
    return results


# ── the report ─────────────────────────────────────────────────────────────────────────────────


def _ratio(top: float, bottom: float) -> float | None:
    return round(top / bottom, 1) if bottom else None


def report(
    section: Section, results: list[Figures], tasks: Sequence[str], ways: Sequence[str]
) -> None:
    """Per task and in total: calls, tokens, median wall time, and the ratios between ways."""
    first: dict[tuple[str, str], Figures] = {}
    seconds: dict[tuple[str, str], list[float]] = {}
    for f in results:
        first.setdefault((f.task, f.way), f)
        seconds.setdefault((f.task, f.way), []).append(f.seconds)
    for task in tasks:
        for way in ways:
            f = first[task, way]
            goal = "== 0" if way == REPLAY else ""
            section.add(
                f"{task}: {way} LLM calls",
                f.calls,
                "calls",
                goal,
                f"{f.prompt_tokens:,} prompt + {f.completion_tokens:,} completion tokens",
            )
            if way != REPLAY:
                section.add(f"{task}: {way} prompt tokens", f.prompt_tokens, "tokens")
        if ONE_DRIFT in ways:
            agent, drift = first[task, AGENT], first[task, ONE_DRIFT]
            section.add(
                f"{task}: agent-only / one drift, prompt tokens",
                _ratio(agent.prompt_tokens, drift.prompt_tokens),
                "x",
            )
        for way in ways:
            samples = seconds[task, way]
            section.add(
                f"{task}: {way} wall time", median(samples), "s", note=f"median of {len(samples)}"
            )
    totals = {way: [first[t, way] for t in tasks] for way in ways}
    for way in ways:
        runs = totals[way]
        calls = sum(f.calls for f in runs)
        section.add(
            f"total: {way} LLM calls",
            calls,
            "calls",
            "== 0" if way == REPLAY else "",
            f"{len(tasks)} task(s)",
        )
        section.add(f"total: {way} prompt tokens", sum(f.prompt_tokens for f in runs), "tokens")
        section.add(
            f"total: {way} completion tokens", sum(f.completion_tokens for f in runs), "tokens"
        )
        section.add(
            f"total: {way} wall time",
            sum(median(seconds[t, way]) for t in tasks),
            "s",
            note="sum of the per-task medians",
        )
    agent = totals[AGENT]
    agent_calls = sum(f.calls for f in agent)
    agent_prompt = sum(f.prompt_tokens for f in agent)
    if ONE_DRIFT in ways:
        drift_prompt = sum(f.prompt_tokens for f in totals[ONE_DRIFT])
        section.add(
            "total: agent-only / one drift, prompt tokens", _ratio(agent_prompt, drift_prompt), "x"
        )
    replay_prompt = sum(f.prompt_tokens for f in totals[REPLAY])
    section.add(
        "total: agent-only / replay, prompt tokens",
        _ratio(agent_prompt, replay_prompt),
        "x",
        note="n/a: replay used no tokens (see the absolute figures)" if not replay_prompt else "",
    )
    if agent_calls:
        section.add(
            "agent-only prompt tokens per LLM call",
            round(agent_prompt / agent_calls),
            "tokens",
            note=f"mean; {sum(f.page_words for f in agent) / agent_calls:.0f} of them the page "
            f"snapshot, {sum(f.system_words for f in agent) / agent_calls:.0f} the system prompt, "
            "the rest the step",
        )
        section.add(
            "agent-only prompt characters per LLM call",
            round(sum(f.prompt_chars for f in agent) / agent_calls),
            "chars",
            note="mean; a BPE tokenizer makes roughly a token of every 3-4 characters",
        )
    failed = [f for f in results if f.problem is not None]
    section.add("runs as designed", len(results) - len(failed), "runs", f"== {len(results)}")
    for f in failed:
        section.notes.append(f"FAILED: {f.task}, {f.way}: {f.problem}")
    section.notes += _consistency(results, first)
    most = max(agent, key=lambda f: f.calls)
    section.notes.append(
        f"the most LLM calls one agent-only run made: {most.calls} ({most.task}), of the "
        f"{most.max_calls} a run may make (llm_max_calls_per_run): a task with more steps "
        "that act on an element cannot be done by the LLM alone unless it is raised."
    )
    if ONE_DRIFT in ways:
        drifted = "; ".join(f"{t}: {', '.join(first[t, ONE_DRIFT].stripped)}" for t in tasks)
        section.notes.append(f"the one drifted step (the middle one with a target): {drifted}.")


def _consistency(results: list[Figures], first: dict[tuple[str, str], Figures]) -> list[str]:
    """Notes on any run whose calls or tokens differ from its first round's (they should not)."""
    notes = []
    for f in results:
        shown = first[f.task, f.way]
        used = (f.calls, f.prompt_tokens, f.completion_tokens)
        if used != (shown.calls, shown.prompt_tokens, shown.completion_tokens):
            notes.append(
                f"{f.task}, {f.way}: a round used {used[0]} calls and {used[1]} + {used[2]} "
                "tokens, unlike the first round shown"
            )
    return notes


def measure(smoke: bool = False) -> Section:
    """Smoke: create-contact, replay and agent-only, once. Full: every task, all ways, 3 rounds."""
    tasks = TASKS[:1] if smoke else TASKS
    ways = (REPLAY, AGENT) if smoke else WAYS
    rounds = 1 if smoke else 3
    results = asyncio.run(run_all(tasks, ways, rounds))
    section = Section(key="agent_baseline", title="Agent-only baseline: LLM cost vs replay")
    report(section, results, tasks, ways)
    section.notes += [
        f"{len(tasks)} task(s) x {len(ways)} way(s) x {rounds} round(s), a task's ways "
        "alternating within each round; wall time is the engine's run alone (median), calls and "
        "tokens those of round 1 (every round used the same unless a note says otherwise).",
        "each way of a task has a fresh data directory of its own; the runs' repairs are not "
        "learned (the benchmark drives the engine, not app.replay, which learns after a run), so "
        "nothing is remembered from one run to the next. Every run gets a fresh demo site and "
        "browser context (one headless Chromium for all).",
        "agent-only strips the target of every step that has one; steps without a target (the "
        "goto that opens the sign-in page) run as recorded.",
        "tokens are the fake server's count: whitespace-separated words of every message "
        "(system prompt, step, snapshot); a real BPE tokenizer counts more (see characters).",
        f"patience {PATIENCE_S} s for every way: a stripped step still tries its (dead) locator, "
        "its remembered repairs and the search index before the LLM rung, so agent-only wall "
        "time is an upper bound for a pure agent; the default 3 s patience would add 3 s per "
        "stripped step. Screenshots of healed steps are kept, as by default.",
        "irreversible steps found by the LLM are confirmed in advance (--yes): expense-report "
        "submits its report through the LLM rung in agent-only.",
    ]
    return section


def main() -> None:
    cli_main(__doc__, measure, smoke_help="tiny sizes (CI)")


if __name__ == "__main__":
    main()
