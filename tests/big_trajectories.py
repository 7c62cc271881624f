"""Large trajectory documents, built from the recorded fixtures' events, and the peak memory of
importing one with the command line.

The events are those of ``tests/data/*.trajectory.json`` (real recordings), repeated with new
timestamps and fitted to the size asked for: long ones lose their ARIA snapshots and part of
their lists of effects, short ones get a longer ARIA snapshot (real page text). The document is
written as ``procedura trajectories export`` writes one (indented JSON), an event at a time.

Run it to measure (the numbers of issue 20)::

    .venv/bin/python tests/big_trajectories.py --events 30000 --mb 44
    .venv/bin/python tests/big_trajectories.py --events 68000 --mb 104.8
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"

#: The moment the generated recording starts; event *i* happens *i* seconds later.
T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
_TIME_KEYS = ("at", "ended_at", "first_change_at")
_TRIMMABLE = (
    "texts_added",
    "texts_removed",
    "values_changed",
    "requests",
    "nearby_text",
    "ancestors",
    "locators",
)


def _templates() -> tuple[list[dict[str, Any]], str]:
    """The fixtures' events (in a stable order) and all their ARIA snapshot text."""
    events: list[dict[str, Any]] = []
    aria: list[str] = []
    for path in sorted(DATA.glob("*.trajectory.json")):
        for event in json.loads(path.read_text(encoding="utf-8"))["events"]:
            events.append(event)
            for side in ("before", "after"):
                snapshot = (event.get(side) or {}).get("aria_snapshot")
                if snapshot:
                    aria.append(snapshot)
    return events, "\n".join(aria)


def _encoded(event: dict[str, Any], indent: bool) -> str:
    """An event as it stands in the ``events`` array of a document."""
    if not indent:
        return json.dumps(event)
    return json.dumps(event, indent=2).replace("\n", "\n    ")


