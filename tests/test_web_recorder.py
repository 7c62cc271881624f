"""Recording demonstrations in a real headless Chromium against the bundled demo app."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from browser_support import CHROMIUM, LAUNCH_ARGS, chromium_with_cdp, wait_for
from conftest import REPO, Cli
from demo_tasks import create_contact, record_task, sign_in
from playwright.async_api import Page, async_playwright
from recording_support import recorder_command

from desktop_app.adapters.browser.locators import to_playwright
from desktop_app.app import open_services, record_web
from desktop_app.core.models import ActionKind, LocatorStrategy, Trajectory
from desktop_app.core.recording import clean_events
from desktop_app.demo_site import DEMO_PASSWORD, DEMO_USERNAME, DemoSite
from desktop_app.settings import load_settings

pytestmark = pytest.mark.slow


@pytest.fixture
def site() -> Iterator[DemoSite]:
    with DemoSite() as demo:
        yield demo


def _grep(root: Path, needle: str) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def test_recording_a_new_contact(home: Path, site: DemoSite) -> None:
    async def scenario() -> tuple[Trajectory, int, list[int]]:
        with open_services(load_settings(), write=True) as services:
            trajectory = await record_task(
                services, site.url + "/login", create_contact, intent="Create a contact"
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
    # what the save did, as the page saw it: the form posted, the new page's message
    save = events[9].effects
    assert save is not None and save.left_page
    assert [(r.method, r.path) for r in save.requests] == [("POST", "/contacts/new")]
    assert [t.text for t in save.texts_added if t.role == "status"] == ["Contact Jane Doe created"]
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
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
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
    args = recorder_command(cdp, "Sign in")
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
            for event in clean_events(services.trajectories.raw_events(summary.id)):
                after = event.after.url if event.after else ""
                if event.action is ActionKind.CLICK and (after or "").endswith("/contacts"):
                    return True
    return False


@contextmanager
def _signed_in_while_the_cli_records(
    home: Path, site: DemoSite, tmp_path: Path, out: Path | None = None
) -> Iterator[tuple[subprocess.Popen[str], subprocess.Popen[bytes]]]:
    """``procedura record web --attach`` runs while a person signs in to the demo app; yields
    the recorder and the browser once the sign-in is stored."""
    browsers: list[subprocess.Popen[bytes]] = []
    with chromium_with_cdp(tmp_path / "profile", browsers) as cdp:
        recorder = _start_cli_recording(cdp, out)
        try:
            assert recorder.stderr is not None
            assert recorder.stderr.readline().startswith("recording ")

            async def user() -> None:
                await _user_over_cdp(cdp, site.url + "/login", sign_in)
                await wait_for(lambda: _signed_in_is_stored(home), what="the sign-in to be stored")

            asyncio.run(user())
            yield recorder, browsers[0]
        finally:
            if recorder.poll() is None:
                recorder.kill()
                recorder.communicate(timeout=30)


def test_sigint_saves_the_recording(home: Path, site: DemoSite, tmp_path: Path) -> None:
    out = tmp_path / "signin.json"
    with _signed_in_while_the_cli_records(home, site, tmp_path, out) as (recorder, _browser):
        recorder.send_signal(signal.SIGINT)
        stdout, stderr = recorder.communicate(timeout=60)
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
    with _signed_in_while_the_cli_records(home, site, tmp_path) as (recorder, _browser):
        recorder.kill()  # SIGKILL: no chance to finish
        recorder.communicate(timeout=30)
    listed = json.loads(procedura("trajectories", "list", "--json").stdout)
    assert len(listed) == 1 and listed[0]["incomplete"] is True
    shown = procedura("trajectories", "show", listed[0]["id"]).stdout
    assert "incomplete: the recording ended abruptly" in shown
    assert "= 'demo'" in shown and "[secret]" in shown and 'role=button[name="Sign in"]' in shown


def test_a_browser_that_dies_mid_recording_keeps_what_was_recorded(
    home: Path, site: DemoSite, tmp_path: Path
) -> None:
    with _signed_in_while_the_cli_records(home, site, tmp_path) as (recorder, browser):
        browser.kill()  # the browser crashes
        stdout, stderr = recorder.communicate(timeout=60)
    assert recorder.returncode == 0, stderr
    assert "recorded " in stdout
    with open_services(load_settings(), write=False) as services:
        (summary,) = services.trajectories.list()
        assert not summary.incomplete and summary.event_count >= 4


def test_noise_is_dropped_and_the_raw_stream_kept(home: Path, site: DemoSite) -> None:
    async def user(page: Page) -> None:
        await page.get_by_role("heading").click(delay=120)  # plain text, changes nothing
        username = page.get_by_label("Username")
        await username.click(delay=120)  # only focuses the field
        await username.click(delay=120)
        await username.press_sequentially("demo", delay=15)
        await page.get_by_role("heading").click(delay=120)
        await page.get_by_label("Password").focus()  # the fill above ends here

    async def scenario() -> tuple[Trajectory, list[str]]:
        with open_services(load_settings(), write=True) as services:
            trajectory = await record_task(services, site.url + "/login", user)
            raw = [e.action.value for e in services.trajectories.raw_events(trajectory.id)]
            return trajectory, raw

    trajectory, raw = asyncio.run(scenario())
    assert [e.action for e in trajectory.events] == [ActionKind.NAVIGATE, ActionKind.FILL]
    assert trajectory.events[1].value == "demo"
    assert raw.count("click") == 4
    shown = Cli()("trajectories", "show", trajectory.id, "--raw").stdout
    assert f"raw stream: {len(raw)} events as observed (2 kept)" in shown
    # What each action did, as the page reported it: the clicks and the typing changed nothing.
    assert shown.count("(no visible change)") + shown.count("(changed the page's look only)") == 5


def test_closing_the_window_ends_the_recording(home: Path, site: DemoSite) -> None:
    async def scenario() -> Trajectory:
        with open_services(load_settings(), write=True) as services:

            async def user(page: Page) -> None:
                await page.get_by_label("Username").click(delay=120)
                await page.get_by_label("Username").press_sequentially("demo", delay=15)

                def typing_stored() -> bool:  # the recorder keeps typing within about a second
                    return any(
                        e.value == "demo"
                        for t in services.trajectories.list()
                        for e in services.trajectories.raw_events(t.id)
                    )

                await wait_for(typing_stored, what="the typing to be stored")
                await page.close()

            tasks: list[asyncio.Task[None]] = []
            trajectory = await asyncio.wait_for(
                record_web(
                    services,
                    url=site.url + "/login",
                    intent="",
                    headless=True,
                    on_started=lambda _id, page: tasks.append(asyncio.create_task(user(page))),
                ),
                timeout=60,
            )
            await tasks[0]
            return trajectory

    trajectory = asyncio.run(scenario())
    assert [e.action for e in trajectory.events] == [ActionKind.NAVIGATE, ActionKind.FILL]
    assert trajectory.events[-1].value == "demo" and not trajectory.incomplete


def test_a_new_tab_is_recorded_after_a_tab_switch(home: Path, site: DemoSite) -> None:
    async def user(page: Page) -> None:
        await sign_in(page)
        orders = await page.context.new_page()
        await orders.goto(site.url + "/orders")
        await orders.get_by_label("Status").select_option("Open")
        await orders.get_by_role("button", name="Filter").click(delay=120)
        await orders.wait_for_url("**status=open*")

    async def scenario() -> Trajectory:
        with open_services(load_settings(), write=True) as services:
            return await record_task(services, site.url + "/login", user)

    events = asyncio.run(scenario()).events
    kinds = [e.action for e in events]
    switch = kinds.index(ActionKind.SWITCH_TAB)
    assert kinds[switch + 1 :] == [ActionKind.NAVIGATE, ActionKind.SELECT, ActionKind.CLICK]
    assert {e.tab for e in events[switch:]} == {"tab-2"}
    assert {e.tab for e in events[:switch]} == {"tab-1"}
    assert events[switch + 1].url == site.url + "/orders"
    assert events[-1].after is not None and "status=open" in (events[-1].after.url or "")


def test_procedura_own_input_is_never_recorded(home: Path, site: DemoSite) -> None:
    from desktop_app.adapters.browser.launch import open_browser
    from desktop_app.adapters.browser.web_recorder import WebRecorder
    from desktop_app.resources import resource_path

    async def scenario() -> Trajectory:
        with open_services(load_settings(), write=True) as services:
            browser = await open_browser(headless=True)
            try:
                session = services.trajectories.start_recording(Trajectory(intent="own input"))
                recorder = WebRecorder(
                    browser, session, services.media, resource_path("recorder", "capture.js")
                )
                page = await recorder.start(site.url + "/login")
                username = page.get_by_label("Username")
                await recorder.inject(page, lambda: username.press_sequentially("robot"))
                await recorder.inject(page, lambda: page.get_by_label("Password").click())
                await username.fill("")
                await username.press_sequentially("demo", delay=15)
                await page.get_by_label("Password").focus()
                await recorder.stop()
                return session.finish()
            finally:
                await browser.close()

    trajectory = asyncio.run(scenario())
    assert [(e.action, e.value) for e in trajectory.events] == [
        (ActionKind.NAVIGATE, None),
        (ActionKind.FILL, "demo"),
    ]


def test_a_named_profile_keeps_what_the_site_stored(home: Path) -> None:
    """The consent given in one recording is remembered in the next with the same profile."""

    async def accept(page: Page) -> None:
        await page.get_by_test_id("consent-accept").click(delay=120)
        await page.get_by_test_id("consent-overlay").wait_for(state="detached")

    async def look(page: Page) -> None:
        await page.get_by_label("Username").click(delay=120)  # no banner in the way

    async def scenario(site: DemoSite) -> tuple[Trajectory, Trajectory, Trajectory]:
        with open_services(load_settings(), write=True) as services:
            first = await record_task(services, site.url + "/login", accept, profile="work")
            second = await record_task(services, site.url + "/login", look, profile="work")
            fresh = await record_task(services, site.url + "/login", accept)
            return first, second, fresh

    with DemoSite(variants=["consent-banner"]) as site:
        first, second, fresh = asyncio.run(scenario(site))

    def accepted(trajectory: Trajectory) -> bool:
        return any(
            loc.value == "consent-accept"
            for event in trajectory.events
            if event.target is not None
            for loc in event.target.locators
        )

    # `accept` fails without a banner to accept, `look` fails with one in the way; what the
    # recordings say (snapshots are best effort under load, clicks are not):
    assert accepted(first) and not accepted(second)  # remembered by the profile
    assert accepted(fresh)  # a fresh profile knows nothing
    assert (home / "profiles" / "work").is_dir()


def test_a_field_marked_sensitive_after_typing_is_scrubbed(home: Path, site: DemoSite) -> None:
    note = "my PIN is 4242-9999"

    async def scenario() -> Trajectory:
        with open_services(load_settings(), write=True) as services:

            def stored(text: str) -> bool:
                return any(
                    text in e.model_dump_json()
                    for t in services.trajectories.list()
                    for e in services.trajectories.raw_events(t.id)
                )

            async def user(page: Page) -> None:
                await sign_in(page)
                await page.get_by_test_id("new-contact").click(delay=120)
                notes = page.get_by_label("Notes")
                await notes.click(delay=120)
                await notes.press_sequentially(note, delay=15)
                await wait_for(lambda: stored(note), what="the note to be stored")  # it was
                await notes.press("Alt+Shift+S")  # "oh, that is sensitive"
                await wait_for(lambda: not stored(note), what="the note to be scrubbed")
                await notes.press_sequentially(" and 1234", delay=15)
                await page.get_by_label("Full name").click(delay=120)

            return await record_task(services, site.url + "/login", user)

    trajectory = asyncio.run(scenario())
    notes = [e for e in trajectory.events if e.target and "Notes" in str(e.target.locators)]
    assert notes and all(e.is_secret for e in notes)
    assert _grep(home, "4242-9999") == [] and _grep(home, "and 1234") == []
