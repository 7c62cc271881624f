"""Online induction: how many proposals a day of runs yields, and how many are right.

A simulated working day on two pages of our own served on 127.0.0.1, each keeping its data on the
server (the judge, never a run's report): an items list ("Add" an item) and an order form
(quantity, due date, "Place order"). The LLM is the fake one (a real local server speaking the
OpenAI API) answering as a careful agent: it reads the instruction, fills the fields it names,
then clicks the button, and says it is done. Through the day, in a fixed shuffled order:

- runs of "Add an item", a workflow whose one step is an agent step; a quarter of the time the
  agent presses Enter in the field instead of clicking "Add" (same result, another way);
- runs of "Count the items", an agent step that reads the page into a variable (never proposed:
  its output is the model's reading);
- runs of "Order boxes", recorded steps with text parameters quantity and due;
- requests by intent that no workflow does ("Add the item Mango to the list", "Order 12 boxes by
  2026-12-24"), with ``--agent-from`` the page: the agent does them and a new workflow is
  proposed; a request of a shape an approved proposal already has runs that, with no LLM.

An analyst approves each proposal when it appears (the day's later runs use it). At the end, each
proposal is replayed three times with new values and no LLM; it is right when every replay did
what it should, judged by the page's data (and no replay did anything else). Reported: runs,
proposals (by kind), proposals right, LLM calls of the day's first and second half.

    .venv/bin/python bench/online.py [--smoke]
"""

from __future__ import annotations

import asyncio
import html
import json
import random
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from common import Section, environment, isolated_home, main
from fakes.openai_server import FakeOpenAIServer
from replay_support import approve, described, run, serving
from test_experience_memory import ITEMS, ItemsHandler

from desktop_app.app import Services, open_services
from desktop_app.core.errors import NotFoundError
from desktop_app.core.models.run import RunStatus
from desktop_app.core.models.target import Locator, LocatorStrategy
from desktop_app.core.models.workflow import (
    AgentStep,
    ClickStep,
    FillStep,
    GotoStep,
    Parameter,
    TextPresent,
    Workflow,
    WorkflowVersion,
)
from desktop_app.core.replay.intent import bind_values, find_workflow
from desktop_app.ops.changes import Origin
from desktop_app.ops.online import agent_workflow, propose_from_agent
from desktop_app.settings import load_settings

SEED = 20261204
FRUITS = (
    "Apple", "Pear", "Plum", "Fig", "Lime", "Kiwi", "Mango", "Papaya", "Cherry", "Grape",
    "Lemon", "Melon", "Peach", "Quince", "Guava", "Olive", "Date", "Apricot", "Banana", "Orange",
)  # fmt: skip


@dataclass(frozen=True)
class Form:
    """A page of the shop beside the items list: its fields (label, name), its button, and
    how one thing sent is written in the page's data."""

    path: str
    title: str
    fields: tuple[tuple[str, str], ...]
    button: str
    shows: str


FORMS = (
    Form("/orders", "Orders", (("Quantity", "qty"), ("Due date", "due")), "Place order",
         "{qty} boxes by {due}"),
    Form("/news", "Newsletter", (("Email", "email"),), "Subscribe", "{email}"),
    Form("/rooms", "Rooms", (("Room", "room"), ("Date", "day")), "Book", "{room} on {day}"),
)  # fmt: skip
#: What each form's page holds (its path → the things sent, as the page shows them).
SENT: dict[str, list[str]] = {f.path: [] for f in FORMS}


class ShopHandler(ItemsHandler):
    """The items page of the tests, and the forms beside it."""

    def do_GET(self) -> None:
        form = next((f for f in FORMS if self.path.startswith(f.path)), None)
        if form is None:
            super().do_GET()
            return
        shown = "".join(f"<li>{html.escape(o)}</li>" for o in SENT[form.path])
        inputs = "".join(
            f"<label for={name}>{label}</label><input id={name} name={name}>"
            for label, name in form.fields
        )
        self.send_page(
            f"<!doctype html><title>{form.title}</title><h1>{form.title}</h1><ul>{shown}</ul>"
            f"<form method=post action={form.path}>{inputs}<button id=send>{form.button}"
            "</button></form>"
        )

    def do_POST(self) -> None:
        form = next((f for f in FORMS if self.path.startswith(f.path)), None)
        if form is None:
            super().do_POST()
            return
        sent = {k: v[0] for k, v in self.form().items()}
        SENT[form.path].append(form.shows.format(**sent))
        self.redirect(form.path)