def _fit(event: dict[str, Any], budget: int, aria: str, indent: bool) -> dict[str, Any]:
    """*event* made about *budget* bytes long (as :func:`_encoded`), still a valid event."""
    event = copy.deepcopy(event)
    observations = [event[side] for side in ("before", "after") if event.get(side)]
    for observation in observations:
        observation["aria_snapshot"] = None
    while len(_encoded(event, indent)) > budget:
        target = event.get("target") or {}
        owners = (event.get("effects") or {}, target.get("fingerprint") or {}, target)
        lists = [
            (len(items), owner, key)
            for owner in owners
            for key, items in owner.items()
            if isinstance(items, list) and len(items) > 1 and key in _TRIMMABLE
        ]
        if not lists:
            break
        _, owner, key = max(lists, key=lambda found: found[0])
        owner[key] = owner[key][: len(owner[key]) // 2]
    room = budget - len(_encoded(event, indent))
    if observations and room > 40:
        # The snapshot's own escaping (quotes, line breaks) makes it longer than its text.
        text = aria[: room - 20]
        while text and len(_encoded(event, indent)) + len(json.dumps(text)) > budget:
            text = text[: len(text) * 9 // 10]
        observations[-1]["aria_snapshot"] = text or None
    return event


@dataclass(frozen=True)
class _Template:
    """A fitted event's text with its timestamps left out, and their offsets from its ``at``."""

    parts: list[str]
    offsets: list[timedelta]

    @classmethod
    def of(cls, event: dict[str, Any], indent: bool) -> _Template:
        at = datetime.fromisoformat(event["at"])
        offsets: list[timedelta] = []

        def mark(value: Any) -> Any:
            if isinstance(value, list):
                return [mark(item) for item in value]
            if not isinstance(value, dict):
                return value
            marked = {}
            for key, item in value.items():
                if key in _TIME_KEYS and isinstance(item, str):
                    offsets.append(datetime.fromisoformat(item) - at)
                    marked[key] = _MARK
                else:
                    marked[key] = mark(item)
            return marked

        text = _encoded(mark(event), indent)
        return cls(text.split(json.dumps(_MARK)), offsets)

    def render(self, at: datetime) -> str:
        out = [self.parts[0]]
        for offset, part in zip(self.offsets, self.parts[1:], strict=True):
            out.append(json.dumps(_timestamp(at + offset)))
            out.append(part)
        return "".join(out)


_MARK = "\u2063time\u2063"


def _timestamp(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def big_events(count: int, size: int, *, indent: bool = False) -> Iterator[str]:
    """*count* encoded events of about *size* bytes in all, one a second from :data:`T0`."""
    templates, aria = _templates()
    # The events that cannot be made as short as asked are made up for by the others.
    wanted = budget = size / count
    for _ in range(5):
        fitted = [
            _Template.of(_fit(event, int(budget), aria, indent), indent) for event in templates
        ]
        average = sum(len(t.render(T0)) + 2 for t in fitted) / len(fitted)
        if abs(average - wanted) < wanted / 200:
            break
        budget += wanted - average
    for i in range(count):
        yield fitted[i % len(fitted)].render(T0 + timedelta(seconds=i))


def write_big_trajectory(
    path: Path | TextIO,
    *,
    events: int,
    size: int,
    bad_event: int | None = None,
    trajectory_id: str | None = None,
    indent: bool = False,
) -> str:
    """Write a trajectory document of *events* events and about *size* bytes to *path* (a file
    name or a text stream).

    *bad_event*: the index of an event whose action is misspelt (``'clik'``), making the whole
    document invalid. *indent*: as ``trajectories export`` writes it (else compact, like the
    store's own rows). Returns the trajectory's id.
    """
    trajectory_id = trajectory_id or uuid.uuid4().hex
    header = {
        "schema_version": 1,
        "document": "trajectory",
        "id": trajectory_id,
        "intent": f"A long session: {events} actions in the demo CRM",
        "kind": "web",
        "start_url": "http://127.0.0.1:8765/login",
        "start_app": None,
        "started_at": _timestamp(T0),
        "ended_at": _timestamp(T0 + timedelta(seconds=events)),
        "recorder": "procedura-web/1 (generated: tests/big_trajectories.py)",
        "incomplete": False,
    }
    first, between, last = ("\n    ", ",\n    ", "\n  ]\n}\n") if indent else ("", ", ", "]}")
    with path.open("w", encoding="utf-8") if isinstance(path, Path) else nullcontext(path) as out:
        if indent:
            out.write(json.dumps(header, indent=2)[:-2] + ',\n  "events": [')
        else:
            out.write(json.dumps(header)[:-1] + ', "events": [')
        for i, event in enumerate(big_events(events, size, indent=indent)):
            if i == bad_event:
                event = _encoded({**json.loads(event), "action": "clik"}, indent)
            out.write((first if i == 0 else between) + event)
        out.write(last)
    return trajectory_id


# The child's peak resident memory, read by a parent that started nothing else.
_MEASURE = """
import resource, subprocess, sys
result = subprocess.run(sys.argv[2:])
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
with open(sys.argv[1], "w") as out:
    out.write(str(peak * (1 if sys.platform == "darwin" else 1024)))
sys.exit(result.returncode)
"""


@dataclass(frozen=True)
class Measured:
    """A finished ``procedura`` process: its exit status, output and peak resident memory."""

    returncode: int
    stdout: str
    stderr: str
    peak_rss: int
    seconds: float


def run_measured(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> Measured:
    """Run ``python -m desktop_app ARGS`` and measure its peak resident memory (bytes)."""
    with tempfile.TemporaryDirectory() as scratch:
        peak_file = Path(scratch) / "peak"
        started = time.monotonic()
        result = subprocess.run(
            [
                sys.executable,
                "-c",
                _MEASURE,
                str(peak_file),
                sys.executable,
                "-m",
                "desktop_app",
                *args,
            ],
            capture_output=True,
            text=True,
            env=env or dict(os.environ),
            timeout=timeout,
            cwd=REPO,
        )
        seconds = time.monotonic() - started
        peak = int(peak_file.read_text())
    return Measured(result.returncode, result.stdout, result.stderr, peak, seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=30_000)
    parser.add_argument("--mb", type=float, default=44, help="size in MB (10^6 bytes)")
    parser.add_argument("--bad-event", type=int, help="make this event invalid")
    parser.add_argument("--keep", help="write the document here (and keep it)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(args.keep) if args.keep else Path(scratch) / "big.trajectory.json"
        write_big_trajectory(
            path, events=args.events, size=int(args.mb * 1e6), bad_event=args.bad_event
        )
        print(f"{path}: {args.events} events, {path.stat().st_size / 1e6:.1f} MB")
        env = {**os.environ, "PROCEDURA_HOME": str(Path(scratch) / "home")}
        env["XDG_CONFIG_HOME"] = str(Path(scratch) / "config")
        measured = run_measured("trajectories", "import", str(path), env=env)
        print((measured.stdout + measured.stderr).strip())
        print(
            f"exit {measured.returncode}, peak RSS {measured.peak_rss / 1e6:.0f} MB, "
            f"{measured.seconds:.1f} s"
        )


if __name__ == "__main__":
    main()
