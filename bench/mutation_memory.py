"""Second runs on the mutation suite: the LLM on (the fake, answering as a careful model), the
experience memory on, every case run twice; what the second run still asks the LLM.

The cases are bench/healing.py's (the same tasks, elements, mutation kinds and page script,
its smoke subset under ``--smoke``), and so are the references and the judge: a run is right
when it succeeds and the demo app's action log is the reference's, element for element; any
action on another element is wrong. Each case has a data directory of its own (its library,
runs and experiences: nothing learned in one case reaches another), the task's approved version
saved there, and runs twice on its worker's demo app, reset before each run: the real Replayer
with the LLM and the real :class:`ExperienceMemory` over the case's stores as
``desktop_app.app.replay`` builds it, then ``learn`` as that function calls it, so a repair the
first run found is remembered for the second.

The fake LLM (tests/fakes/openai_server.py, a real local server speaking the OpenAI API, one per
worker so each run's calls are counted at the server too) answers as a careful model: the ref
whose role is the recorded element's and whose accessible name is the recorded name or the
demo app's synonym for it (healing.SYNONYMS: the words a redesign could use instead), when
exactly one element is so; ``not_found`` otherwise, never a look-alike.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import json
import re
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from common import Section, isolated_home
from fakes.openai_server import FakeOpenAIServer
from healing import (
    OPTIONS,
    SMOKE_TASK,
    SYNONYMS,
    TASKS,
    WORKERS,
    Bench,
    Case,
    Observed,
    Result,
    judge,
    on_site,
    plan,
    prepared,
    replay,
    shortened,
)
from replay_support import approve

from desktop_app.app import Services, make_structured_llm, open_services
from desktop_app.core.models.workflow import WorkflowVersion
from desktop_app.core.replay.evidence import RECENT
from desktop_app.core.replay.learning import REPLAY_ACTOR, learn
from desktop_app.core.replay.memory import ExperienceMemory
from desktop_app.demo_site import DEMO_PASSWORD, DemoSite
from desktop_app.settings import Settings, load_settings

__all__ = ["Twice", "add_figures", "careful_model", "second_runs"]

CHAT: Final = "/v1/chat/completions"
OPTIONS_LLM: Final = replace(OPTIONS, use_llm=True)
"""The suite's options, the LLM on."""

_LINE: Final = re.compile(r'^(\s*)- ([a-z]+)(?: "((?:[^"\\]|\\.)*)")?(.*)$')
_REF: Final = re.compile(r"\[ref=([a-z0-9]+)\]")
_TEXT: Final = re.compile(r"(?:^|\]):\s+(.+)$")


# ── the careful model ──────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class _Node:
    """One line of the page's ARIA snapshot: its role, name, ref, own text, where it sits."""

    indent: int
    role: str
    name: str
    ref: str | None
    text: str
    parent: int | None
    ancestors: tuple[str, ...]
    """The names of the elements it is inside, outermost first."""


def _nodes(page: str) -> list[_Node]:
    nodes: list[_Node] = []
    stack: list[int] = []
    for line in page.splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        indent, role, name, tail = match.groups()
        while stack and nodes[stack[-1]].indent >= len(indent):
            stack.pop()
        ref = _REF.search(tail)
        text = _TEXT.search(tail)
        words = text.group(1).strip().strip('"') if text is not None else ""
        ancestors = tuple(nodes[i].name for i in stack if nodes[i].name)
        parent = stack[-1] if stack else None
        nodes.append(
            _Node(
                len(indent),
                role,
                (name or "").replace('\\"', '"'),
                ref.group(1) if ref else None,
                words,
                parent,
                ancestors,
            )
        )
        stack.append(len(nodes) - 1)
    return nodes


def _label(nodes: list[_Node], index: int) -> str:
    """The element's accessible name, else the words shown just before it beside it (the
    label a person reads, when the field lost its link to it)."""
    node = nodes[index]
    if node.name:
        return node.name
    before = [n for n in nodes[:index] if n.parent == node.parent and n.indent == node.indent]
    return (before[-1].text or before[-1].name) if before else ""


def _recorded(user: str) -> tuple[str | None, str | None, tuple[str, ...]]:
    """The recorded element's role, name and nearby words, as heal_llm's prompt says them."""
    line = next((x for x in user.splitlines() if x.startswith("The element as recorded:")), "")
    role = name = None
    near: tuple[str, ...] = ()
    for part in line.partition(":")[2].strip().split("; "):
        with contextlib.suppress(ValueError, SyntaxError):
            if part.startswith("role "):
                role = part[5:]
            elif part.startswith("name ") and name is None:
                value = ast.literal_eval(part[5:])
                name = value if isinstance(value, str) else None
            elif part.startswith("near "):
                near = tuple(str(v) for v in ast.literal_eval(f"({part[5:]},)"))
    return role, name, near


