"""Recording: what capturing costs the page, the disk and the memory of a long recording.

Everything runs in headless Chromium against the bundled demo app (Acme CRM):

- In-page capture overhead: the demo app's new-contact form is typed into and clicked on with
  real input events (Playwright keyboard and mouse, over CDP), in a fresh browser context with
  ``effects.js`` and ``capture.js`` injected and their binding exposed (as the recorder does)
  and in one without,
  alternating. The CPU time of the page's main thread (Chromium's ``ThreadTime``) is read
  around each burst, so the figures hold everything the page did for those events, the
  scripts' deferred reports (typing, what each action made the page do) included: the
  time added per keystroke and per click (median of paired rounds), and the ratio per event.
- Exact at any speed: scripted demonstrations (tests/demonstrations.py: the demo app, TodoMVC
  in three frameworks, a Flask-Admin site) recorded at a person's pace, at machine speed, and at
  machine speed with two busy processes competing for the CPU; the share of demonstrations whose
  three induced workflows are identical (steps, targets, parameters, checks).
- Crashes: ``procedura record web --attach`` killed with SIGKILL at random moments while a
  person adds notes as fast as the page takes them, two busy processes competing for the CPU;
  the notes finished more than a second before a kill that its recording lacks.
- Storage and memory: ``record_web`` (what ``procedura record web --headless`` runs, screenshots
  on) records in a child process while a scripted user in that process works through the demo
  tasks in a loop (sign in, create a contact, search and open one, filter orders, submit an
  expense report, sign out) at a human pace: a one-second pause before each action, typing at
  ten keys a second. Storage: what the data directory gained over a freshly created one by the
  time the recorder's process ended (database and media), per recorded minute. Memory: the
  child's resident memory (and the Playwright driver's, and Chromium's) sampled from ``/proc``
  while it records.

    .venv/bin/python bench/recording.py [--smoke] [--minutes 10]
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

from common import ROOT, Section, isolated_home, median, stop_process
from common import main as cli_main

from desktop_app.demo_site import DEMO_PASSWORD, DEMO_USERNAME, DemoSite
from desktop_app.demo_site.data import COMPANIES

if TYPE_CHECKING:
    from demonstrations import Scenario
    from playwright.async_api import Browser, CDPSession, Locator, Page

CAPTURE_JS: Final = ROOT / "resources" / "recorder" / "capture.js"
EFFECTS_JS: Final = ROOT / "resources" / "recorder" / "effects.js"
MB: Final = 1_000_000

# ── the scripted user's pace ─────────────────────────────────────────────────────────────────

#: The pause before each action (a person reading the page and finding the next control).
THINK_S: Final = 1.0
#: Between keystrokes: ten keys a second, a quick typist.
KEY_DELAY_MS: Final = 100
#: How long a click holds the button down.
CLICK_HOLD_MS: Final = 120

# ── the overhead measurement ──────────────────────────────────────────────────────────────────

#: Fields of the new-contact form typed into, with what is typed (keystrokes = characters).
TYPED: Final = (
    ("Full name", "Janet Bench-Marker"),
    ("Email", "janet.bench@example.test"),
    ("Notes", "Met at the trade fair in May"),
)
#: What is clicked on the same form, in order (each twice): fields, a checkbox, a heading.
CLICKED: Final = ("Full name", "Email", "Phone", "Notes", "Subscribe to newsletter", "heading")
#: Longer than the page scripts' 500 ms typing report and 300 ms settling of an action's effects.
SETTLE_S: Final = 0.9


def _label(page: Page, name: str) -> Locator:
    return page.get_by_label(name, exact=True)


# ── in-page capture overhead ─────────────────────────────────────────────────────────────────


async def _thread_time(cdp: CDPSession) -> float:
    """The CPU time of the page's main thread so far (Chromium's ``ThreadTime``), in seconds."""
    metrics = await cdp.send("Performance.getMetrics")
    return next(float(m["value"]) for m in metrics["metrics"] if m["name"] == "ThreadTime")


@dataclass(slots=True)
class _Burst:
    """One round in one context: the page's main-thread CPU seconds on its keys and clicks."""

    keys_s: float
    clicks_s: float
    keys: int
    clicks: int
    fields: int
    reports: list[str] = field(default_factory=list)

    def per_key(self) -> float:
        return self.keys_s / self.keys

    def per_click(self) -> float:
        return self.clicks_s / self.clicks

    def per_event(self) -> float:
        return (self.keys_s + self.clicks_s) / (self.keys + self.clicks)


