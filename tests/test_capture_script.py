"""The recorder's injected capture script (``resources/recorder/capture.js``) in a real Chromium.

Each scenario acts like a person with Playwright (mouse clicks, key presses, typing) on the
fixture pages in ``tests/pages/`` and checks what the script reported through the
``__proceduraEmit`` binding: which payloads, in which order, with which targets, and that every
locator it recorded finds exactly the element acted on.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator
from typing import Any

import pytest
from capture_harness import (
    CAPTURE_SCRIPT,
    CaptureHarness,
    Reports,
    Session,
    collapse_fills,
    harness_for_module,
    locator_problems,
)
from playwright.async_api import Frame, Page

from desktop_app.adapters.browser.locators import to_playwright
from desktop_app.core.items import item_locator
from desktop_app.core.models.target import Fingerprint

pytestmark = pytest.mark.slow

COMMON_FIELDS = {"id", "type", "t", "url", "title", "frame"}
#: What every action payload says of its beginning.
BEGINNING = {
    "action",
    "t_start",
    "ready",
    "ready_drawing",
    "ready_drawn",
    "shown",
    "address_drawn",
    "masks",
    "scroll",
}
FIELDS_BY_TYPE = {
    "click": {"target", "button", "modifiers"} | BEGINNING,
    "double_click": {"target"} | BEGINNING,
    "fill": {"target", "value"} | BEGINNING,
    "select": {"target", "value", "option_value", "options"} | BEGINNING,
    "check": {"target"} | BEGINNING,
    "uncheck": {"target"} | BEGINNING,
    "upload": {"target", "files"} | BEGINNING,
    "press": {"target", "key", "modifiers"} | BEGINNING,
    "submit": {"target", "submitter"},
    "scroll": {"dx", "dy"},
    "sensitive_marked": {"target"},
    "effects": {
        "ref",
        "settled",
        "dom_changed",
        "texts_known",
        "texts_added",
        "texts_removed",
        "items_added",
        "items_removed",
        "dialogs_opened",
        "dialogs_closed",
        "browser_dialogs",
        "values_changed",
        "requests",
        "left_page",
        "first_change",
        "first_change_frame",
        "url_after",
        "title_after",
    },
    "loaded": {"ref", "masks", "shown"},
}
#: Reports of what the page did (effects.js), not of what the person did.
OBSERVATIONS = ("effects", "loaded")
PASSWORD = "hunter2-Correct-Horse"
API_TOKEN = "tok_live_5ecr3tVa1ue"

#: Elements whose every recorded locator must find exactly them, on every fixture page.
CONTROLS = (
    "a, button, input:not([type=hidden]), select, textarea, [role=button], summary, h1, h2, h3"
)


@pytest.fixture(scope="module")
def harness() -> Iterator[CaptureHarness]:
    with harness_for_module() as shared:
        yield shared


def css(payload: dict[str, Any]) -> str | None:
    return (payload.get("target") or {}).get("css")


def actions(reports: Reports) -> list[dict[str, Any]]:
    """What the person did: every payload but the page's observations."""
    return [p for p in reports.payloads if p["type"] not in OBSERVATIONS]


def effects_of(reports: Reports, action: dict[str, Any]) -> dict[str, Any] | None:
    """The newest effects report about *action*, if any."""
    found = [p for p in reports.of("effects") if p["ref"] == action["action"]]
    return found[-1] if found else None


async def settled_effects(reports: Reports, action: dict[str, Any]) -> dict[str, Any]:
    """The effects report about *action* once the page settled after it."""
    await reports.wait_for(
        lambda r: any(p["ref"] == action["action"] and p["settled"] for p in r.of("effects")),
        what=f"the effects of {action['type']} to settle",
    )
    effects = effects_of(reports, action)
    assert effects is not None
    return effects


def added(effects: dict[str, Any]) -> list[str]:
    return [t["text"] for t in effects["texts_added"]]


def strategies(target: dict[str, Any]) -> list[str]:
    return [locator["strategy"] for locator in target["locators"]]


def assert_well_formed(reports: Reports) -> None:
    """Every payload has the common fields and exactly the fields of its type."""
    ids = [p["id"] for p in reports.payloads]
    assert len(ids) == len(set(ids)), "payload ids repeat"
    for payload in reports.payloads:
        expected = COMMON_FIELDS | FIELDS_BY_TYPE[payload["type"]]
        assert set(payload) == expected, payload
        assert isinstance(payload["t"], int)
        target = payload.get("target")
        if target is not None:
            assert set(target) == {"locators", "fingerprint", "sensitive", "css"}
            assert "value" not in target["fingerprint"].get("attributes", {})


async def assert_clean(session: Session, *scopes: Page | Frame) -> None:
    """No page errors and no internal errors of the script."""
    assert session.page_errors == []
    for scope in scopes:
        assert await session.internal_errors(scope) == []


async def describe(scope: Page | Frame, selector: str) -> dict[str, Any]:
    element = await scope.query_selector(selector)
    assert element is not None, selector
    target: dict[str, Any] = await scope.evaluate(
        "(el) => window.__procedura.describe(el)", element
    )
    return target


