"""Retrieval: indexing throughput, query latency and recall of search over 10,000 workflows.

The corpus is the labeled set of ``bench/data/paraphrases.json`` (68 target workflows from many
business areas, 73 queries a person would type, each labeled with its target and worded with
few of its words) plus 10,000 synthetic distractors made from ``bench/data/distractors.json``
(verb phrases x business objects x qualifiers, with parameters and steps), among them near
misses of the targets ("Approve a leave request" next to the target "Request time off").

Everything goes through the app, in an isolated data directory, with the offline MiniLM
embeddings:

- indexing: every workflow is stored as a first draft (SQLite, not timed), then indexed with
  ``WorkflowLibrary.reindex`` — the batch path of ``procedura reindex`` and of Settings > Rebuild
  search index (it reads the store, embeds 64 texts per call and writes 256 entries per call to
  the Chroma worker, and writes the SQLite FTS5 word index). Indexing throughput is workflows
  per second of that call, embedding included;
- one at a time: more distractors saved with ``services.workflows.save`` (store, embedding and
  index update, as after recording or editing one), timed each;
- queries: ``services.workflows.search(query, limit=20)`` — what the library page's search box,
  the tray and ``procedura search`` call: the embedding ranking of names and descriptions
  (the index worker's count, embedding the query, the nearest-neighbour query), 50 deep, and
  the FTS5 word index's workflows holding every query word it knows: when there is just one
  (and the embedding ranked it, or it holds every query word), it is fused in by reciprocal
  rank (k = 60); then the summaries from SQLite. Every
  labeled query, in rounds, until there are >= 200 samples; p50 and p95 (goal p95 <= 50 ms).
  The first query after a worker start is reported apart (not in a smoke run, to keep it short);
- recall@1 and recall@3: share of labeled queries whose target is first / in the first 3
  results (goal recall@3 >= 80%), also apart for the first and the second half of the labeled
  queries (in the file's order: a change that helps one half only is fitted to it); for
  comparison, the same of the embedding ranking alone (``index.semantic.search_workflows``,
  one round);
- the LLM reranker (``procedura workflows search --rerank``: the search's best 20 reordered by
  the LLM), only when a real OpenAI-compatible endpoint is given by ``PROCEDURA_BENCH_LLM_URL``
  (with ``PROCEDURA_BENCH_LLM_MODEL``, default gpt-4o-mini, and ``PROCEDURA_BENCH_LLM_KEY`` if it
  needs one): its recall@1 and recall@3 (both halves), how often it fell back to the search's
  order, and its latency, one call per labeled query. Without one: "not measured".

    .venv/bin/python bench/retrieval.py [--smoke]
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

from common import ROOT, Section, isolated_home, median, percentile
from common import main as cli_main

from desktop_app.adapters.llm import make_llm
from desktop_app.adapters.search.embeddings import make_embedding_function
from desktop_app.adapters.search.hybrid_index import HybridSearchIndex
from desktop_app.adapters.sql.workflow_store import SqlWorkflowStore
from desktop_app.app import Services, open_services
from desktop_app.core.induction.naming import snake_case
from desktop_app.core.llm import StructuredLLM
from desktop_app.core.models.target import Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import (
    ClickStep,
    FillStep,
    GotoStep,
    Parameter,
    StatusTransition,
    Step,
    Workflow,
    WorkflowStatus,
    WorkflowVersion,
)
from desktop_app.ops.library import search as search_op
from desktop_app.settings import load_settings

DATA = ROOT / "bench" / "data"
DISTRACTORS = 10_000
SMOKE_DISTRACTORS = 200
SMOKE_QUERIES = 10
MIN_SAMPLES = 200  # query latencies, at least
SMOKE_SAMPLES = 30
ONE_BY_ONE = 100  # extra distractors saved one at a time (5 in a smoke run)
LIMIT = 20  # what the library page asks the search for
SEED = 20261130
ACTOR = "bench"
_STOPWORDS = frozenset(
    re.findall(
        r"\w+",
        "a an the to of for in on at by with from and or my our their your his her its this that "
        "it i we me us them they he she is are be was will can want need get so some who what "
        "where when how all now next last over into out up",
    )
)


@dataclass(frozen=True, slots=True)
class Labeled:
    """A target workflow of the labeled set and the queries that should find it."""

    workflow: Workflow
    queries: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Reranking:
    """The LLM reranker over the labeled queries: where each target came, how many answers
    fell back to the search's order, and each call's wall time."""

    answers: list[Answer]
    fallbacks: int
    seconds: list[float]
    model: str


@dataclass(frozen=True, slots=True)
class Answer:
    """One query's ranking: where its target came (0 = first, None = not in the results)."""

    query: str
    rank: int | None
    top: str  # the name of the first result