@contextmanager
def shop() -> Iterator[str]:
    ITEMS.reset()
    for sent in SENT.values():
        sent.clear()
    with serving(ShopHandler) as url:
        yield url


#: What a request says (its values in the form's field order), and the form that does it.
_REQUESTS = (
    (r"Order (\S+) boxes by (\S+)", "/orders"),
    (r"Subscribe (\S+) to the newsletter", "/news"),
    (r"Book the room (\S+) for (\S+)", "/rooms"),
)


# ── the careful agent ────────────────────────────────────────────────────────────────────────


def _ref(page: str, needle: str) -> str | None:
    for line in page.splitlines():
        if needle in line and (found := re.search(r"\[ref=(\w+)\]", line)):
            return found.group(1)
    return None


@dataclass
class Agent:
    """Answers as a careful agent; ``enter``: press Enter instead of clicking the button."""

    enter: bool = False

    def __call__(self, body: dict[str, Any]) -> str:
        user = str(next(m["content"] for m in body["messages"] if m["role"] == "user"))
        instruction = user.split("Instruction: ", 1)[1].split("\n", 1)[0]
        taken = user.split("Actions taken so far:", 1)[1].split("Current page", 1)[0]
        done = len(re.findall(r"^\s+\d+\. ", taken, re.MULTILINE))
        page = user.split("<page>", 1)[-1]
        plan = self._plan(instruction, page)
        if done < len(plan):
            return json.dumps({**plan[done], "reason": "as asked"})
        output = str(len(re.findall(r"listitem", page)))
        return json.dumps({"action": "done", "output": output, "reason": "done"})

    def _plan(self, instruction: str, page: str) -> list[dict[str, Any]]:
        if (item := re.match(r"Add (?:the item )?(.+?) to the list", instruction)) is not None:
            field_ = _ref(page, 'textbox "Item name"')
            last = (
                {"action": "press", "ref": field_, "key": "Enter"}
                if self.enter
                else {"action": "click", "ref": _ref(page, 'button "Add"')}
            )
            return [{"action": "fill", "ref": field_, "value": item.group(1)}, last]
        for pattern, path in _REQUESTS:
            if (asked := re.match(pattern, instruction)) is not None:
                form = next(f for f in FORMS if f.path == path)
                fills = [
                    {"action": "fill", "ref": _ref(page, f'textbox "{label}"'), "value": value}
                    for (label, _), value in zip(form.fields, asked.groups(), strict=True)
                ]
                return [*fills, {"action": "click", "ref": _ref(page, f'button "{form.button}"')}]
        return []  # "Count the items": nothing to do but read


# ── the day's workflows ──────────────────────────────────────────────────────────────────────


def _agent_workflow(site: str, name: str, instruction: str, *, reads: bool) -> Workflow:
    return Workflow(
        name=name,
        domains=("127.0.0.1",),
        parameters=() if reads else (Parameter(name="item", default="Fig"),),
        steps=(
            GotoStep(title="Open the items", url=f"{site}/items"),
            AgentStep(
                title="Do it",
                instruction=instruction,
                max_actions=4,
                output_variable="count" if reads else None,
            ),
        ),
        success=() if reads else (TextPresent(text="{item}"),),
    )