async def _signed_in_state(browser: Browser, url: str) -> dict[str, Any]:
    """A storage state signed in to the demo app, so each round starts on the form at once."""
    context = await browser.new_context()
    try:
        page = await context.new_page()
        await page.goto(f"{url}/login")
        await _label(page, "Username").fill(DEMO_USERNAME)
        await _label(page, "Password").fill(DEMO_PASSWORD)
        await page.get_by_role("button", name="Sign in").click()
        await page.wait_for_url("**/contacts")
        state: dict[str, Any] = await context.storage_state()  # type: ignore[assignment]
        return state
    finally:
        await context.close()


async def _burst(
    browser: Browser, url: str, state: dict[str, Any], *, captured: bool, clicks: int, fields: int
) -> _Burst:
    """Type into *fields* fields and make *clicks* clicks on the new-contact form, timed."""
    context = await browser.new_context(
        storage_state=state,  # type: ignore[arg-type]
        viewport={"width": 1280, "height": 1200},
    )
    reports: list[str] = []
    try:
        if captured:
            await context.expose_binding(
                "__proceduraEmit", lambda _source, payload: reports.append(payload)
            )
            await context.add_init_script(path=str(EFFECTS_JS))
            await context.add_init_script(path=str(CAPTURE_JS))
        page = await context.new_page()
        await page.goto(f"{url}/contacts/new")
        if captured:
            await page.wait_for_function("() => !!window.__procedura")
        cdp = await context.new_cdp_session(page)
        await cdp.send("Performance.enable")
        typing = 0.0
        keys = 0
        for name, text in TYPED[:fields]:
            await _label(page, name).focus()
            before = await _thread_time(cdp)
            await page.keyboard.type(text)
            await asyncio.sleep(SETTLE_S)
            typing += await _thread_time(cdp) - before
            keys += len(text)
        points = []
        for name in (CLICKED * 2)[:clicks]:
            found = (
                page.get_by_role("heading", level=1) if name == "heading" else _label(page, name)
            )
            box = await found.bounding_box()
            assert box is not None, f"{name} is not on the form"
            points.append((box["x"] + min(box["width"] / 2, 20), box["y"] + box["height"] / 2))
        before = await _thread_time(cdp)
        for x, y in points:
            await page.mouse.click(x, y)
        await asyncio.sleep(SETTLE_S)
        clicking = await _thread_time(cdp) - before
        kinds = [json.loads(r)["type"] for r in reports]
        return _Burst(typing, clicking, keys, len(points), fields, kinds)
    finally:
        await context.close()


async def _overhead(url: str, rounds: int, clicks: int, fields: int) -> list[tuple[_Burst, _Burst]]:
    """Rounds without and with capture.js (alternating which goes first), in one Chromium."""
    from desktop_app.adapters.browser.launch import open_browser

    session = await open_browser(headless=True)
    try:
        assert session.browser is not None
        state = await _signed_in_state(session.browser, url)
        pairs = []
        for i in range(rounds):
            done: dict[bool, _Burst] = {}
            for captured in (False, True) if i % 2 == 0 else (True, False):
                done[captured] = await _burst(
                    session.browser, url, state, captured=captured, clicks=clicks, fields=fields
                )
            pairs.append((done[False], done[True]))
        return pairs
    finally:
        await session.close()


