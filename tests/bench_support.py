"""Running the benchmarks' smoke sizes from the tests: ``make bench`` works on a fresh machine.

The benchmarks run in two halves of about the same length, each in a test file of its own, so
the suite's two workers share them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
from run_all import BENCHMARKS

__all__ = ["FIRST_HALF", "SECOND_HALF", "run_smoke"]

#: The longest smoke runs (learning, soak), with two short ones; in run_all's order.
FIRST_HALF = tuple(b for b in BENCHMARKS if b in {"learning", "soak", "replay_overhead", "healing"})
#: Every other benchmark but the real apps, whose smoke is tests/test_realapps.py (it asserts
#: the verdicts, not only that figures come out).
SECOND_HALF = tuple(b for b in BENCHMARKS if b not in {*FIRST_HALF, "real_apps"})


def run_smoke(names: tuple[str, ...], tmp_path: Path) -> None:
    """Run the benchmarks *names* at smoke size in a process of their own, and check each
    reports every figure (or why not) against its goal and prints its table."""
    out = tmp_path / "results.json"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "run_all.py"),
            "--smoke",
            "--only",
            ",".join(names),
            "--out",
            str(out),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=540,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["smoke"] is True and report["machine"]["cpus"]
    sections = {s["key"]: s for s in report["sections"]}
    assert list(sections) == list(names)
    for key, section in sections.items():
        measured = [m for m in section["metrics"] if m["value"] is not None]
        assert measured, key  # a figure that could not be measured says why in its note
        assert all(m["note"] for m in section["metrics"] if m["value"] is None), key
        for metric in section["metrics"]:
            if metric["goal"]:
                assert metric["met"] in (True, False), (key, metric)
        assert f"## {section['title']}" in result.stdout  # the table was printed
    assert "goals met in" in result.stdout