# ── the corpus ──────────────────────────────────────────────────────────────────────────────


def _data(name: str) -> dict[str, Any]:
    return cast(dict[str, Any], json.loads((DATA / name).read_text(encoding="utf-8")))


def _article(obj: dict[str, Any]) -> str:
    name: str = obj["name"]
    article = obj.get("article") or ("an" if name[0].lower() in "aeio" else "a")
    return f"{article} {name}"


def _plural(obj: dict[str, Any]) -> str:
    name: str = obj["name"]
    if "plural" in obj:
        return str(obj["plural"])
    if name.endswith("y") and name[-2:-1] not in "aeiou":
        return name[:-1] + "ies"
    if name.endswith(("s", "x", "ch", "sh")):
        return name + "es"
    return name + "s"


def _workflow(
    name: str,
    description: str,
    area: dict[str, Any],
    obj: dict[str, Any],
    fields: Sequence[str],
    button: str,
) -> Workflow:
    """A workflow shaped like an induced one: open the page, fill each field, press the button."""
    plural = _plural(obj)
    page = f"{plural[0].upper()}{plural[1:]} — {area['system']}"
    names = [snake_case(label) for label in fields]
    steps: list[Step] = [
        GotoStep(title=f"Open {page}", url=f"https://{area['host']}/{plural.replace(' ', '-')}")
    ]
    steps += [
        FillStep(
            title=f"Fill '{label}' with {{{param}}}",
            target=Target(locators=(Locator(strategy=LocatorStrategy.LABEL, value=label),)),
            value=f"{{{param}}}",
        )
        for label, param in zip(fields, names, strict=True)
    ]
    steps.append(
        ClickStep(
            title=f"Click '{button}'",
            target=Target(
                locators=(Locator(strategy=LocatorStrategy.ROLE, value="button", name=button),)
            ),
        )
    )
    return Workflow(
        name=name,
        description=description,
        domains=(area["host"],),
        parameters=tuple(
            Parameter(name=param, description=f"What to enter in '{label}'")
            for label, param in zip(fields, names, strict=True)
        ),
        steps=tuple(steps),
    )


def labeled_set() -> tuple[list[Labeled], set[tuple[str, str]]]:
    """The targets with their queries, and the (verb class, object) pairs no distractor may use."""
    vocabulary = _data("distractors.json")["areas"]
    labeled: list[Labeled] = []
    excluded: set[tuple[str, str]] = set()
    for entry in _data("paraphrases.json")["targets"]:
        area = vocabulary[entry["area"]]
        obj = next(o for o in area["objects"] if o["name"] == entry["object"])
        workflow = _workflow(
            entry["name"], entry["description"], area, obj, entry["fields"], entry["button"]
        )
        labeled.append(Labeled(workflow, tuple(entry["queries"])))
        excluded |= {(verb, entry["object"]) for verb in [entry["verb"], *entry["avoid"]]}
        excluded |= {(verb, obj) for verb, obj in entry.get("avoid_pairs", [])}
    return labeled, excluded


