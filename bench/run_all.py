"""Run every benchmark (``make bench``), print their tables and write ``bench/results.json``.

Each benchmark runs in a process of its own (the memory, start-up and GUI figures must not carry
what an earlier one loaded), one after the other (they time things: nothing else should run).

    .venv/bin/python bench/run_all.py                 # full sizes (~25 minutes)
    .venv/bin/python bench/run_all.py --smoke         # tiny sizes, as CI runs it (~1 minute)
    .venv/bin/python bench/run_all.py --only gui,induction [--out FILE]

With ``--only``, the sections run replace theirs in the results file and the others stay.

Exit status: 0 when every benchmark ran (goals missed are reported, not failures: the figures are
what they are), 1 when one crashed (its section says why), 2 on a bad argument.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from common import ROOT, Metric, Section, machine, print_section

#: The benchmarks in the order they run: module name under bench/.
BENCHMARKS = (
    "replay_overhead",
    "healing",
    "agent_baseline",
    "retrieval",
    "learning",
    "online",
    "loops",
    "induction",
    "recording",
    "gui",
    "real_apps",
    "safety",
    "soak",
    "faults",
    "fleet",
    "desktop",
)

_CHILD = """
import json, sys, time
sys.path.insert(0, {bench!r})
import common  # puts the repository and tests/ on sys.path
module = __import__({name!r})
began = time.perf_counter()
section = module.measure(smoke={smoke!r})
section.seconds = time.perf_counter() - began
with open({out!r}, "w", encoding="utf-8") as fh:
    json.dump(section.to_json(), fh)
"""


def run_one(name: str, *, smoke: bool) -> tuple[Section, bool]:
    """Run *name*'s ``measure`` in a child process; its section and whether it ran."""
    bench = str(Path(__file__).resolve().parent)
    with tempfile.TemporaryDirectory(prefix="procedura-bench-") as tmp:
        out = str(Path(tmp) / "section.json")
        code = _CHILD.format(bench=bench, name=name, smoke=smoke, out=out)
        began = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
        )
        seconds = time.perf_counter() - began
        if result.returncode == 0 and Path(out).is_file():
            return _section(json.loads(Path(out).read_text(encoding="utf-8"))), True
    failed = Section(name, f"{name} (crashed)", seconds=seconds)
    lines = (result.stderr or result.stdout).strip().splitlines()
    failed.notes.append(lines[-1] if lines else f"exited with status {result.returncode}")
    sys.stderr.write(result.stderr)
    return failed, False


def _section(data: dict[str, Any]) -> Section:
    metrics = [
        Metric(m["name"], m["value"], m["unit"], m["goal"], m["note"]) for m in data["metrics"]
    ]
    return Section(data["key"], data["title"], metrics, list(data["notes"]), data["seconds"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, seconds each (CI)")
    parser.add_argument("--only", default="", help="comma-separated benchmarks to run")
    parser.add_argument("--out", type=Path, default=None, help="where the JSON goes")
    args = parser.parse_args()
    names = [n.strip() for n in args.only.split(",") if n.strip()] or list(BENCHMARKS)
    unknown = sorted(set(names) - set(BENCHMARKS))
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)} (known: {', '.join(BENCHMARKS)})")
    out = args.out or ROOT / "bench" / ("results.smoke.json" if args.smoke else "results.json")

    began = time.perf_counter()
    sections: list[Section] = []
    crashed = []
    for name in names:
        print(f"==> {name}{' (smoke)' if args.smoke else ''}", flush=True)
        section, ran = run_one(name, smoke=args.smoke)
        print_section(section)
        sys.stdout.flush()
        sections.append(section)
        if not ran:
            crashed.append(name)

    goals = [m for s in sections for m in s.metrics if m.met is not None]
    missed = [f"{s.title}: {m.name}" for s in sections for m in s.metrics if m.met is False]
    total = time.perf_counter() - began
    print(f"\n{len(goals) - len(missed)} of {len(goals)} goals met in {total:.0f} s")
    for line in missed:
        print(f"  not met: {line}")
    for name in crashed:
        print(f"  crashed: {name}")
    fresh = [s.to_json() for s in sections]
    if args.only and out.exists():  # the other sections stay as they were measured
        kept = json.loads(out.read_text(encoding="utf-8")).get("sections", [])
        ran = {s["key"] for s in fresh}
        merged = {s["key"]: s for s in kept if s.get("key") not in ran}
        merged.update({s["key"]: s for s in fresh})
        fresh = [merged[key] for key in BENCHMARKS if key in merged]
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "make bench" if not args.smoke else "bench/run_all.py --smoke",
        "smoke": args.smoke,
        "machine": machine(),
        "seconds": round(total, 1),
        "sections": fresh,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    tmp.replace(out)
    print(f"results: {out}")
    return 1 if crashed else 0


if __name__ == "__main__":
    raise SystemExit(main())