def _add_overhead(section: Section, pairs: list[tuple[_Burst, _Burst]]) -> None:
    for _, captured in pairs:  # the script did report what it saw: the comparison is a real one
        seen = set(captured.reports)
        if not {"fill", "click", "effects"} <= seen:
            raise RuntimeError(f"the page scripts reported only {sorted(seen)}")
    us = 1e6
    for label, per in (("keystroke", _Burst.per_key), ("click", _Burst.per_click)):
        added = median([per(c) - per(p) for p, c in pairs]) * us
        with_ = median([per(c) for _, c in pairs]) * us
        without = median([per(p) for p, _ in pairs]) * us
        section.add(
            f"capture cost per {label}",
            round(added),
            "µs",
            note=f"page main-thread CPU {with_:.0f} µs with the scripts, {without:.0f} µs without",
        )
    first = pairs[0][1]
    section.add(
        "page main-thread CPU per event, with ÷ without",
        round(median([c.per_event() / p.per_event() for p, c in pairs]), 2),
        "x",
        note=f"{first.keys} keys + {first.clicks} clicks a round, {len(pairs)} rounds",
    )
    section.notes.append(
        f"Capture overhead: {len(pairs)} rounds, each a fresh context without and one with "
        "effects.js and capture.js (and their binding, whose receiver here only collects: "
        "pictures and storing are the recorder's work, outside the page), alternating which "
        "goes first. A "
        f"round types {first.keys} keys into {first.fields} fields of the new-contact form "
        f"(each field followed by {SETTLE_S} s for the page scripts' typing report) and makes "
        f"{first.clicks} clicks (fields, a checkbox, a heading; then {SETTLE_S} s for their "
        "effects to settle), with real input events. The page's main-thread CPU time (Chromium's "
        "ThreadTime, a CPU clock: other processes' load does not inflate it) is read around "
        "each; the cost per event is the median over rounds of the paired difference. The "
        "baseline holds what the page does anyway: its own scripts, input handling, style, "
        "layout, paint, and the caret blinking during the settle."
    )


# ── the recording, in a child process ─────────────────────────────────────────────────────────


async def _type(field_: Locator, text: str) -> None:
    await field_.click(delay=CLICK_HOLD_MS)
    await field_.press_sequentially(text, delay=KEY_DELAY_MS)


async def _click_to(page: Page, target: Locator, url: str) -> None:
    await target.click(delay=CLICK_HOLD_MS)
    await page.wait_for_url(url)


async def _click_until(target: Locator, shown: Locator) -> None:
    await target.click(delay=CLICK_HOLD_MS)
    await shown.wait_for()


def _cycle(page: Page, n: int) -> list[Callable[[], Awaitable[object]]]:
    """One pass through the demo tasks, action by action, from the login page back to it."""
    role, test_id = page.get_by_role, page.get_by_test_id
    person = f"Bench Person {n}"

    def button(name: str) -> Locator:
        return role("button", name=name, exact=True)

    def link(name: str) -> Locator:
        return role("link", name=name, exact=True)

    return [
        lambda: _type(_label(page, "Username"), DEMO_USERNAME),
        lambda: _type(_label(page, "Password"), DEMO_PASSWORD),
        lambda: _click_to(page, button("Sign in"), "**/contacts"),
        lambda: _click_to(page, test_id("new-contact"), "**/contacts/new"),
        lambda: _type(_label(page, "Full name"), person),
        lambda: _type(_label(page, "Email"), f"bench.person.{n}@example.test"),
        lambda: _label(page, "Company").select_option(COMPANIES[n % len(COMPANIES)]),
        lambda: _label(page, "Subscribe to newsletter").check(),
        lambda: _click_until(button("Save"), page.get_by_text(f"Contact {person} created")),
        lambda: _click_to(page, link("Contacts"), "**/contacts"),
        lambda: _type(test_id("search"), "Maria"),
        lambda: test_id("search").press("Enter"),
        lambda: _click_until(link("Maria Garcia"), role("heading", name="Maria Garcia")),
        lambda: _click_to(page, link("Orders"), "**/orders"),
        lambda: _label(page, "Status").select_option("Shipped"),
        lambda: _click_to(page, button("Filter"), "**/orders?status=shipped*"),
        lambda: _click_to(page, link("Next"), "**page=2*"),
        lambda: _click_to(page, link("Expenses"), "**/expenses"),
        lambda: _click_to(page, test_id("new-report"), "**/expenses/new"),
        lambda: _type(_label(page, "Report title"), f"Client visit {n}"),
        lambda: page.get_by_label("Date").fill("2026-11-24"),
        lambda: _label(page, "Category").select_option("Travel"),
        lambda: _click_to(page, button("Next"), "**/expenses/new/items"),
        lambda: _type(_label(page, "Description"), "Train ticket"),
        lambda: _type(_label(page, "Amount (USD)"), "129.90"),
        lambda: _click_to(page, button("Next"), "**/expenses/new/review"),
        lambda: _click_until(button("Submit report"), page.get_by_text("Report submitted").first),
        lambda: _click_to(page, test_id("sign-out"), "**/login?signed_out=1"),
    ]