def _order_workflow(site: str) -> Workflow:
    url = f"{site}/orders"

    def at(css: str) -> Any:
        return described(url, Locator(strategy=LocatorStrategy.CSS, value=css))

    return Workflow(
        name="Order boxes",
        domains=("127.0.0.1",),
        parameters=(
            Parameter(name="quantity", default="2"),
            Parameter(name="due", default="2026-12-01"),
        ),
        steps=(
            GotoStep(title="Open the orders", url=url),
            FillStep(title="Fill 'Quantity'", target=at("#qty"), value="{quantity}"),
            FillStep(title="Fill 'Due date'", target=at("#due"), value="{due}"),
            ClickStep(title="Click 'Place order'", target=at("#send")),
        ),
        success=(TextPresent(text="{quantity} boxes by {due}"),),
    )


@dataclass
class Day:
    """What the day did and proposed."""

    runs: int = 0
    llm_calls: list[int] = field(default_factory=list)
    proposals: list[WorkflowVersion] = field(default_factory=list)


def _adopt(sv: Services, day: Day, proposed: WorkflowVersion | None) -> None:
    """The analyst approves *proposed* when it appears."""
    if proposed is None:
        return
    day.proposals.append(proposed)
    sv.workflows.approve(proposed.workflow_id, actor="analyst", version=proposed.version)


def _request(sv: Services, llm: FakeOpenAIServer, day: Day, sentence: str, page: str) -> None:
    """A request by intent, as ``procedura run --intent SENTENCE --agent-from PAGE --yes``."""
    before = len(llm.requests_to("/v1/chat/completions"))
    try:
        choice = asyncio.run(find_workflow(sv.workflows, sentence))
    except NotFoundError:
        version, _ = agent_workflow(sv.workflows, sentence, page, actor="bench", origin=Origin.CLI)
        result = run(sv, version, page, use_llm=True, assume_yes=True)
        proposed = propose_from_agent(
            sv.workflows, version, result.run, sentence, origin=Origin.CLI
        )
        _adopt(sv, day, proposed.version)
    else:
        version = sv.workflows.runnable(choice.workflow.id)
        binding = asyncio.run(bind_values(version.workflow, sentence, None))
        run(sv, version, page, values=binding.values)
    day.runs += 1
    day.llm_calls.append(len(llm.requests_to("/v1/chat/completions")) - before)


def _quantity(rng: random.Random) -> str:
    return str(rng.randrange(10, 99))


def _due(rng: random.Random) -> str:
    return f"2027-{rng.randrange(1, 12):02d}-{rng.randrange(10, 28)}"


def _sentence(rng: random.Random, fruits: Iterator[str]) -> tuple[str, str]:
    """A request no workflow does at first, and the page the agent starts from."""
    path = rng.choice([f.path for f in FORMS[1:]])
    if path == "/news":
        return f"Subscribe {next(fruits).lower()}@mail.test to the newsletter", path
    return f"Book the room {next(fruits)} for {_due(rng)}", path


