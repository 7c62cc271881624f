"""A page whose browser went away says so: every call after the page closed, crashed or lost
its browser raises :class:`~desktop_app.core.replay.browser.BrowserGone` at once, instead of
reading as a page where nothing is found (which replay would take for drift and wait on)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from desktop_app.core.replay.browser import BrowserGone

if TYPE_CHECKING:
    from playwright.async_api import Page

__all__ = ["GoneWatch", "stops_when_gone"]

_T = TypeVar("_T")
_BROWSER_GONE = "the browser closed or crashed"
_PAGE_CLOSED = "the browser page was closed"
#: A browser that dies closes its pages first and says it is gone a moment later (later still
#: on a loaded machine): how long a closed page waits for that before it is said to be closed.
_DISCONNECT_S = 2.0


class GoneWatch:
    """Why *page* can no longer be driven (None while it can): closed, crashed, or its browser
    disconnected (closed by a person, killed, crashed)."""

    def __init__(self, page: Page) -> None:
        self._page = page
        self._reason: str | None = None
        self._disconnected = asyncio.Event()
        page.on("close", self._on_close)
        page.on("crash", self._on_crash)
        browser = page.context.browser
        if browser is not None:
            browser.on("disconnected", self._on_disconnected)

    def detach(self) -> None:
        """Stop watching (a page kept for the next run is watched by that run's own watch)."""
        self._page.remove_listener("close", self._on_close)
        self._page.remove_listener("crash", self._on_crash)
        browser = self._page.context.browser
        if browser is not None:
            browser.remove_listener("disconnected", self._on_disconnected)

    def _on_close(self, _page: object) -> None:
        self._gone(_PAGE_CLOSED)

    def _on_crash(self, _page: object) -> None:
        self._gone("the browser page crashed")

    def _on_disconnected(self, _browser: object = None) -> None:
        self._disconnected.set()
        self._gone(_BROWSER_GONE)

    def _gone(self, reason: str) -> None:
        if self._reason is None:
            self._reason = reason

    @property
    def reason(self) -> str | None:
        """Why the page can no longer be driven, or None. A browser gone closes its pages
        first: what is said is that the browser went."""
        browser = self._page.context.browser
        if self._reason is not None and browser is not None and not browser.is_connected():
            self._reason = _BROWSER_GONE
        return self._reason

    async def check(self) -> None:
        """Raise :class:`BrowserGone` when the page can no longer be driven. A page closed
        while its browser still seems connected waits a moment for the browser's own news:
        a killed browser closes its pages before it says it is gone."""
        if (reason := self.reason) is None:
            return
        if reason == _PAGE_CLOSED:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._disconnected.wait(), timeout=_DISCONNECT_S)
            reason = self.reason or reason
        raise BrowserGone(f"{reason} during the run; nothing more was done in it")


def stops_when_gone(cls: type[_T]) -> type[_T]:
    """Have every public coroutine method of *cls* (whose instances hold a :class:`GoneWatch`
    as ``_gone_watch``) check the page before and after it runs: an answer from a page that
    went away meanwhile ("0 elements", "not settled") is not given, and its error neither."""
    for name, method in list(vars(cls).items()):
        if name.startswith("_") or not inspect.iscoroutinefunction(method):
            continue
        setattr(cls, name, _checked(method))
    return cls


def _checked(method: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(method)
    async def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
        watch: GoneWatch = self._gone_watch
        await watch.check()
        try:
            result = await method(self, *args, **kwargs)
        except BrowserGone:
            raise
        except Exception:
            await watch.check()  # the page went away meanwhile: that is what happened
            raise
        await watch.check()
        return result

    return checked
