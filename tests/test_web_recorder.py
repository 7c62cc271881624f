"""Recording demonstrations in a real headless Chromium against the bundled demo app."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import chromium_with_cdp, wait_for
from conftest import REPO
from playwright.async_api import Page, async_playwright

from desktop_app.adapters.browser.locators import to_playwright
from desktop_app.app import Services, open_services, record_web
from desktop_app.core.models import ActionKind, LocatorStrategy, Trajectory
from desktop_app.demo_site.server import DEMO_PASSWORD, DEMO_USERNAME, DemoSite
from desktop_app.settings import load_settings

pytestmark = pytest.mark.slow

HUMAN_CLICK_MS = 120  # a person holds the button down about this long


@pytest.fixture
def site() -> Iterator[DemoSite]:
    with DemoSite() as demo:
        yield demo


async def _record(
    services: Services, url: str, user: Callable[[Page], Awaitable[None]], intent: str = ""
) -> Trajectory:
    """Record while *user* acts on the page, then stop."""
    stop = asyncio.Event()
    tasks: list[asyncio.Task[None]] = []

    async def act(page: Page) -> None:
        try:
            await user(page)
        finally:
            stop.set()

    trajectory = await record_web(
        services,
        url=url,
        intent=intent,
        headless=True,
        stop=stop,
        on_started=lambda _id, page: tasks.append(asyncio.create_task(act(page))),
    )
    await tasks[0]  # re-raises what went wrong in the user's actions
    return trajectory


async def _sign_in(page: Page) -> None:
    await page.get_by_label("Username").click(delay=HUMAN_CLICK_MS)
    await page.get_by_label("Username").press_sequentially(DEMO_USERNAME, delay=15)
    await page.get_by_label("Password").click(delay=HUMAN_CLICK_MS)
    await page.get_by_label("Password").press_sequentially(DEMO_PASSWORD, delay=15)
    await page.get_by_role("button", name="Sign in").click(delay=HUMAN_CLICK_MS)
    await page.wait_for_url("**/contacts")


async def _create_contact(page: Page) -> None:
    await _sign_in(page)
    await page.get_by_test_id("new-contact").click(delay=HUMAN_CLICK_MS)
    await page.wait_for_url("**/contacts/new")
    await page.get_by_text("New contact", exact=True).last.click(delay=HUMAN_CLICK_MS)  # noise
    name = page.get_by_label("Full name")
    await name.click(delay=HUMAN_CLICK_MS)  # a focus click: noise
    await name.press_sequentially("Jane Doe", delay=15)
    await page.get_by_label("Email").click(delay=HUMAN_CLICK_MS)
    await page.get_by_label("Email").press_sequentially("jane@example.test", delay=15)
    await page.get_by_label("Company").select_option("Globex")
    await page.get_by_label("Subscribe to newsletter").check()
    await page.get_by_role("button", name="Save").click(delay=HUMAN_CLICK_MS)
    await page.wait_for_url("**/contacts/*")
    await page.get_by_text("Contact Jane Doe created").wait_for()


def _grep(root: Path, needle: str) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def test_recording_a_new_contact(home: Path, site: DemoSite) -> None:
    async def scenario() -> tuple[Trajectory, int, list[int]]:
        with open_services(load_settings(), write=True) as services:
            trajectory = await _record(
                services, site.url + "/login", _create_contact, intent="Create a contact"
            )
            raw = services.trajectories.raw_events(trajectory.id)
            stored = services.trajectories.get(trajectory.id)
            assert stored == trajectory
            sizes = [
                services.media.path(e.before.screenshot).stat().st_size
                for e in trajectory.events
                if e.before and e.before.screenshot
            ]
            return trajectory, len(raw), sizes

    trajectory, raw_count, shot_sizes = asyncio.run(scenario())
    events = trajectory.events
    assert [e.action for e in events] == [
        ActionKind.NAVIGATE,
        ActionKind.FILL,
        ActionKind.FILL,
        ActionKind.CLICK,
        ActionKind.CLICK,
        ActionKind.FILL,
        ActionKind.FILL,
        ActionKind.SELECT,
        ActionKind.CHECK,
        ActionKind.CLICK,
    ]
    assert raw_count > len(events)  # the raw stream, noise included, is kept beside
    assert events[0].typed is True and events[0].url == site.url + "/login"
    assert [e.value for e in events if e.action is ActionKind.FILL][::2] == ["demo", "Jane Doe"]
    assert events[2].is_secret
    assert events[6].value == "jane@example.test"
    assert events[7].value == "Globex"
    assert not trajectory.incomplete and trajectory.intent == "Create a contact"
    # what each action led to
    assert events[3].after is not None and events[3].after.url == site.url + "/contacts"
    assert events[9].after is not None and events[9].after.url.startswith(site.url + "/contacts/")
    assert events[9].after.aria_snapshot and "Jane Doe" in events[9].after.aria_snapshot
    # a screenshot for every step, small enough
    assert len(shot_sizes) == len(events)
    assert max(shot_sizes) < 300_000
    # the password never reaches the data directory
    assert site.contacts()[-1]["full_name"] == "Jane Doe"
    assert _grep(home, DEMO_PASSWORD) == []
    assert _grep(home, "jane@example.test")  # the search does look inside the files
    _locators_resolve_to_one_element(site, trajectory)


def _locators_resolve_to_one_element(site: DemoSite, trajectory: Trajectory) -> None:
    """Every recorded locator finds exactly the recorded element on the page as it was."""

    async def check() -> None:
        async with async_playwright() as pw:
            from browser_support import CHROMIUM

            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            signed_out = await browser.new_page()
            signed_in = await browser.new_page()
            await signed_in.goto(site.url + "/login")
            await signed_in.get_by_label("Username").fill(DEMO_USERNAME)
            await signed_in.get_by_label("Password").fill(DEMO_PASSWORD)
            await signed_in.get_by_role("button", name="Sign in").click()
            await signed_in.wait_for_url("**/contacts")
            for event in trajectory.events:
                if event.target is None or event.before is None:
                    continue
                url = event.before.url or ""
                page = signed_out if url.endswith("/login") else signed_in
                if page.url != url:
                    await page.goto(url)
                strategies = {loc.strategy for loc in event.target.locators}
                assert len(strategies) >= 4, (event.action, event.target.locators)
                assert LocatorStrategy.CSS in strategies and LocatorStrategy.XPATH in strategies
                first = None
                for loc in event.target.locators:
                    found = to_playwright(page, loc)
                    assert await found.count() == 1, loc.describe()
                    handle = await found.element_handle()
                    if first is None:
                        first = handle
                    else:
                        same = await page.evaluate("([a, b]) => a === b", [first, handle])
                        assert same, f"{loc.describe()} finds another element"
            await browser.close()

    asyncio.run(check())


def test_a_missing_browser_is_a_clear_error_and_nothing_is_written(
    home: Path, monkeypatch: pytest.MonkeyPatch, procedura: Any
) -> None:
    monkeypatch.setenv("PROCEDURA_BROWSER", str(home / "no-such-chrome"))
    result = procedura("record", "web", "--url", "http://127.0.0.1:9/", "--headless")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: PROCEDURA_BROWSER=")
    assert "install Chromium" in result.stderr and result.stderr.count("\n") == 1
    assert json.loads(procedura("trajectories", "list", "--json").stdout) == []


def test_nothing_listening_at_the_attach_url(procedura: Any) -> None:
    result = procedura("record", "web", "--attach", "http://127.0.0.1:9", "--headless")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: could not attach to a browser at http://127.0.0.1:9")
    assert "--remote-debugging-port=9222" in result.stderr


def _start_cli_recording(cdp: str, out: Path | None = None) -> subprocess.Popen[str]:
    args = [
        sys.executable,
        "-m",
        "desktop_app",
        "record",
        "web",
        "--attach",
        cdp,
        "--intent",
        "Sign in",
    ]
    if out is not None:
        args += ["--out", str(out)]
    return subprocess.Popen(
        args,
        cwd=REPO,
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def _user_over_cdp(cdp: str, url: str, act: Callable[[Page], Awaitable[None]]) -> None:
    async with async_playwright() as pw:
        browser = await pw.chromium.connect_over_cdp(cdp)
        page = browser.contexts[0].pages[0]
        await page.goto(url)
        await act(page)


def _signed_in_is_stored(home: Path) -> bool:
    """Whether the recorder has stored the click on "Sign in" and where it led."""
    with open_services(load_settings(), write=False) as services:
        for summary in services.trajectories.list():
            for event in services.trajectories.raw_events(summary.id):
                after = event.after.url if event.after else ""
                if event.action is ActionKind.CLICK and (after or "").endswith("/contacts"):
                    return True
    return False


def test_sigint_saves_the_recording(home: Path, site: DemoSite, tmp_path: Path) -> None:
    out = tmp_path / "signin.json"
    with chromium_with_cdp(tmp_path / "profile") as cdp:
        recorder = _start_cli_recording(cdp, out)
        try:
            assert recorder.stderr is not None
            assert recorder.stderr.readline().startswith("recording ")

            async def user() -> None:
                await _user_over_cdp(cdp, site.url + "/login", _sign_in)
                await wait_for(lambda: _signed_in_is_stored(home), what="the sign-in to be stored")

            asyncio.run(user())
            recorder.send_signal(signal.SIGINT)
            stdout, stderr = recorder.communicate(timeout=60)
        finally:
            if recorder.poll() is None:
                recorder.kill()
    assert recorder.returncode == 0, stderr
    assert "recorded " in stdout and "procedura trajectories show" in stdout
    document = json.loads(out.read_text())
    actions = [e["action"] for e in document["events"]]
    assert actions[-3:] == ["fill", "fill", "click"]
    assert document["incomplete"] is False
    assert DEMO_PASSWORD not in out.read_text()


def test_kill_9_keeps_the_events_so_far(
    home: Path, site: DemoSite, tmp_path: Path, procedura: Any
) -> None:
    with chromium_with_cdp(tmp_path / "profile") as cdp:
        recorder = _start_cli_recording(cdp)
        try:
            assert recorder.stderr is not None
            assert recorder.stderr.readline().startswith("recording ")

            async def user() -> None:
                await _user_over_cdp(cdp, site.url + "/login", _sign_in)
                await wait_for(lambda: _signed_in_is_stored(home), what="the sign-in to be stored")

            asyncio.run(user())
            recorder.kill()  # SIGKILL: no chance to finish
            recorder.communicate(timeout=30)
        finally:
            if recorder.poll() is None:
                recorder.kill()
    listed = json.loads(procedura("trajectories", "list", "--json").stdout)
    assert len(listed) == 1 and listed[0]["incomplete"] is True
    shown = procedura("trajectories", "show", listed[0]["id"]).stdout
    assert "incomplete: the recording ended abruptly" in shown
    assert "= 'demo'" in shown and "[secret]" in shown and 'role=button[name="Sign in"]' in shown
