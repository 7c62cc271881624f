"""Replay overhead on the happy path: Procedura's engine against a plain Playwright script.

Both drive the same headless Chromium against the demo app doing the create-contact task, in
alternation within one process (the machine's noise hits both alike). Reports the median wall
time per step of each, their ratio (goal <= 1.3), and Procedura's LLM calls (goal 0).

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


async def plain_script(page: Page, url: str, name: str) -> None:
    """The task as a person would write it with Playwright (role locators, auto-waiting)."""
    await page.goto(f"{url}/login", wait_until="domcontentloaded")
    await page.get_by_role("textbox", name="Username").fill(DEMO_USERNAME)
    await page.get_by_role("textbox", name="Password").fill(DEMO_PASSWORD)
    await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_url(f"{url}/contacts")
    await page.get_by_test_id("new-contact").click()
    await page.wait_for_url(f"{url}/contacts/new")
    await page.get_by_role("textbox", name="Full name").fill(name)
    await page.get_by_role("textbox", name="Email").fill("b@example.test")
    await page.get_by_role("combobox", name="Company").select_option("Globex")
    await page.get_by_role("checkbox", name="Subscribe to newsletter").set_checked(True)
    await page.get_by_role("button", name="Save", exact=True).click()
    await page.get_by_text(f"Contact {name} created").wait_for()


async def _measure(rounds: int) -> dict[str, float]:
    with isolated_home(), DemoSite() as site, services() as sv:
        version = approved(sv, "create-contact")
        workflow = rebase(version.workflow, site.url)
        version = version.model_copy(update={"workflow": workflow})
        session = await open_browser(headless=True)
        plain_times: list[float] = []
        engine_times: list[float] = []
        calls = 0
        try:
            for i in range(rounds):
                context = await session.browser.new_context() if session.browser else None
                assert context is not None
                page = await context.new_page()
                start = time.perf_counter()
                await plain_script(page, site.url, f"Plain {i}")
                plain_times.append((time.perf_counter() - start) / STEPS)
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
    plain = median(plain_times)
    engine = median(engine_times)
    return {"plain": plain * 1000, "engine": engine * 1000, "calls": calls}


def measure(smoke: bool = False, rounds: int | None = None) -> Section:
    """Alternated rounds of the plain script and the engine (9, or 1 for a smoke run)."""
    rounds = rounds or (1 if smoke else 9)
    figures = asyncio.run(_measure(rounds))
    section = Section("replay_overhead", "Replay overhead: Procedura vs a plain Playwright script")
    section.add("plain script, per step", figures["plain"], "ms")
    section.add("procedura run, per step", figures["engine"], "ms")
    section.add("ratio", figures["engine"] / figures["plain"], "x", "<= 1.3")
    section.add("LLM calls", figures["calls"], "calls", "== 0", f"over {rounds} runs")
    section.notes.append(
        f"create-contact ({STEPS} steps) on the demo app, headless Chromium, {rounds} alternated "
        "rounds in one process; medians of wall time per step (the engine's includes writing "
        "the run record and its steps to SQLite)"
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