def _answer(action: str, ref: str | None, reason: str) -> str:
    return json.dumps({"action": action, "ref": ref, "reason": reason})


def careful_model(synonyms: dict[str, str]) -> Callable[[dict[str, Any]], str]:
    """The model's answer to heal_llm's request: the one element of the recorded role labelled
    as recorded or by the synonym for that label (*synonyms*), inside the part of the page the
    recorded element was near when the page has it (the row "Item 2", not "Item 1"); else not
    found."""

    def policy(body: dict[str, Any]) -> str:
        user = str(next(m["content"] for m in body["messages"] if m["role"] == "user"))
        role, name, near = _recorded(user)
        if not name:
            return _answer("not_found", None, "the recorded element has no name to go by")
        names = {name, synonyms.get(name, name)}
        nodes = _nodes(user.split("<page>", 1)[-1].split("</page>", 1)[0])
        containers = {nodes[n.parent].name for n in nodes if n.parent is not None}
        sections = set(near) & containers
        refs = [
            node.ref
            for index, node in enumerate(nodes)
            if node.ref is not None
            and (not role or node.role == role)
            and _label(nodes, index) in names
            and (not sections or sections & set(node.ancestors))
        ]
        if len(refs) == 1:
            return _answer("act", refs[0], f"the {role or 'element'} labelled as recorded")
        why = "several elements could be it" if refs else "no element is labelled so"
        return _answer("not_found", None, why)

    return policy


# ── a case, twice ──────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class Twice:
    """One case's two runs: the judge's verdicts, the LLM calls (the run's own count, and the
    server's), the rung that found the mutated element, and what the engine noted there."""

    case: Case
    results: tuple[Result, Result]
    calls: tuple[int, int]
    served: tuple[int, int]
    remembered: tuple[str, ...]
    """The repaired locators the case's store holds after the first run."""
    notes: tuple[str, str]


def _settings(home: Path, llm: FakeOpenAIServer) -> Settings:
    return load_settings(
        home=home, llm_base_url=llm.base_url, llm_model="fake-model", llm_api_key="fake-key"
    )


def _step_note(observed: Observed, step: int) -> str:
    if step >= len(observed.run.steps):
        return observed.run.error or ""
    record = observed.run.steps[step]
    return " / ".join(x for x in (record.detail, record.error) if x)


async def _run(
    b: Bench,
    site: DemoSite,
    sv: Services,
    memory: ExperienceMemory,
    stored: WorkflowVersion,
    case: Case,
) -> Observed:
    """One run of *case* on *site*, then what ``desktop_app.app.replay`` learns from it."""
    reference = b.references[case.target.task]
    llm = make_structured_llm(sv.settings, secrets=(DEMO_PASSWORD,))
    observed = await replay(
        b.browser,
        site,
        sv,
        on_site(stored, site),
        case.spec,
        len(reference.log),
        options=OPTIONS_LLM,
        memory=memory,
        llm=llm,
    )
    assert observed.params is not None
    params = observed.params
    await asyncio.to_thread(
        lambda: learn(
            library=sv.workflows,
            memory=memory,
            version=stored,
            run_id=observed.run.id,
            lessons=observed.lessons,
            params=params,
            actor=REPLAY_ACTOR,
            status=observed.run.status,
            history=sv.runs.runs(stored.workflow_id, limit=RECENT),
        )
    )
    return observed


async def twice(b: Bench, site: DemoSite, llm: FakeOpenAIServer, case: Case, home: Path) -> Twice:
    """*case* run twice in a data directory of its own (*home*), learning after each run."""
    with open_services(_settings(home, llm), write=True) as sv:
        stored = await asyncio.to_thread(approve, sv, b.versions[case.target.task].workflow)
        memory = ExperienceMemory(sv.experiences, lambda: sv.workflows.index, sv.index_queue)
        reference = b.references[case.target.task]
        results, calls, served, notes = [], [], [], []
        remembered: tuple[str, ...] = ()
        for _ in range(2):
            before = len(llm.requests_to(CHAT))
            observed = await _run(b, site, sv, memory, stored, case)
            served.append(len(llm.requests_to(CHAT)) - before)
            calls.append(observed.run.llm_calls)
            results.append(judge(case.target, case.kind, reference, observed))
            notes.append(_step_note(observed, case.target.steps[0]))
            if not results[1:]:
                found = sv.experiences.experiences()
                remembered = tuple(e.repaired_locator.describe() for e in found)
    return Twice(
        case,
        (results[0], results[1]),
        (calls[0], calls[1]),
        (served[0], served[1]),
        remembered,
        (notes[0], notes[1]),
    )


