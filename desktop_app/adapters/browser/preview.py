"""A live page the step editor tests against: counts a locator's matches, says whether a block's
condition holds now, reads the items a loop would go over; what it found is outlined."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final

from desktop_app.adapters.browser.launch import BrowserSession, open_browser
from desktop_app.adapters.browser.locators import to_playwright
from desktop_app.adapters.browser.page_items import read_items
from desktop_app.core.errors import BrowserError
from desktop_app.core.models.target import Locator
from desktop_app.core.models.workflow import (
    ElementHidden,
    ElementPresent,
    ElementVisible,
    Expectation,
    PageItems,
    TextPresent,
    TitleMatches,
    UrlMatches,
)
from desktop_app.core.replay.browser import ActionFailed
from desktop_app.core.templating import render
from desktop_app.core.urls import url_matches

if TYPE_CHECKING:
    from playwright.async_api import Page

__all__ = ["PlaywrightPreview", "open_preview"]

#: The attribute marking what the last test outlined (it holds the element's own inline outline).
_MARK: Final = "data-procedura-highlight"

_CLEAR: Final = f"""() => {{
  for (const el of document.querySelectorAll('[{_MARK}]')) {{
    const saved = JSON.parse(el.getAttribute('{_MARK}'));
    el.style.outline = saved[0];
    el.style.outlineOffset = saved[1];
    el.removeAttribute('{_MARK}');
  }}
}}"""

_OUTLINE: Final = f"""(elements) => {{
  for (const el of elements) {{
    if (!el.hasAttribute('{_MARK}')) {{
      el.setAttribute('{_MARK}', JSON.stringify([el.style.outline, el.style.outlineOffset]));
    }}
    el.style.outline = '3px solid #e8590c';
    el.style.outlineOffset = '2px';
  }}
}}"""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


class PlaywrightPreview:
    """One Chromium page for testing locators (a :class:`desktop_app.ui.backend.LocatorPreview`).

    The page is the user's to navigate: each test runs wherever it is now.
    """

    def __init__(self, session: BrowserSession, page: Page) -> None:
        self._session = session
        self._page = page

    @property
    def url(self) -> str:
        """Where the page is now."""
        return self._page.url

    @property
    def is_open(self) -> bool:
        """Whether the page and its browser are still there (a person may close the window)."""
        browser = self._session.browser
        return not self._page.is_closed() and (browser is None or browser.is_connected())

    async def test(self, locator: Locator, values: Mapping[str, str]) -> int:
        """Outline every element *locator* (rendered with *values*) matches; how many.

        The previous test's outlines are cleared first.

        Raises:
            KeyError: a ``{placeholder}`` of the locator has no value.
            ValueError: an image anchor (only the desktop backend resolves those).
            BrowserError: the page or the browser was closed.
        """
        from playwright.async_api import Error

        rendered = locator.with_texts(lambda text: render(text, values))
        found = to_playwright(self._page, rendered)
        try:
            await self._page.evaluate(_CLEAR)
            count = await found.count()
            if count:
                await found.evaluate_all(_OUTLINE)
                with contextlib.suppress(Error):  # hidden or detached: the count still stands
                    await found.first.scroll_into_view_if_needed(timeout=2000)
        except Error as exc:
            if self._page.is_closed():
                raise BrowserError("the test page was closed; test again to reopen it") from None
            raise BrowserError(f"could not test {locator.describe()}: {_first_line(exc)}") from None
        return count

    async def holds(self, condition: Expectation) -> bool:
        """Whether *condition* (its placeholders filled) holds on the page now, outlining the
        element or text it is about when there is one.

        Raises:
            ValueError: a condition about the desktop (a window title, an image on screen).
            BrowserError: the page or the browser was closed.
        """
        from playwright.async_api import Error

        page = self._page
        try:
            await page.evaluate(_CLEAR)
            match condition:
                case UrlMatches(pattern=pattern, match=how):
                    return url_matches(page.url, pattern, how)
                case TitleMatches(text=text):
                    return text in await page.title()
                case TextPresent(text=text):
                    found = page.get_by_text(text).filter(visible=True)
                case (
                    ElementVisible(target=target)
                    | ElementHidden(target=target)
                    | ElementPresent(target=target)
                ):
                    found = to_playwright(page, target.locators[0])
                case _:
                    raise ValueError("only the desktop can look at windows and images")
            count = await found.count()
            shown = bool(count) and await found.first.is_visible()
            if count:
                await found.evaluate_all(_OUTLINE)
        except Error as exc:
            if page.is_closed():
                raise BrowserError("the test page was closed; test again to reopen it") from None
            raise BrowserError(f"could not test the condition: {_first_line(exc)}") from None
        if isinstance(condition, ElementHidden):
            return not shown
        if isinstance(condition, ElementPresent):
            return count > 0
        return shown

    async def items(self, source: PageItems) -> list[tuple[str, dict[str, str]]]:
        """The items a loop over *source* (its placeholders filled) would go over on the page
        now: each one's text and fields, in page order; the items are outlined.

        Raises:
            BrowserError: a selector is no CSS selector, or the page was closed.
        """
        from playwright.async_api import Error

        try:
            await self._page.evaluate(_CLEAR)
            found = await read_items(
                self._page,
                source.css,
                contains=source.contains,
                key=source.key,
                fields=dict(source.fields),
            )
            rows = self._page.locator(source.css)
            if source.contains:
                rows = rows.filter(has_text=source.contains)
            if found:
                await rows.evaluate_all(_OUTLINE)
        except ActionFailed as exc:
            raise BrowserError(str(exc)) from None
        except Error as exc:
            if self._page.is_closed():
                raise BrowserError("the test page was closed; test again to reopen it") from None
            raise BrowserError(f"could not read the items: {_first_line(exc)}") from None
        return [(item.key, dict(item.fields)) for item in found]

    async def close(self) -> None:
        """Close the page and its browser."""
        await self._session.close()


async def open_preview(browser_path: Path | None, url: str, *, headless: bool) -> PlaywrightPreview:
    """Start Chromium at *url* for testing locators.

    Raises:
        BrowserError: no browser, it would not start, or *url* could not be opened.
    """
    from playwright.async_api import Error

    session = await open_browser(configured=browser_path, headless=headless)
    try:
        page = await session.context.new_page()
        try:
            await page.goto(url, wait_until="domcontentloaded", timeout=30_000)
        except Error as exc:
            raise BrowserError(f"could not open {url}: {_first_line(exc)}") from None
    except BaseException:
        await session.close()
        raise
    return PlaywrightPreview(session, page)
