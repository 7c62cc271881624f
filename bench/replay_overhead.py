"""Replay overhead on the happy path: Procedura's engine against hand-written Playwright scripts.

All drive the same headless Chromium against the demo app doing the create-contact task, in
alternation within one process (the machine's noise hits them alike). Two scripts: a plain one
(acts as soon as Playwright's auto-waiting lets it, closes at once) and a careful one (waits for
the network to be idle after each page load and before it closes, as a script must on apps that
set themselves up after ``load`` or save late). Reports the median wall time per step of each,
the engine's ratio to both (goal <= 1.3 against the plain script), and its LLM calls (goal 0).

    .venv/bin/python bench/replay_overhead.py [--smoke] [--rounds 9]
"""

from __future__ import annotations

import asyncio
import time

from common import Section, isolated_home, median
from common import main as cli_main
from playwright.async_api import Page
from replay_support import approved, services

from desktop_app.adapters.browser.launch import open_browser
from desktop_app.adapters.browser.replay_page import PlaywrightPage
from desktop_app.core.replay.engine import Replayer, ReplayOptions
from desktop_app.core.replay.parameters import bind_parameters
from desktop_app.core.replay.render import rebase
from desktop_app.demo_site import DemoSite
from desktop_app.demo_site.server import DEMO_PASSWORD, DEMO_USERNAME
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
                calls += outcome.run.llm_calls
                await context.close()
        finally:
            await session.close()
    return {
        "plain": median(plain_times) * 1000,
        "careful": median(careful_times) * 1000,
        "engine": median(engine_times) * 1000,
        "calls": calls,
    }


def measure(smoke: bool = False, rounds: int | None = None) -> Section:
    """Alternated rounds of the plain script and the engine (9, or 1 for a smoke run)."""
    rounds = rounds or (1 if smoke else 9)
    figures = asyncio.run(_measure(rounds))
    section = Section("replay_overhead", "Replay overhead: Procedura vs a plain Playwright script")
    section.add("plain script, per step", figures["plain"], "ms")
    section.add("careful script, per step", figures["careful"], "ms")
    section.add("procedura run, per step", figures["engine"], "ms")
    section.add("ratio", figures["engine"] / figures["plain"], "x", "<= 1.3")
    section.add("ratio to the careful script", figures["engine"] / figures["careful"], "x")
    section.add("LLM calls", figures["calls"], "calls", "== 0", f"over {rounds} runs")
    section.notes.append(
        f"create-contact ({STEPS} steps) on the demo app, headless Chromium, {rounds} alternated "
        "rounds in one process; medians of wall time per step (the engine's includes writing "
        "the run record and its steps to SQLite, and waiting for each page to be ready and for "
        "the app to finish before the end; the careful script waits for networkidle instead)"
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
