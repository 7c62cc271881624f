"""The capture script's replay side in a real Chromium: describe-only mode and ``candidates()``.

Replay injects ``capture.js`` with ``window.__proceduraDescribeOnly = true`` (by
``page.evaluate``) only when it needs to heal a step: the script must then record nothing at all.
``candidates()`` lists what a step could act on, with the very fingerprint ``describe`` gives.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from capture_harness import (
    CAPTURE_SCRIPT,
    EFFECTS_SCRIPT,
    CaptureHarness,
    Session,
    harness_for_module,
)
from playwright.async_api import Page

pytestmark = pytest.mark.slow

SECRET = "s3cret-Pa55word"

#: Counts what the script could install: listeners, observers and timers.
SPIES = """() => {
  const counts = { listeners: 0, observers: 0, timers: 0 };
  window.__spyCounts = counts;
  const addListener = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function (...args) {
    counts.listeners += 1;
    return addListener.apply(this, args);
  };
  const NativeObserver = window.MutationObserver;
  window.MutationObserver = class extends NativeObserver {
    constructor(callback) { super(callback); counts.observers += 1; }
  };
  for (const name of ["setTimeout", "setInterval", "requestAnimationFrame"]) {
    const native = window[name];
    window[name] = function (...args) { counts.timers += 1; return native.apply(this, args); };
  }
}"""

#: What candidates.html offers, in document order, by a stable key (see ``key``).
EXPECTED = [
    "a#home",
    "label[for=full-name]",
    "input[name=full_name]",
    "label#pw-label",
    "input[name=password]",
    "label[for=country]",
    "select[name=country]",
    "textarea[name=notes]",
    "label#terms-label",
    "input[name=terms]",
    "button[data-testid=save]",
    "div#custom-button",
    "span#clickable",
    "div#editor",
    "summary#more",
    "div#tab",
    "div#custom-check",
]


@pytest.fixture(scope="module")
def harness() -> Iterator[CaptureHarness]:
    with harness_for_module() as shared:
        yield shared


async def inject_describe_only(page: Page) -> None:
    """Inject the script the way replay does."""
    await page.evaluate("() => { window.__proceduraDescribeOnly = true; }")
    await page.evaluate(CAPTURE_SCRIPT.read_text(encoding="utf-8"))


def key(candidate: dict[str, Any]) -> str:
    """A short stable name of a candidate: tag plus a telling attribute."""
    fingerprint = candidate["fingerprint"]
    attributes = fingerprint["attributes"]
    for attribute in ("data-testid", "name", "for", "id"):
        if attribute in attributes:
            value = attributes[attribute]
            if attribute == "id":
                return f"{fingerprint['tag']}#{value}"
            return f"{fingerprint['tag']}[{attribute}={value}]"
    return str(fingerprint["tag"])


async def act_like_a_person(page: Page) -> None:
    """Clicks, typing, a select, a checkbox, keys, a DOM change and a scroll."""
    await page.locator("#full-name").click()
    await page.keyboard.type("Jane Doe")
    await page.locator("#pw").fill(SECRET)
    await page.select_option("#country", "Chile")
    await page.locator("#terms").check()
    await page.keyboard.press("Control+s")
    await page.get_by_role("button", name="Save").click()
    await page.evaluate(
        "() => { for (let i = 0; i < 10; i++) document.body.append(document.createElement('p')); }"
    )
    await page.mouse.wheel(0, 400)


def test_describe_only_mode_records_nothing(harness: CaptureHarness) -> None:
    async def body(session: Session) -> None:
        page = await session.open("candidates.html", wait_for_script=False)
        assert await page.evaluate("() => typeof window.__procedura") == "undefined"
        await page.evaluate(SPIES)
        await inject_describe_only(page)
        api = await page.evaluate(
            "() => ({ keys: Object.keys(window.__procedura).sort(), "
            "describeOnly: window.__procedura.describeOnly, "
            "version: window.__procedura.version })"
        )
        assert api == {
            "keys": ["candidates", "describe", "describeOnly", "errors", "flush", "version"],
            "describeOnly": True,
            "version": 2,
        }
        target = await page.evaluate(
            "() => window.__procedura.describe(document.querySelector('#full-name'))"
        )
        assert target["locators"][0] == {
            "strategy": "role",
            "value": "textbox",
            "name": "Full name",
        }
        assert await page.evaluate("() => window.__procedura.candidates().length") == len(EXPECTED)
        assert await page.evaluate("() => window.__procedura.flush()") is True

        await act_like_a_person(page)
        await asyncio.sleep(1.2)  # past the fill idle, effect and DOM-change delays
        assert session.reports.payloads == []
        counts = await page.evaluate("() => window.__spyCounts")
        assert counts == {"listeners": 0, "observers": 0, "timers": 0}
        assert await session.internal_errors(page) == []

        # Injected again (normally this time), the script keeps the describe-only api.
        await page.evaluate(CAPTURE_SCRIPT.read_text(encoding="utf-8"))
        assert await page.evaluate("() => window.__procedura.describeOnly") is True

    async def run() -> None:
        async with harness.session(inject=False) as session:
            await body(session)

    harness.run(run())


def test_the_spies_see_what_recording_installs(harness: CaptureHarness) -> None:
    """The control experiment: injected normally, the same spies count what it sets up."""

    async def body(session: Session) -> None:
        page = await session.open("candidates.html", wait_for_script=False)
        await page.evaluate(SPIES)
        await page.evaluate(EFFECTS_SCRIPT.read_text(encoding="utf-8"))
        await page.evaluate(CAPTURE_SCRIPT.read_text(encoding="utf-8"))
        assert await page.evaluate("() => window.__procedura.describeOnly") is False
        await act_like_a_person(page)
        await session.reports.wait_for_type("click")
        counts = await page.evaluate("() => window.__spyCounts")
        assert counts["listeners"] >= 10 and counts["observers"] == 1 and counts["timers"] >= 1

    async def run() -> None:
        async with harness.session(inject=False) as session:
            await body(session)

    harness.run(run())


def test_candidates_are_the_visible_actionable_elements(harness: CaptureHarness) -> None:
    async def body(session: Session) -> None:
        page = await session.open("candidates.html", wait_for_script=False)
        await inject_describe_only(page)
        await page.locator("#pw").fill(SECRET)  # a value present while listing
        found: list[dict[str, Any]] = await page.evaluate("() => window.__procedura.candidates()")
        assert [key(c) for c in found] == EXPECTED
        assert SECRET not in json.dumps(found)
        assert "hidden-token" not in json.dumps(found)

        for candidate in found:
            assert set(candidate) == {"fingerprint", "css", "xpath"}
            assert candidate["css"] and candidate["xpath"], key(candidate)
            element = await page.query_selector(candidate["css"])
            assert element is not None
            by_xpath = await page.query_selector(f"xpath={candidate['xpath']}")
            assert by_xpath is not None
            assert await page.evaluate("([a, b]) => a === b", [element, by_xpath])
            target = await page.evaluate("(el) => window.__procedura.describe(el)", element)
            assert _same_but_item(candidate["fingerprint"], target["fingerprint"]), key(candidate)
            assert candidate["css"] == target["css"]
            xpaths = [loc["value"] for loc in target["locators"] if loc["strategy"] == "xpath"]
            assert xpaths == [candidate["xpath"]]

        by_key = {key(c): c["fingerprint"] for c in found}
        assert by_key["div#editor"]["attributes"]["contenteditable"] == "true"
        assert by_key["input[name=password]"]["role"] == "textbox"
        assert "text" not in by_key["input[name=password]"]
        assert await session.internal_errors(page) == []

    async def run() -> None:
        async with harness.session(inject=False) as session:
            await body(session)

    harness.run(run())


def test_candidates_follow_the_page(harness: CaptureHarness) -> None:
    """Shown, hidden, opened: each call looks at the page as it is now."""

    async def body(session: Session) -> None:
        page = await session.open("candidates.html", wait_for_script=False)
        await inject_describe_only(page)
        listed = "() => window.__procedura.candidates().map((c) => c.fingerprint.name || '')"
        before = await page.evaluate(listed)
        assert "Inside closed details" not in before and "Display none" not in before
        await page.locator("#more").click()  # opens <details>
        await page.evaluate("() => document.querySelector('.gone').classList.remove('gone')")
        await page.evaluate("() => document.querySelector('#custom-button').hidden = true")
        after = await page.evaluate(listed)
        assert "Inside closed details" in after and "Display none" in after
        assert "Custom button" in before and "Custom button" not in after

    async def run() -> None:
        async with harness.session(inject=False) as session:
            await body(session)

    harness.run(run())


def test_candidates_on_a_big_page(harness: CaptureHarness) -> None:
    """300 candidates in table rows: every one listed, each with unique selectors."""

    rows = "".join(
        f"<tr><td><a href='/contacts/{i}'>Contact {i}</a></td><td>c{i}@example.test</td>"
        f"<td><input type=checkbox aria-label='Select contact {i}'></td>"
        f"<td><button type=button>Edit</button></td></tr>"
        for i in range(100)
    )
    html = f"<h1>Contacts</h1><main><table><tbody>{rows}</tbody></table></main>"

    async def body(session: Session) -> None:
        page = await session.context.new_page()
        await page.set_content(html)
        await inject_describe_only(page)
        found: list[dict[str, Any]] = await page.evaluate("() => window.__procedura.candidates()")
        assert len(found) == 300
        assert len({c["css"] for c in found}) == 300
        assert len({c["xpath"] for c in found}) == 300
        edit = found[3 * 57 + 2]["fingerprint"]
        assert (edit["name"], edit["nearby_text"]) == (
            "Edit",
            ["Contacts", "Contact 57 c57@example.test"],
        )
        assert await session.internal_errors(page) == []

    async def run() -> None:
        async with harness.session(inject=False) as session:
            await body(session)

    harness.run(run())


def _same_but_item(candidate: dict[str, Any], described: dict[str, Any]) -> bool:
    """The same fingerprint, but that a candidate's item has its texts in page order and no
    locator inside the item (candidates stay cheap)."""

    def plain(fp: dict[str, Any]) -> dict[str, Any]:
        item = fp.get("item")
        if item is None:
            return fp
        return {**fp, "item": {"css": item["css"], "texts": sorted(item["texts"])}}

    return plain(candidate) == plain(described)