#: How a distractor's description is worded, one of these at random: worded all one way, the
#: distractors were near twins of each other and unlike the hand-written targets, and a search
#: could find the targets by their style alone (docs/benchmarks.md, section 4).
_DESCRIPTIONS: Final = (
    "Uses {system} to {to}; {a} is {gloss}.",
    "{does} in {system}.",
    "{does} ({a} is {gloss}).",
    "{does}.",
    "Lets you {to} in {system}.",
    "{does}, {a} being {gloss}.",
    "For when you need to {to}.",
)


def _third_person(phrase: str) -> str:
    """ "Create a contact" as "Creates a contact"."""
    first, _, rest = phrase.partition(" ")
    if first.endswith(("s", "x", "ch", "sh")):
        first += "es"
    elif first.endswith("y") and first[-2:-1] not in "aeiou":
        first = first[:-1] + "ies"
    else:
        first += "s"
    return f"{first} {rest}".rstrip()


def distractors(count: int, excluded: set[tuple[str, str]]) -> list[Workflow]:
    """*count* distinct synthetic workflows: a verb phrase on a business object, qualified.

    Create and update phrases ask for every field of the object, the others for its first
    one. No distractor pairs an object with a verb class in *excluded* (it would do a
    target's job); every other verb on a target's object is a near miss and stays.
    """
    vocabulary = _data("distractors.json")
    verbs: list[dict[str, Any]] = vocabulary["verbs"]
    objects = [(area, obj) for area in vocabulary["areas"].values() for obj in area["objects"]]
    rng = random.Random(SEED)
    wording = random.Random(SEED + 1)  # apart: the same workflows whatever their wording
    seen: set[tuple[int, int, int]] = set()
    made: list[Workflow] = []
    while len(made) < count:
        v, o = rng.randrange(len(verbs)), rng.randrange(len(objects))
        verb, (area, obj) = verbs[v], objects[o]
        qualifiers = [
            "",
            f" in {area['system']}",
            *(f" for the {region} office" for region in vocabulary["regions"]),
            *(f" for the {team} team" for team in vocabulary["teams"]),
        ]
        q = rng.randrange(len(qualifiers))
        if (v, o, q) in seen or (verb["class"], obj["name"]) in excluded:
            continue
        seen.add((v, o, q))
        words = {"a": _article(obj), "o": obj["name"], "os": _plural(obj)}
        phrase = verb["phrase"].format(**words)
        does = verb["does"].format(**words) if "does" in verb else _third_person(phrase)
        name = phrase + qualifiers[q]
        where = "" if q == 1 else qualifiers[q]  # qualifier 1 names the system already
        description = wording.choice(_DESCRIPTIONS).format(
            system=area["system"],
            does=does + where,
            to=f"{phrase[0].lower()}{phrase[1:]}{where}",
            a=_article(obj),
            gloss=obj["gloss"],
        )
        fields = obj["fields"] if verb["class"] in {"create", "update"} else obj["fields"][:1]
        made.append(_workflow(name, description, area, obj, fields, verb["button"]))
    return made


def word_overlap(labeled: Sequence[Labeled]) -> float:
    """Mean share of a query's content words found, as exact words, in its target's text."""
    shares = []
    for item in labeled:
        target = _words(f"{item.workflow.name} {item.workflow.description}")
        for query in item.queries:
            words = _words(query)
            shares.append(len(words & target) / len(words) if words else 0.0)
    return 100 * sum(shares) / len(shares)


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOPWORDS}


# ── the app ─────────────────────────────────────────────────────────────────────────────────


def fill_store(services: Services, workflows: Sequence[Workflow]) -> float:
    """Store *workflows* as first drafts, as ``WorkflowLibrary.save`` would, unindexed; seconds.

    The library's save also indexes each one, which is what the one-at-a-time figure measures;
    here the index is built afterwards in one go, so the versions go to the store directly.
    """
    store = SqlWorkflowStore(services.engine)
    began = time.perf_counter()
    for workflow in workflows:
        store.add_version(
            WorkflowVersion(
                workflow=workflow,
                created_by=ACTOR,
                transitions=(
                    StatusTransition(from_status=None, to_status=WorkflowStatus.DRAFT, actor=ACTOR),
                ),
            )
        )
    return time.perf_counter() - began


