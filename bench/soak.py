"""Soak: replays in a row in one app process, watched for growth (memory, threads, files, browsers).

The desktop app runs many replays over a day without being restarted; what one replay leaves
behind adds up. Here one process does what the app does for each run started from the Run
dialog, 200 times in a row, on one qasync loop over a ``QApplication`` (offscreen), exactly the
objects the window uses: the run's setup loaded on the store thread of a
:class:`~desktop_app.ui.tasks.TaskRunner` (``load_setup``: the approved version, the last values,
the keyring), then :meth:`ServicesBackend.replay <desktop_app.gui.backend.ServicesBackend.replay>`
started as a job of that runner (a fresh headless Chromium per run, a screenshot per step, the
run record in SQLite, learning afterwards). Each run is the create-contact workflow, induced from
its recording in ``tests/data`` and approved, with new values, ``use_llm=False``,
``assume_yes=True``; each must succeed, and the demo app's own data must end up with one new
contact per replay.

After every replay (a full ``gc.collect()`` first: retained memory, not garbage waiting for the
collector) it samples this process: its resident memory (``VmRSS``), its threads (Python's and
the kernel's count), its open file descriptors, and the browser processes still alive that are
this run's (descendants of this process, or any process carrying this run's tag in its
environment: a Chromium orphaned by a dead Playwright driver is reparented away from us). The
demo app runs in a process of its own, so its memory and threads are not counted as the app's.

PySide6 6.12.0 drops a reference to ``None`` on every void call between Python and Qt (every
callback qasync runs is one); on Python 3.11, where ``None`` is not immortal, a process aborts
once the count reaches 0 ("Fatal Python error: none_dealloc"): this one did, some 40 replays
in, before it counted them (the project now refuses that release). The soak counts the
references dropped per replay (goal: none) and, should a binding drop them again, gives them
back after each replay, so that everything else is still measured over all of them.

Reported: replays done, contacts created, the RSS slope over the second half (least squares, MB
per 100 replays; the first half is warm-up: imports, caches, SQLite's page cache, the
allocator's arenas), RSS, threads and descriptors after the first and the last replay, browser
processes and Playwright drivers left after the last, references to ``None`` dropped per
replay, and the median time per replay.

``--smoke``: 10 replays.

    .venv/bin/python bench/soak.py [--smoke] [--replays 200]
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import ROOT, Section, environment, isolated_home, median, stop_process
from common import main as cli_main
from replay_support import approved, services

from desktop_app.core.models.run import Run, RunStatus, RunTrigger
from desktop_app.core.replay.engine import ReplayEvent, ReplayOptions
from desktop_app.demo_site import DEMO_PASSWORD

#: Every process here: Qt without a display, no real keyring, no Chroma telemetry.
ENVIRONMENT = {
    "QT_QPA_PLATFORM": "offscreen",
    "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    "ANONYMIZED_TELEMETRY": "False",
}
#: The variable that marks this run's processes (inherited by the driver and the browser).
TAG = "PROCEDURA_SOAK_TAG"
#: The goals. Memory: 5 MB per 100 replays is 50 KB a run, under the size of one run's record
#: and screenshots held by mistake; a day of 300 runs would add under 15 MB to a ~400 MB app.
RSS_SLOPE_GOAL = 5.0
THREADS_GOAL = 2
FDS_GOAL = 5
REPLAY_TIMEOUT_S = 180.0
COMPANIES = ("Acme", "Globex", "Initech", "Umbrella", "Hooli")
NAME_PREFIX = "Soak Replay"

#: The demo app in a process of its own: prints its URL, then answers each line "contacts"
#: on stdin with ``DemoSite.contacts()`` as one line of JSON.
_SITE = """
import json, sys
from desktop_app.demo_site import DemoSite
with DemoSite() as site:
    print(site.url, flush=True)
    for line in sys.stdin:
        if line.strip() == "contacts":
            print(json.dumps(site.contacts(), default=str), flush=True)
"""


# ── what this process holds ─────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class Sample:
    """This process after one replay."""

    rss_mb: float
    os_threads: int
    py_threads: int
    fds: int
    browsers: int
    drivers: int
    zombies: int


def _status() -> dict[str, str]:
    """``/proc/self/status`` as a mapping (``VmRSS`` -> ``"123456 kB"``)."""
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return fields


def _proc_stat(pid: int) -> tuple[int, str, str] | None:
    """(parent pid, state, name) of *pid*, or None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name = text[text.index("(") + 1 : text.rindex(")")]
    rest = text[text.rindex(")") + 2 :].split()
    return int(rest[1]), rest[0], name


