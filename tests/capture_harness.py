"""A harness for testing the recorder's injected capture script in a real headless Chromium.

It serves ``tests/pages/`` on 127.0.0.1, launches Chromium once, and gives each scenario a fresh
browser context with ``capture.js`` injected into every page and frame and the
``__proceduraEmit`` binding collecting what the script reports. Tests drive the page like a
person would (clicks, key presses, typing) and look at the payloads.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

from browser_support import BrowserLoop
from playwright.async_api import (
    BrowserContext,
    ElementHandle,
    Frame,
    Locator,
    Page,
)

from desktop_app.adapters.browser.locators import to_playwright
from desktop_app.core.models.target import Locator as RecordedLocator

REPO = Path(__file__).resolve().parents[1]
CAPTURE_SCRIPT = REPO / "resources" / "recorder" / "capture.js"
EFFECTS_SCRIPT = REPO / "resources" / "recorder" / "effects.js"
PAGES = Path(__file__).resolve().parent / "pages"
TEST_ID_ATTRIBUTES = ("data-testid", "data-test", "data-qa")

T = TypeVar("T")


# ── serving the fixture pages ──────────────────────────────────────────────────────────────


class _QuietHandler(SimpleHTTPRequestHandler):
    """Static files; ``?delay=MS`` answers that much later (a slow server, for late effects)."""

    def do_GET(self) -> None:
        query = parse_qs(urlsplit(self.path).query)
        delay = query.get("delay", ["0"])[0]
        if delay.isdigit():
            time.sleep(min(int(delay), 5000) / 1000)
        super().do_GET()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.do_GET()

    def log_message(self, format: str, *args: Any) -> None:
        pass


class PageServer:
    """``tests/pages`` over HTTP on 127.0.0.1, in a background thread."""

    def __init__(self, root: Path = PAGES) -> None:
        handler = functools.partial(_QuietHandler, directory=str(root))
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def url(self, name: str) -> str:
        return f"{self.base_url}/{name}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


# ── what the capture script reports ────────────────────────────────────────────────────────


@dataclass
class Captured:
    """One report: the payload, its raw JSON, and the page and frame it came from."""

    payload: dict[str, Any]
    raw: str
    page: Page | None
    frame: Frame | None

    @property
    def type(self) -> str:
        return str(self.payload.get("type"))


@dataclass
class Reports:
    """Everything the binding received in one browser context, in order."""

    items: list[Captured] = field(default_factory=list)

    def on_binding(self, source: dict[str, Any], payload: str) -> None:
        self.items.append(
            Captured(json.loads(payload), payload, source.get("page"), source.get("frame"))
        )

    @property
    def payloads(self) -> list[dict[str, Any]]:
        return [c.payload for c in self.items]

    def of(self, *types: str) -> list[dict[str, Any]]:
        return [c.payload for c in self.items if c.type in types]

    def types(self, *, ignore: tuple[str, ...] = ("effects", "loaded")) -> list[str]:
        """The types reported, in order; by default those of the person's actions only (not
        the page's observations)."""
        return [c.type for c in self.items if c.type not in ignore]

    def mark(self) -> int:
        """A position to look at later reports from (``since``)."""
        return len(self.items)

    def since(self, mark: int) -> Reports:
        return Reports(self.items[mark:])

    async def wait_for(
        self, predicate: Callable[[Reports], bool], *, timeout: float = 5.0, what: str = ""
    ) -> None:
        """Poll until *predicate* holds for these reports."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not predicate(self):
            if loop.time() > deadline:
                raise AssertionError(f"timed out waiting for {what or 'reports'}: {self.types()}")
            await asyncio.sleep(0.03)

    async def wait_for_type(self, type_: str, *, count: int = 1, timeout: float = 5.0) -> None:
        await self.wait_for(lambda r: len(r.of(type_)) >= count, timeout=timeout, what=type_)

    async def settle(self, seconds: float = 0.3) -> None:
        """Give late reports (effects, debounced changes) time to arrive."""
        await asyncio.sleep(seconds)


def target_key(payload: dict[str, Any]) -> str | None:
    target = payload.get("target") or {}
    return target.get("css")


def collapse_fills(payloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the recorder keeps: of consecutive fills of one field, only the last.

    Reports that are not actions (effects, DOM changes) do not break a run of fills.
    """
    kept: list[dict[str, Any]] = []
    last_action: dict[str, Any] | None = None
    for payload in payloads:
        if payload["type"] in ("effect", "dom_changed"):
            kept.append(payload)
            continue
        if (
            payload["type"] == "fill"
            and last_action is not None
            and last_action["type"] == "fill"
            and target_key(last_action) == target_key(payload)
        ):
            kept[kept.index(last_action)] = payload
        else:
            kept.append(payload)
        last_action = payload
    return kept


