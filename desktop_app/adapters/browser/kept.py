"""One headless browser and one page kept between runs (a fleet worker's, a batch's), wiped
between them.

A new browser context per row isolates rows, but a row then pays for a new page and its
renderer: for a short fleet row, most of the machine's work (1.22 CPU-seconds a row with a new
context, under 0.5 with a kept page: docs/benchmarks.md §15). So a worker keeps one context
and one page, and between rows takes back everything a row can leave behind, as a new context
would not have it:

* the page goes to ``about:blank`` (a page asking to stay is left all the same) and forgets its
  history and ``window.name``;
* cookies and granted permissions are cleared; for every origin the row spoke to, all its
  storage is cleared (local and session storage, IndexedDB, Cache Storage, service workers,
  file systems); the HTTP cache is emptied (a private page cached for one row's login is never
  shown to the next).

When any of that fails, or the page closed or crashed, or the row opened another tab (whose
scripts could write again what was cleared), or the run could not take back its own listeners
and guard (:attr:`KeptPage.clean`), the context is closed and the next run gets a new one. A
context is also replaced after :data:`RUNS_PER_CONTEXT` runs, so that nothing a page leaks in
the renderer grows without bound.

Not wiped: HTTP authentication a site asked for (a fleet row cannot answer such a prompt) and
client certificates.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from desktop_app.adapters.browser.launch import BrowserSession, open_browser

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, CDPSession, Dialog, Page, Request, ViewportSize

__all__ = ["RUNS_PER_CONTEXT", "KeptBrowser", "KeptBrowsers", "KeptPage"]

log = logging.getLogger(__name__)

#: Runs served by one context before it is replaced by a new one.
RUNS_PER_CONTEXT: Final = 100
#: How long wiping the page may take before the context is given up instead.
_WIPE_S: Final = 15.0
_VIEWPORT: Final[ViewportSize] = {"width": 1280, "height": 800}


@dataclass
class KeptPage:
    """The page and context a :class:`KeptBrowser` lends one run. The run sets :attr:`clean`
    once it has taken back its own listeners and routes; closing hands the page back, to be
    wiped (or, unless clean, dropped)."""

    context: BrowserContext
    page: Page
    _owner: KeptBrowser = field(repr=False)
    clean: bool = False

    async def close(self) -> None:
        await self._owner._give_back(self)


@dataclass
class _Held:
    context: BrowserContext
    page: Page
    cdp: CDPSession
    origins: set[str] = field(default_factory=set)
    runs: int = 0
    tabs: int = 1  # pages the context ever had

    def opened(self, page: Page) -> None:
        if page is not self.page:
            self.tabs += 1

    @property
    def spoilt(self) -> bool:
        """Whether this context cannot be wiped: its page is gone, or it had another tab."""
        return self.page.is_closed() or self.tabs > 1

    def note(self, request: Request) -> None:
        parts = urlsplit(request.url)
        if parts.scheme in ("http", "https") and parts.netloc:
            self.origins.add(f"{parts.scheme}://{parts.netloc}")


class KeptBrowser:
    """One headless browser kept between runs, lending one page at a time (see the module).
    A browser that died is started again at the next run."""

    def __init__(self, *, configured: Path | None, withheld: Collection[str]) -> None:
        self._configured = configured
        self._withheld = tuple(withheld)
        self._session: BrowserSession | None = None
        self._held: _Held | None = None
        self._lent = False

    async def run_context(self) -> KeptPage:
        """The page for one run (wiped since the last).

        Raises:
            BrowserError: the browser cannot be started.
        """
        assert not self._lent, "a kept page serves one run at a time"
        held = self._held
        if held is None or held.spoilt or held.runs >= RUNS_PER_CONTEXT:
            await self._drop()
            held = self._held = await self._new_context()
        held.runs += 1
        self._lent = True
        return KeptPage(held.context, held.page, self)

    async def close(self) -> None:
        await self._drop()
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    async def _new_context(self) -> _Held:
        session = self._session
        if session is None or session.browser is None or not session.browser.is_connected():
            if session is not None:
                await session.close()
            self._session = session = await open_browser(
                configured=self._configured, headless=True, withheld=self._withheld
            )
            await session.context.close()  # the launch's own context is not used
        assert session.browser is not None
        context = await session.browser.new_context(viewport=_VIEWPORT)
        try:
            page = await context.new_page()
            held = _Held(context, page, await context.new_cdp_session(page))
        except BaseException:
            with contextlib.suppress(Exception):
                await context.close()
            raise
        context.on("request", held.note)
        context.on("page", held.opened)
        return held

    async def _give_back(self, lent: KeptPage) -> None:
        self._lent = False
        held = self._held
        if held is None or held.page is not lent.page:
            return
        if not lent.clean or held.spoilt:
            await self._drop()
            return
        try:
            await asyncio.wait_for(_wipe(held), _WIPE_S)
        except BaseException as exc:  # whatever stayed behind must not reach the next run
            log.info("the kept page could not be wiped (%r): a new context is made", exc)
            await self._drop()
            if not isinstance(exc, Exception):
                raise

    async def _drop(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            with contextlib.suppress(Exception):
                await held.context.close()


async def _wipe(held: _Held) -> None:
    """Leave *held* as a new context would be: see the module."""
    from playwright.async_api import Error

    page, context = held.page, held.context

    async def leave(dialog: Dialog) -> None:
        with contextlib.suppress(Error):
            await (dialog.accept() if dialog.type == "beforeunload" else dialog.dismiss())

    page.on("dialog", leave)
    try:
        await page.goto("about:blank")
    finally:
        page.remove_listener("dialog", leave)
    await page.evaluate("window.name = ''")
    await context.clear_cookies()
    await context.clear_permissions()
    origins, held.origins = held.origins, set()
    for origin in sorted(origins):
        await _send(held.cdp, "Storage.clearDataForOrigin", origin=origin, storageTypes="all")
    await _send(held.cdp, "Network.clearBrowserCache")
    await _send(held.cdp, "Page.resetNavigationHistory")
    if held.spoilt:
        raise RuntimeError("a tab was opened while the page was wiped")


async def _send(cdp: CDPSession, method: str, **params: Any) -> None:
    await cdp.send(method, params)


class KeptBrowsers:
    """Kept browsers for runs side by side (a batch's parallel rows): each run borrows one,
    and the next run takes its page, wiped."""

    def __init__(self, count: int, *, configured: Path | None, withheld: Collection[str]) -> None:
        self._all = [KeptBrowser(configured=configured, withheld=withheld) for _ in range(count)]
        self._free: asyncio.Queue[KeptBrowser] = asyncio.Queue()
        for kept in self._all:
            self._free.put_nowait(kept)

    @contextlib.asynccontextmanager
    async def lend(self) -> AsyncIterator[KeptBrowser]:
        """A browser no other run uses now (waits for one), given back when the block ends."""
        kept = await self._free.get()
        try:
            yield kept
        finally:
            self._free.put_nowait(kept)

    async def close(self) -> None:
        for kept in self._all:
            await kept.close()
