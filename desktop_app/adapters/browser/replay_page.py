"""The replay engine's browser port over one Playwright page (async API).

Navigation outside the workflow's domains is stopped at the network layer: every top-level
navigation request to another host is aborted, whatever caused it (a step, a script, a link the
LLM chose). The capture script is injected in describe-only mode, and only when healing needs to
describe elements, so a run where nothing drifted never pays for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from desktop_app.adapters.browser.guard_pattern import guarded
from desktop_app.adapters.browser.locators import to_playwright
from desktop_app.adapters.browser.page_gone import GoneWatch, stops_when_gone
from desktop_app.adapters.browser.page_items import read_items
from desktop_app.adapters.browser.page_messages import page_messages
from desktop_app.adapters.browser.page_watch import (
    BUSY_JS,
    KEPT_JS,
    MARK_JS,
    SETTLED_JS,
    WATCH_JS,
)
from desktop_app.adapters.browser.targets import fingerprint_from_payload, target_from_payload
from desktop_app.core.models.target import Target
from desktop_app.core.models.workflow import (
    ElementHidden,
    ElementPresent,
    ElementVisible,
    Expectation,
    TextPresent,
    TitleMatches,
    UrlMatches,
)
from desktop_app.core.replay.browser import (
    ActionFailed,
    Candidate,
    FieldState,
    Handle,
    NavigationRefused,
    Overlay,
    PageAction,
    PageDialog,
    PageItem,
    PageMark,
    Probe,
)
from desktop_app.core.replay.render import domain_allowed
from desktop_app.core.urls import url_matches

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Dialog, ElementHandle, Page, Request, Route
    from playwright.async_api import Locator as PlaywrightLocator

__all__ = ["PlaywrightPage"]

_POLL_S: Final = 0.05
_QUICK_MS: Final = 1500
#: How long nothing must happen (no request, no change to the document) for a page to be
#: settled.
QUIET_S: Final = 0.5
#: A request pending longer than this is the page's own long poll or stream, not loading.
_LONG_REQUEST_S: Final = 5.0

# What a form control holds: a field's value (an editable region's text), a toggle's state
# (native or ARIA), a select's chosen options (labels and values).
_FIELD_JS: Final = """(el) => {
  const tag = el.localName;
  const role = (el.getAttribute("role") || "").toLowerCase();
  let checked = null;
  if (tag === "input" && (el.type === "checkbox" || el.type === "radio")) checked = el.checked;
  else if (["checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"].includes(role))
    checked = el.getAttribute("aria-checked") === "true";
  const selected = [];
  if (tag === "select") {
    for (const option of el.selectedOptions) selected.push(option.label, option.value);
  }
  let value = "";
  if ("value" in el && typeof el.value === "string" && tag !== "button") value = el.value;
  else if (el.isContentEditable) value = el.innerText;
  return { value, checked, selected };
}"""

# Whether the element takes typed text key by key (a text field, an editable region), not a
# value set whole (a number, whose part typed so far may not be one; a date, a colour, a range).
_TYPED_JS: Final = """(el) => {
  if (el.isContentEditable || el.localName === "textarea") return true;
  if (el.localName !== "input") return false;
  return ["text", "search", "email", "url", "tel", "password"].includes(el.type);
}"""

_FOCUSED_JS: Final = """(el) => el.isConnected
  && (document.activeElement === el || el.contains(document.activeElement))"""

#: The attribute on every element a secret was typed into in this run (screenshots cover it).
_SECRET_ATTR: Final = "data-procedura-secret"
#: Mark the element a secret goes into (the control of a label, as a fill retargets to it).
_MARK_SECRET_JS: Final = f"""(el) => {{
  for (const e of [el, el.control]) if (e && e.setAttribute) e.setAttribute("{_SECRET_ATTR}", "");
}}"""
#: Mark the field that has the focus once a secret was typed (where the typing went).
_MARK_FOCUSED_SECRET_JS: Final = f"""() => {{
  const el = document.activeElement;
  if (el && (el.matches("input, textarea, select") || el.isContentEditable))
    el.setAttribute("{_SECRET_ATTR}", "");
}}"""

_RECEIVES_POINTER_JS: Final = """(el) => {
  el.scrollIntoView({block: "nearest", inline: "nearest"});
  const r = el.getBoundingClientRect();
  if (r.width === 0 || r.height === 0) return false;
  const x = Math.min(Math.max(r.left + r.width / 2, 0), window.innerWidth - 1);
  const y = Math.min(Math.max(r.top + r.height / 2, 0), window.innerHeight - 1);
  const hit = document.elementFromPoint(x, y);
  if (!hit) return false;
  if (el.contains(hit) || hit.contains(el)) return true;
  const label = hit.closest("label");
  return !!(label && (label.control === el || label.contains(el)));
}"""

# Whether what covers the element's centre is a popup: inside an absolutely or fixed
# positioned box that does not hold the element, and not in a dialog (Escape would close that).
_POPUP_JS: Final = """(el) => {
  const r = el.getBoundingClientRect();
  const x = Math.min(Math.max(r.left + r.width / 2, 0), window.innerWidth - 1);
  const y = Math.min(Math.max(r.top + r.height / 2, 0), window.innerHeight - 1);
  const hit = document.elementFromPoint(x, y);
  if (!hit || el.contains(hit) || hit.contains(el)) return false;
  if (hit.closest('dialog, [role="dialog"], [role="alertdialog"], [aria-modal="true"]'))
    return false;
  for (let box = hit; box && box !== document.body; box = box.parentElement) {
    const position = getComputedStyle(box).position;
    if (position === "absolute" || position === "fixed") return !box.contains(el);
  }
  return false;
}"""

# [visible, enabled] of every match, as Playwright defines them, in one round trip.
_STATES_JS: Final = """(elements) => elements.map((el) => {
  const r = el.getBoundingClientRect();
  const s = getComputedStyle(el);
  const visible = r.width > 0 && r.height > 0 && s.visibility !== "hidden";
  const disabled = el.disabled === true || el.closest("fieldset[disabled]") !== null
    && !el.closest("legend") || el.closest('[aria-disabled="true"]') !== null
    || el.closest("[inert]") !== null;
  return [visible, !disabled];
})"""

# A visible overlay taking clicks: what covers the middle of the window (or a modal dialog),
# and the control inside it whose words say "close me without committing to anything".
_OVERLAY_JS: Final = """(words) => {
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    const s = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && s.visibility !== "hidden" && s.display !== "none";
  };
  const W = window.innerWidth, H = window.innerHeight;
  const roots = new Set();
  for (const [fx, fy] of [[0.5, 0.5], [0.25, 0.25], [0.75, 0.75], [0.5, 0.15]]) {
    let el = document.elementFromPoint(W * fx, H * fy);
    while (el && el !== document.body && el !== document.documentElement) {
      const s = getComputedStyle(el);
      const r = el.getBoundingClientRect();
      const pinned = s.position === "fixed" || s.position === "sticky";
      if (pinned && r.width * r.height >= W * H * 0.3) {
        roots.add(el);
        break;
      }
      el = el.parentElement;
    }
  }
  for (const el of document.querySelectorAll('[aria-modal="true"], dialog[open]')) {
    if (visible(el)) roots.add(el);
  }
  if (!roots.size) return null;
  const controls = [];
  for (const root of roots) {
    for (const c of root.querySelectorAll(
        'button, [role="button"], input[type="button"], input[type="submit"], a[href]')) {
      if (!visible(c)) continue;
      const label = ((c.getAttribute("aria-label") || c.innerText || c.value || "") + "")
        .trim().replace(/\\s+/g, " ");
      const lower = label.toLowerCase();
      const rank = words.findIndex((w) => lower === w || lower.startsWith(w + " ")
        || lower.endsWith(" " + w));
      if (rank >= 0) controls.push({c, label, rank, root});
    }
  }
  if (!controls.length) return null;
  controls.sort((a, b) => a.rank - b.rank);
  const best = controls[0];
  const token = "d" + Math.random().toString(36).slice(2, 10);
  best.c.setAttribute("data-procedura-dismiss", token);
  const dialog = best.c.closest('[role="dialog"], [role="alertdialog"], dialog') || best.root;
  const titleId = dialog.getAttribute("aria-labelledby");
  const titled = titleId && document.getElementById(titleId);
  const heading = titled || dialog.querySelector("h1, h2, h3");
  const title = heading ? heading.textContent.trim().replace(/\\s+/g, " ").slice(0, 80) : "";
  return {token, label: best.label, title};
}"""

#: Words of controls that close an overlay without committing to anything, most wanted first.
DISMISS_WORDS: Final = (
    "accept",
    "accept all",
    "allow",
    "allow all",
    "allow cookies",
    "agree",
    "i agree",
    "ok",
    "okay",
    "got it",
    "understood",
    "dismiss",
    "close",
    "continue",
    "no thanks",
    "not now",
    "maybe later",
    "×",
    "✕",
)


@stops_when_gone
class PlaywrightPage:
    """:class:`~desktop_app.core.replay.browser.BrowserPort` over one Playwright page (which,
    once closed or crashed, makes every call raise ``BrowserGone``).

    Args:
        page: the page to drive (its context gets the navigation guard).
        domains: where the run may go.
        describe_script: the path of ``capture.js``.
    """

    def __init__(self, page: Page, domains: tuple[str, ...], describe_script: Path) -> None:
        self._page = page
        self._gone_watch = GoneWatch(page)
        self._domains = domains
        self._script = describe_script
        self._refused: list[str] = []
        self._refusals_told = 0  # how many of them a step has failed with
        self._secret_fields: list[PlaywrightLocator] = []
        self._pending: dict[Request, float] = {}
        self._last_request = time.monotonic()
        self._requests = 0
        self._asked = 0
        self._documents = 0
        self._document_method = "GET"
        # While reloading to see what the app kept, a page asking to stay is not left.
        self._staying = False
        self._asked_to_stay = False
        # When the last action ended: a click's navigation may not have sent its request yet,
        # and the page it leaves is no settled page.
        self._last_action = time.monotonic()
        self._dialog_answer: Literal["accept", "dismiss"] | None = None
        self._dialogs: list[PageDialog] = []
        # The context, the guard's pattern and the watch script's disposer.
        self._installed: tuple[BrowserContext, str | re.Pattern[str], Any] | None = None
        # The field the last fill typed into: what it shows may have changed with the typing
        # (a row whose title follows its edit box), so its locator may no longer find it.
        self._typed: tuple[Handle, ElementHandle] | None = None
        for event, handler in self._listeners():
            page.on(event, handler)  # type: ignore[call-overload]

    @property
    def page(self) -> Page:
        """The Playwright page."""
        return self._page

    @property
    def refused(self) -> list[str]:
        """Navigations that were stopped because they left the workflow's domains."""
        return list(self._refused)

    async def install(self, context: BrowserContext) -> None:
        """Guard *context* (abort navigation requests that leave the domains: the guard sees
        only requests that may, see :func:`guarded`) and have its pages note when their
        document changes (see :meth:`settled`)."""
        pattern = guarded(self._domains)
        await context.route(pattern, self._guard)
        self._installed = (context, pattern, await context.add_init_script(script=WATCH_JS))

    async def release(self) -> None:
        """Take back what this run put on its page and context (listeners, the guard, the
        watch script), so that the page can serve another run with other domains: a page
        kept between runs (a fleet worker's) answers to one run's port at a time."""
        page = self._page
        for event, handler in self._listeners():
            page.remove_listener(event, handler)
        self._gone_watch.detach()
        if self._installed is not None:
            context, pattern, script = self._installed
            self._installed = None
            await context.unroute(pattern, self._guard)
            await script.close()

    def _listeners(self) -> tuple[tuple[str, Callable[..., Any]], ...]:
        return (
            ("dialog", self._on_dialog),
            ("request", self._on_request),
            ("requestfinished", self._on_request_done),
            ("requestfailed", self._on_request_done),
        )

    async def _on_dialog(self, dialog: Dialog) -> None:
        from playwright.async_api import Error

        kind = dialog.type
        self._asked += 1
        if kind == "beforeunload" and self._staying:
            self._asked_to_stay = True
            with contextlib.suppress(Error):
                await dialog.dismiss()
            return
        expected = self._dialog_answer is not None and kind in ("confirm", "prompt")
        accept = kind in ("alert", "beforeunload") or self._dialog_answer == "accept"
        self._dialogs.append(PageDialog(kind, dialog.message[:300], accept, expected))
        with contextlib.suppress(Error):
            await (dialog.accept() if accept else dialog.dismiss())

    async def answer_dialogs(self, answer: Literal["accept", "dismiss"] | None) -> None:
        self._dialog_answer = answer
        self._dialogs = []

    async def dialogs(self) -> list[PageDialog]:
        return list(self._dialogs)

    def _on_request(self, request: Request) -> None:
        from playwright.async_api import Error

        self._pending[request] = time.monotonic()
        self._last_request = time.monotonic()
        self._requests += 1
        with contextlib.suppress(Error):  # a service worker's request has no frame
            if request.is_navigation_request() and request.frame == self._page.main_frame:
                self._documents += 1
                self._document_method = request.method

    def _on_request_done(self, request: Request) -> None:
        self._pending.pop(request, None)
        self._last_request = time.monotonic()

    async def _guard(self, route: Route, request: Request) -> None:
        if request.is_navigation_request() and not domain_allowed(request.url, self._domains):
            self._refused.append(request.url)
            await route.abort("blockedbyclient")
            return
        await route.fallback()

    # ── seeing ─────────────────────────────────────────────────────────────────────────────

    async def url(self) -> str:
        return self._page.url

    def _locator(self, handle: Handle) -> PlaywrightLocator:
        if handle.locator is not None:
            return to_playwright(self._page, handle.locator)
        assert handle.selector is not None
        return self._page.locator(handle.selector)

    async def probe(self, handle: Handle) -> Probe:
        from playwright.async_api import Error

        await self._tell_refusals()
        locator = self._locator(handle)
        try:
            states: Any = await locator.evaluate_all(_STATES_JS)
            if not states and await locator.count() == 1:
                # Some selector engines (aria-ref) resolve one element but not "all" of them.
                states = [await locator.evaluate(f"(el) => ({_STATES_JS})([el])[0]")]
        except Error:
            return Probe(count=0)
        if len(states) != 1:
            return Probe(count=len(states))
        return Probe(count=1, visible=bool(states[0][0]), enabled=bool(states[0][1]))

    async def receives_pointer(self, handle: Handle) -> bool:
        from playwright.async_api import Error

        try:
            return bool(await _evaluate_one(self._locator(handle), _RECEIVES_POINTER_JS))
        except Error:
            return True  # let the action itself report what is wrong

    async def covered_by_popup(self, handle: Handle) -> bool:
        from playwright.async_api import Error

        try:
            return bool(await _evaluate_one(self._locator(handle), _POPUP_JS))
        except Error:
            return False

    async def busy(self) -> bool:
        from playwright.async_api import Error

        try:
            return bool(await self._page.evaluate(BUSY_JS))
        except Error:
            return True  # navigating: the page is busy

    async def settled(self, *, quiet_s: float | None = None, pending: bool = False) -> bool:
        from playwright.async_api import Error

        quiet_s = QUIET_S if quiet_s is None else quiet_s
        now = time.monotonic()
        if now - max(self._last_request, self._last_action) < quiet_s:
            return False
        if any(now - began < _LONG_REQUEST_S for began in self._pending.values()):
            return False
        try:
            # Quiet and not busy in one look: a spinner removed between two looks would leave
            # a page that was quiet while loading and is no longer loading, but just changed.
            settled = await self._page.evaluate(SETTLED_JS, [quiet_s * 1000, pending])
            if settled is None:
                # A document the init script missed (one open before the run, or a race with
                # its creation): watched from now on, quiet from a moment from now.
                await self._page.evaluate(WATCH_JS)
                return False
        except Error:
            return False  # navigating
        return bool(settled)

    async def documents(self) -> int:
        return self._documents

    async def mark(self) -> PageMark:
        from playwright.async_api import Error

        document, changes = None, 0
        with contextlib.suppress(Error):
            found: Any = await self._page.evaluate(MARK_JS)
            if isinstance(found, list) and len(found) == 2:
                document, changes = str(found[0]), int(found[1])
        return PageMark(
            document, changes, self._requests, self._documents, self._page.url, self._asked
        )

    async def reacted(self, mark: PageMark) -> bool:
        # What the page told without being asked first: looking into a document being
        # replaced would wait for the next one.
        if (self._requests, self._documents, self._asked) != (
            mark.requests,
            mark.documents,
            mark.dialogs,
        ):
            return True
        if self._page.url != mark.url:
            return True
        now = await self.mark()
        return now.document != mark.document or now.changes != mark.changes

    async def kept_in_browser(self) -> bool:
        from playwright.async_api import Error

        try:
            return bool(await self._page.evaluate(KEPT_JS))
        except Error:
            return False

    async def reload(
        self, *, timeout_s: float
    ) -> Literal["reloaded", "not reloadable", "asked to stay", "failed"]:
        from playwright.async_api import Error

        if self._document_method != "GET" or not domain_allowed(self._page.url, self._domains):
            return "not reloadable"
        self._staying, self._asked_to_stay = True, False
        reloading = asyncio.ensure_future(
            self._page.reload(timeout=timeout_s * 1000, wait_until="domcontentloaded")
        )
        try:
            # A page that asks to stay never navigates: no waiting out the timeout for it.
            while not reloading.done() and not self._asked_to_stay:
                await asyncio.sleep(_POLL_S)
            if self._asked_to_stay:
                return "asked to stay"
            return "failed" if reloading.exception() is not None else "reloaded"
        finally:
            self._staying = False
            if not reloading.done():
                reloading.cancel()
            with contextlib.suppress(asyncio.CancelledError, Error):
                await reloading

    async def blocking_overlay(self) -> Overlay | None:
        from playwright.async_api import Error

        try:
            found: Any = await self._page.evaluate(_OVERLAY_JS, list(DISMISS_WORDS))
        except Error:
            return None
        if not isinstance(found, dict):
            return None
        title = str(found.get("title") or "an overlay")
        return Overlay(
            description=f"the overlay '{title}'" if found.get("title") else "an overlay",
            dismiss=Handle(selector=f'[data-procedura-dismiss="{found["token"]}"]'),
            dismiss_label=str(found.get("label") or ""),
            title=str(found.get("title") or ""),
        )

    async def _ensure_script(self) -> None:
        has = await self._page.evaluate("() => typeof window.__procedura === 'object'")
        if not has:
            await self._page.evaluate("() => { window.__proceduraDescribeOnly = true; }")
            await self._page.evaluate(self._script.read_text(encoding="utf-8"))

    async def candidates(self) -> list[Candidate]:
        from playwright.async_api import Error

        try:
            await self._ensure_script()
            found: Any = await self._page.evaluate("() => window.__procedura.candidates()")
        except Error:
            return []
        result = []
        for item in found or []:
            if not isinstance(item, dict):
                continue
            fingerprint = fingerprint_from_payload(item.get("fingerprint"))
            selector = item.get("css") or (f"xpath={item['xpath']}" if item.get("xpath") else None)
            if fingerprint is not None and selector:
                result.append(Candidate(Handle(selector=selector), fingerprint))
        return result

    async def page_messages(self) -> list[str]:
        return await page_messages(self._page)

    async def describe(self, handle: Handle) -> Target | None:
        from playwright.async_api import Error

        try:
            await self._ensure_script()
            data = await self._locator(handle).evaluate(
                "(el) => window.__procedura.describe(el)", timeout=_QUICK_MS
            )
        except Error:
            return None
        return target_from_payload(data)

    async def snapshot(self) -> str:
        from playwright.async_api import Error

        try:
            with contextlib.suppress(Error):  # of the page once it loaded, as a person reads it
                await self._page.wait_for_load_state("load", timeout=10_000)
            return await self._page.aria_snapshot(mode="ai", timeout=5000)
        except Error as exc:
            raise ActionFailed(f"could not read the page: {_first_line(exc)}") from None

    async def ref_handle(self, ref: str) -> Handle:
        return Handle(selector=f"aria-ref={ref}")

    async def read(self, handle: Handle, attribute: str | None) -> str:
        from playwright.async_api import Error

        locator = self._locator(handle)
        try:
            if attribute is None:
                return await locator.inner_text(timeout=_QUICK_MS)
            if attribute == "value":
                return await locator.input_value(timeout=_QUICK_MS)
            return await locator.get_attribute(attribute, timeout=_QUICK_MS) or ""
        except Error as exc:
            raise ActionFailed(f"could not read {handle.describe()}: {_first_line(exc)}") from None

    async def items(
        self, css: str, *, contains: str | None, key: str | None, fields: dict[str, str]
    ) -> list[PageItem]:
        return await read_items(self._page, css, contains=contains, key=key, fields=fields)

    async def field_state(self, handle: Handle) -> FieldState:
        from playwright.async_api import Error

        try:
            data: Any = await self._typed_state(handle)
            if data is None:
                data = await _evaluate_one(self._locator(handle), _FIELD_JS)
        except Error as exc:
            raise ActionFailed(f"could not read {handle.describe()}: {_first_line(exc)}") from None
        checked = data.get("checked")
        return FieldState(
            value=str(data.get("value") or ""),
            checked=bool(checked) if checked is not None else None,
            selected=tuple(str(v) for v in data.get("selected") or ()),
        )

    async def _typed_state(self, handle: Handle) -> Any:
        """What the field the last fill typed into holds, when *handle* is how it was reached
        and the field is still in the page (else None)."""
        if self._typed is None or self._typed[0] != handle:
            return None
        return await self._typed[1].evaluate(f"(el) => el.isConnected ? ({_FIELD_JS})(el) : null")

    async def _forget_typed(self) -> None:
        from playwright.async_api import Error

        if self._typed is not None:
            element, self._typed = self._typed[1], None
            with contextlib.suppress(Error):
                await element.dispose()

    async def screenshot(self) -> bytes:
        from playwright.async_api import Error

        try:
            masks = [
                self._page.locator(f"input[type=password], [{_SECRET_ATTR}]"),
                *self._secret_fields,
            ]
            return await self._page.screenshot(type="png", mask=masks, timeout=5000)
        except Error as exc:
            raise ActionFailed(f"could not take a screenshot: {_first_line(exc)}") from None

    async def expectation_holds(self, expectation: Expectation, *, timeout_s: float) -> bool:
        from playwright.async_api import Error

        match expectation:
            case UrlMatches() | TitleMatches():
                return await self._poll(expectation, timeout_s)
            case TextPresent(text=text):
                # Shown anywhere: the first match may be hidden (an option, a closed menu).
                locator = self._page.get_by_text(text).filter(visible=True).first
                return await self._wait(locator, "visible", timeout_s)
            case (
                ElementVisible(target=target)
                | ElementHidden(target=target)
                | ElementPresent(target=target)
            ):
                state = {"visible": "visible", "hidden": "hidden"}.get(expectation.kind, "attached")
                try:
                    locator = to_playwright(self._page, target.locators[0])
                except (ValueError, Error):
                    return False
                return await self._wait(locator.first, state, timeout_s)
            case _:
                return False  # window titles and image anchors are the desktop's

    async def _wait(self, locator: PlaywrightLocator, state: Any, timeout_s: float) -> bool:
        from playwright.async_api import Error

        try:
            await locator.wait_for(state=state, timeout=max(timeout_s * 1000, 1))
        except Error:
            return False
        return True

    async def _poll(self, expectation: UrlMatches | TitleMatches, timeout_s: float) -> bool:
        from playwright.async_api import Error

        deadline = time.monotonic() + timeout_s
        while True:
            if isinstance(expectation, UrlMatches):
                if _url_matches(self._page.url, expectation):
                    return True
            else:
                try:
                    if expectation.text in await self._page.title():
                        return True
                except Error:
                    pass
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(_POLL_S)

    # ── acting ─────────────────────────────────────────────────────────────────────────────

    async def goto(self, url: str, *, timeout_s: float) -> None:
        from playwright.async_api import Error

        if not domain_allowed(url, self._domains):
            raise NavigationRefused(f"refused to open {url}: outside the workflow's domains")
        refused = len(self._refused)
        try:
            await self._page.goto(url, timeout=timeout_s * 1000, wait_until="domcontentloaded")
        except Error as exc:
            if len(self._refused) > refused:
                await self._leave(self._refused[-1])
            raise ActionFailed(f"could not open {url}: {_first_line(exc)}") from None
        await self._stay_inside(refused)

    async def perform(self, handle: Handle | None, action: PageAction, *, timeout_s: float) -> None:
        from playwright.async_api import Error

        timeout = timeout_s * 1000
        if not domain_allowed(self._page.url, self._domains):
            await self._leave(self._page.url)
        await self._tell_refusals()
        refused = len(self._refused)
        await self._forget_typed()
        try:
            if handle is None:
                await self._on_page(action)
            else:
                locator = self._locator(handle)
                if action.secret:  # before typing: a fill that fails half-way shows some
                    await self._cover_secret(locator)
                typed = await self._on_element(locator, action, timeout)
                if typed is not None:
                    self._typed = (handle, typed)
                if action.secret:
                    with contextlib.suppress(Error):
                        await self._page.evaluate(_MARK_FOCUSED_SECRET_JS)
        except Error as exc:
            message = _first_line(exc)
            blocked = "intercepts pointer events" in str(exc)
            if action.secret:
                message = "the secret field could not be filled"
            target = handle.describe() if handle is not None else "the page"
            raise ActionFailed(f"{action.kind} on {target}: {message}", blocked=blocked) from None
        finally:
            self._last_action = time.monotonic()
        await self._stay_inside(refused)

    async def _cover_secret(self, locator: PlaywrightLocator) -> None:
        """Have every screenshot of this run cover the element *locator* finds, whatever its
        type: by the locator (the element the page may render anew) and by an attribute on the
        element itself (the locator may be a reference that later finds another element)."""
        from playwright.async_api import Error

        self._secret_fields.append(locator)
        with contextlib.suppress(Error):
            await _evaluate_one(locator, _MARK_SECRET_JS)

    async def _stay_inside(self, refused_before: int) -> None:
        """Raise if the last action left the domains (a refused request, or a redirect that
        took the page elsewhere), after taking the page off the foreign site."""
        if len(self._refused) > refused_before:
            await self._leave(self._refused[-1], navigated=False)
        if not domain_allowed(self._page.url, self._domains):
            await self._leave(self._page.url)

    async def _tell_refusals(self) -> None:
        """Raise for a navigation refused since a step last failed with one: a script's, which
        the page started after the step that set it off was over."""
        if len(self._refused) > self._refusals_told:
            await self._leave(self._refused[-1], navigated=False)

    async def _leave(self, url: str, *, navigated: bool = True) -> None:
        from playwright.async_api import Error

        self._refusals_told = len(self._refused)
        if navigated:
            with contextlib.suppress(Error):
                await self._page.goto("about:blank")
        raise NavigationRefused(
            f"the page tried to open {url}, outside the workflow's domains; stopped there"
        )

    async def _on_page(self, action: PageAction) -> None:
        if action.kind == "press":
            await self._page.keyboard.press(action.key)
        elif action.kind == "scroll":
            await self._page.mouse.wheel(action.dx, action.dy)
        else:
            raise ActionFailed(f"{action.kind} needs an element")

    async def _on_element(
        self, locator: PlaywrightLocator, action: PageAction, timeout: float
    ) -> ElementHandle | None:
        """Do *action* on the element *locator* finds; for a fill, the field typed into."""
        from playwright.async_api import Error

        match action.kind:
            case "click":
                await locator.click(
                    button=action.button,
                    click_count=action.click_count,
                    modifiers=list(action.modifiers) or None,  # type: ignore[arg-type]
                    timeout=timeout,
                )
            case "fill":
                return await self._type(locator, action.value, timeout)
            case "select":
                try:
                    await locator.select_option(label=action.value, timeout=_QUICK_MS)
                except Error:
                    await locator.select_option(value=action.value, timeout=timeout)
            case "check":
                await locator.set_checked(action.checked, timeout=timeout)
            case "press":
                await locator.press(action.key, timeout=timeout)
            case "scroll":
                await locator.scroll_into_view_if_needed(timeout=timeout)
                if action.dx or action.dy:
                    await self._page.mouse.wheel(action.dx, action.dy)
        return None

    async def _type(
        self, locator: PlaywrightLocator, value: str, timeout: float
    ) -> ElementHandle | None:
        """Put *value* in the field as typing would end: filled, its last character a real
        key press on a text field (keydown, input, keyup). An app that reads the field on a
        key (Knockout's ``afterkeydown``, a mask) sees it as the person's typing made it see.

        The field is found once: what it shows may change as it is filled (a row whose title
        follows its edit box), and the key goes to that field, still focused, or nowhere. The
        field is returned, for reading back what it holds (the caller disposes of it)."""
        element = await locator.element_handle(timeout=timeout)
        try:
            if not value or not await element.evaluate(_TYPED_JS):
                await element.fill(value, timeout=timeout)
                return element
            await element.fill(value[:-1], timeout=timeout)
            if await element.evaluate(_FOCUSED_JS):
                await self._page.keyboard.type(value[-1])
            else:  # the page moved the focus away: the value whole, as a fill puts it
                await element.fill(value, timeout=timeout)
        except BaseException:
            await element.dispose()
            raise
        return element


async def _evaluate_one(locator: PlaywrightLocator, script: str) -> Any:
    """*script* (a function of one element) on the one element *locator* finds now, in one
    round trip: a locator's own ``evaluate`` waits for the element through the page's
    animation frames, ten milliseconds on an idle page, on every read of every step. An
    element not there yet (or a selector engine that finds one element, not all: aria-ref)
    is waited for as ``evaluate`` does, a short while; more than one is an error, as there."""
    results: list[Any] = await locator.evaluate_all(f"(els) => els.map({script})")
    if len(results) == 1:
        return results[0]
    if len(results) > 1:
        from playwright.async_api import Error

        raise Error(f"{len(results)} elements match {locator}, not one")
    return await locator.evaluate(script, timeout=_QUICK_MS)


def _url_matches(url: str, expectation: UrlMatches) -> bool:
    return url_matches(url, expectation.pattern, expectation.match)


def _first_line(exc: BaseException) -> str:
    lines = [line for line in str(exc).strip().splitlines() if line.strip()]
    text = lines[0] if lines else type(exc).__name__
    return text[:300]
