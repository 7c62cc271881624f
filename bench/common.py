"""What every benchmark shares: the result shape, the table it prints, and small statistics.

Each ``bench/<name>.py`` has ``measure(smoke: bool) -> Section`` (``smoke``: tiny sizes, seconds,
for CI; otherwise the sizes the issue names) and a ``main()`` that prints its table;
``bench/run_all.py`` (``make bench``) runs them all, prints every table and writes
``bench/results.json``.

A :class:`Metric` states its goal as a comparison (``"<= 1.3"``, ``">= 95"``, ``"== 0"``) so the
table can say whether it is met; a metric without a goal is a figure to report.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT, ROOT / "tests"):  # desktop_app, and the tests' helpers (demo tasks, fakes)
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

__all__ = [
    "ROOT",
    "Metric",
    "Section",
    "isolated_home",
    "machine",
    "main",
    "median",
    "percentile",
    "print_section",
    "stop_process",
]


@dataclass(slots=True)
class Metric:
    """One figure: what, how much, in which unit, against which goal.

    Args:
        name: what is measured, as the table shows it ("query p95").
        value: the figure (None: could not be measured; say why in *note*).
        unit: "ms", "%", "MB", "x", "calls", ...
        goal: a comparison with the goal ("<= 50"), or "" when there is none.
        note: a short remark (the sample size, what it is compared with).
    """

    name: str
    value: float | None
    unit: str = ""
    goal: str = ""
    note: str = ""

    @property
    def met(self) -> bool | None:
        """Whether the goal is met (None: no goal, or no value)."""
        if not self.goal or self.value is None:
            return None
        op, _, target = self.goal.partition(" ")
        limit = float(target)
        checks = {
            "<=": self.value <= limit,
            "<": self.value < limit,
            ">=": self.value >= limit,
            ">": self.value > limit,
            "==": math.isclose(self.value, limit),
        }
        if op not in checks:
            raise ValueError(f"goal {self.goal!r}: use <=, <, >=, > or == and a number")
        return checks[op]


@dataclass(slots=True)
class Section:
    """One benchmark's results: a title, its metrics, and notes on how it was measured."""

    key: str
    title: str
    metrics: list[Metric] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def add(
        self, name: str, value: float | None, unit: str = "", goal: str = "", note: str = ""
    ) -> None:
        """Append a metric."""
        self.metrics.append(Metric(name, value, unit, goal, note))

    def to_json(self) -> dict[str, Any]:
        """The section as results.json stores it (``met`` included)."""
        data = asdict(self)
        for metric, raw in zip(self.metrics, data["metrics"], strict=True):
            raw["met"] = metric.met
        return data


def _shown(value: float | None) -> str:
    if value is None:
        return "—"
    if value == int(value) and abs(value) < 1e12:
        return f"{int(value):,}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}"


def print_section(section: Section, file: Any = None) -> None:
    """The section as a plain-text table: metric, value, unit, goal, met."""
    out = file or sys.stdout
    print(f"\n## {section.title}  ({section.seconds:.0f} s)", file=out)
    rows = [("metric", "value", "unit", "goal", "met", "note")]
    for m in section.metrics:
        met = {True: "yes", False: "NO", None: ""}[m.met]
        rows.append((m.name, _shown(m.value), m.unit, m.goal, met, m.note))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    for i, row in enumerate(rows):
        cells = [row[0].ljust(widths[0]), row[1].rjust(widths[1])]
        cells += [row[j].ljust(widths[j]) for j in range(2, 5)]
        line = "  " + "  ".join(cells) + ("  " + row[5] if row[5] else "")
        print(line.rstrip(), file=out)
        if i == 0:
            print("  " + "  ".join("-" * w for w in widths), file=out)
    for note in section.notes:
        print(f"  * {note}", file=out)


def median(samples: Sequence[float]) -> float:
    """The median (raises on an empty sample: a benchmark that measured nothing is a bug)."""
    return statistics.median(samples)


def percentile(samples: Sequence[float], q: float) -> float:
    """The *q*-th percentile (0-100), linear between the closest ranks."""
    ordered = sorted(samples)
    if not ordered:
        raise ValueError("no samples")
    rank = (len(ordered) - 1) * q / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


@contextlib.contextmanager
def isolated_home() -> Iterator[Path]:
    """A temporary data directory for Procedura (``PROCEDURA_HOME``), removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="procedura-bench-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        config = str(Path(tmp) / "config")
        with environment({"PROCEDURA_HOME": str(home), "XDG_CONFIG_HOME": config}):
            yield home


@contextlib.contextmanager
def environment(values: Mapping[str, str]) -> Iterator[None]:
    """*values* in ``os.environ`` for this process and its children, then as they were."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
        "memory_gib": _memory_gib(),
    }


def _memory_gib() -> float | None:
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    return None


def main(
    doc: str | None,
    measure: Callable[..., Section],
    *,
    smoke_help: str,
    options: Callable[[argparse.ArgumentParser], object] | None = None,
) -> None:
    """A benchmark's command line: ``--smoke`` (and *options*' arguments, passed to *measure*
    by name), then its table."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help=smoke_help)
    if options is not None:
        options(parser)
    arguments = vars(parser.parse_args())
    began = time.perf_counter()
    section = measure(**arguments)
    section.seconds = time.perf_counter() - began
    print_section(section)


def stop_process(process: subprocess.Popen[Any]) -> None:
    """End *process*: politely, then by force after ten seconds."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
