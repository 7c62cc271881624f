"""Faults: a writer killed at any moment tears nothing, and bad input is never a traceback.

1. **kill -9 during each writer command.** ``procedura workflows import``, ``workflows
   approve``, ``run`` (one replay), ``run --params-csv`` (a batch of three rows) and ``record
   web`` are started as a person would start them, each in a data directory of its own holding
   what it needs, and SIGKILLed at a random moment of their usual duration (measured by an
   uncut run first). The next start then looks: the database passes SQLite's integrity check,
   every workflow version, run and recording loads, no run is left "running", and the search
   index holds exactly what the database holds (``check_index``, after the start finished
   what the killed one left marked). A kill passes when all of that holds.
2. **Fuzzed documents.** A valid workflow, trajectory and bundle, mutated (truncated, bytes
   flipped, values of the wrong type, nesting tens of thousands deep, numbers of thousands of
   digits, random text), imported through the command line: any traceback, or an exit status
   other than 0 or 2, is a failure.

    .venv/bin/python bench/faults.py [--smoke] [--kills N] [--fuzz N]
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from common import ROOT, Section, isolated_home
from common import main as cli_main
from replay_support import approved, services

from desktop_app.app import open_services
from desktop_app.core.models.run import RunStatus
from desktop_app.demo_site import DEMO_PASSWORD, DemoSite
from desktop_app.settings import load_settings

EXAMPLES = ROOT / "docs" / "examples"
WORKFLOW = EXAMPLES / "create-contact.workflow.json"
TRAJECTORY = EXAMPLES / "create-contact.trajectory.json"


# ── kill -9 ───────────────────────────────────────────────────────────────────────────────────


def _procedura(*args: str) -> list[str]:
    return [sys.executable, "-m", "desktop_app", *args]


def _prepare(command: str, home: Path, site: DemoSite) -> list[str]:
    """Set *home* up for *command*; the command line to start."""
    if command == "import":
        return _procedura("workflows", "import", str(WORKFLOW))
    if command == "approve":
        with services() as sv:
            sv.workflows.import_json(WORKFLOW.read_bytes(), actor="bench")
        return _procedura("workflows", "approve", "Create a contact")
    if command == "record":
        return _procedura(
            "record", "web", "--url", f"{site.url}/login", "--headless", "--intent", "look"
        )
    with services() as sv:
        workflow_id = approved(sv, "create-contact").workflow.id
    run = _procedura(
        "run", workflow_id, "--base-url", site.url, "--headless", "--no-llm", "--yes",
        "--non-interactive", "--secret-env", "password=BENCH_SECRET",
    )  # fmt: skip
    if command == "run":
        return [*run, "-p", "full_name=Kay Kill"]
    table = home.parent / "rows.csv"
    table.write_text("full_name\nAnn Kill\nBob Kill\nCy Kill\n", encoding="utf-8")
    return [*run, "--params-csv", str(table)]


def _kill_at(argv: list[str], after_s: float) -> bool:
    """Start *argv* and SIGKILL it *after_s* seconds in (if it is still running); then let
    what it started notice and go (a browser, the index worker), and clear what did not.
    Whether it was killed (not already done)."""
    env = {**os.environ, "BENCH_SECRET": DEMO_PASSWORD, "QT_QPA_PLATFORM": "offscreen"}
    process = subprocess.Popen(
        argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    killed = False
    try:
        process.wait(timeout=after_s)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGKILL)
        process.wait()
        killed = True
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _group_alive(process.pid):
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    return killed


def _group_alive(group: int) -> bool:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[3]) == group and stat[0] != "Z":
                return True
    return False


def _uncut_seconds(command: str, site: DemoSite) -> float:
    """How long *command* takes when nothing stops it (record has no end: a few seconds)."""
    if command == "record":
        return 5.0
    with isolated_home() as home:
        argv = _prepare(command, home, site)
        env = {**os.environ, "BENCH_SECRET": DEMO_PASSWORD, "QT_QPA_PLATFORM": "offscreen"}
        started = time.monotonic()
        done = subprocess.run(argv, env=env, capture_output=True, timeout=300, check=False)
        assert done.returncode == 0, f"{command} does not work uncut: {done.stderr[-500:]!r}"
        return time.monotonic() - started


def _torn(home: Path) -> str | None:
    """What the next start finds wrong after a kill, or None."""
    database = home / "procedura.db"
    if database.exists():
        with sqlite3.connect(database) as connection:
            verdict = connection.execute("PRAGMA integrity_check").fetchone()[0]
        if verdict != "ok":
            return f"integrity check: {verdict}"
    try:
        with open_services(load_settings(), write=True) as sv:  # the next start
            for summary in sv.workflows.list(status=None):
                sv.workflows.versions(summary.id)
            for run in sv.runs.runs(limit=1000):
                if sv.runs.get_run(run.id).status is RunStatus.RUNNING:
                    return f"run {run.id[:8]} still 'running' after the next start"
            for trajectory in sv.trajectories.list():
                sv.trajectories.get(trajectory.id)
            report = sv.workflows.check_index(fix=False)
            if not report.consistent:
                return f"index differs from the database: {report.model_dump(exclude={'fixed'})}"
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"[:300]
    return None


def _kills(
    commands: tuple[str, ...], kills: int, rng: random.Random
) -> tuple[dict[str, list[str]], int]:
    """Per command, what each kill left wrong ("" when nothing); and how many of the kills
    came while the command was still at work (the others found it done)."""
    found: dict[str, list[str]] = {}
    midway = 0
    with DemoSite() as site:
        for command in commands:
            uncut = _uncut_seconds(command, site)
            found[command] = []
            for _ in range(kills):
                with isolated_home() as home:
                    argv = _prepare(command, home, site)
                    midway += _kill_at(argv, rng.uniform(0.05, 1.0) * uncut)
                    found[command].append(_torn(home) or "")
    return found, midway


# ── fuzzing ───────────────────────────────────────────────────────────────────────────────────


def _mutations(valid: bytes, rng: random.Random) -> Iterator[bytes]:
    """Endless mutations of the document *valid*."""
    document = json.loads(valid)

    def wrong_type() -> bytes:
        copy = json.loads(valid)
        node, key = _random_slot(copy, rng)
        if node is not None:
            node[key] = rng.choice([None, 0, -1, 1e308, "", "x" * 1000, [], {}, True, [[[]]]])
        return json.dumps(copy).encode()

    strategies: list[Callable[[], bytes]] = [
        lambda: valid[: rng.randrange(len(valid))],
        lambda: bytes(b ^ (1 << rng.randrange(8)) if rng.random() < 0.002 else b for b in valid),
        wrong_type,
        lambda: valid[:-1] + b', "x": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
        lambda: valid[:-1] + b', "y": ' + b"9" * rng.randrange(4_000, 6_000) + b"}",
        lambda: rng.randbytes(rng.randrange(1, 2_000)),
        lambda: json.dumps({**document, "schema_version": rng.choice([0, 2, "1", None])}).encode(),
    ]
    while True:
        yield rng.choice(strategies)()


def _random_slot(node: object, rng: random.Random) -> tuple[dict | list | None, object]:  # type: ignore[type-arg]
    """A random (container, key) inside *node*, walking down a few levels."""
    parent: dict | list | None = None  # type: ignore[type-arg]
    key: object = None
    for _ in range(rng.randrange(1, 6)):
        if isinstance(node, dict) and node:
            parent, key = node, rng.choice(list(node))
        elif isinstance(node, list) and node:
            parent, key = node, rng.randrange(len(node))
        else:
            break
        node = parent[key]  # type: ignore[index]
    return parent, key


def _fuzz(count: int, rng: random.Random) -> tuple[int, int, list[str]]:
    """(documents tried, failures, examples of failures) over workflow, trajectory, bundle."""
    from click.testing import CliRunner

    from desktop_app.cli import cli

    runner = CliRunner()
    failures: list[str] = []
    tried = 0
    with isolated_home(), tempfile.TemporaryDirectory() as tmp:
        bundle = Path(tmp) / "valid.procedura"
        with services() as sv:
            sv.workflows.import_json(WORKFLOW.read_bytes(), actor="bench")
        made = runner.invoke(cli, ["export", "Create a contact", "--format", "bundle", "--out",
                                   str(bundle)])  # fmt: skip
        assert made.exit_code == 0, made.output
        kinds = [
            ("workflow", ["workflows", "import"], WORKFLOW.read_bytes(), ".json"),
            ("trajectory", ["trajectories", "import"], TRAJECTORY.read_bytes(), ".json"),
            ("bundle", ["workflows", "import"], bundle.read_bytes(), ".procedura"),
        ]
        streams = {name: _mutations(valid, rng) if name != "bundle" else None
                   for name, _, valid, _ in kinds}  # fmt: skip
        for i in range(count):
            name, args, valid, suffix = kinds[i % len(kinds)]
            stream = streams[name]
            if stream is None:  # a zip: flip bytes or cut it
                data = bytearray(valid)
                for _ in range(rng.randrange(1, 20)):
                    data[rng.randrange(len(data))] = rng.randrange(256)
                mutated = bytes(data[: rng.randrange(len(data) // 2, len(data) + 1)])
            else:
                mutated = next(stream)
            path = Path(tmp) / f"fuzz-{i}{suffix}"
            path.write_bytes(mutated)
            result = runner.invoke(cli, [*args, str(path), "--on-conflict", "keep-both"]
                                   if name == "bundle" else [*args, str(path)])  # fmt: skip
            tried += 1
            crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
            if crashed or result.exit_code not in (0, 2):
                what = type(result.exception).__name__ if crashed else f"exit {result.exit_code}"
                failures.append(f"{name}: {what}: {(result.output or '')[-200:]!r}")
            path.unlink()
    return tried, len(failures), failures[:5]


# ── the section ───────────────────────────────────────────────────────────────────────────────

_COMMANDS = ("import", "approve", "run", "batch", "record")


def measure(smoke: bool = False, kills: int | None = None, fuzz: int | None = None) -> Section:
    """Kills of each writer command (10 each, 1 for a smoke run) and fuzzed imports (300, 15)."""
    rng = random.Random(20261203)
    kills = kills or (1 if smoke else 10)
    fuzz = fuzz or (15 if smoke else 300)
    commands = ("import", "run") if smoke else _COMMANDS
    found, midway = _kills(commands, kills, rng)
    tried, failed, examples = _fuzz(fuzz, rng)
    section = Section("faults", "Faults: kill -9 during every writer command, fuzzed input")
    total = sum(len(v) for v in found.values())
    intact = sum(1 for v in found.values() for f in v if not f)
    for command, results in found.items():
        torn = [f for f in results if f]
        section.add(
            f"kill -9 during {command}: intact after the next start",
            100 * (len(results) - len(torn)) / len(results),
            "%",
            "== 100",
            f"{len(results) - len(torn)} of {len(results)}" + (f"; {torn[0]}" if torn else ""),
        )
    section.add(
        "kills in all: intact",
        100 * intact / total,
        "%",
        "== 100",
        f"{intact}/{total}; {midway} of them came while the command was at work",
    )
    section.add(
        "fuzzed imports: tracebacks or other exits",
        failed,
        "",
        "== 0",
        f"of {tried} documents" + (f"; e.g. {examples[0]}" if examples else ""),
    )
    section.notes.append(
        "Each kill in a data directory of its own prepared for the command; SIGKILL at a "
        "uniformly random moment between 5% and 100% of the command's uncut duration (record: "
        "5 s). Intact: SQLite's integrity check, every workflow version, run and recording "
        "loads at the next start, no run left 'running', and the search index holds what the "
        "database holds once that start finished what the killed process left marked."
    )
    section.notes.append(
        "Fuzzing: workflow, trajectory and bundle documents in turn, mutated by truncation, "
        "bit flips, a value of the wrong type, nesting 50,000 deep, a number of 4,000-6,000 "
        "digits, random bytes or a bad schema_version (bundles: bytes overwritten, cut); "
        "imported through the command line in-process; exit status 0 or 2 with no traceback "
        "passes."
    )
    return section


def main() -> None:
    def options(parser: object) -> None:
        add = parser.add_argument  # type: ignore[attr-defined]
        add("--kills", type=int, default=None, help="kills per command (default 10)")
        add("--fuzz", type=int, default=None, help="fuzzed documents (default 300)")

    cli_main(__doc__, measure, smoke_help="one kill of import and run, 15 documents",
             options=options)  # fmt: skip


if __name__ == "__main__":
    main()