# ── forms: typing, secrets, choices ────────────────────────────────────────────────────────


def test_contact_form_flow(harness: CaptureHarness) -> None:
    async def body(session: Session) -> None:
        page = await session.open("contact.html")
        reports = session.reports
        name = page.locator("#full-name")
        await name.click()
        await name.press_sequentially("Jane")
        await asyncio.sleep(1.0)  # an idle pause: a provisional fill is sent
        await name.press_sequentially(" Doe")
        await page.locator("#password").click()
        await page.keyboard.type(PASSWORD)
        await page.locator("#token").click()
        await page.keyboard.type(API_TOKEN)
        await page.locator("input[name=newsletter]").check()
        await page.get_by_text("I accept the terms").click()  # its label
        await page.locator("input[name=newsletter]").uncheck()
        await page.locator("label", has_text="By phone").click(position={"x": 45, "y": 6})
        await page.select_option("#company", label="Globex Corporation")
        await page.set_input_files(
            "#cv", files=[{"name": "cv.pdf", "mimeType": "application/pdf", "buffer": b"%PDF"}]
        )
        await page.get_by_role("button", name="Save contact").click()
        await reports.wait_for_type("submit")
        save_click = reports.of("click")[-1]
        save_effects = await settled_effects(reports, save_click)

        payloads = reports.payloads
        assert_well_formed(reports)
        kept = collapse_fills(actions(reports))
        assert [(p["type"], css(p)) for p in kept] == [
            ("click", "#full-name"),
            ("fill", "#full-name"),
            ("click", "#password"),
            ("fill", "#password"),
            ("click", "#token"),
            ("fill", "#token"),
            ("check", 'input[name="newsletter"]'),
            ("check", "#terms"),
            ("uncheck", 'input[name="newsletter"]'),
            ("check", 'input[type="radio"][name="preferred"][value="phone"]'),
            ("select", "#company"),
            ("upload", "#cv"),
            ("click", 'button[data-testid="save-contact"]'),
            ("submit", "#new-contact"),
        ]

        # Typing "Jane Doe" with a pause: provisional fills, collapsed to one final fill.
        name_fills = [p for p in payloads if p["type"] == "fill" and css(p) == "#full-name"]
        values = [p["value"] for p in name_fills]
        assert values[0] == "Jane" and values[-1] == "Jane Doe"  # provisional, then final
        assert all("Jane Doe".startswith(value) for value in values)
        assert len({p["t_start"] for p in name_fills}) == 1
        assert len({p["action"] for p in name_fills}) == 1  # one action, reported as it goes
        final_name = next(p for p in kept if p["type"] == "fill" and css(p) == "#full-name")
        assert final_name["value"] == "Jane Doe"
        assert final_name["t_start"] <= final_name["t"]

        # Secrets: null values, sensitive targets, and the typed text nowhere at all.
        for field in ("#password", "#token"):
            fills = [p for p in payloads if p["type"] == "fill" and css(p) == field]
            assert fills
            assert all(p["value"] is None and p["target"]["sensitive"] for p in fills)
        for item in reports.items:
            assert PASSWORD not in item.raw
            assert API_TOKEN not in item.raw
            assert "hunter2" not in item.raw

        # No click for checkboxes, radios, their labels, the select or the file input.
        clicks = [css(p) for p in payloads if p["type"] == "click"]
        assert clicks == ["#full-name", "#password", "#token", 'button[data-testid="save-contact"]']

        select = reports.of("select")[0]
        assert (select["value"], select["option_value"]) == ("Globex Corporation", "globex")
        assert "Globex Corporation" in select["options"] and len(select["options"]) >= 3
        assert reports.of("upload")[0]["files"] == ["cv.pdf"]
        submit = reports.of("submit")[0]
        assert submit["submitter"]["css"] == 'button[data-testid="save-contact"]'
        assert save_click["button"] == "left" and save_click["modifiers"] == []
        # What the save did, as the page saw it: its status message, in the status role.
        assert {"text": "Contact Jane Doe created", "role": "status", "gone": False} in (
            save_effects["texts_added"]
        )
        assert save_effects["dom_changed"] is True and save_effects["left_page"] is False
        # A check's beginning is its pointerdown: the label pressed, before the change event.
        terms = next(p for p in reports.of("check") if css(p) == "#terms")
        assert terms["t_start"] <= terms["t"]
        assert await page.locator("[data-procedura-target]").count() == 1
        marked = await page.locator("[data-procedura-target]").get_attribute("data-testid")
        assert marked == "save-contact"
        await assert_clean(session, page)

    harness.scenario(body)