def _tagged(pid: int, tag: str) -> bool:
    """Whether *pid*'s environment carries *tag* (only our own user's processes are readable)."""
    try:
        return f"{TAG}={tag}".encode() in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False


def _command(pid: int) -> str:
    with contextlib.suppress(OSError):
        return (
            Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        )
    return ""


@dataclass(frozen=True, slots=True)
class Leftovers:
    """This run's processes other than this one and the ones it keeps on purpose."""

    browsers: list[str] = field(default_factory=list)
    drivers: list[str] = field(default_factory=list)
    zombies: list[str] = field(default_factory=list)


def _leftovers(tag: str, keep: set[int]) -> Leftovers:
    """Processes descending from this one, or carrying *tag*, except *keep* and their own
    children: Chromium's (browsers), Playwright's driver (node), and zombies of either."""
    table: dict[int, tuple[int, str, str]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (found := _proc_stat(int(entry))) is not None:
            table[int(entry)] = found
    me = os.getpid()

    def ours(pid: int) -> bool:
        seen = set()
        while pid > 1 and pid not in seen:
            seen.add(pid)
            if pid in keep:
                return False
            if pid == me:
                return True
            pid = table[pid][0] if pid in table else 0
        return False

    left = Leftovers()
    for pid, (_, state, name) in sorted(table.items()):
        if pid == me or pid in keep or not (ours(pid) or _tagged(pid, tag)):
            continue
        command = _command(pid)
        what = f"{pid} {name} [{state}] {command[:120]}".rstrip()
        if state == "Z":
            left.zombies.append(what)
        elif "chrom" in name.lower() or "chrom" in command.split(" ")[0].lower():
            left.browsers.append(what)
        elif name == "node" or "playwright" in command:
            left.drivers.append(what)
    return left


def _sample(tag: str, keep: set[int]) -> tuple[Sample, Leftovers]:
    gc.collect()
    status = _status()
    left = _leftovers(tag, keep)
    sample = Sample(
        rss_mb=int(status["VmRSS"].split()[0]) / 1024,
        os_threads=int(status["Threads"]),
        py_threads=threading.active_count(),
        fds=len(os.listdir("/proc/self/fd")),
        browsers=len(left.browsers),
        drivers=len(left.drivers),
        zombies=len(left.zombies),
    )
    return sample, left


def _none_refs() -> int:
    """References to ``None`` (immortal from Python 3.12: a constant there)."""
    return sys.getrefcount(None)


def _give_none_back(level: int) -> int:
    """Raise ``None``'s reference count back to *level*; how many references that took.

    PySide6 6.12 drops a reference to ``None`` on every call of a void method from Python and
    every Python override of a void virtual Qt calls (qasync's ``timerEvent``: every callback
    the loop runs). On Python 3.11 ``None`` has a count like any object: when it reaches 0 the
    process aborts ("Fatal Python error: none_dealloc"). The soak measures what is dropped, then
    gives it back, so that the other figures can be measured over every replay.
    """
    missing = level - _none_refs()
    if missing <= 0:
        return 0
    incref = ctypes.pythonapi.Py_IncRef
    incref.argtypes = [ctypes.py_object]
    incref.restype = None
    for _ in range(missing):
        incref(None)
    return missing


def _children(pid: int) -> set[int]:
    """*pid*'s child processes now (the ones this run keeps on purpose, like the index worker)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (stat := _proc_stat(int(entry))) is not None and stat[0] == pid:
            found.add(int(entry))
    return found


# ── the demo app, apart ─────────────────────────────────────────────────────────────────────


class SiteProcess:
    """The demo app served by a child process; its URL and its contacts."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _SITE],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().strip()
        if not self.url.startswith("http://"):
            stop_process(self.process)
            raise RuntimeError(f"the demo site did not start: {self.url!r}")

    def contacts(self) -> list[dict[str, Any]]:
        """``DemoSite.contacts()`` in the site's process."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("contacts\n")
        self.process.stdin.flush()
        contacts: list[dict[str, Any]] = json.loads(self.process.stdout.readline())
        return contacts

    def close(self) -> None:
        """End the site's process."""
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        stop_process(self.process)
        if self.process.stdout is not None:
            self.process.stdout.close()


@contextlib.contextmanager
def _site() -> Iterator[SiteProcess]:
    site = SiteProcess()
    try:
        yield site
    finally:
        site.close()


# ── the soak ────────────────────────────────────────────────────────────────────────────────


@dataclass(slots=True)
class Soak:
    """What the replays did and what each left behind."""

    before: Sample | None = None
    samples: list[Sample] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    llm_calls: int = 0
    last_left: Leftovers = field(default_factory=Leftovers)
    settled_left: Leftovers = field(default_factory=Leftovers)
    contacts_before: int = 0
    contacts_created: int = 0
    names: str = ""
    failures: list[str] = field(default_factory=list)
    none_start: int = 0
    none_dropped: list[int] = field(default_factory=list)
    none_given: int = 0
    seen_during: tuple[int, int] | None = None


def _values(i: int) -> dict[str, str]:
    """The non-secret values of replay number *i* (every run a new contact)."""
    return {
        "full_name": f"{NAME_PREFIX} {i:03d}",
        "email": f"soak{i:03d}@example.test",
        "company": COMPANIES[i % len(COMPANIES)],
        "subscribe_to_newsletter": "true" if i % 2 else "false",
    }


async def _replays(soak: Soak, workflow_id: str, url: str, count: int, tag: str) -> None:
    """*count* runs of *workflow_id* on *url* as the Run dialog starts them, sampled after each."""
    from desktop_app.app import open_services
    from desktop_app.gui.backend import ServicesBackend
    from desktop_app.settings import load_settings
    from desktop_app.ui.backend import RunRequest
    from desktop_app.ui.run_view import load_setup
    from desktop_app.ui.tasks import TaskRunner

    def probe(_event: ReplayEvent) -> None:
        """During the first run: the browser the probe should see (it counts what it sees)."""
        if soak.seen_during is None:
            found = _leftovers(tag, keep)
            soak.seen_during = len(found.browsers), len(found.drivers)

    with open_services(load_settings(), write=True) as opened:
        backend = ServicesBackend(opened)
        tasks = TaskRunner(dialogs=False)
        try:
            # The search index (Chroma's worker, if it runs) is the app's, not a leftover.
            await tasks.call(lambda: backend.workflows.search("create a contact", limit=1))
            keep = _children(os.getpid())

            def ignore(_event: ReplayEvent) -> None:
                return None

            soak.before, _ = _sample(tag, keep)
            soak.none_start = level = _none_refs()
            settings = backend.settings
            for i in range(count):
                setup = await tasks.call(load_setup, backend, workflow_id, None)
                request = RunRequest(
                    version=setup.version,
                    values=_values(i),
                    secrets={"password": DEMO_PASSWORD},
                    options=ReplayOptions(
                        assume_yes=True,
                        use_llm=False,
                        max_llm_calls_per_step=settings.llm_max_calls_per_step,
                        patience_s=settings.replay_patience_s,
                        trigger=RunTrigger.GUI,
                    ),
                    base_url=url,
                    headless=True,
                    save_secrets=False,
                )
                began = time.perf_counter()
                job = tasks.start(
                    backend.replay(request, person=None, on_event=probe if i == 0 else ignore),
                    label="Running “Create a contact”…",
                    on_error=lambda _exc: True,  # raised below, from the task itself
                )
                assert job is not None
                try:
                    run = await asyncio.wait_for(job, REPLAY_TIMEOUT_S)
                except Exception as exc:  # no run recorded (or it hung): a failure, soak on
                    soak.statuses.append("raised")
                    soak.failures.append(f"replay {i + 1} raised {type(exc).__name__}: {exc}")
                else:
                    soak.statuses.append(run.status.value)
                    soak.llm_calls += run.llm_calls
                    if run.status is not RunStatus.SUCCEEDED:
                        soak.failures.append(_failure(i, run))
                soak.seconds.append(time.perf_counter() - began)
                sample, soak.last_left = _sample(tag, keep)
                soak.samples.append(sample)
                soak.none_dropped.append(level - _none_refs())
                soak.none_given += _give_none_back(soak.none_start)
                level = _none_refs()
            await asyncio.sleep(2)  # what a browser slow to exit would have left by now
            _, soak.settled_left = _sample(tag, keep)
        finally:
            await tasks.shutdown()


def _failure(i: int, run: Run) -> str:
    """One line on replay number *i* that did not succeed: its error and its steps."""
    steps = ", ".join(
        f"{step.index + 1} {step.status.value} {step.duration_ms:.0f} ms" for step in run.steps
    )
    return f"replay {i + 1} ended {run.status.value}: {run.error} (steps: {steps})"


def _soak(count: int, tag: str) -> Soak:
    """Approve create-contact, serve the demo app apart, run *count* replays on a qasync loop."""
    import qasync
    from PySide6.QtWidgets import QApplication

    soak = Soak()
    with isolated_home(), _site() as site:
        with services() as sv:
            workflow_id = approved(sv, "create-contact").workflow.id
        soak.contacts_before = len(site.contacts())
        app = QApplication.instance() or QApplication(["procedura-bench"])
        assert isinstance(app, QApplication)
        app.setQuitOnLastWindowClosed(False)
        loop = qasync.QEventLoop(app, already_running=False)
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(_replays(soak, workflow_id, site.url, count, tag))
        finally:
            asyncio.set_event_loop(None)
            loop.close()
        contacts = site.contacts()
    soak.contacts_created = len(contacts) - soak.contacts_before
    expected = sorted(_record(_values(i)) for i in range(len(soak.samples)))
    found = sorted(
        _record(c) for c in contacts if str(c.get("full_name", "")).startswith(NAME_PREFIX)
    )
    soak.names = (
        "every one once, with its values"
        if found == expected
        else f"{len(set(expected) - set(found))} missing or with other values, "
        f"{len(found) - len(set(found) & set(expected))} others or twice"
    )
    return soak


def _record(values: dict[str, Any]) -> tuple[str, str, str, bool]:
    """A contact as the site stores it (name, email, company, newsletter), from the site's data
    or from the values a replay was given."""
    newsletter = values.get("newsletter", values.get("subscribe_to_newsletter"))
    return (
        str(values["full_name"]),
        str(values["email"]),
        str(values["company"]),
        newsletter in (True, "true"),
    )


def _slope_per_100(values: list[float]) -> float:
    """Least-squares slope of *values* against their replay numbers, per 100 replays."""
    if len(values) < 2:
        return 0.0
    return statistics.linear_regression(range(len(values)), values).slope * 100


def measure(smoke: bool = False, replays: int | None = None) -> Section:
    """*replays* consecutive runs (200; 10 for a smoke run), sampled after each."""
    count = replays or (10 if smoke else 200)
    tag = uuid.uuid4().hex
    with environment({**ENVIRONMENT, TAG: tag}):
        soak = _soak(count, tag)
    samples = soak.samples
    first, last = samples[0], samples[-1]
    half = samples[len(samples) // 2 :]
    slope = _slope_per_100([s.rss_mb for s in half])
    whole = _slope_per_100([s.rss_mb for s in samples])
    section = Section("soak", "Soak: consecutive replays in one app process")
    section.add(
        "replays done",
        soak.statuses.count(RunStatus.SUCCEEDED.value),
        "runs",
        f"== {count}",
        "succeeded, in one process"
        + (f"; {len(soak.failures)} did not (notes)" if soak.failures else ""),
    )
    section.add(
        "contacts created",
        soak.contacts_created,
        "contacts",
        f"== {count}",
        f"the demo app's own data: {soak.names}",
    )
    section.add(
        "RSS slope, second half",
        slope,
        "MB/100 replays",
        f"<= {RSS_SLOPE_GOAL:g}",
        f"least squares over replays {len(samples) - len(half) + 1}-{len(samples)}; "
        f"whole run {whole:.2f}",
    )
    before = soak.before
    section.add(
        "RSS after the first replay",
        first.rss_mb,
        "MB",
        "",
        f"before it {before.rss_mb:.0f} MB" if before else "",
    )
    section.add(
        "RSS after the last replay",
        last.rss_mb,
        "MB",
        "",
        f"max {max(s.rss_mb for s in samples):.0f} MB",
    )
    section.add(
        "threads after the first replay",
        first.os_threads,
        "threads",
        "",
        f"the kernel's count; Python's {first.py_threads}",
    )
    section.add(
        "threads after the last replay",
        last.os_threads,
        "threads",
        "",
        f"Python's {last.py_threads}; max {max(s.os_threads for s in samples)}",
    )
    section.add(
        "thread growth, last - first",
        last.os_threads - first.os_threads,
        "threads",
        f"<= {THREADS_GOAL}",
        f"Python's threads {last.py_threads - first.py_threads:+d}",
    )
    section.add("open files after the first replay", first.fds, "fds")
    section.add(
        "open files after the last replay",
        last.fds,
        "fds",
        "",
        f"max {max(s.fds for s in samples)}",
    )
    section.add("open file growth, last - first", last.fds - first.fds, "fds", f"<= {FDS_GOAL}")
    section.add(
        "browser processes left after the last replay",
        last.browsers,
        "processes",
        "== 0",
        f"after any replay, max {max(s.browsers for s in samples)}; "
        f"2 s later {len(soak.settled_left.browsers)}",
    )
    section.add(
        "Playwright drivers left after the last replay",
        last.drivers,
        "processes",
        "== 0",
        f"after any replay, max {max(s.drivers for s in samples)}; "
        f"zombies max {max(s.zombies for s in samples)}",
    )
    section.add(
        "time per replay",
        median(soak.seconds),
        "s",
        "",
        f"median of {len(soak.seconds)}, max {max(soak.seconds):.1f} s",
    )
    section.add("LLM calls", soak.llm_calls, "calls", "== 0", f"over {count} runs")
    dropped = median(soak.none_dropped[1:] or soak.none_dropped)  # the first run warms up
    over = f"replays {min(2, len(samples))}-{len(samples)}"
    first_level = soak.none_start - soak.none_dropped[0]  # after the first replay's imports
    binding = f"PySide6 {_pyside_version()} on Python {sys.version.split()[0]}"
    section.add(
        "references to None dropped per replay",
        dropped,
        "refs",
        "<= 0",  # any steady loss, however small, ends with None freed
        f"median of {over}; {binding}: the {first_level:,} there were after "
        f"the first replay would last ~{first_level / dropped:,.0f} replays, then this "
        "process aborts (none_dealloc); given back after each replay "
        f"({soak.none_given:,} in all) so the soak goes on"
        if dropped > 0
        else f"median of {over}; {binding}: None's count holds",
    )
    seen = soak.seen_during
    section.add(
        "browser processes seen during the first replay",
        seen[0] if seen else None,
        "processes",
        "",
        f"and {seen[1]} Playwright driver(s): the probe sees what it counts"
        if seen
        else "no event came",
    )
    section.notes += soak.failures[:5]
    left = soak.last_left.browsers + soak.last_left.drivers + soak.last_left.zombies
    if left:
        section.notes.append("left after the last replay: " + "; ".join(left))
    section.notes.append(
        f"create-contact (10 steps) on the demo app (its own process), {count} replays in a row "
        "in one process: a QApplication (offscreen) and one qasync loop; each run as the Run "
        "dialog starts it: load_setup on a TaskRunner's store thread, then "
        "ServicesBackend.replay as a TaskRunner job (headless Chromium launched and closed per "
        "run, a screenshot per step, use_llm=False, assume_yes=True); the window's widgets "
        "are not built"
    )
    section.notes.append(
        "sampled after each replay, after gc.collect(): VmRSS and Threads from "
        "/proc/self/status, threading.active_count(), /proc/self/fd; browser processes and "
        "Playwright drivers: live processes descending from this one (walking /proc/*/stat) or "
        f"carrying this run's {TAG} in their environment, the search index's worker excepted"
    )
    section.notes.append(
        f"RSS goal <= {RSS_SLOPE_GOAL:g} MB/100 replays (50 KB a run) over the second half, "
        "the first being warm-up; at 300 runs a day that is under 15 MB a day"
    )
    step = max(1, len(samples) // 20)
    section.notes.append(
        f"RSS (MB) after replays 1, {1 + step}, {1 + 2 * step}, ...: "
        + ", ".join(f"{s.rss_mb:.0f}" for s in samples[::step])
    )
    section.notes.append(f"machine load (1-minute average) at the end: {_load()}")
    return section


def _pyside_version() -> str:
    import PySide6

    return str(PySide6.__version__)


def _load() -> str:
    """The 1-minute load average over the CPU count (the machine may be shared)."""
    with contextlib.suppress(OSError, AttributeError):
        return f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    return "unknown"


def main() -> None:
    cli_main(
        __doc__,
        measure,
        smoke_help="10 replays, for CI",
        options=lambda parser: parser.add_argument("--replays", type=int, default=None),
    )


if __name__ == "__main__":
    main()