@contextlib.contextmanager
def _servers(count: int) -> Iterator[list[FakeOpenAIServer]]:
    with contextlib.ExitStack() as stack:
        servers = [stack.enter_context(FakeOpenAIServer()) for _ in range(count)]
        for server in servers:
            server.default_chat = careful_model(SYNONYMS)
        yield servers


async def _suite(smoke: bool, workers: int) -> list[Twice]:
    tasks = (SMOKE_TASK,) if smoke else TASKS
    workers = 1 if smoke else workers
    async with prepared(tasks, workers) as b:
        _not_applicable, cases = plan(b.references, smoke)
        done: dict[int, Twice] = {}
        pending = list(reversed(cases))
        temporary = tempfile.TemporaryDirectory(prefix="procedura-twice-")
        with temporary as tmp, _servers(workers) as llms:

            async def work(site: DemoSite, llm: FakeOpenAIServer) -> None:
                while pending:
                    case = pending.pop()
                    home = Path(tmp) / f"case-{case.number}"
                    home.mkdir()
                    done[case.number] = await twice(b, site, llm, case, home)

            pairs = zip(b.sites, llms, strict=True)
            await asyncio.gather(*(work(site, llm) for site, llm in pairs))
    return [done[case.number] for case in cases]


def second_runs(smoke: bool = False, workers: int = WORKERS) -> list[Twice]:
    """Every applicable case of the mutation suite (its smoke subset), each run twice."""
    with isolated_home():
        return asyncio.run(_suite(smoke, workers))


# ── the figures ─────────────────────────────────────────────────────────────────────────────────


def _rung(result: Result) -> str:
    return result.resolution.value if result.resolution is not None else "none"


def _named(twice: Twice) -> str:
    target = twice.case.target
    return f"{target.task} step {target.steps[0] + 1} '{target.title}' [{twice.case.kind}]"


def add_figures(section: Section, cases: list[Twice], smoke: bool, seconds: float) -> None:
    """The mutation suite's second runs as metrics and notes of the learning *section*."""
    asked = [t for t in cases if t.calls[0]]
    again = [t for t in cases if t.calls[1]]
    right = [t for t in cases if all(r.verdict == "healed" for r in t.results)]
    wrong = sum(r.wrong_actions for t in cases for r in t.results)
    wrong_in = sum(1 for t in cases if any(r.verdict == "wrong" for r in t.results))
    scope = "smoke subset" if smoke else "whole suite"
    section.add("mutation cases run twice", len(cases), "cases", note=f"bench/healing.py's {scope}")
    section.add("mutation: LLM needed on run 1", len(asked), "cases")
    section.add("mutation: LLM calls, run 1", sum(t.calls[0] for t in cases), "calls")
    section.add(
        "mutation: LLM calls, run 2",
        sum(t.calls[1] for t in cases),
        "calls",
        "== 0",
        f"in {len(again)} case(s)",
    )
    section.add("mutation: right on both runs", len(right), f"of {len(cases)}")
    section.add("mutation: actions on a wrong element", wrong, "", "== 0", f"in {wrong_in} case(s)")
    served = sum(sum(t.served) for t in cases)
    counted = sum(sum(t.calls) for t in cases)
    rungs = Counter(f"{_rung(t.results[0])} -> {_rung(t.results[1])}" for t in cases)
    section.notes += [
        "Mutation suite twice: each case of bench/healing.py run twice with the LLM on (the fake "
        "server answering as a careful model: the one element of the recorded role labelled as "
        "recorded or by the demo app's synonym, inside the part of the page it was recorded "
        "near, else not found) and the experience memory on "
        "over the case's own data directory, learning after each run as desktop_app.app.replay "
        f"does; judged as healing.py judges each run; {WORKERS if not smoke else 1} case(s) at "
        f"a time, {seconds:.0f} s. LLM calls counted by the runs {counted}, by the servers "
        f"{served}. The mutated element's rung, run 1 -> run 2: "
        + ", ".join(f"{k} {n}" for k, n in sorted(rungs.items()))
        + "."
    ]
    section.notes += [
        f"Run 2 asked the LLM ({t.calls[1]} call(s)): {_named(t)}; rung {_rung(t.results[1])}; "
        f"remembered after run 1: {'; '.join(t.remembered) or 'nothing'}; "
        f"{shortened(t.notes[1])}"
        for t in again
    ]
    section.notes += [
        f"{'/'.join(r.verdict.upper() for r in t.results)}: {_named(t)}: "
        + "; ".join(shortened(r.why) for r in t.results if r.why)
        for t in cases
        if t not in right
    ]