def test_marking_a_field_sensitive(harness: CaptureHarness) -> None:
    async def body(session: Session) -> None:
        page = await session.open("contact.html")
        reports = session.reports
        notes = page.locator("#notes")
        assert (await describe(page, "#notes"))["sensitive"] is False
        await notes.click()
        await page.keyboard.press("Alt+Shift+S")
        await page.keyboard.type("door code 4711")
        await page.locator("#full-name").click()
        await reports.wait_for_type("fill")

        marked = reports.of("sensitive_marked")
        assert len(marked) == 1 and css(marked[0]) == "#notes"
        assert marked[0]["target"]["sensitive"] is True
        assert await notes.get_attribute("data-procedura-sensitive") == "true"
        assert await notes.input_value() == "door code 4711"  # only Alt+Shift+S was prevented
        fill = reports.of("fill")[0]
        assert fill["value"] is None and fill["target"]["sensitive"] is True
        assert not any("4711" in item.raw for item in reports.items)
        assert not [p for p in reports.of("press") if p["key"].lower() == "s"]

        await notes.click()
        await page.keyboard.press("Alt+Shift+S")  # a toggle: unmarked again
        await reports.wait_for_type("sensitive_marked", count=2)
        assert reports.of("sensitive_marked")[1]["target"]["sensitive"] is False
        assert await notes.get_attribute("data-procedura-sensitive") is None
        await assert_clean(session, page)

    harness.scenario(body)


def test_sensitive_fields_by_kind(harness: CaptureHarness) -> None:
    async def body(session: Session) -> None:
        page = await session.open("contact.html")
        expected = {
            "#password": True,  # type=password
            "#token": True,  # name api_token
            "#full-name": False,
            "#email": False,
            "#notes": False,
        }
        for selector, sensitive in expected.items():
            assert (await describe(page, selector))["sensitive"] is sensitive, selector
        await page.fill("#password", PASSWORD)  # a value present while describing
        target = await describe(page, "#password")
        assert PASSWORD not in json.dumps(target)
        assert {"role", "label", "css", "xpath"} <= set(strategies(target))

    harness.scenario(body)


def test_a_secret_typed_in_an_editor_never_leaves_the_page(harness: CaptureHarness) -> None:
    async def body(session: Session) -> None:
        page = await session.open("tricky.html")
        reports = session.reports
        await page.get_by_label("Secret answer").click()
        await page.keyboard.type("blue whale")
        await page.get_by_role("button", name="Save answer").click()
        await settled_effects(reports, reports.of("click")[-1])
        fill = reports.of("fill")[0]
        assert fill["value"] is None and fill["target"]["sensitive"] is True
        row_text = reports.of("click")[-1]["target"]["fingerprint"]["nearby_text"]
        assert row_text[-1] == "Security question: favourite animal?"  # its row, sans editor
        assert not any("blue" in item.raw for item in reports.items)
        for container in ("#answer-row", ".answers", "main"):  # their texts skip the editor
            assert "blue" not in json.dumps(await describe(page, container))
        await assert_clean(session, page)

    harness.scenario(body)


def test_enter_in_a_search_box_gives_fill_then_press(harness: CaptureHarness) -> None:
    async def body(session: Session) -> None:
        page = await session.open("search.html")
        reports = session.reports
        box = page.get_by_role("searchbox", name="Search invoices")
        await box.click()
        await box.press_sequentially("acme 2024")
        async with page.expect_navigation():
            await box.press("Enter")
        await reports.wait_for_type("submit")

        done = [p for p in reports.payloads if p["type"] in ("fill", "press", "submit")]
        assert [p["type"] for p in done] == ["fill", "press", "submit"]
        fill, press, submit = done
        assert fill["value"] == "acme 2024"
        assert (press["key"], press["modifiers"]) == ("Enter", [])
        assert css(press) == css(fill) == 'input[name="q"]'
        assert submit["submitter"]["css"] == 'form[role="search"] button'  # the default button
        assert not reports.of("click")[1:]  # Enter's implicit click on "Search" is not a click
        assert_well_formed(reports)

    harness.scenario(body)


def test_keys_and_double_click(harness: CaptureHarness) -> None:
    async def body(session: Session) -> None:
        page = await session.open("contact.html")
        reports = session.reports
        await page.locator("#full-name").click()
        await page.keyboard.type("Ann")  # typing is never a press
        await page.keyboard.press("Control+s")
        await page.keyboard.press("Shift+Tab")
        await page.keyboard.press("Escape")
        await page.keyboard.press("F2")
        await page.locator("#notes").click()
        await page.keyboard.press("Enter")  # a new line in a textarea is typing
        await page.keyboard.type("x")
        await page.get_by_role("heading", name="New contact").dblclick()
        await reports.wait_for_type("double_click")

        presses = [(p["key"], p["modifiers"]) for p in reports.of("press")]
        assert presses == [("s", ["Control"]), ("Tab", ["Shift"]), ("Escape", []), ("F2", [])]
        done = actions(reports)
        flushed = done[[p["type"] for p in done].index("press") - 1]
        assert (flushed["type"], flushed["value"]) == ("fill", "Ann")  # flushed before the press
        assert css(reports.of("press")[0]) == "#full-name"
        notes_fill = [p for p in reports.of("fill") if css(p) == "#notes"]
        assert notes_fill[-1]["value"] == "\nx"
        double = reports.of("double_click")
        assert len(double) == 1 and css(double[0]) == "h1"
        assert [css(p) for p in reports.of("click")].count("h1") == 1  # the first click only
        assert_well_formed(reports)

    harness.scenario(body)