# ── resolving recorded locators the way Playwright replays them ───────────────────────────


def to_locator(scope: Page | Frame, locator: dict[str, Any]) -> Locator:
    """The Playwright locator for one recorded locator, exactly as replay builds it."""
    return to_playwright(scope, RecordedLocator.model_validate(locator))


async def locator_problems(
    scope: Page | Frame, target: dict[str, Any], element: ElementHandle
) -> list[str]:
    """Locators of *target* that do not resolve to exactly *element* (empty when all do)."""
    problems = []
    for locator in target["locators"]:
        resolved = to_locator(scope, locator)
        count = await resolved.count()
        if count != 1:
            problems.append(f"{locator} matches {count} elements")
            continue
        found = await resolved.element_handle()
        assert found is not None
        same = await scope.evaluate("([a, b]) => a === b", [found, element])
        if not same:
            problems.append(f"{locator} matches another element")
    return problems


# ── the browser ────────────────────────────────────────────────────────────────────────────


class CaptureHarness(BrowserLoop):
    """One Chromium and one page server, shared by a test module, with its own event loop."""

    def __init__(self) -> None:
        self.server = PageServer()
        try:
            super().__init__()
        except BaseException:
            self.server.close()
            raise

    def scenario(self, body: Callable[[Session], Awaitable[T]]) -> T:
        """Run *body* with a fresh recording :class:`Session`, closed afterwards."""

        async def main() -> T:
            async with self.session() as session:
                return await body(session)

        return self.run(main())

    @contextlib.asynccontextmanager
    async def session(self, *, bind: bool = True, inject: bool = True) -> Any:
        """A fresh context with the script injected; *bind* False leaves out the binding.

        *inject* False leaves the script out too (a test injects it itself, as replay does).
        """
        context = await self.browser.new_context(viewport={"width": 1000, "height": 700})
        reports = Reports()
        if bind:
            await context.expose_binding("__proceduraEmit", reports.on_binding)
        if inject:  # as the recorder does: what the page does observed first, then the person
            await context.add_init_script(path=str(EFFECTS_SCRIPT))
            await context.add_init_script(path=str(CAPTURE_SCRIPT))
        session = Session(self.server, context, reports)
        context.on("page", session.watch_page)
        try:
            yield session
        finally:
            await context.close()

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.server.close()


@dataclass
class Session:
    """A browser context being recorded: its reports and page errors."""

    server: PageServer
    context: BrowserContext
    reports: Reports
    page_errors: list[str] = field(default_factory=list)

    def watch_page(self, page: Page) -> None:
        page.on("pageerror", lambda error: self.page_errors.append(str(error)))

    async def open(self, name: str, *, wait_for_script: bool = True) -> Page:
        page = await self.context.new_page()
        await page.goto(self.server.url(name))
        if wait_for_script:
            await page.wait_for_function("() => !!window.__procedura")
        return page

    async def internal_errors(self, scope: Page | Frame) -> list[str]:
        errors: list[str] = await scope.evaluate(
            "() => [...window.__procedura.errors(),"
            " ...(window.__proceduraEffects ? window.__proceduraEffects.errors() : [])]"
        )
        return errors


@contextlib.contextmanager
def harness_for_module() -> Iterator[CaptureHarness]:
    harness = CaptureHarness()
    try:
        yield harness
    finally:
        harness.close()