def search(services: Services, query: str, target_id: str) -> tuple[float, Answer]:
    """One search as the library page makes it: its wall time and where the target came."""
    began = time.perf_counter()
    matches = services.workflows.search(query, limit=LIMIT)
    elapsed = time.perf_counter() - began
    ids = [m.workflow.id for m in matches]
    rank = ids.index(target_id) if target_id in ids else None
    return elapsed, Answer(query, rank, matches[0].workflow.name if matches else "")


def bench_llm() -> tuple[StructuredLLM, str] | None:
    """The real LLM the environment names for measuring the reranker, or None."""
    url = os.environ.get("PROCEDURA_BENCH_LLM_URL")
    if not url:
        return None
    model = os.environ.get("PROCEDURA_BENCH_LLM_MODEL") or "gpt-4o-mini"
    llm = make_llm(url, model, os.environ.get("PROCEDURA_BENCH_LLM_KEY"), 60.0)
    return (llm, model) if llm is not None else None


def rerank_all(
    services: Services, llm: StructuredLLM, model: str, queries: Sequence[tuple[str, str]]
) -> Reranking:
    """Each labeled query searched and reranked by *llm*, as ``search --rerank`` does."""
    answers: list[Answer] = []
    seconds: list[float] = []
    fallbacks = 0
    for query, target_id in queries:
        began = time.perf_counter()
        found = search_op(services.workflows, query, limit=LIMIT, llm=llm)
        seconds.append(time.perf_counter() - began)
        fallbacks += found.reranked is not None and not found.reranked.reranked
        ids = [m.workflow.id for m in found.matches]
        rank = ids.index(target_id) if target_id in ids else None
        answers.append(Answer(query, rank, found.matches[0].workflow.name if ids else ""))
    return Reranking(answers, fallbacks, seconds, model)


def search_by_meaning(
    index: HybridSearchIndex, query: str, target_id: str
) -> tuple[float, int | None]:
    """The embedding ranking alone, for comparison: its wall time and where the target came."""
    began = time.perf_counter()
    hits = index.search_workflows(query, limit=LIMIT)
    elapsed = time.perf_counter() - began
    ids = [h.id for h in hits]
    return elapsed, ids.index(target_id) if target_id in ids else None


# ── the benchmark ───────────────────────────────────────────────────────────────────────────


def measure(smoke: bool = False) -> Section:
    """Index the labeled set and the distractors, then time queries and one-by-one saves."""
    labeled, excluded = labeled_set()
    if smoke:  # one query each of 10 targets spread over the areas
        step = len(labeled) // SMOKE_QUERIES
        labeled = [Labeled(t.workflow, t.queries[:1]) for t in labeled[::step][:SMOKE_QUERIES]]
    count = SMOKE_DISTRACTORS if smoke else DISTRACTORS
    extra = 5 if smoke else ONE_BY_ONE
    pool = distractors(count + extra, excluded)
    corpus = [t.workflow for t in labeled] + pool[:count]
    later = pool[count:]
    queries = [(q, t.workflow.id) for t in labeled for q in t.queries]
    load = os.getloadavg()[0]
    rounds = math.ceil((SMOKE_SAMPLES if smoke else MIN_SAMPLES) / len(queries))

    with isolated_home(), open_services(load_settings(embedding="minilm"), write=True) as services:
        stored_s = fill_store(services, corpus)
        index = services.workflows.index
        assert isinstance(index, HybridSearchIndex)
        index.count()  # the worker started and the collections opened, before any timing
        make_embedding_function("minilm")(["load the model"])  # shared by the index's function

        began = time.perf_counter()
        indexed, _ = services.workflows.reindex()
        index_s = time.perf_counter() - began

        first_s = None
        if not smoke:
            # the next search starts a new worker, which opens the whole collection
            index.semantic.close()
            first_s, _ = search(services, *queries[0])

        latencies: list[float] = []
        answers: list[Answer] = []
        for r in range(rounds):
            for query, target_id in queries:
                elapsed, answer = search(services, query, target_id)
                latencies.append(elapsed)
                if r == 0:
                    answers.append(answer)
        meaning = [search_by_meaning(index, query, target_id) for query, target_id in queries]
        configured = bench_llm()
        reranking = rerank_all(services, *configured, queries) if configured else None

        saves: list[float] = []
        for workflow in later:
            began = time.perf_counter()
            services.workflows.save(workflow, actor=ACTOR)
            saves.append(time.perf_counter() - began)
        in_index, _ = index.count()

    assert indexed == len(corpus) and in_index == len(corpus) + len(later), (indexed, in_index)
    return _section(
        smoke=smoke,
        labeled=labeled,
        corpus=len(corpus),
        stored_s=stored_s,
        index_s=index_s,
        first_s=first_s,
        latencies=latencies,
        answers=answers,
        meaning=meaning,
        reranking=reranking,
        saves=saves,
        load=load,
    )