def simulate(site: str, llm: FakeOpenAIServer, sv: Services, runs: int, rng: random.Random) -> Day:
    """*runs* runs through the day, in a shuffled order; each proposal approved as it comes,
    and the approved version of each workflow run."""
    add = approve(sv, _agent_workflow(site, "Add an item", "Add {item} to the list", reads=False))
    count = approve(
        sv, _agent_workflow(site, "Count the items", "Count the items on the list", reads=True)
    )
    order = approve(sv, _order_workflow(site))
    kinds = ["add"] * (runs // 2) + ["count"] * (runs // 8) + ["order"] * (runs // 4)
    kinds += ["request"] * (runs - len(kinds))
    rng.shuffle(kinds)
    day = Day()
    fruits = iter(rng.sample(FRUITS, len(FRUITS)) * 10)
    for kind in kinds:
        before = len(llm.requests_to("/v1/chat/completions"))
        llm.default_chat = Agent(enter=rng.random() < 0.25)
        if kind == "request":
            sentence, path = _sentence(rng, fruits)
            _request(sv, llm, day, sentence, f"{site}{path}")
            continue
        workflow, values = {
            "add": (add, {"item": next(fruits)}),
            "count": (count, {}),
            "order": (order, {"quantity": _quantity(rng), "due": _due(rng)}),
        }[kind]
        version = sv.workflows.runnable(workflow.workflow_id)
        result = run(sv, version, site, values=values, use_llm=True)
        day.runs += 1
        day.llm_calls.append(len(llm.requests_to("/v1/chat/completions")) - before)
        if result.learned.induced:
            _adopt(sv, day, result.learned.proposed)
    return day


def _value(param: Parameter, rng: random.Random) -> str:
    """A new value for *param*, of the kind of its default."""
    shown = str(param.default or "")
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", shown):
        return _due(rng)
    if shown.isdigit() or param.type.value == "number":
        return str(rng.randrange(100, 999))
    if "@" in shown:
        return f"{rng.choice(FRUITS).lower()}{rng.randrange(100, 999)}@mail.test"
    return f"{rng.choice(FRUITS)} {rng.randrange(100, 999)}"


def replayed_right(sv: Services, site: str, proposal: WorkflowVersion, rng: random.Random) -> bool:
    """Whether *proposal* (approved) does its job three times with new values and no LLM:
    each run adds to its page's data exactly what those values say, and nothing anywhere else."""
    workflow = proposal.workflow
    for _ in range(3):
        values = {p.name: _value(p, rng) for p in workflow.parameters}
        before = _data()
        result = run(sv, proposal, site, values=values)
        if result.run.status not in (RunStatus.SUCCEEDED, RunStatus.UNVERIFIED):
            return False
        after = _data()
        added = {k: after[k][len(v) :] for k, v in before.items()}
        if added != _expected(workflow, values):
            return False
    return True


def _data() -> dict[str, list[str]]:
    return {"/items": list(ITEMS.names), **{k: list(v) for k, v in SENT.items()}}


def _expected(workflow: Workflow, values: dict[str, str]) -> dict[str, list[str]]:
    """What one run of *workflow* with *values* must add to each page's data: on its page, the
    values in its parameters' order (the form's fields' order), as the page shows them."""
    expected: dict[str, list[str]] = {k: [] for k in _data()}
    goto = next(s for s in workflow.steps if isinstance(s, GotoStep))
    ordered = [values[p.name] for p in workflow.parameters]
    form = next((f for f in FORMS if goto.url.endswith(f.path)), None)
    if form is None:
        expected["/items"] = ordered
    else:
        names = [name for _, name in form.fields]
        expected[form.path] = [form.shows.format(**dict(zip(names, ordered, strict=True)))]
    return expected


def measure(smoke: bool = False) -> Section:
    """A day of runs (8 in a smoke run, 48 otherwise) and its proposals, replayed."""
    section = Section("online", "Online induction: a simulated day" + (" — smoke" if smoke else ""))
    runs = 8 if smoke else 48
    rng = random.Random(SEED)
    with shop() as site, FakeOpenAIServer() as llm, isolated_home():
        env = {"PROCEDURA_LLM_BASE_URL": llm.base_url, "PROCEDURA_LLM_MODEL": "fake-model"}
        with environment(env), open_services(load_settings(), write=True) as sv:
            day = simulate(site, llm, sv, runs, rng)
            right = [replayed_right(sv, site, p, rng) for p in day.proposals]
    half = len(day.llm_calls) // 2
    by_kind: dict[str, int] = {}
    for p in day.proposals:
        kind = "new workflow" if p.version == 2 and p.workflow.intent_template else "improved"
        by_kind[kind] = by_kind.get(kind, 0) + 1
    section.add("runs in the day", day.runs, "runs")
    section.add(
        "proposals",
        len(day.proposals),
        "versions",
        note=", ".join(f"{v} {k}" for k, v in by_kind.items()),
    )
    section.add("proposals right when replayed", sum(right), f"of {len(right)}", f"== {len(right)}")
    section.add("LLM calls, first half", sum(day.llm_calls[:half]), "calls")
    section.add("LLM calls, second half", sum(day.llm_calls[half:]), "calls")
    section.notes += [
        f"{p.workflow.name} v{p.version}: {'right' if ok else 'NOT right'} — {p.change_note[:160]}"
        for p, ok in zip(day.proposals, right, strict=True)
    ]
    return section


if __name__ == "__main__":
    main(__doc__, measure, smoke_help="8 runs (about 40 s)")