async def _work(page: Page, deadline: float) -> int:
    """Act on *page* at the human pace until *deadline* (``time.monotonic``); the action count."""
    page.set_default_timeout(10_000)
    actions = 0
    n = 0
    while True:
        n += 1
        for action in _cycle(page, n):
            await asyncio.sleep(THINK_S)
            if time.monotonic() >= deadline:
                return actions
            await action()
            actions += 1


def _say(message: dict[str, Any]) -> None:
    print(json.dumps(message), flush=True)


async def _record(url: str, seconds: float) -> dict[str, Any]:
    from desktop_app.app import open_services, record_web
    from desktop_app.settings import load_settings

    stop = asyncio.Event()
    user: list[asyncio.Task[int]] = []
    span: list[float] = []

    async def act(page: Page) -> int:
        try:
            return await _work(page, span[0] + seconds)
        finally:
            span.append(time.monotonic())
            _say({"stopping": True})
            stop.set()

    def started(_trajectory: str, page: Page) -> None:
        span.append(time.monotonic())
        _say({"started": True})
        user.append(asyncio.create_task(act(page)))

    with open_services(load_settings(), write=True) as services:
        trajectory = await record_web(
            services,
            url=f"{url}/login",
            intent="Benchmark: work through the demo tasks",
            headless=True,
            stop=stop,
            on_started=started,
        )
        actions = await user[0]
        raw = services.trajectories.raw_events(trajectory.id)
    return {
        "seconds": span[1] - span[0],
        "actions": actions,
        "raw_events": len(raw),
        "events": len(trajectory.events),
    }


def run_recorder(url: str, seconds: float) -> None:
    """The child process: record for *seconds* while the scripted user works; report as JSON."""
    _say({"done": asyncio.run(_record(url, seconds))})


# ── watching the child: /proc ──────────────────────────────────────────────────────────────────


def _proc_mb(path: str, key: str) -> float:
    """A ``key: <n> kB`` line of a ``/proc`` file, in MB; 0 when the process is gone."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path(path).read_text().splitlines():
            if line.startswith(key):
                return int(line.split()[1]) * 1024 / MB
    return 0.0


def _rss_mb(pid: int) -> float:
    """Resident memory of *pid* (``VmRSS``), in MB."""
    return _proc_mb(f"/proc/{pid}/status", "VmRSS:")


def _pss_mb(pid: int) -> float:
    """Proportional resident memory of *pid* (pages shared with n processes count 1/n), MB."""
    return _proc_mb(f"/proc/{pid}/smaps_rollup", "Pss:")


def _children() -> dict[int, list[int]]:
    """Every process's children, from ``/proc/<pid>/stat``."""
    tree: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            tree.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    return tree


def _descendants(tree: dict[int, list[int]], pid: int) -> list[int]:
    found, todo = [], list(tree.get(pid, ()))
    while todo:
        child = todo.pop()
        found.append(child)
        todo.extend(tree.get(child, ()))
    return found


@dataclass(slots=True)
class _Sample:
    """Resident memory at one moment, in MB: the recorder, the Playwright driver, Chromium
    (summed over its processes, and its proportional share)."""

    at: float
    recorder: float
    driver: float
    browser: float
    browser_pss: float


def _sample(pid: int, at: float) -> _Sample:
    """The recorder is *pid*; its children are the Playwright driver; theirs are Chromium's."""
    tree = _children()
    drivers = tree.get(pid, [])
    browser = [p for d in drivers for p in _descendants(tree, d)]
    return _Sample(
        at,
        _rss_mb(pid),
        sum(_rss_mb(p) for p in drivers),
        sum(_rss_mb(p) for p in browser),
        sum(_pss_mb(p) for p in browser),
    )


@dataclass(frozen=True, slots=True)
class _Footprint:
    """What a data directory holds: its files' bytes, the disk space they take, and of them
    the media folder's files and bytes."""

    size: int
    disk: int
    media_files: int
    media_size: int

    def __sub__(self, other: _Footprint) -> _Footprint:
        return _Footprint(
            self.size - other.size,
            self.disk - other.disk,
            self.media_files - other.media_files,
            self.media_size - other.media_size,
        )