def _section(
    *,
    smoke: bool,
    labeled: Sequence[Labeled],
    corpus: int,
    stored_s: float,
    index_s: float,
    first_s: float | None,
    latencies: Sequence[float],
    answers: Sequence[Answer],
    meaning: Sequence[tuple[float, int | None]],
    reranking: Reranking | None,
    saves: Sequence[float],
    load: float,
) -> Section:
    section = Section("retrieval", f"Retrieval: workflow search over {corpus:,} workflows")
    top3 = sum(1 for a in answers if a.rank is not None and a.rank < 3)
    top1 = sum(1 for a in answers if a.rank == 0)
    per_save = median(saves)
    section.add(
        "indexing throughput (reindex)",
        corpus / index_s,
        "workflows/s",
        note=f"{corpus:,} workflows in {index_s:.1f} s, embedding included",
    )
    section.add(
        "save + index one workflow",
        per_save * 1000,
        "ms",
        note=f"median of {len(saves)} saves onto the full index ({1 / per_save:.0f}/s)",
    )
    section.add(
        "first query after a worker start",
        None if first_s is None else first_s * 1000,
        "ms",
        note="starts the index process and opens the collection"
        if first_s is not None
        else "not measured in a smoke run",
    )
    ms = [s * 1000 for s in latencies]
    section.add("query p50", median(ms), "ms", note=f"{len(ms)} searches, limit {LIMIT}")
    section.add("query p95", percentile(ms, 95), "ms", "<= 50")
    section.add(
        "recall@3", 100 * top3 / len(answers), "%", note=f"{top3}/{len(answers)} labeled queries"
    )
    section.add("recall@1", 100 * top1 / len(answers), "%", note=f"{top1}/{len(answers)}")
    for part, (label, halved) in enumerate(_halves(answers)):
        found = sum(1 for a in halved if a.rank is not None and a.rank < 3)
        section.add(
            f"recall@3, {label} half of the queries",
            100 * found / len(halved),
            "%",
            note=f"{found}/{len(halved)}, in the file's order"
            + ("; a change that helps only one half is fitted to it" if part else ""),
        )
    alone = [rank for _, rank in meaning]
    alone3 = sum(1 for rank in alone if rank is not None and rank < 3)
    alone1 = sum(1 for rank in alone if rank == 0)
    alone_ms = [s * 1000 for s, _ in meaning]
    section.add(
        "embedding alone: recall@3",
        100 * alone3 / len(alone),
        "%",
        note=f"{alone3}/{len(alone)}; recall@1 {100 * alone1 / len(alone):.0f}% ({alone1})",
    )
    section.add(
        "embedding alone: query p95",
        percentile(alone_ms, 95),
        "ms",
        note=f"p50 {median(alone_ms):.1f} ms; the index call only, no summaries",
    )
    _add_reranking(section, reranking)
    distractor_count = corpus - len(labeled)
    section.notes += [
        f"corpus: {len(labeled)} labeled targets (bench/data/paraphrases.json) + "
        f"{distractor_count:,} synthetic distractors (bench/data/distractors.json, seed {SEED}); "
        "no distractor pairs a target's object with a verb that does the target's job, other "
        "verbs on the same objects stay as near misses",
        f"queries share {word_overlap(labeled):.0f}% of their content words (exact words, "
        "stop words aside) with their target's name and description, on average",
        f"indexing: the store was filled first ({stored_s:.1f} s for {corpus:,} first drafts "
        "written to SQLite, not indexed), then WorkflowLibrary.reindex (the batch path of "
        "`procedura reindex`) embedded and indexed them all; the worker start and the model "
        "load came before the timing ('first query after a worker start' shows the former)",
        f"queries: services.workflows.search as the library page calls it (limit {LIMIT}): "
        "count, query embedding, nearest neighbours (names and descriptions) in the Chroma "
        "worker, the workflows holding every known query word in the SQLite FTS5 word index "
        "(a single one is fused in by reciprocal rank, k = 60, if the embedding ranked it or "
        "it holds every query word), summaries from SQLite; "
        f"{len(answers)} labeled queries x {len(ms) // len(answers)} rounds, "
        "recall from the first round",
        "embeddings: local all-MiniLM-L6-v2 int8 ONNX; all workflows are drafts, no filter; "
        f"1-minute load average at the start: {load:.1f} on {os.cpu_count()} CPUs",
    ]
    misses = [a for a in answers if a.rank is None or a.rank >= 3]
    if misses:
        shown = "; ".join(f"{a.query!r} -> {a.top!r}" for a in misses[:6])
        more = f" (and {len(misses) - 6} more)" if len(misses) > 6 else ""
        section.notes.append(f"missed (query -> first result): {shown}{more}")
    if smoke:
        section.notes.append(
            f"smoke run: {distractor_count} distractors and {len(answers)} queries; "
            "figures are not comparable with the full run"
        )
    return section