# ── what the page did: effects ─────────────────────────────────────────────────────────────


def test_what_each_action_made_the_page_do(harness: CaptureHarness) -> None:
    async def body(session: Session) -> None:
        page = await session.open("effects.html")
        reports = session.reports

        await page.get_by_text("This paragraph is plain text").click()
        plain = await settled_effects(reports, reports.of("click")[-1])
        assert plain["texts_added"] == [] and plain["texts_removed"] == []
        assert plain["dom_changed"] is False  # the recorder's own marking is not the page's

        await page.get_by_role("button", name="Show details").click()
        details = await settled_effects(reports, reports.of("click")[-1])
        # One line, nothing re-split; what only screen readers hear is no text a person saw.
        assert added(details) == ["Founded 1999, 120 employees."]
        assert details["texts_removed"] == [] and details["items_added"] == 0

        await page.get_by_role("button", name="Load more").click()
        more = await settled_effects(reports, reports.of("click")[-1])
        assert more["items_added"] == 8
        assert added(more)[:2] == ["Company 3", "Company 4"]
        assert {t["role"] for t in more["texts_added"]} == {"item"}

        await page.get_by_role("button", name="Open dialog").click()
        opened = await settled_effects(reports, reports.of("click")[-1])
        assert opened["dialogs_opened"] == 1
        assert {"text": "Confirm", "role": "heading", "gone": False} in opened["texts_added"]
        await page.get_by_role("button", name="Close").click()
        closed = await settled_effects(reports, reports.of("click")[-1])
        assert closed["dialogs_closed"] == 1 and closed["texts_added"] == []
        assert [t["text"] for t in closed["texts_removed"]] == ["Confirm", "Close"]

        async with page.expect_navigation():
            await page.get_by_role("link", name="Go to search").click()
        link_click = next(p for p in reports.of("click") if css(p) == "#to-search")
        await reports.wait_for(
            lambda r: bool((effects_of(r, link_click) or {}).get("left_page")), what="left_page"
        )
        assert_well_formed(reports)
        assert session.page_errors == []

    harness.scenario(body)


