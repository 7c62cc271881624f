"""Induction: how long the offline (heuristic) inducer takes on 10, 100 and 1,000-event recordings.

The recordings are long web sessions stitched from the real ones in ``tests/data`` (made by the
recorder against the demo app): one sign-in, then the six recorded tasks over and over, each
opened by a typed navigation to its start page (whose page snapshot is the recorded one). Every
pass after the first varies the values entered (names, emails, dates, amounts) everywhere they
show (fields, page snapshots, titles, status messages), as another demonstration would, so
parameters keep coming and the inducer's search for recurring values has real work. A session
is cut to the wanted number of events and read by the real loader (``load_trajectory``).

``induce()`` (``desktop_app.core.induction.heuristic``, no LLM) is then timed on each: the
median of N runs, N adapted to the size (more for small ones). Reported: milliseconds per
recording and microseconds per event; the issue sets no goal for them. Each induced workflow is
checked to be non-trivial (steps and parameters), so the figures are of real work.

    .venv/bin/python bench/induction.py [--smoke]
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import date, datetime, timedelta
from functools import partial
from typing import Any

from common import ROOT, Section, median
from common import main as cli_main

from desktop_app.core.documents import load_trajectory
from desktop_app.core.induction.heuristic import Induction, induce
from desktop_app.core.models.trajectory import Trajectory

RECORDINGS = ROOT / "tests" / "data"
SIZES = (10, 100, 1_000)
SMOKE_SIZES = (10, 100)
BUDGET_S = 3.0  # time to spend per size (at least MIN_RUNS runs)
SMOKE_BUDGET_S = 0.3
MIN_RUNS = 3
MAX_RUNS = 200
SIGN_IN = 4  # every recording starts: navigate to the login page, username, password, Sign in
GAP = timedelta(milliseconds=400)  # between two tasks of the session

_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_NUMBER = re.compile(r"^\d+(?:\.(\d+))?$")


# ── the sessions ────────────────────────────────────────────────────────────────────────────


def _recordings() -> list[dict[str, Any]]:
    """The recorded demonstrations in ``tests/data``, as JSON documents, by name."""
    paths = sorted(RECORDINGS.glob("*.trajectory.json"))
    documents = [json.loads(p.read_text(encoding="utf-8")) for p in paths]
    for document in documents:  # the shape the stitching relies on
        events = document["events"]
        assert events[0]["action"] == "navigate" and events[SIGN_IN - 1]["action"] == "click"
    return documents


def _variant(value: str, n: int) -> str:
    """*value* as the *n*-th other demonstration would have entered it (same kind of value)."""
    if _ISO_DATE.match(value):
        return (date.fromisoformat(value) + timedelta(days=n)).isoformat()
    if number := _NUMBER.match(value):
        decimals = len(number.group(1) or "")
        return f"{float(value) + n:.{decimals}f}"
    if "@" in value:
        local, _, domain = value.partition("@")
        return f"{local}+{n}@{domain}"
    return f"{value} {n}"


def _varied(events: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """*events* with every value typed into a field replaced by its *n*-th variant, everywhere."""
    typed = {
        e["value"]
        for e in events
        if e["action"] == "fill" and isinstance(e["value"], str) and len(e["value"]) >= 3
    }
    if n == 0 or not typed:
        return events
    replacements = {json.dumps(v)[1:-1]: json.dumps(_variant(v, n))[1:-1] for v in typed}
    longest_first = sorted(replacements, key=len, reverse=True)
    pattern = re.compile("|".join(re.escape(k) for k in longest_first))
    text = pattern.sub(lambda m: replacements[m.group(0)], json.dumps(events))
    return list(json.loads(text))


def _shifted(events: list[dict[str, Any]], start: datetime) -> list[dict[str, Any]]:
    """*events* moved in time so that the first begins at *start* (gaps between them kept)."""
    delta = datetime.fromisoformat(events[0]["at"]) - start

    def move(stamp: str | None) -> str | None:
        return None if stamp is None else (datetime.fromisoformat(stamp) - delta).isoformat()

    moved = []
    for event in events:
        event = {**event, "at": move(event["at"]), "ended_at": move(event["ended_at"])}
        for side in ("before", "after"):
            if event[side] is not None:
                event[side] = {**event[side], "at": move(event[side]["at"])}
        moved.append(event)
    return moved


def _task(recording: dict[str, Any]) -> list[dict[str, Any]]:
    """A recording's events after the sign-in, opened by a typed navigation to where they start.

    The navigation copies the recording's own first (typed) navigation, pointed at the page the
    sign-in led to, with what was observed there after the sign-in.
    """
    events = recording["events"]
    sign_in = events[SIGN_IN - 1]
    page = sign_in["after"]
    opening = {
        **events[0],
        "at": sign_in["at"],
        "url": page["url"],
        "before": {**events[0]["before"], "at": sign_in["at"], "url": page["url"]},
        "after": page,
    }
    return [opening, *events[SIGN_IN:]]


def session(size: int) -> Trajectory:
    """A web recording of *size* events: sign in, then the recorded tasks again and again."""
    recordings = _recordings()
    first = recordings[0]
    events = first["events"][:SIGN_IN]
    tasks = [_task(r) for r in recordings]
    n = 0
    while len(events) < size:
        task = _varied(tasks[n % len(tasks)], n // len(tasks))
        last = events[-1]
        start = datetime.fromisoformat(last["ended_at"] or last["at"]) + GAP
        events += _shifted(task, start)
        n += 1
    events = events[:size]
    ended = events[-1]["ended_at"] or events[-1]["after"]["at"] or events[-1]["at"]
    document = {
        **{k: v for k, v in first.items() if k not in {"id", "events"}},
        "ended_at": ended,
        "events": events,
    }
    return load_trajectory(json.dumps(document), source=f"{size}-event session")


# ── timing ──────────────────────────────────────────────────────────────────────────────────


def timed_runs(
    run: Callable[[], Induction], budget_s: float
) -> tuple[list[float], list[float], Induction]:
    """Wall and CPU times of repeated runs: at least MIN_RUNS, more while within *budget_s*."""
    walls: list[float] = []
    cpus: list[float] = []
    result = None
    while len(walls) < MIN_RUNS or (sum(walls) < budget_s and len(walls) < MAX_RUNS):
        wall, cpu = time.perf_counter(), time.process_time()
        result = run()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    assert result is not None
    return walls, cpus, result


def measure(smoke: bool = False) -> Section:
    """Induce a workflow from sessions of each size, repeatedly, and report the medians."""
    sizes: Sequence[int] = SMOKE_SIZES if smoke else SIZES
    budget = SMOKE_BUDGET_S if smoke else BUDGET_S
    load = os.getloadavg()[0]
    section = Section("induction", "Induction: heuristic induce() time by recording length")
    per_event: dict[int, float] = {}
    shapes: list[str] = []
    for size in sizes:
        trajectory = session(size)
        assert len(trajectory.events) == size
        times, cpus, result = timed_runs(partial(induce, trajectory), budget)
        workflow = result.workflow
        assert workflow.steps and workflow.parameters, f"{size} events induced a trivial workflow"
        took = median(times)
        per_event[size] = took / size
        section.add(
            f"induce(), {size:,} events",
            took * 1000,
            "ms",
            note=f"median of {len(times)} (CPU {median(cpus) * 1000:,.1f} ms); "
            f"{len(workflow.steps)} steps, {len(workflow.parameters)} parameters",
        )
        section.add(f"per event, {size:,} events", took / size * 1e6, "µs")
        actions = Counter(event.action.value for event in trajectory.events)
        shapes.append(f"{size:,}: " + ", ".join(f"{n} {a}" for a, n in sorted(actions.items())))
    low, high = min(sizes), max(sizes)
    section.add(
        f"per-event cost, {high:,} vs {low:,} events",
        per_event[high] / per_event[low],
        "x",
        note="1 would be linear",
    )
    section.notes += [
        "sessions stitched from the six recordings in tests/data (one sign-in, then the tasks "
        "again and again, typed values varied on every pass), read by load_trajectory; timed: "
        "induce() only (no LLM, no store), wall clock (the process's CPU time in the notes), "
        "medians",
        "events per size: " + "; ".join(shapes),
        f"N runs per size: at least {MIN_RUNS}, more within {budget:g} s (at most {MAX_RUNS}); "
        f"1-minute load average at the start: {load:.1f} on {os.cpu_count()} CPUs",
    ]
    if smoke:
        section.notes.append("smoke run: 10 and 100 events only, few runs")
    return section


def main() -> None:
    cli_main(__doc__, measure, smoke_help="10 and 100 events only, for CI")


if __name__ == "__main__":
    main()
