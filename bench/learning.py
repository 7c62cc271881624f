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
2. Look-up: the experience store filled with N experiences (N = 100,000; 10,000 in a smoke run)
   spread over 200 workflows of 10 steps each, then ``ExperienceMemory.own`` (what rung 3 asks
   first, for one step) for random steps; p50 and p95 (goal p95 <= 20 ms at 100k).

    .venv/bin/python bench/learning.py [--smoke]
"""

from __future__ import annotations

import html
import json
import random
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar

from common import Section, environment, isolated_home, main, median, percentile
from fakes.openai_server import FakeOpenAIServer
from replay_support import approve, run, serving
from test_experience_memory import _described

from desktop_app.adapters.sqlite.tables import ExperienceRow
from desktop_app.app import open_services
from desktop_app.core.models.common import utcnow
from desktop_app.core.models.experience import Experience
from desktop_app.core.models.run import Resolution, RunStatus
from desktop_app.core.models.target import Fingerprint, Locator, LocatorStrategy
from desktop_app.core.models.workflow import (
    ClickStep,
    FillStep,
    GotoStep,
    Parameter,
    TextPresent,
    Workflow,
)
from desktop_app.core.replay.memory import ExperienceMemory
from desktop_app.settings import load_settings

#: How the "Add" button looks after each drift: the markup of the form's buttons, and the name
#: a careful model picks (the one that adds, never its look-alike neighbour).
DRIFTS: dict[str, tuple[str, str]] = {
    "relabeled, ids gone, a reset beside it": (
        "<button type=reset class=c-1>Start over</button><button class=c-9x>Create record</button>",
        "Create record",
    ),
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


class _Items(BaseHTTPRequestHandler):
    """A page of our own: items kept on the server, the "Add" button as recorded or drifted."""

    names: ClassVar[list[str]] = []
    buttons: ClassVar[str | None] = None  # None: as recorded

    def do_GET(self) -> None:
        items = "".join(f"<li>{html.escape(n)}</li>" for n in self.names)
        buttons = self.buttons or "<button id=add class='btn primary'>Add</button>"
        body = (
            f"<!doctype html><title>Items</title><h1>Items</h1><ul>{items}</ul>"
            "<form method=post action=/add id=new-item><label for=name>Item name</label>"
            f"<input id=name name=name>{buttons}</form>"
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        fields = dict(kv.split("=", 1) for kv in self.rfile.read(length).decode().split("&"))
        self.names.append(fields.get("name", "").replace("+", " "))
        self.send_response(303)
        self.send_header("Location", "/items")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def _picks(name: str) -> Any:
    def policy(body: dict[str, Any]) -> str:
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        for line in str(user).split("<page>", 1)[-1].splitlines():
            if f'"{name}"' in line and (ref := re.search(r"\[ref=(\w+)\]", line)):
                return json.dumps({"action": "act", "ref": ref.group(1), "reason": "it adds"})
        return json.dumps({"action": "not_found", "ref": None, "reason": "not there"})

    return policy


@contextmanager
def _site() -> Iterator[str]:
    _Items.names, _Items.buttons = [], None
    with serving(_Items) as url:
        yield url


def second_runs(smoke: bool = False) -> list[tuple[str, int, int, bool]]:
    """Per drift (the first only in a smoke run): (name, LLM calls of the first run, of the
    second, both items kept)."""
    results = []
    for drift, (buttons, name) in list(DRIFTS.items())[: 1 if smoke else None]:
        with _site() as site, FakeOpenAIServer() as llm, isolated_home():
            llm.default_chat = _picks(name)
            env = {"PROCEDURA_LLM_BASE_URL": llm.base_url, "PROCEDURA_LLM_MODEL": "fake-model"}
            url = f"{site}/items"
            field = _described(url, Locator(strategy=LocatorStrategy.CSS, value="#name"))
            add = _described(url, Locator(strategy=LocatorStrategy.CSS, value="#add"))
            workflow = Workflow(
                name="Add an item",
                domains=("127.0.0.1",),
                parameters=(Parameter(name="item"),),
                steps=(
                    GotoStep(title="Open the items", url="http://127.0.0.1:1/items"),
                    FillStep(title="Fill 'Item name'", target=field, value="{item}"),
                    ClickStep(title="Click 'Add'", target=add),
                ),
                success=(TextPresent(text="{item}"),),
            )
            _Items.buttons = buttons
            with environment(env), open_services(load_settings(), write=True) as sv:
                version = approve(sv, workflow)
                first = run(sv, version, site, values={"item": "Apples"}, use_llm=True)
                second = run(sv, version, site, values={"item": "Pears"}, use_llm=True)
            kept = (
                first.run.status is RunStatus.SUCCEEDED
                and second.run.status is RunStatus.SUCCEEDED
                and _Items.names == ["Apples", "Pears"]
            )
            results.append((drift, first.run.llm_calls, second.run.llm_calls, kept))
    if not smoke:
        results.append(_row_case())
    return results


def _row_case() -> tuple[str, int, int, bool]:
    """A to-do list whose rows' "Done" became "Mark complete" beside a "Remove": the first run
    ticks off Apples, the second Plums, in another row."""
    import test_experience_memory as todo  # after common: it puts tests/ on the path

    with todo.todo_site() as site, FakeOpenAIServer() as llm, isolated_home():
        llm.default_chat = todo.in_row
        env = {"PROCEDURA_LLM_BASE_URL": llm.base_url, "PROCEDURA_LLM_MODEL": "fake-model"}
        workflow = todo.todo_workflow(site)
        todo.TODO.drifted = True
        with environment(env), open_services(load_settings(), write=True) as sv:
            version = approve(sv, workflow)
            first = run(sv, version, site, values={"item": "Apples"}, use_llm=True)
            second = run(sv, version, site, values={"item": "Plums"}, use_llm=True)
        kept = todo.TODO.done == ["Apples", "Plums"]
        name = "a row's button relabeled, a look-alike beside it, another row the second time"
        return (name, first.run.llm_calls, second.run.llm_calls, kept)


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
        ids = []
        for w in range(_WORKFLOWS):
            workflow = Workflow(
                name=f"Workflow {w}", steps=(GotoStep(title="Go", url="https://a.test/"),)
            )
            sv.workflows.save(workflow, actor="bench")
            ids.append(workflow.id)
        started = time.perf_counter()
        from sqlmodel import Session

        with Session(sv.engine) as session:
            for k in range(count):
                experience = _experience(ids[k % _WORKFLOWS], (k // _WORKFLOWS) % _STEPS, k)
                session.add(
                    ExperienceRow(
                        id=experience.id,
                        workflow_id=experience.workflow_id,
                        step_id=experience.step_id,
                        created_at=experience.created_at,
                        document=experience.model_dump_json(),
                    )
                )
            session.commit()
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
    count = 10_000 if smoke else 100_000
    filled, p50, p95 = lookup(count)
    note = f"{count:,} experiences, {count // (_WORKFLOWS * _STEPS)} per step"
    section.add("experience look-up p50", p50, "ms", note=note)
    section.add("experience look-up p95", p95, "ms", "<= 20" if not smoke else "", note=note)
    section.notes.append(f"filling the store took {filled:.0f} s (not timed per look-up)")
    return section


if __name__ == "__main__":
    main(__doc__, measure, smoke_help="one drift case, 10,000 experiences (about 20 s)")