def _footprint(home: Path) -> _Footprint:
    size = disk = media_files = media_size = 0
    media = home / "media"
    for path in home.rglob("*"):
        with contextlib.suppress(OSError):
            if not path.is_file():
                continue
            stat = path.stat()
            size += stat.st_size
            disk += stat.st_blocks * 512
            if media in path.parents:
                media_files += 1
                media_size += stat.st_size
    return _Footprint(size, disk, media_files, media_size)


def _slope(samples: list[_Sample]) -> float:
    """The least-squares slope of the recorder's memory, in MB per minute."""
    xs = [s.at / 60 for s in samples]
    ys = [s.recorder for s in samples]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    var = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var if var else 0.0


@dataclass(slots=True)
class _Recording:
    summary: dict[str, Any]
    samples: list[_Sample]
    stopped_at: float
    added: _Footprint


def _lines(stream: IO[str], into: queue.Queue[dict[str, Any]]) -> None:
    for line in stream:
        with contextlib.suppress(ValueError):
            message = json.loads(line)
            if isinstance(message, dict):
                into.put(message)


@contextlib.contextmanager
def _child(url: str, seconds: float) -> Iterator[tuple[subprocess.Popen[str], IO[str]]]:
    """The recorder's child process (its stderr kept in a file); killed if still running."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent)}
    code = "import sys, recording; recording.run_recorder(sys.argv[1], float(sys.argv[2]))"
    with tempfile.TemporaryFile("w+") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-c", code, url, str(seconds)],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env=env,
            start_new_session=True,
        )
        try:
            yield proc, stderr
        finally:
            stop_process(proc)
            assert proc.stdout is not None
            proc.stdout.close()


def _prepared(home: Path) -> _Footprint:
    """What the data directory holds once created and closed, before anything is recorded."""
    from desktop_app.app import open_services
    from desktop_app.settings import load_settings

    with open_services(load_settings(), write=True):
        pass
    return _footprint(home)


def _record_in_child(home: Path, url: str, seconds: float, every: float) -> _Recording:
    """Record for *seconds* in a child process, sampling its memory every *every* seconds."""
    base = _prepared(home)
    with _child(url, seconds) as (proc, stderr):
        messages: queue.Queue[dict[str, Any]] = queue.Queue()
        assert proc.stdout is not None
        threading.Thread(target=_lines, args=(proc.stdout, messages), daemon=True).start()

        def next_message(timeout: float) -> dict[str, Any] | None:
            try:
                return messages.get(timeout=timeout)
            except queue.Empty:
                if proc.poll() is not None and messages.empty():
                    stderr.seek(0)
                    tail = stderr.read()[-2000:]
                    raise RuntimeError(f"the recorder exited ({proc.returncode}): {tail}") from None
                return None

        deadline = time.monotonic() + 120
        while (message := next_message(1.0)) is None or "started" not in message:
            if time.monotonic() > deadline:
                raise RuntimeError("the recording did not start within 120 s")
        start = time.monotonic()
        samples = [_sample(proc.pid, 0.0)]
        stopped_at = 0.0
        summary: dict[str, Any] | None = None
        while summary is None:
            message = next_message(every)
            now = time.monotonic() - start
            if message is None:
                samples.append(_sample(proc.pid, now))
            elif "stopping" in message:
                stopped_at = now
                samples.append(_sample(proc.pid, now))
            elif "done" in message:
                summary = message["done"]
        proc.wait(timeout=60)
        if proc.returncode != 0:
            raise RuntimeError(f"the recorder exited with {proc.returncode}")
    return _Recording(summary, samples, stopped_at, _footprint(home) - base)


def _add_storage(section: Section, rec: _Recording) -> None:
    info = rec.summary
    minutes = info["seconds"] / 60
    added = rec.added
    section.add(
        "storage per recorded minute",
        round(added.size / MB / minutes, 2),
        "MB/min",
        "<= 5",
        f"{added.size / MB:.2f} MB over {minutes:.2f} min recorded (database + media)",
    )
    section.add(
        "  of which screenshots",
        round(added.media_size / MB / minutes, 2),
        "MB/min",
        note=f"{added.media_files} JPEGs, {added.media_size / max(added.media_files, 1) / 1000:.0f}"
        " KB each",
    )
    section.add(
        "user actions per minute",
        round(info["actions"] / minutes, 1),
        "actions/min",
        note=f"{info['actions']} actions: {info['raw_events']} raw events, {info['events']} clean",
    )
    section.notes.append(
        f"Storage: the scripted user pauses {THINK_S:.0f} s before each action and types "
        f"{1000 // KEY_DELAY_MS} keys a second, through the demo tasks in a loop. "
        "Counted: what the data directory gained over a freshly created, closed one (schema "
        "only) by the time the recorder's process ended: the database (raw and clean events, "
        "its write-ahead log folded back in on close) and the media folder; file sizes, "
        f"{rec.added.disk / MB:.2f} MB on disk in 4 KiB blocks. Screenshots are stored once per "
        "distinct image (content-addressed)."
    )


def _add_memory(section: Section, rec: _Recording) -> None:
    samples = rec.samples
    recording = [s for s in samples if s.at <= rec.stopped_at] or samples
    second_half = [s for s in recording if s.at >= rec.stopped_at / 2]
    peak = max(samples, key=lambda s: s.recorder)
    section.add("recorder RSS at start", round(recording[0].recorder, 1), "MB")
    section.add(
        "recorder RSS max",
        round(peak.recorder, 1),
        "MB",
        "<= 300",
        f"at {peak.at / 60:.1f} min, finishing included",
    )
    section.add("recorder RSS at end", round(recording[-1].recorder, 1), "MB", note="at stop")
    section.add(
        "recorder RSS slope, 2nd half",
        round(_slope(second_half), 2),
        "MB/min",
        "<= 5",
        f"least squares over {len(second_half)} samples",
    )
    section.add(
        "Playwright driver RSS max", round(max(s.driver for s in samples), 1), "MB", note="node"
    )
    section.add(
        "Chromium RSS max",
        round(max(s.browser for s in samples), 1),
        "MB",
        note=f"sum over its processes; {max(s.browser_pss for s in samples):.0f} MB as PSS",
    )
    section.notes.append(
        f"Memory: the recorder is the child Python process (VmRSS from /proc) running record_web "
        f"and the scripted user, which shares its Playwright connection (as tests/demo_tasks.py "
        f"does): the user's small share is counted in. The demo app is served from this process, "
        f"not the recorder's. {len(samples)} samples over {rec.stopped_at / 60:.1f} min of "
        "recording and the finishing (cleaning the raw events) after it. 'Flat' is read as a "
        "slope of at most 5 MB/min over the recording's second half."
    )


# ── exact at any speed, and at a crash ──────────────────────────────────────────────────────


def _same_at_any_speed(scenarios: Sequence[Scenario], loaded: bool) -> list[str]:
    """The names of the *scenarios* whose workflows differed between the paces."""
    from browser_support import busy_machine
    from demonstrations import MACHINE, PERSON, signature
    from recording_support import app_for, record_demonstration

    from desktop_app.app import open_services
    from desktop_app.core.induction.heuristic import induce
    from desktop_app.settings import load_settings

    paces = [("person", PERSON, False), ("machine", MACHINE, False)]
    if loaded:
        paces.append(("machine, loaded", MACHINE, True))
    differing = []
    for scenario in scenarios:
        with (
            isolated_home(),
            app_for(scenario) as url,
            open_services(load_settings(), write=True) as services,
        ):
            found = []
            for _label, pace, busy in paces:
                with busy_machine() if busy else contextlib.nullcontext():
                    trajectory = asyncio.run(record_demonstration(services, url, scenario, pace))
                found.append(signature(induce(trajectory).workflow))
        if any(f != found[0] for f in found[1:]):
            differing.append(scenario.name)
    return differing


def _add_speeds(section: Section, smoke: bool) -> None:
    from demonstrations import SCENARIOS

    scenarios = [s for s in SCENARIOS if s.name == "todomvc-vanillajs"] if smoke else SCENARIOS
    differing = _same_at_any_speed(scenarios, loaded=not smoke)
    same = len(scenarios) - len(differing)
    section.add(
        "trajectories identical across speeds",
        round(100 * same / len(scenarios), 1),
        "%",
        goal=">= 100",
        note=f"{same} of {len(scenarios)} demonstrations"
        + (f"; differing: {', '.join(differing)}" if differing else ""),
    )
    section.notes.append(
        "Speeds: each demonstration (tests/demonstrations.py) recorded at a person's pace "
        "(0.3 s before each action, 40 ms between keys, 90 ms clicks), at machine speed (no "
        "pause at all)"
        + ("" if smoke else ", and at machine speed with two busy processes on the two cores")
        + "; the workflows induced from them compared step by step (kind, title, values, "
        "locators, checks), and their parameters and intent template."
    )


def _add_kills(section: Section, smoke: bool) -> None:
    from browser_support import busy_machine, chromium_with_cdp
    from capture_harness import PageServer
    from recording_support import LOSS_S, kept_notes, kill_while_recording

    from desktop_app.app import open_services
    from desktop_app.settings import load_settings

    kills = 1 if smoke else 20
    server = PageServer()
    try:
        with isolated_home(), tempfile.TemporaryDirectory() as profile:
            with chromium_with_cdp(Path(profile)) as cdp, busy_machine():
                sessions = asyncio.run(
                    kill_while_recording(
                        cdp, server.url("notes.html"), kills, seed=9, run_s=(0.6, 2.5)
                    )
                )
            with open_services(load_settings(), write=True) as services:  # recovers the last
                by_intent = {t.intent: t for t in services.trajectories.list()}
                lost = 0
                incomplete = 0
                for session in sessions:
                    summary = by_intent[session.intent]
                    incomplete += summary.incomplete
                    lost += len(session.lost(kept_notes(services.trajectories, summary.id)))
    finally:
        server.close()
    done = sum(len(s.done) for s in sessions)
    section.add(
        f"actions lost at kill -9 under load, older than {LOSS_S:.0f} s",
        lost,
        "",
        goal="== 0",
        note=f"{kills} kills, {done} notes added, {incomplete} recordings kept incomplete",
    )
    section.notes.append(
        f"Crashes: {kills} times, `procedura record web --attach` recorded a person adding notes "
        "(click, type, Enter, as fast as the page takes them) in a Chromium of its own, two "
        "busy processes competing for the CPU, and was killed with SIGKILL 0.6–2.5 s in; a note "
        f"counts as lost if its Enter was pressed more than {LOSS_S:.0f} s before the kill and "
        "the recording holds no fill with its text."
    )


# ── the benchmark ──────────────────────────────────────────────────────────────────────────────


def measure(smoke: bool = False, minutes: float = 10.0) -> Section:
    """Capture overhead per event, storage per recorded minute, memory over the recording.

    Args:
        smoke: a few seconds of recording and one round of each variant (same code paths).
        minutes: how long the recording lasts (the issue's 10 minutes by default).
    """
    section = Section(
        key="recording",
        title="Recording: capture overhead, exact at any speed, crashes, storage, memory",
    )
    rounds, clicks, fields = (1, 4, 1) if smoke else (8, 2 * len(CLICKED), len(TYPED))
    with isolated_home() as home, DemoSite() as site, ThreadPoolExecutor(1) as pool:
        overhead = pool.submit(asyncio.run, _overhead(site.url, rounds, clicks, fields))
        if not smoke:
            overhead.result()  # the recording then runs alone; a smoke run overlaps them
        seconds, every = (2.0, 0.5) if smoke else (minutes * 60, 2.0)
        recording = _record_in_child(home, site.url, seconds, every)
        pairs = overhead.result()
    _add_overhead(section, pairs)
    _add_storage(section, recording)
    _add_memory(section, recording)
    _add_speeds(section, smoke)
    _add_kills(section, smoke)
    if smoke:
        section.notes.append("Smoke run: the overhead rounds ran alongside the recording.")
    return section


def main() -> None:
    cli_main(
        __doc__,
        measure,
        smoke_help="a few seconds, tiny sizes",
        options=lambda parser: parser.add_argument(
            "--minutes", type=float, default=10.0, help="how long to record (default: 10)"
        ),
    )


if __name__ == "__main__":
    main()