def _add_reranking(section: Section, reranking: Reranking | None) -> None:
    if reranking is None:
        section.add(
            "reranker: recall@3",
            None,
            "%",
            note="not measured (no LLM configured: set PROCEDURA_BENCH_LLM_URL)",
        )
        section.notes.append("reranker: not measured (no LLM configured)")
        return
    answers = reranking.answers
    top3 = sum(1 for a in answers if a.rank is not None and a.rank < 3)
    top1 = sum(1 for a in answers if a.rank == 0)
    halves = "; ".join(
        f"{label} half {100 * sum(1 for a in h if a.rank is not None and a.rank < 3) / len(h):.0f}%"
        for label, h in _halves(answers)
    )
    section.add(
        "reranker: recall@3",
        100 * top3 / len(answers),
        "%",
        ">= 80",
        note=f"{top3}/{len(answers)}; {halves}; {reranking.model}",
    )
    section.add("reranker: recall@1", 100 * top1 / len(answers), "%", note=f"{top1}")
    ms = [s * 1000 for s in reranking.seconds]
    section.add(
        "reranker: search + LLM p95",
        percentile(ms, 95),
        "ms",
        note=f"p50 {median(ms):.0f} ms; {reranking.fallbacks} fell back to the search's order",
    )


def _halves(answers: Sequence[Answer]) -> list[tuple[str, Sequence[Answer]]]:
    """The labeled queries' answers split in two, in the order of the file: an improvement
    that holds on both halves is not one fitted to a few queries."""
    middle = len(answers) // 2
    return [("first", answers[:middle]), ("second", answers[middle:])]


def main() -> None:
    cli_main(__doc__, measure, smoke_help="200 distractors, 10 queries, for CI")


if __name__ == "__main__":
    main()
