"""Learning: what a second run on the same drift costs, and how fast a step's remembered
repairs are looked up in a big memory.

1. Second run on the same drift: the drift cases of ``tests/test_experience_memory.py``'s kind,
   on pages of our own served on 127.0.0.1 (judged by the page's own data): the button a
   workflow clicks is relabeled, stripped of its id and classes and given a look-alike
   neighbour, so neither its recorded locators nor its fingerprint can tell it, and the fake
   LLM (a real local server speaking the OpenAI API) is asked. Each case is run twice with
   different values; counted: LLM calls of the first and of the second run, and the items the
   app holds after both (each run must add its own). One more case is a to-do list whose rows'
   "Done" button became "Mark complete" beside a "Remove": the second run ticks off an item in
   another row than the first.
2. Second runs on the mutation suite (bench/mutation_memory.py): every case of
   bench/healing.py (its smoke subset in a smoke run) run twice with the LLM on (the fake,
   answering as a careful model) and the experience memory on, learning after each run;
   counted: the cases whose first run asked the LLM, the LLM calls of each run (goal: none on
   the second), the cases right on both runs and any action on a wrong element (goal 0),
   judged by the demo app's own action log as healing.py judges.
3. Look-up: the experience store filled with N experiences (N = 100,000; 10,000 in a smoke run)
   spread over 200 workflows of 10 steps each, then ``ExperienceMemory.own`` (what rung 3 asks
   first, for one step) for random steps; p50 and p95 (goal p95 <= 20 ms at 100k).
4. Similar steps' look-up: 100,000 experiences (1,000 in a smoke run) in the store and the
   semantic index, then ``ExperienceMemory.recall`` for steps with none of their own (the query
   embedded, the nearest found, their records read): p50 and p95 (bench/similar_lookup.py).

    .venv/bin/python bench/learning.py [--smoke]
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from common import Section, environment, isolated_home, main, median, percentile
from fakes.openai_server import FakeOpenAIServer
from mutation_memory import add_figures
from mutation_memory import second_runs as mutation_second_runs
from replay_support import approve, run
from similar_lookup import saved_workflows, similar_lookup, store_experiences
from test_experience_memory import (
    CREATE_RECORD,
    ITEMS,
    TODO,
    add_item_workflow,
    in_row,
    items_site,
    picks,
    todo_site,
    todo_workflow,
)

from desktop_app.app import open_services
from desktop_app.core.models.common import utcnow
from desktop_app.core.models.experience import Experience
from desktop_app.core.models.run import Resolution, Run, RunStatus
from desktop_app.core.models.target import Fingerprint, Locator, LocatorStrategy
from desktop_app.core.models.workflow import (
    Workflow,
)
from desktop_app.core.replay.memory import ExperienceMemory
from desktop_app.settings import load_settings

#: How the "Add" button looks after each drift: the markup of the form's buttons, and the name
#: a careful model picks (the one that adds, never its look-alike neighbour).
DRIFTS: dict[str, tuple[str, str]] = {
    "relabeled, ids gone, a reset beside it": CREATE_RECORD,
    "moved into a toolbar as a link-button": (
        "<div role=toolbar><a href=/items role=button class=tb>Back</a>"
        "<button class=tb-primary>Save item</button></div>",
        "Save item",
    ),
    "reworded, a reset button before it": (
        "<button type=reset class=k1>Reset</button><button class=k2>Put on the list</button>",
        "Put on the list",
    ),
}

_WORKFLOWS = 200
_STEPS = 10
_LOOKUPS = 400


def _twice(
    site: str,
    workflow: Workflow,
    policy: Callable[[dict[str, Any]], str],
    values: tuple[str, str],
) -> tuple[Run, Run]:
    """*workflow* approved and run with ``item`` = each of *values*, the LLM answering as
    *policy* says, in a data directory of its own."""
    with FakeOpenAIServer() as llm, isolated_home():
        llm.default_chat = policy
        env = {"PROCEDURA_LLM_BASE_URL": llm.base_url, "PROCEDURA_LLM_MODEL": "fake-model"}
        with environment(env), open_services(load_settings(), write=True) as sv:
            version = approve(sv, workflow)
            first, second = (
                run(sv, version, site, values={"item": value}, use_llm=True).run for value in values
            )
    return first, second


def second_runs(smoke: bool = False) -> list[tuple[str, int, int, bool]]:
    """Per drift (the first only in a smoke run): (name, LLM calls of the first run, of the
    second, both items kept)."""
    results = []
    for drift, (buttons, name) in list(DRIFTS.items())[: 1 if smoke else None]:
        with items_site() as site:
            workflow = add_item_workflow(site)
            ITEMS.buttons = buttons
            first, second = _twice(site, workflow, picks(name), ("Apples", "Pears"))
            kept = (
                first.status is RunStatus.SUCCEEDED
                and second.status is RunStatus.SUCCEEDED
                and ITEMS.names == ["Apples", "Pears"]
            )
        results.append((drift, first.llm_calls, second.llm_calls, kept))
    if not smoke:
        with todo_site() as site:
            workflow = todo_workflow(site)
            TODO.drifted = True
            first, second = _twice(site, workflow, in_row, ("Apples", "Plums"))
            kept = TODO.done == ["Apples", "Plums"]
        name = "a row's button relabeled, a look-alike beside it, another row the second time"
        results.append((name, first.llm_calls, second.llm_calls, kept))
    return results


def _experience(workflow_id: str, step: int, k: int) -> Experience:
    return Experience(
        workflow_id=workflow_id,
        workflow_version=1,
        step_id=f"step-{step}",
        step_title=f"Click 'Button {step}'",
        step_kind="click",
        page_url=f"https://app.example.test/records/{k}/edit",
        failed_locators=(Locator(strategy=LocatorStrategy.CSS, value=f"#button-{step}"),),
        repaired_locator=Locator(
            strategy=LocatorStrategy.ROLE, value="button", name=f"Button {step} ({k})"
        ),
        fingerprint=Fingerprint(tag="button", role="button", name=f"Button {step}"),
        resolution=Resolution.LLM,
        successes=k % 4,
        failures=k % 3,
        created_at=utcnow() - timedelta(minutes=k),
    )


def lookup(count: int) -> tuple[float, float, float]:
    """Fill the store with *count* experiences; (fill seconds, p50 ms, p95 ms) of look-ups."""
    with isolated_home(), open_services(load_settings(), write=True, index_now=False) as sv:
        ids = saved_workflows(sv, _WORKFLOWS)
        started = time.perf_counter()
        store_experiences(
            sv,
            (_experience(ids[k % _WORKFLOWS], (k // _WORKFLOWS) % _STEPS, k) for k in range(count)),
        )
        filled = time.perf_counter() - started
        memory = ExperienceMemory(sv.experiences, None)
        rng = random.Random(7)
        samples = []
        for _ in range(_LOOKUPS):
            workflow_id, step = rng.choice(ids), rng.randrange(_STEPS)
            began = time.perf_counter()
            memory.own(workflow_id, f"step-{step}")
            samples.append((time.perf_counter() - began) * 1000)
    return filled, median(samples), percentile(samples, 95)


def measure(smoke: bool = False) -> Section:
    """The second runs on the same drift, and the look-up at 100,000 experiences (10,000 in a
    smoke run)."""
    section = Section("learning", "Learning: remembered repairs" + (" — smoke" if smoke else ""))
    cases = second_runs(smoke)
    section.add("drift cases", len(cases), "cases", note="the LLM needed on the first run")
    section.add("first run: LLM calls", sum(c[1] for c in cases), "calls")
    section.add("second run: LLM calls", sum(c[2] for c in cases), "calls", "== 0")
    section.add("both items kept", sum(c[3] for c in cases), f"of {len(cases)}", f"== {len(cases)}")
    section.notes += [
        f"{drift}: first run {first} call(s), second {second}"
        + ("" if kept else "; NOT both kept (the page's data)")
        for drift, first, second, kept in cases
    ]
    began = time.perf_counter()
    twice = mutation_second_runs(smoke)
    add_figures(section, twice, smoke, time.perf_counter() - began)
    count = 10_000 if smoke else 100_000
    filled, p50, p95 = lookup(count)
    note = f"{count:,} experiences, {count // (_WORKFLOWS * _STEPS)} per step"
    section.add("experience look-up p50", p50, "ms", note=note)
    section.add("experience look-up p95", p95, "ms", "<= 20" if not smoke else "", note=note)
    section.notes.append(f"filling the store took {filled:.0f} s (not timed per look-up)")
    count = 1_000 if smoke else 100_000
    filled, p50, p95 = similar_lookup(count)
    note = f"{count:,} experiences in the semantic index, steps with none of their own"
    section.add("similar-step look-up p50", p50, "ms", note=note)
    section.add("similar-step look-up p95", p95, "ms", "<= 20" if not smoke else "", note=note)
    section.notes.append(f"filling the index took {filled:.0f} s, embedding included")
    return section


if __name__ == "__main__":
    main(
        __doc__,
        measure,
        smoke_help="one drift case, the mutation suite's smoke subset, 10,000 experiences "
        "(about 45 s)",
    )
