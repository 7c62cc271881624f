"""Rung 3's look-up of *similar* steps' repairs in the semantic index, at size (part of the
learning benchmark, ``bench/learning.py``).

The experience store and the embedded Chroma index are filled with N experiences (100,000; 5,000
in a smoke run) whose steps read like a real library's: verbs × the elements of business forms ×
pages of many sites. Then ``ExperienceMemory.recall`` for steps that have no repair of their own,
so the index is asked (the query embedded, the nearest neighbours found, their records read):
p50 and p95 of that, after a first warm-up query.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable

from common import isolated_home, median, percentile
from sqlmodel import Session

from desktop_app.adapters.sql.tables import ExperienceRow
from desktop_app.app import Services, open_services
from desktop_app.core.models.experience import Experience, site_of
from desktop_app.core.models.run import Resolution
from desktop_app.core.models.target import Fingerprint, Locator, LocatorStrategy
from desktop_app.core.models.workflow import GotoStep, Workflow
from desktop_app.core.replay.memory import ExperienceMemory
from desktop_app.settings import Settings, load_settings

__all__ = ["saved_workflows", "similar_lookup", "store_experiences"]

_VERBS = ("Click", "Fill", "Select", "Tick", "Open", "Press")
_THINGS = (
    "Save", "Submit", "Customer name", "Invoice number", "Due date", "Amount", "Cost center",
    "Approve", "Reject", "Search", "Next page", "Delete", "Export CSV", "Email", "Phone",
    "Company", "Country", "Postcode", "Quantity", "Discount", "Notes", "Status", "Owner",
    "Priority", "Project", "Ticket title", "Assignee", "Start date", "End date", "Comment",
)  # fmt: skip
_PAGES = ("orders", "invoices", "contacts", "tickets", "projects", "expenses", "leads", "users")
_SITES = 120
_WORKFLOWS = 200
_BATCH = 1_000
_LOOKUPS = 200


def _experience(rng: random.Random, k: int, workflows: list[str]) -> Experience:
    verb, thing = rng.choice(_VERBS), rng.choice(_THINGS)
    site, page = k % _SITES, rng.choice(_PAGES)
    name = f"{thing} {k % 7}" if k % 3 else thing
    return Experience(
        workflow_id=workflows[k % len(workflows)],
        workflow_version=1,
        step_id=f"s{k}",
        step_title=f"{verb} '{name}'",
        step_kind="click" if verb in ("Click", "Open", "Press") else "fill",
        page_url=f"https://app{site}.example.test/{page}/{k % 97}/edit",
        failed_locators=(Locator(strategy=LocatorStrategy.CSS, value=f"#f-{k}"),),
        repaired_locator=Locator(strategy=LocatorStrategy.ROLE, value="button", name=name),
        fingerprint=Fingerprint(tag="button", role="button", name=name),
        resolution=Resolution.LLM,
        successes=k % 4,
        failures=k % 3,
    )


def saved_workflows(sv: Services, count: int) -> list[str]:
    """*count* one-step workflows saved (what experiences belong to); their ids."""
    ids = []
    for w in range(count):
        workflow = Workflow(
            name=f"Workflow {w}", steps=(GotoStep(title="Go", url="https://a.test/"),)
        )
        sv.workflows.save(workflow, actor="bench")
        ids.append(workflow.id)
    return ids


def store_experiences(sv: Services, experiences: Iterable[Experience]) -> None:
    """*experiences* written to the store in one transaction (the index is not told)."""
    with Session(sv.engine) as session:
        session.add_all(
            ExperienceRow(
                id=e.id,
                workflow_id=e.workflow_id,
                step_id=e.step_id,
                site=site_of(e.page_url),
                created_at=e.created_at,
                document=e.model_dump_json(),
            )
            for e in experiences
        )
        session.commit()


def similar_lookup(count: int) -> tuple[float, float, float]:
    """Fill the store and the index with *count* experiences; (fill seconds, p50 ms, p95 ms)
    of recalling similar steps' repairs for steps with none of their own."""
    rng = random.Random(11)
    with isolated_home():  # the settings read inside it: the data go to the temporary home
        filled, samples = _fill_and_look_up(rng, count, load_settings())
    return filled, median(samples), percentile(samples, 95)


def _fill_and_look_up(
    rng: random.Random, count: int, settings: Settings
) -> tuple[float, list[float]]:
    with open_services(settings, write=True, index_now=False) as sv:
        memory = ExperienceMemory(sv.experiences, lambda: sv.workflows.index, None)
        index = sv.workflows.index
        workflows = saved_workflows(sv, _WORKFLOWS)
        started = time.perf_counter()
        for start in range(0, count, _BATCH):
            ks = range(start, min(count, start + _BATCH))
            batch = [_experience(rng, k, workflows) for k in ks]
            store_experiences(sv, batch)
            index.upsert_experiences(batch)
        filled = time.perf_counter() - started
        page = "https://app7.example.test/orders/3/edit"
        samples = []
        for n in range(_LOOKUPS + 1):
            verb, thing = rng.choice(_VERBS), rng.choice(_THINGS)
            kind = "click" if verb in ("Click", "Open", "Press") else "fill"
            query = f"{verb} '{thing}' | {kind} | {page}"  # as rung 3 asks for a step
            began = time.perf_counter()
            memory.recall("a-fresh-workflow", f"fresh-{n}", query)
            if n:  # the first query loads the model and opens the collection
                samples.append((time.perf_counter() - began) * 1000)
    return filled, samples
