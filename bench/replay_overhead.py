"""Replay overhead on the happy path: Procedura's engine against hand-written Playwright scripts.

All drive the same headless Chromium against the demo app doing the create-contact task, in
alternation within one process (the machine's noise hits them alike). Two scripts: a plain one
(acts as soon as Playwright's auto-waiting lets it, closes at once) and a careful one (waits for
the network to be idle after each page load and before it closes, as Playwright's own advice
for apps that set themselves up after ``load`` or save late goes). Reports the median wall time
per step of each, the engine's ratio to both and its LLM calls (goal 0), and the engine's time
without its waits for the app (the run record's ``waited_ms`` and ``closing_wait_ms``).

Which script is the reference is measured, not assumed: the same three then add an item to a
shopping list that gets ready late or saves late (``tests/late_app.py``: handlers attached
1.5 s after ``load``, an app a loader fetches late, a save debounced by 600 ms, a save behind a
late request), and the list's own storage, as the server heard it once the browser closed,
says whose item was kept. The goal (<= 1.2x) is set against the careful script, the cheapest
hand-written one that waits at all; the plain script, which waits for nothing, is the floor.

    .venv/bin/python bench/replay_overhead.py [--smoke] [--rounds 9]
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from common import Section, isolated_home, median
from common import main as cli_main
from late_app import MODES_TO_WAIT_FOR, STORED, ListHandler, add_item
from playwright.async_api import Page
from replay_support import approve, approved, run, services, serving

from desktop_app.adapters.browser.launch import open_browser
from desktop_app.adapters.browser.replay_page import PlaywrightPage
from desktop_app.core.replay.engine import Replayer, ReplayOptions
from desktop_app.core.replay.parameters import bind_parameters
from desktop_app.core.replay.render import rebase
from desktop_app.demo_site import DEMO_PASSWORD, DEMO_USERNAME, DemoSite
from desktop_app.resources import resource_path

STEPS = 10


async def script(page: Page, url: str, name: str, *, careful: bool = False) -> None:
    """The task as a person would write it with Playwright (role locators, auto-waiting).
    *careful*: waiting for the network to be idle on every page before acting and at the end
    (Playwright's ``networkidle``: no request for half a second)."""
    loaded = "networkidle" if careful else "load"
    await page.goto(f"{url}/login", wait_until="networkidle" if careful else "domcontentloaded")
    await page.get_by_role("textbox", name="Username").fill(DEMO_USERNAME)
    await page.get_by_role("textbox", name="Password").fill(DEMO_PASSWORD)
    await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_url(f"{url}/contacts", wait_until=loaded)
    await page.get_by_test_id("new-contact").click()
    await page.wait_for_url(f"{url}/contacts/new", wait_until=loaded)
    await page.get_by_role("textbox", name="Full name").fill(name)
    await page.get_by_role("textbox", name="Email").fill("b@example.test")
    await page.get_by_role("combobox", name="Company").select_option("Globex")
    await page.get_by_role("checkbox", name="Subscribe to newsletter").set_checked(True)
    await page.get_by_role("button", name="Save", exact=True).click()
    await page.get_by_text(f"Contact {name} created").wait_for()
    if careful:
        await page.wait_for_load_state("networkidle")


async def _measure(rounds: int) -> dict[str, float]:
    with isolated_home(), DemoSite() as site, services() as sv:
        version = approved(sv, "create-contact")
        workflow = rebase(version.workflow, site.url)
        version = version.model_copy(update={"workflow": workflow})
        session = await open_browser(headless=True)
        plain_times: list[float] = []
        careful_times: list[float] = []
        engine_times: list[float] = []
        waits: list[float] = []
        calls = 0
        try:
            for i in range(rounds):
                context = await session.browser.new_context() if session.browser else None
                assert context is not None
                page = await context.new_page()
                start = time.perf_counter()
                await script(page, site.url, f"Plain {i}")
                plain_times.append((time.perf_counter() - start) / STEPS)
                await context.close()

                context = await session.browser.new_context()
                page = await context.new_page()
                start = time.perf_counter()
                await script(page, site.url, f"Careful {i}", careful=True)
                careful_times.append((time.perf_counter() - start) / STEPS)
                await context.close()

                context = await session.browser.new_context()
                page = await context.new_page()
                port = PlaywrightPage(
                    page, workflow.domains, resource_path("recorder", "capture.js")
                )
                await port.install(context)
                params = bind_parameters(
                    workflow, {"full_name": f"Engine {i}"}, secrets={"password": DEMO_PASSWORD}
                )
                replayer = Replayer(
                    browser=port,
                    runs=sv.runs,
                    media=sv.media,
                    options=ReplayOptions(use_llm=False),
                )
                start = time.perf_counter()
                outcome = await replayer.run(version, params)
                engine_times.append((time.perf_counter() - start) / STEPS)
                assert outcome.run.status.value == "succeeded", outcome.run.error
                waited_ms = sum(s.waited_ms for s in outcome.run.steps)
                waits.append((waited_ms + outcome.run.closing_wait_ms) / 1000 / STEPS)
                calls += outcome.run.llm_calls
                await context.close()
        finally:
            await session.close()
    return {
        "plain": median(plain_times) * 1000,
        "careful": median(careful_times) * 1000,
        "engine": median(engine_times) * 1000,
        "waits": median(waits) * 1000,
        "bare": median([t - w for t, w in zip(engine_times, waits, strict=True)]) * 1000,
        "calls": calls,
    }


async def _script_adds(url: str, item: str, *, careful: bool) -> None:
    """A hand-written script adding *item* to the list at *url*, closing when it is done."""
    from desktop_app.adapters.browser.launch import open_browser

    session = await open_browser(headless=True)
    try:
        assert session.browser is not None
        context = await session.browser.new_context()
        page = await context.new_page()
        await page.goto(url, wait_until="networkidle" if careful else "load")
        field = page.get_by_role("textbox", name="New item")
        await field.fill(item)
        await field.press("Enter")
        await page.get_by_text(item).wait_for(timeout=5000)
        if careful:
            await page.wait_for_load_state("networkidle")
        await context.close()
    finally:
        await session.close()


def _kept(modes: tuple[str, ...]) -> dict[str, int]:
    """Of *modes* (the late app's, each a run must wait in), how many kept the item (the app's
    storage, as the server heard it once the browser closed), by the plain script, the careful
    one and the engine."""
    kept = {"plain": 0, "careful": 0, "engine": 0}
    with isolated_home(), serving(ListHandler) as site, services() as sv:
        for mode in modes:
            url = f"{site}/?mode={mode}"
            for who in kept:
                item = f"{who.title()} {mode}"
                STORED.clear()
                if who == "engine":
                    version = approve(sv, add_item(mode))
                    result = run(sv, version, site, values={"item": item})
                    assert result.run.status.value == "succeeded", result.run.error
                else:
                    # A script that gave up (its item never shown) kept nothing.
                    with contextlib.suppress(Exception):
                        asyncio.run(_script_adds(url, item, careful=who == "careful"))
                kept[who] += bool(STORED) and item in STORED[-1]
    return kept


def measure(smoke: bool = False, rounds: int | None = None) -> Section:
    """Alternated rounds of the plain script and the engine (9, or 1 for a smoke run)."""
    rounds = rounds or (1 if smoke else 9)
    figures = asyncio.run(_measure(rounds))
    modes = ("debounce",) if smoke else MODES_TO_WAIT_FOR
    kept = _kept(modes)
    count = len(modes)
    section = Section("replay_overhead", "Replay overhead: Procedura vs hand-written Playwright")
    section.add("plain script, per step", figures["plain"], "ms")
    section.add("careful script, per step", figures["careful"], "ms")
    section.add("procedura run, per step", figures["engine"], "ms")
    section.add("of which waiting for the app", figures["waits"], "ms", "", "in the run record")
    careful = figures["engine"] / figures["careful"]
    section.add("ratio to the careful script", careful, "x", "<= 1.2")
    section.add("ratio to the plain script", figures["engine"] / figures["plain"], "x")
    section.add(
        "ratio to the plain script, without the waits",
        figures["bare"] / figures["plain"],
        "x",
        "",
        "what the engine's own machinery costs",
    )
    section.add("LLM calls", figures["calls"], "calls", "== 0", f"over {rounds} runs")
    section.add("late apps: item kept by procedura", kept["engine"], f"of {count}", f"== {count}")
    section.add("late apps: item kept by the careful script", kept["careful"], f"of {count}")
    section.add("late apps: item kept by the plain script", kept["plain"], f"of {count}")
    section.notes.append(
        f"create-contact ({STEPS} steps) on the demo app, headless Chromium, {rounds} alternated "
        "rounds in one process; medians of wall time per step (the engine's includes writing "
        "the run record and its steps to SQLite, and waiting for each page to be ready and for "
        "the app to finish before the end; the careful script waits for networkidle instead)"
    )
    section.notes.append(
        "Late apps: tests/late_app.py in the modes " + ", ".join(modes) + ", one "
        "item each by each runner, judged by the list's storage as its server heard it after "
        "the browser closed. A script's wait that comes too early (networkidle before a timer "
        "fires) loses the item as surely as no wait."
    )
    return section


def main() -> None:
    cli_main(
        __doc__,
        measure,
        smoke_help="one round, for CI",
        options=lambda parser: parser.add_argument("--rounds", type=int, default=None),
    )


if __name__ == "__main__":
    main()