def test_what_the_person_answered_and_only_what_the_person_did(harness: CaptureHarness) -> None:
    """A library clicking a checkbox of its own as it loads is nobody's action; the browser's
    own question is noted with the answer given; a flash message without a role is a
    message; an icon's glyph word is no text."""

    async def body(session: Session) -> None:
        page = await session.open("asked.html")
        reports = session.reports
        await page.get_by_label("Subscribe").check()
        await reports.wait_for(lambda r: bool(r.of("check")), what="the person's check")
        assert [css(p) for p in reports.of("check") + reports.of("uncheck")] == ["#subscribe"]

        page.once("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
        await page.get_by_role("button", name="Delete all").click()
        deleted = await settled_effects(reports, reports.of("click")[-1])
        assert deleted["browser_dialogs"] == [
            {
                "kind": "confirm",
                "message": "Are you sure you want to delete all records?",
                "accepted": True,
            }
        ]
        assert deleted["texts_added"] == [
            {"text": "All records deleted.", "role": "status", "gone": False}
        ]
        assert session.page_errors == []

    harness.scenario(body)


def test_late_effects_go_to_the_action_that_caused_them(harness: CaptureHarness) -> None:
    """At machine speed the next action begins before the page answers the last one: what a
    request, a timer or a slow server led to still belongs to the action that started it."""

    async def body(session: Session) -> None:
        page = await session.open("causes.html")
        reports = session.reports
        other = page.get_by_role("button", name="Something else")
        for name, message in (
            ("Save with fetch", "Order saved by fetch"),
            ("Save with XHR", "Order saved by XHR"),
        ):
            mark = reports.mark()
            await page.get_by_role("button", name=name).click()
            await other.click()  # at once: the answer comes 400 ms later
            save, then = reports.since(mark).of("click")[:2]
            saved = await settled_effects(reports, save)
            assert message in added(saved), (name, saved)
            assert [r["status"] for r in saved["requests"]] == [200]
            assert saved["requests"][0]["path"] == "/data.json"
            assert saved["requests"][0]["method"] == ("GET" if "fetch" in name else "POST")
            other_effects = await settled_effects(reports, then)
            assert message not in added(other_effects)
            assert other_effects["requests"] == []

        search = page.get_by_label("Search orders")
        await search.click()
        await search.press_sequentially("acme")
        await other.click()  # before the debounced search answered
        typing = next(p for p in reports.of("fill") if css(p) == "#search")
        results = await settled_effects(reports, typing)
        assert {"text": "Order for acme", "role": "item", "gone": False} in results["texts_added"]
        after = await settled_effects(reports, reports.of("click")[-1])
        assert "Order for acme" not in added(after)
        await assert_clean(session, page)

    harness.scenario(body)


def test_values_the_page_sets_and_the_element_pressed(harness: CaptureHarness) -> None:
    async def body(session: Session) -> None:
        page = await session.open("causes.html")
        reports = session.reports
        await page.get_by_label("Quantity").fill("3")
        await page.get_by_role("button", name="Recalculate").click()
        recalculated = await settled_effects(reports, reports.of("click")[-1])
        assert recalculated["values_changed"] == [{"field": "Total", "value": "30.00"}]

        # The press replaces the button (the browser sends no click at all), or covers it (the
        # click goes to <body>): either way the recording keeps the button pressed, described
        # before the page changed it.
        for name, selector in (("Press me", "#swap"), ("Cover me", "#cover")):
            count = len(reports.of("click"))
            await page.get_by_role("button", name=name).click()
            await reports.wait_for(lambda r, n=count: len(r.of("click")) > n, what=name)
            pressed = reports.of("click")[-1]
            assert css(pressed) == selector
            assert pressed["target"]["fingerprint"]["name"] == name
            assert pressed["t_start"] <= pressed["t"] and pressed["button"] == "left"
        await reports.settle(0.3)
        assert len(reports.of("click")) == 3  # one click each, none for <body>
        await assert_clean(session, page)

    harness.scenario(body)


def test_typing_is_reported_while_it_goes_on_and_secrets_show_as_dots(
    harness: CaptureHarness,
) -> None:
    async def body(session: Session) -> None:
        page = await session.open("causes.html")
        reports = session.reports
        search = page.get_by_label("Search orders")
        await search.click()
        await search.press_sequentially("a long search typed without a pause", delay=60)
        fills = [p for p in reports.of("fill") if css(p) == "#search"]
        assert len(fills) >= 3  # reported while typing went on, not only once it stopped
        gaps = [b["t"] - a["t"] for a, b in itertools.pairwise(fills)]
        assert max(gaps) < 900, gaps
        assert len({p["action"] for p in fills}) == 1

        # Fields whose name says they are secret are drawn as dots; one only its label says
        # is secret gets them as soon as it has the focus.
        security = "(el) => getComputedStyle(el).webkitTextSecurity"
        assert await page.get_by_label("API token").evaluate(security) == "disc"
        assert await page.get_by_label("Your PIN").evaluate(security) == "none"
        await page.get_by_label("Your PIN").click()
        assert await page.get_by_label("Your PIN").evaluate(security) == "disc"
        assert await search.evaluate(security) == "none"
        await page.get_by_role("button", name="Something else").click()
        masks = reports.of("click")[-1]["masks"]
        assert len(masks) == 2  # both secret fields' boxes, to paint over in its picture
        await assert_clean(session, page)

    harness.scenario(body)


def test_scroll_reported_only_before_an_action_off_screen(harness: CaptureHarness) -> None:
    async def body(session: Session) -> None:
        page = await session.open("effects.html")
        reports = session.reports
        await page.get_by_role("button", name="Show details").click()  # an action at the top
        await page.mouse.move(400, 300)
        await page.mouse.wheel(0, 2400)
        bottom = "document.documentElement.scrollHeight - window.innerHeight"
        expected = await page.evaluate(f"() => Math.min(2400, {bottom})")
        await page.wait_for_function(f"() => Math.round(window.scrollY) === {expected}")
        mark = reports.mark()
        await page.get_by_role("button", name="Archive company").click()
        await reports.wait_for(lambda r: bool(r.since(mark).of("click")), what="click")

        after = reports.since(mark)
        assert after.types()[:2] == ["scroll", "click"]
        scroll = after.of("scroll")[0]
        assert scroll["dx"] == 0
        assert scroll["dy"] == expected

        mark = reports.mark()
        await page.mouse.wheel(0, -60)  # a small scroll, then a visible element
        await page.wait_for_function(f"() => Math.round(window.scrollY) <= {scroll['dy'] - 50}")
        await page.get_by_role("heading", name="Danger zone").click()
        await reports.wait_for(lambda r: bool(r.since(mark).of("click")), what="second click")
        assert reports.since(mark).of("scroll") == []
        assert len(reports.of("scroll")) == 1
        await assert_clean(session, page)

    harness.scenario(body)


# ── frames, popups, injection, transport ───────────────────────────────────────────────────


def test_iframe_events_carry_their_frame(harness: CaptureHarness) -> None:
    async def body(session: Session) -> None:
        page = await session.open("frames.html")
        reports = session.reports
        named = page.frame(name="billing")
        assert named is not None
        await named.wait_for_function("() => !!window.__procedura")
        await named.get_by_label("Card holder").click()
        await page.keyboard.type("Ann Lee")
        await named.get_by_label("Card number").click()
        await page.keyboard.type("4111111111111111")
        anonymous = page.frame_locator("iframe:not([name])")
        await anonymous.get_by_role("button", name="Verify card").click()
        await reports.wait_for(lambda r: len(r.of("click")) >= 3, what="three clicks")
        await reports.wait_for_type("fill", count=2)

        holder, card = reports.of("fill")[:2]
        assert holder["frame"] == "billing" and holder["value"] == "Ann Lee"
        assert card["frame"] == "billing" and card["value"] is None
        assert card["target"]["sensitive"] is True  # autocomplete=cc-number
        assert not any("4111111111111111" in item.raw for item in reports.items)
        verify = reports.of("click")[-1]
        assert verify["frame"].endswith("/frame_inner.html?anonymous=1")
        assert verify["url"] == verify["frame"]
        assert all(p["frame"] is None for p in reports.payloads if p["url"].endswith("frames.html"))
        frame_item = next(i for i in reports.items if i.payload is holder)
        assert frame_item.frame is named
        await assert_clean(session, page, named)

    harness.scenario(body)


def test_popup_windows_are_captured(harness: CaptureHarness) -> None:
    async def body(session: Session) -> None:
        page = await session.open("effects.html")
        reports = session.reports
        async with page.expect_popup() as popup_info:
            await page.get_by_role("button", name="Open report").click()
        popup = await popup_info.value
        await popup.wait_for_load_state()
        await popup.wait_for_function("() => !!window.__procedura")
        await popup.get_by_role("button", name="Download PDF").click()
        await reports.wait_for(
            lambda r: any(p["url"].endswith("popup.html") for p in r.of("click")), what="popup"
        )
        click = next(i for i in reports.items if i.type == "click" and i.page is popup)
        assert click.payload["frame"] is None
        assert click.payload["title"] == "Report"
        assert click.payload["target"]["fingerprint"]["name"] == "Download PDF"
        opener_token = reports.of("click")[0]["id"].split("-")[0]
        assert click.payload["id"].split("-")[0] != opener_token  # ids are per page
        await assert_clean(session, page, popup)

    harness.scenario(body)


def test_injected_input_is_not_reported(harness: CaptureHarness) -> None:
    async def body(session: Session) -> None:
        page = await session.open("contact.html")
        reports = session.reports
        await page.evaluate("() => { window.__proceduraInjecting = true; }")
        await page.locator("#full-name").click()
        await page.keyboard.type("Injected Name")
        await page.locator("input[name=newsletter]").check()
        await page.select_option("#company", "acme")
        await page.keyboard.press("Control+s")
        await page.get_by_role("button", name="Cancel").click()
        await asyncio.sleep(1.0)  # past the time typing is reported
        assert actions(reports) == []
        assert not any("Injected" in item.raw for item in reports.items)
        await page.evaluate("() => { window.__proceduraInjecting = false; }")
        await page.get_by_role("button", name="Cancel").click()
        await settled_effects(reports, reports.of("click")[-1])
        assert reports.types() == ["click"]
        assert not any("Injected" in item.raw for item in reports.items)

    harness.scenario(body)


def test_reports_wait_for_the_binding_and_injection_is_idempotent(
    harness: CaptureHarness,
) -> None:
    async def body(session: Session) -> None:
        page = await session.open("contact.html")
        # A second injection (as the recorder does for tabs already open) changes nothing.
        await page.evaluate(CAPTURE_SCRIPT.read_text(encoding="utf-8"))
        await page.get_by_role("button", name="Cancel").click()
        await page.locator("#full-name").click()
        await asyncio.sleep(0.8)
        assert session.reports.payloads == []  # no binding yet: queued in the page
        await session.context.expose_binding("__proceduraEmit", session.reports.on_binding)
        await session.reports.wait_for(lambda r: len(r.of("click")) == 2, what="queued reports")
        assert session.reports.types() == ["click", "click"]
        assert [css(p) for p in session.reports.of("click")] == ["#cancel", "#full-name"]
        counters = [int(p["id"].split("-")[1]) for p in session.reports.payloads]
        assert counters == sorted(counters)
        enumerable = await page.evaluate("() => Object.keys(window).includes('__procedura')")
        assert enumerable is False

    async def run() -> None:
        async with harness.session(bind=False) as session:
            await body(session)

    harness.run(run())


# ── locators ───────────────────────────────────────────────────────────────────────────────


async def check_every_control(scope: Page | Frame) -> dict[str, dict[str, Any]]:
    """Describe each control of *scope*; every locator must find exactly that element."""
    described: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    for index, element in enumerate(await scope.query_selector_all(CONTROLS)):
        target = await scope.evaluate("(el) => window.__procedura.describe(el)", element)
        assert target["locators"], f"no locator for control #{index}"
        assert {"css", "xpath"} <= set(strategies(target))
        problems += [
            f"{target['css']}: {p}" for p in await locator_problems(scope, target, element)
        ]
        described[target["css"]] = target
    assert problems == []
    return described


def test_every_recorded_locator_finds_exactly_its_element(harness: CaptureHarness) -> None:
    async def body(session: Session) -> None:
        page = await session.open("contact.html")
        contact = await check_every_control(page)
        for page_name in ("effects.html", "search.html", "popup.html"):
            other = await session.open(page_name)
            await check_every_control(other)
        tricky = await check_every_control(await session.open("tricky.html"))
        frames = await session.open("frames.html")
        for frame in frames.frames[1:]:
            await frame.wait_for_function("() => !!window.__procedura")
            await check_every_control(frame)

        # Labelled inputs and uniquely named buttons get at least four strategies.
        for selector in ("#full-name", "#company", "#notes", "#terms", "#password"):
            assert len(contact[selector]["locators"]) >= 4, selector
        for selector in ('button[data-testid="save-contact"]', "#cancel"):
            assert len(contact[selector]["locators"]) >= 4, selector
        assert contact["#full-name"]["locators"][:2] == [
            {"strategy": "role", "value": "textbox", "name": "Full name"},
            {"strategy": "label", "value": "Full name"},
        ]
        email = contact["#email"]
        assert {"strategy": "placeholder", "value": "name@company.com"} in email["locators"]
        assert "label" not in strategies(email)  # "Email" also labels a radio button
        assert contact['button[data-testid="save-contact"]']["locators"][:3] == [
            {"strategy": "role", "value": "button", "name": "Save contact"},
            {"strategy": "text", "value": "Save contact"},
            {"strategy": "test_id", "value": "save-contact"},
        ]

        # The three "Edit" buttons share role, name and text: css and xpath stay, and role
        # with the button's index among them ranks last.
        edits = [t for t in contact.values() if t["fingerprint"].get("name") == "Edit"]
        assert len(edits) == 3
        for nth, edit in enumerate(edits):
            assert strategies(edit) == ["css", "xpath", "role"]
            assert edit["locators"][-1] == {
                "strategy": "role",
                "value": "button",
                "name": "Edit",
                "nth": nth,
                "nth_of": 3,  # used only while the page has three of them
            }
            # and the row each is in, by what the row shows
            item = edit["fingerprint"]["item"]
            assert item["inner"] == {"strategy": "role", "value": "button", "name": "Edit"}
            assert item["texts"] and item["css"]
        assert len({e["css"] for e in edits}) == 3
        assert "Jane Doe" in edits[0]["fingerprint"]["nearby_text"][-1]
        # "Delete" buttons are told apart by their accessible names; their text is ambiguous.
        delete = contact['button[aria-label="Delete Jane Doe"]']
        assert delete["locators"][0] == {
            "strategy": "role",
            "value": "button",
            "name": "Delete Jane Doe",
        }
        assert "text" not in strategies(delete)

        # Harder cases: hidden twins, nested text, names from CSS, aria-hidden label parts…
        by_name = {t["fingerprint"].get("name"): t for t in tricky.values()}
        assert strategies(by_name["Print"]) == ["role", "css", "xpath"]  # text finds the <span>
        visible_export, hidden_export = (
            t for t in tricky.values() if "Export" in str({**t["fingerprint"], "item": None})
        )
        assert strategies(visible_export) == ["role", "css", "xpath"]  # text matches both
        assert strategies(hidden_export) == ["css", "xpath"]
        assert by_name["✓Save draft"]["locators"][0]["name"] == "✓Save draft"
        email = by_name["Email address"]
        assert email["locators"][:2] == [
            {"strategy": "role", "value": "textbox", "name": "Email address"},
            {"strategy": "label", "value": "Email address *"},
        ]
        assert "label" not in strategies(by_name["Country"])  # its label holds the options
        assert by_name["Gift wrap please"]["locators"][1] == {
            "strategy": "label",
            "value": "Gift wrap please",
        }
        for name in ("Name", "Street"):  # twice on the page: no label, role only with nth
            twins = [t for t in tricky.values() if t["fingerprint"].get("name") == name]
            assert len(twins) == 2
            assert all(strategies(t) == ["css", "xpath", "role"] for t in twins)
            assert [t["locators"][-1]["nth"] for t in twins] == [0, 1]
        read_more = [t for t in tricky.values() if t["fingerprint"].get("text") == "Read more"]
        assert [strategies(t) for t in read_more] == [
            ["css", "xpath", "role"],
            ["css", "xpath", "role"],
            ["role", "css", "xpath"],
        ]
        archive = by_name["Archive"]
        assert archive["css"] != "#btn-83af91c2"  # a generated id is not used

    harness.scenario(body)


def test_a_row_being_edited_is_told_by_its_hidden_title(harness: CaptureHarness) -> None:
    """TodoMVC hides a row's title behind its edit box: the box has no name and the row shows
    no text, yet replay must find the box in that row and no look-alike's."""

    async def body(session: Session) -> None:
        page = await session.open("editing.html")
        box = "li.editing input.edit"
        item = (await describe(page, box))["fingerprint"]["item"]
        assert item["texts"] == ["Buy oat milk"]
        assert item["inner"] is not None, item
        fp = Fingerprint.model_validate({"tag": "input", "item": item})
        for title, row in (("Buy oat milk", 1), ("Renew passport", 3)):
            await page.evaluate(
                "(n) => document.querySelectorAll('li').forEach("
                "(li, i) => li.classList.toggle('editing', i === n - 1))",
                row,
            )
            found = to_playwright(page, item_locator(fp, title))  # type: ignore[arg-type]
            assert await found.count() == 1, (title, item)
            same = await found.evaluate(
                "(el, n) => el === document.querySelectorAll('li')[n - 1].querySelector('.edit')",
                row,
            )
            assert same, title
        # Rows showing their titles are told by what they show, as before.
        shown = (await describe(page, "li:nth-child(3) input.toggle"))["fingerprint"]["item"]
        assert shown["texts"] == ["Renew passport"]

    harness.scenario(body)


def test_a_checkbox_the_page_draws_anew_as_it_is_clicked_is_still_checked(
    harness: CaptureHarness,
) -> None:
    """Backbone's TodoMVC redraws the row in the click handler: no change event reaches the
    recorder, and the check must still be recorded, as a check of that row's box."""

    async def body(session: Session) -> None:
        page = await session.open("editing.html")
        reports = session.reports
        await page.locator("li:nth-child(3) .toggle").click()
        await reports.wait_for_type("check")
        await page.locator("li:nth-child(3) .toggle").click()
        await reports.wait_for_type("uncheck")
        checks = [p for p in actions(reports) if p["type"] in ("check", "uncheck", "click")]
        assert [p["type"] for p in checks] == ["check", "uncheck"]
        assert checks[0]["target"]["fingerprint"]["item"]["texts"] == ["Renew passport"]
        assert await page.locator("li:nth-child(3)").get_attribute("class") == ""

    harness.scenario(body)


def test_fingerprint(harness: CaptureHarness) -> None:
    async def body(session: Session) -> None:
        page = await session.open("contact.html")
        await page.fill("#full-name", "Jane Doe")
        fingerprint = (await describe(page, "#full-name"))["fingerprint"]
        assert fingerprint["tag"] == "input"
        assert fingerprint["role"] == "textbox"
        assert fingerprint["name"] == "Full name"
        assert "text" not in fingerprint
        assert fingerprint["attributes"] == {
            "id": "full-name",
            "name": "full_name",
            "autocomplete": "name",
        }
        assert set(fingerprint["bbox"]) == {"x", "y", "width", "height"}
        assert fingerprint["bbox"]["width"] > 0
        assert fingerprint["nearby_text"] == ["Full name", "New contact", "Person"]
        assert fingerprint["ancestors"] == [
            "div.field",
            "fieldset",
            "form#new-contact",
            "main",
            "body",
        ]
        assert "Jane Doe" not in json.dumps(fingerprint)

        button = (await describe(page, "#cancel"))["fingerprint"]
        assert (button["tag"], button["role"], button["name"], button["text"]) == (
            "button",
            "button",
            "Cancel",
            "Cancel",
        )
        assert button["attributes"] == {"id": "cancel", "type": "button", "data-test": "cancel"}

    harness.scenario(body)


def test_a_field_in_a_line_item_is_told_by_the_line_item_not_its_wrapper(
    harness: CaptureHarness,
) -> None:
    """Every line item has a wrapper showing "Description": the wrapper cannot tell the field
    apart, the line item's "Item 2" can. The field is found in that line item, inside its
    own wrapper there, and stays found when the line item's fields change places."""

    async def body(session: Session) -> None:
        page = await session.open("line_items.html")
        second = "fieldset.line:nth-of-type(2) div.field:first-of-type input"
        item = (await describe(page, second))["fingerprint"]["item"]
        assert item["css"] == "fieldset.line"
        assert item["texts"][0] == "Item 2"
        assert item["inner"] == {
            "strategy": "role",
            "value": "textbox",
            "within": {"css": "div.field", "text": "Description"},
        }
        fp = Fingerprint.model_validate({"tag": "input", "item": item})
        locator = item_locator(fp)
        assert locator is not None and locator.within is not None
        assert locator.within.describe() == (
            'fieldset.line with "Item 2" >> div.field with "Description"'
        )
        # The fields change places: the locator follows the wrapper, not the place.
        await page.evaluate(
            "() => document.querySelectorAll('fieldset.line').forEach("
            "(f) => f.insertBefore(f.querySelectorAll('div.field')[1], f.querySelector('.field')))"
        )
        await page.locator(second).fill("other")  # now Item 2's Amount
        found = to_playwright(page, locator)
        assert await found.count() == 1
        same = await found.evaluate(
            "(el) => el === document.querySelectorAll('fieldset.line')[1]"
            ".querySelectorAll('div.field')[1].querySelector('input')"
        )
        assert same
        # A candidate (what a heal compares) is told by its line item too.
        candidates = await page.evaluate("() => window.__procedura.candidates()")
        inputs = [c for c in candidates if c["fingerprint"]["tag"] == "input"]
        assert [c["fingerprint"]["item"]["texts"][0] for c in inputs] == [
            "Item 1", "Item 1", "Item 2", "Item 2",
        ]  # fmt: skip
        # A field whose wrapper is the only one showing its text keeps its wrapper as its item.
        await page.evaluate("() => document.querySelectorAll('label')[0].textContent = 'Purpose'")
        first = "fieldset.line:nth-of-type(1) div.field:nth-of-type(1) input"
        own = (await describe(page, first))["fingerprint"]["item"]
        assert (own["css"], own["texts"][0]) == ("div.field", "Purpose")

    harness.scenario(body)
