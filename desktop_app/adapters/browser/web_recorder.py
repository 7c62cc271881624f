"""Recording a demonstration in Chromium: the injected capture script reports, we persist.

The capture script (``resources/recorder/capture.js``) runs in every page and frame and reports
each user action through the ``__proceduraEmit`` binding. Here each report becomes an
:class:`~desktop_app.core.models.Event`: its target, a screenshot taken before the action took
effect (the target outlined, sensitive fields masked), the URL and title before and after, and an
ARIA snapshot after navigations and significant DOM changes (values of sensitive fields redacted).
Events are handed to a :class:`~desktop_app.core.recording.RecordingSession`, which writes each
one at once. An event is held back at most ``_SETTLE_S`` to learn what it did (its ``after``
observation and whether it had a visible effect), so a crash loses at most about a second.

While the recording runs, the person can pause it (what they do meanwhile is dropped, typing
included, even when the page reports it only after they resume), mark the focused field
sensitive (the same path as the Alt+Shift+S hotkey of the capture script), and add notes
(``ActionKind.NOTE`` events, stored in order with the actions around them).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pydantic import ValidationError

from desktop_app.adapters.browser.targets import target_from_payload
from desktop_app.core.errors import BrowserError
from desktop_app.core.induction.naming import label_of
from desktop_app.core.models.common import utcnow
from desktop_app.core.models.trajectory import (
    ActionKind,
    Event,
    Modifier,
    Observation,
    ScrollDelta,
    SecretPlaceholder,
)
from desktop_app.core.ports import MediaStore
from desktop_app.core.recording import RecordingSession
from desktop_app.core.redaction import redact_snapshot

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, CDPSession, Frame, Page

    from desktop_app.adapters.browser.launch import BrowserSession

__all__ = ["SENSITIVE_CSS", "WebRecorder"]

log = logging.getLogger(__name__)

#: Fields whose values are secret by their semantics; masked in every screenshot.
SENSITIVE_CSS: Final = ", ".join(
    [
        "input[type=password i]",
        "[data-procedura-sensitive=true]",
        "input[autocomplete^=cc- i]",
        "input[autocomplete=one-time-code i]",
        "input[autocomplete=current-password i]",
        "input[autocomplete=new-password i]",
        *(
            f"input[{attr}*={word} i]"
            for attr in ("name", "id")
            for word in ("pass", "secret", "token", "ssn", "iban", "cvv", "cvc", "otp")
        ),
        "input[name=pin i]",
        "input[id=pin i]",
    ]
)

#: How a screenshot outlines the element acted on (the capture script marks it).
_HIGHLIGHT_CSS: Final = (
    "[data-procedura-target] "
    "{ outline: 3px solid #e8112d !important; outline-offset: 2px !important; }"
)

#: The values of sensitive fields, in every frame, to redact from ARIA snapshots. They stay in
#: memory for the moment of the redaction and are never stored.
_SENSITIVE_VALUES_JS: Final = (
    f"() => Array.from(document.querySelectorAll({json.dumps(SENSITIVE_CSS)}))"
    '.map(el => el.value || "").filter(v => v.length > 0)'
)

#: The value of the field a CSS selector names (read to redact it, never stored).
_FIELD_VALUE_JS: Final = """(css) => {
  const el = document.querySelector(css);
  if (!el) return "";
  return typeof el.value === "string" ? el.value : (el.innerText || "");
}"""

_MARK_TARGET_JS: Final = """(css) => {
  for (const el of document.querySelectorAll('[data-procedura-target]')) {
    el.removeAttribute('data-procedura-target');
  }
  const el = css ? document.querySelector(css) : null;
  if (el) el.setAttribute('data-procedura-target', '');
}"""

_SETTLE_S: Final = 0.8
#: How long storing an event waits for its ARIA snapshot (taken in the background meanwhile).
_ARIA_WAIT_S: Final = 1.0
#: Reports whose screenshot is taken the moment they arrive (clicks use their pointerdown's).
_SHOT_AT_REPORT: Final = frozenset(
    {"pointerdown", "fill", "select", "check", "uncheck", "press", "upload"}
)
_SCREENSHOT_QUALITY: Final = 40
#: Reports dropped while the recording is paused (observations such as ``effect`` are kept).
_PAUSABLE: Final = frozenset(
    {
        "pointerdown",
        "click",
        "double_click",
        "fill",
        "select",
        "check",
        "uncheck",
        "press",
        "submit",
        "upload",
        "scroll",
    }
)
#: A fill begun before a pause and sent this soon after it is what the pause flushed: kept.
_PAUSE_FLUSH_GRACE_MS: Final = 1500.0
_FLUSH_JS: Final = "() => window.__procedura && window.__procedura.flush()"
#: The focused value field of a document: its description, and whether it is marked already.
#: ``{"frame": true}`` when the focus is inside a child frame.
_FOCUSED_FIELD_JS: Final = """() => {
  const el = document.activeElement;
  if (!el || el === document.body || el === document.documentElement) return null;
  const tag = el.tagName.toLowerCase();
  if (tag === "iframe" || tag === "frame") return { frame: true };
  const type = tag === "input" ? (el.type || "").toLowerCase() : "";
  const buttonish = ["button", "submit", "reset", "image", "checkbox", "radio", "file", "hidden"];
  const field = tag === "textarea" || tag === "select" || el.isContentEditable ||
    (tag === "input" && !buttonish.includes(type));
  if (!field) return null;
  const api = window.__procedura;
  return {
    frame: false,
    target: api ? api.describe(el) : null,
    marked: el.closest('[data-procedura-sensitive="true"]') !== null,
  };
}"""
_MARK_TIMEOUT_S: Final = 5.0
_PRE_SHOT_MAX_AGE_S: Final = 3.0

_ACTIONS: Final[dict[str, ActionKind]] = {
    "click": ActionKind.CLICK,
    "double_click": ActionKind.DOUBLE_CLICK,
    "fill": ActionKind.FILL,
    "select": ActionKind.SELECT,
    "check": ActionKind.CHECK,
    "uncheck": ActionKind.UNCHECK,
    "press": ActionKind.PRESS,
    "submit": ActionKind.SUBMIT,
    "upload": ActionKind.UPLOAD,
    "scroll": ActionKind.SCROLL,
}
_MODIFIERS: Final = {m.value: m for m in Modifier}


def _when(ms: Any) -> datetime:
    try:
        return datetime.fromtimestamp(float(ms) / 1000, UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return utcnow()


async def _result(task: asyncio.Task[str | None] | None) -> str | None:
    if task is None:
        return None
    try:
        return await task
    except Exception:
        return None


@dataclass
class _Tab:
    page: Page
    id: str
    cdp: asyncio.Task[CDPSession] | None = None
    # The screenshot started at the last pointerdown (before the click took effect): when it was
    # asked for, and the task taking it.
    pre_shot: tuple[float, asyncio.Task[str | None]] | None = None
    last_shot: tuple[str, str] | None = None  # (url, media ref) of the newest shot of this tab
    # Outlining the target and taking the shot happen as one, in the order actions were reported.
    shooting: asyncio.Lock = field(default_factory=asyncio.Lock)
    expect_typed: bool = False


@dataclass
class _Held:
    """An event waiting to learn what it did: its effect and what the page showed next."""

    event: Event
    tab: _Tab
    payload_id: str | None
    due: float
    after: Observation | None = None
    aria: asyncio.Task[str | None] | None = None


class WebRecorder:
    """Records what a person does in a browser context into a :class:`RecordingSession`.

    Args:
        browser: the launched or attached browser.
        session: where events go (started by the caller).
        media: where screenshots go; None to take none.
        capture_script: the path of ``capture.js``.
        on_scrubbed: called after a field marked sensitive late was scrubbed from the store
            (to purge what the database may still hold of the old values, such as its log).
    """

    def __init__(
        self,
        browser: BrowserSession,
        session: RecordingSession,
        media: MediaStore | None,
        capture_script: Path,
        *,
        on_scrubbed: Callable[[], object] | None = None,
    ) -> None:
        self._browser = browser
        self._context: BrowserContext = browser.context
        self._session = session
        self._media = media
        self._script = capture_script
        self._on_scrubbed = on_scrubbed
        self._queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._tabs: dict[Page, _Tab] = {}
        self._active: _Tab | None = None
        self._held: deque[_Held] = deque()
        self._closed = asyncio.Event()
        self._consumer: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._tab_count = 0
        # Pauses as [begin, end) in ms since the epoch (the page's clock: Date.now()).
        self._pauses: list[tuple[float, float | None]] = []
        self._paused_url: tuple[_Tab, str] | None = None
        self._marks: list[asyncio.Future[str | None]] = []
        # Values typed into sensitive fields, in memory only: masked in every later ARIA
        # snapshot, also where a page shows them back (a saved record's details).
        self._secrets: set[str] = set()

    # ── lifecycle ───────────────────────────────────────────────────────────────────────────

    @property
    def pages(self) -> list[Page]:
        """The pages being recorded, in the order they opened."""
        return [t.page for t in self._tabs.values()]

    @property
    def closed(self) -> asyncio.Event:
        """Set when the user closed every window (or the browser went away)."""
        return self._closed

    @property
    def trajectory_id(self) -> str:
        """The id of the trajectory being recorded."""
        return self._session.trajectory_id

    @property
    def active_page(self) -> Page | None:
        """The page the person acted on last (or the first one)."""
        tab = self._active
        return tab.page if tab is not None and not tab.page.is_closed() else None

    # ── controls ────────────────────────────────────────────────────────────────────────────

    @property
    def paused(self) -> bool:
        """Whether actions are being dropped for now."""
        return bool(self._pauses) and self._pauses[-1][1] is None

    def pause(self) -> None:
        """Drop what the person does from now on, until :meth:`resume`.

        What they typed just before is still recorded: the pages are asked to send it now.
        """
        if self.paused:
            return
        self._pauses.append((_now_ms(), None))
        tab = self._active
        self._paused_url = (tab, tab.page.url) if tab is not None else None
        self._spawn(self._flush_pages())

    def resume(self) -> None:
        """Record again. Typing done while paused is never recorded, even if sent later.

        If the person resumes on another page than they paused on, the recording goes on with
        a visit to that page (as if they had typed its address), so replay gets there too.
        """
        if not self.paused:
            return
        begin, _ = self._pauses[-1]
        self._pauses[-1] = (begin, _now_ms())
        self._spawn(self._flush_pages())  # what was typed while paused: sent now, and dropped
        paused_on, self._paused_url = self._paused_url, None
        tab = self._active
        if tab is None or tab.page.is_closed():
            return
        url = tab.page.url
        if paused_on is None or paused_on[0] is not tab or paused_on[1] != url:
            tab.expect_typed = True
            self._queue.put_nowait(("navigated", (tab.page, url, utcnow())))

    def add_note(self, text: str) -> None:
        """Record a note from the person at this point (kept in order with the actions)."""
        text = text.strip()
        if text:
            self._queue.put_nowait(("note", (text, utcnow())))

    async def mark_sensitive(self) -> str | None:
        """Mark the focused field of the active page sensitive, as Alt+Shift+S in it does.

        Returns its label ("" when it has none), or None when no field has the focus. A field
        that is sensitive already is left as it is (the hotkey would unmark it).

        Raises:
            BrowserError: the page did not confirm the marking in time.
        """
        tab = self._active
        if tab is None or tab.page.is_closed():
            return None
        focused = await self._focused_field(tab.page)
        if focused is None:
            return None
        target = target_from_payload(focused.get("target"))
        label = label_of(target) or ""
        if focused.get("marked") or (
            isinstance(focused.get("target"), dict) and focused["target"].get("sensitive")
        ):
            return label
        marked: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._marks.append(marked)
        try:
            await tab.page.keyboard.press("Alt+Shift+S")  # the capture script's own hotkey
            confirmed = await asyncio.wait_for(asyncio.shield(marked), timeout=_MARK_TIMEOUT_S)
        except TimeoutError:
            raise BrowserError(
                "the page did not confirm marking the field sensitive; click into the field "
                "and press Alt+Shift+S there"
            ) from None
        finally:
            with contextlib.suppress(ValueError):
                self._marks.remove(marked)
        return confirmed if confirmed is not None else label

    async def _focused_field(self, page: Page) -> dict[str, Any] | None:
        """What :data:`_FOCUSED_FIELD_JS` says of the frame holding the focus, if a field."""
        frames = [page.main_frame]
        while frames:
            frame = frames.pop(0)
            try:
                found = await asyncio.wait_for(frame.evaluate(_FOCUSED_FIELD_JS), timeout=2)
            except Exception:
                continue
            if not isinstance(found, dict):
                continue
            if found.get("frame"):
                frames = list(frame.child_frames)  # the focus is in one of them
                continue
            return found
        return None

    async def _flush_pages(self) -> None:
        """Have every page and frame send what was typed and not yet reported."""
        for tab in list(self._tabs.values()):
            if tab.page.is_closed():
                continue
            for frame in list(tab.page.frames):
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(frame.evaluate(_FLUSH_JS), timeout=2)

    def _dropped_while_paused(self, data: dict[str, Any]) -> bool:
        """Whether a report is of something done while paused (judged by the page's clock)."""
        if not self._pauses or data.get("type") not in _PAUSABLE:
            return False
        try:
            made = float(data.get("t") or _now_ms())
            began = float(data.get("t_start") or made)
        except (TypeError, ValueError):
            made = began = _now_ms()
        for begin, end in self._pauses:
            until = math.inf if end is None else end
            if data.get("type") == "fill":
                if begin <= began < until:
                    return True  # typing began while paused
                if began < begin and made >= begin + _PAUSE_FLUSH_GRACE_MS:
                    return True  # typing from before that went on while paused
            elif begin <= made < until:
                return True
        return False

    async def start(self, url: str | None) -> Page:
        """Inject the capture script everywhere, open (or adopt) a page and go to *url*."""
        await self._context.expose_binding("__proceduraEmit", self._on_binding)
        await self._context.add_init_script(path=str(self._script))
        self._context.on("page", self._track)
        self._context.on("close", lambda _ctx: self._closed.set())
        if self._browser.browser is not None:
            self._browser.browser.on("disconnected", lambda _b: self._closed.set())
        self._consumer = asyncio.create_task(self._consume(), name="web-recorder")
        existing = list(self._context.pages)
        for page in existing:  # an attached browser's open tabs get the script now
            self._track(page)
            with contextlib.suppress(Exception):
                await page.evaluate(self._script.read_text(encoding="utf-8"))
        page = existing[0] if existing else await self._context.new_page()
        tab = self._track(page)
        if url:
            tab.expect_typed = True
            await page.goto(url)
        return page

    async def stop(self) -> None:
        """Flush what the page still holds and what is pending; stop listening."""
        for tab in list(self._tabs.values()):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(
                    tab.page.evaluate("() => window.__procedura && window.__procedura.flush()"),
                    timeout=2,
                )
        await self._drain()
        if self._consumer is not None:
            self._consumer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._consumer
        await self._flush_all()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def inject(self, page: Page, action: Callable[[], Awaitable[object]]) -> None:
        """Run Procedura's own *action* on *page* without it being recorded as the user's."""
        await page.evaluate("() => { window.__proceduraInjecting = true; }")
        try:
            await action()
        finally:
            with contextlib.suppress(Exception):
                await page.evaluate("() => { window.__proceduraInjecting = false; }")

    async def _drain(self) -> None:
        """Wait until the queue is processed (bounded: the page may keep talking)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._queue.join(), timeout=5)

    # ── intake ──────────────────────────────────────────────────────────────────────────────

    def _on_binding(self, source: dict[str, Any], payload: str) -> None:
        page = source.get("page")
        tab = self._tabs.get(page) if page is not None else None
        data: Any = None
        with contextlib.suppress(ValueError, TypeError):
            data = json.loads(payload)
        if isinstance(data, dict) and self._dropped_while_paused(data):
            return  # done while paused: not recorded, no screenshot taken
        shot: asyncio.Task[str | None] | None = None
        if tab is not None and isinstance(data, dict) and data.get("type") in _SHOT_AT_REPORT:
            # Screenshot now, as the page reports the action: handling the report may lag
            # behind the page, which by then can show something else.
            shot = asyncio.create_task(
                self._screenshot(tab, data.get("target"), expect_url=data.get("url"))
            )
        self._queue.put_nowait(("payload", (page, source.get("frame"), payload, shot)))

    def _track(self, page: Page) -> _Tab:
        """Start following *page* (synchronously, so none of its first navigations is missed)."""
        tab = self._tabs.get(page)
        if tab is not None:
            return tab
        self._tab_count += 1
        tab = _Tab(page=page, id=f"tab-{self._tab_count}")
        self._tabs[page] = tab
        page.on("framenavigated", lambda frame: self._on_navigated(page, frame))
        page.on("close", lambda _p: self._queue.put_nowait(("close", page)))
        tab.cdp = self._spawn(self._context.new_cdp_session(page))
        if self._active is None:
            self._active = tab
        return tab

    def _on_navigated(self, page: Page, frame: Frame) -> None:
        if frame.parent_frame is None and not self.paused:
            self._queue.put_nowait(("navigated", (page, frame.url, utcnow())))

    async def _consume(self) -> None:
        while True:
            kind, item = await self._queue.get()
            try:
                await self._handle(kind, item)
            except Exception as exc:
                log.warning("recorder could not handle a %s report: %s", kind, type(exc).__name__)
            finally:
                self._queue.task_done()

    async def _handle(self, kind: str, item: Any) -> None:
        if kind == "close":
            await self._on_page_closed(item)
        elif kind == "navigated":
            page, url, at = item
            await self._on_navigation(page, url, at)
        elif kind == "payload":
            page, frame, text, shot = item
            await self._on_payload(page, frame, text, shot)
        elif kind == "settle":
            await self._flush_due()
        elif kind == "note":
            text, at = item
            await self._on_note(text, at)

    # ── reports ─────────────────────────────────────────────────────────────────────────────

    async def _on_payload(
        self,
        page: Page | None,
        frame: Frame | None,
        text: str,
        shot: asyncio.Task[str | None] | None,
    ) -> None:
        if page is None:
            return
        tab = self._track(page)
        data = json.loads(text)
        kind = data.get("type")
        if kind == "pointerdown":  # handled in order, so the click that follows gets this shot
            tab.pre_shot = (asyncio.get_running_loop().time(), shot) if shot else None
            ref = await self._peek_pre_shot(tab)
            if ref is not None:
                self._give_screenshot_to_held(tab, ref, data.get("url"))
            return
        if kind == "effect":
            for held in self._held:
                if held.payload_id is not None and held.payload_id == data.get("ref"):
                    held.event = held.event.model_copy(update={"effect": bool(data.get("effect"))})
            return
        if kind == "sensitive_marked":
            target = data.get("target")
            css = target.get("css") if isinstance(target, dict) else None
            if css and target.get("sensitive"):
                await self._remember_secret(frame or page.main_frame, css)
                await self._scrub_field(tab, css)
            if isinstance(target, dict) and target.get("sensitive"):
                label = label_of(target_from_payload(target)) or ""
                for marked in self._marks:
                    if not marked.done():
                        marked.set_result(label)
            return
        if kind == "dom_changed":
            if self._held and self._held[-1].tab is tab and self._held[-1].aria is None:
                self._held[-1].aria = self._spawn(self._aria_snapshot(tab.page))
            return
        action = _ACTIONS.get(str(kind))
        if action is None:
            return  # sensitive_marked and anything newer: nothing to record
        if data.get("frame") is None and action is not ActionKind.SUBMIT:
            # What the page showed when this action began is what the previous ones led to
            # (a submit is the consequence of the click or key before it, not a new action).
            self._saw(
                tab,
                Observation(at=_when(data.get("t")), url=data.get("url"), title=data.get("title")),
            )
        await self._switch_to(tab, _when(data.get("t")))
        event = await self._event(tab, data, action, shot)
        if event is not None and event.is_secret:
            target = data.get("target")
            css = target.get("css") if isinstance(target, dict) else None
            if isinstance(css, str):
                await self._remember_secret(frame or page.main_frame, css)
        if event is not None:
            await self._hold(event, tab, data.get("id"))

    async def _event(
        self,
        tab: _Tab,
        data: dict[str, Any],
        action: ActionKind,
        shot: asyncio.Task[str | None] | None,
    ) -> Event | None:
        target = target_from_payload(data.get("target"))
        if (
            action in {ActionKind.CLICK, ActionKind.DOUBLE_CLICK, ActionKind.FILL}
            and target is None
        ):
            return None
        sensitive = bool(isinstance(data.get("target"), dict) and data["target"].get("sensitive"))
        value: str | SecretPlaceholder | None = None
        if action is ActionKind.FILL or action is ActionKind.SELECT:
            if sensitive or (target is not None and target.is_sensitive):
                label = target.fingerprint.name if target and target.fingerprint else None
                value = SecretPlaceholder(label=label)
            else:
                raw = data.get("value")
                value = str(raw) if raw is not None else ""
        clicked = action in {ActionKind.CLICK, ActionKind.DOUBLE_CLICK}
        screenshot = await self._take_pre_shot(tab) if clicked else await _result(shot)
        if screenshot is None and action is not ActionKind.SCROLL:
            # Nothing could be taken in time (the action navigated at once): the newest shot of
            # the page it happened on shows it as it was.
            screenshot = self._last_shot_of(tab, data.get("url"))
        modifiers = tuple(_MODIFIERS[m] for m in data.get("modifiers") or () if m in _MODIFIERS)
        scroll = None
        if action is ActionKind.SCROLL:
            scroll = ScrollDelta(dx=float(data.get("dx") or 0), dy=float(data.get("dy") or 0))
        at = _when(data.get("t_start") or data.get("t"))
        ended = _when(data.get("t")) if data.get("t_start") else None
        try:
            return Event(
                action=action,
                at=at,
                ended_at=ended if ended is not None and ended >= at else None,
                target=target,
                value=value,
                key=data.get("key") if action is ActionKind.PRESS else None,
                modifiers=modifiers,
                scroll=scroll,
                files=tuple(str(f) for f in data.get("files") or ()),
                tab=tab.id,
                frame=data.get("frame"),
                before=Observation(
                    at=at,
                    url=data.get("url"),
                    title=data.get("title"),
                    screenshot=screenshot,
                ),
            )
        except ValidationError as exc:
            log.warning(
                "recorder dropped a %s report: %d invalid fields", action, exc.error_count()
            )
            return None

    async def _on_note(self, text: str, at: datetime) -> None:
        tab = (
            self._active if self._active is not None and not self._active.page.is_closed() else None
        )
        event = Event(
            action=ActionKind.NOTE,
            at=at,
            value=text,
            tab=tab.id if tab is not None else None,
            before=Observation(at=at, url=tab.page.url if tab is not None else None),
        )
        if tab is None:
            await self._flush_all()
            self._session.add(event)
        else:
            await self._hold(event, tab, None)

    async def _scrub_field(self, tab: _Tab, css: str) -> None:
        """The person marked a field sensitive, perhaps after typing: scrub what it held."""
        held = list(self._held)
        changes = self._session.redact_field(css, self._media, [h.event for h in held])
        for index, event in changes.items():
            held[index].event = event
        if self._on_scrubbed is not None:
            self._on_scrubbed()
        tab.pre_shot = None  # shots taken since may show the value
        tab.last_shot = None

    async def _on_navigation(self, page: Page, url: str, at: datetime) -> None:
        tab = self._track(page)
        if url in ("about:blank", "") or url.startswith("chrome-error://"):
            return
        typed: bool | None = True if tab.expect_typed else await self._typed(tab)
        tab.expect_typed = False
        self._saw(tab, Observation(at=at, url=url))
        await self._switch_to(tab, at)
        event = Event(
            action=ActionKind.NAVIGATE,
            at=at,
            url=url,
            typed=typed,
            tab=tab.id,
            before=Observation(at=at, url=url),
        )
        held = await self._hold(event, tab, None)
        held.aria = self._spawn(self._when_loaded(tab, url))

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        """Run *coro* in the background, owned by the recorder (cancelled when it stops)."""
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _when_loaded(self, tab: _Tab, url: str) -> str | None:
        """Once a page loaded: its screenshot (the navigation's, and the "before" of the next
        action there should that action's own shot be impossible) and its ARIA snapshot."""
        with contextlib.suppress(Exception):
            await tab.page.wait_for_load_state("load", timeout=5000)
        if tab.page.url != url:
            return None
        ref = await self._screenshot(tab, None, expect_url=url)
        if ref is not None:
            self._give_screenshot_to_held(tab, ref, url)
        return await self._aria_snapshot(tab.page)

    async def _typed(self, tab: _Tab) -> bool | None:
        """Whether the current navigation was typed by the user (Chromium's transition type)."""
        if tab.cdp is None:
            return None
        try:
            cdp = await asyncio.wait_for(asyncio.shield(tab.cdp), timeout=5)
            history = await cdp.send("Page.getNavigationHistory")
        except Exception:
            return None
        entries = history.get("entries") or []
        index = history.get("currentIndex", -1)
        if not 0 <= index < len(entries):
            return None
        transition = entries[index].get("transitionType")
        return transition in {"typed", "auto_bookmark", "generated"} if transition else None

    async def _switch_to(self, tab: _Tab, at: datetime) -> None:
        if self._active is tab:
            return
        previous, self._active = self._active, tab
        if previous is None:
            return
        await self._hold(
            Event(
                action=ActionKind.SWITCH_TAB,
                at=at,
                tab=tab.id,
                before=Observation(at=at, url=tab.page.url),
            ),
            tab,
            None,
        )

    async def _on_page_closed(self, page: Page) -> None:
        tab = self._tabs.pop(page, None)
        if tab is not None and any(h.tab is tab for h in self._held):
            await self._flush_all()
        if self._active is tab:
            self._active = next(iter(self._tabs.values()), None)
        if not self._tabs:
            self._closed.set()

    # ── holding an event until we know what it did ──────────────────────────────────────────

    async def _hold(self, event: Event, tab: _Tab, payload_id: str | None) -> _Held:
        loop = asyncio.get_running_loop()
        held = _Held(event, tab, payload_id, loop.time() + _SETTLE_S)
        self._held.append(held)
        self._spawn(self._settle_later(held.due))
        await self._flush_due()
        return held

    async def _settle_later(self, due: float) -> None:
        loop = asyncio.get_running_loop()
        # Timers may fire a little early (Qt's coarse timers under qasync by up to 5%): wait
        # until the event really is due, or it would wait for the next report to be stored.
        while (left := due - loop.time()) > 0:
            await asyncio.sleep(left + 0.005)
        self._queue.put_nowait(("settle", None))

    def _saw(self, tab: _Tab, observation: Observation) -> None:
        """The page of *tab* showed *observation* as something new began: the "after" of the
        newest held event (processing lags behind the page, so this is the faithful moment)."""
        for held in self._held:
            if held.tab is tab and held.after is None:
                held.after = observation

    async def _flush_due(self) -> None:
        now = asyncio.get_running_loop().time()
        while self._held and self._held[0].due <= now:
            await self._store(self._held.popleft())

    async def _flush_all(self) -> None:
        while self._held:
            await self._store(self._held.popleft())

    async def _store(self, held: _Held) -> None:
        """Persist a held event with what it led to."""
        event = held.event
        after = held.after
        open_page = not held.tab.page.is_closed()
        if after is None and open_page:
            after = await self._observe(held.tab)
        aria = None
        if held.aria is not None:
            with contextlib.suppress(Exception):
                aria = await asyncio.wait_for(asyncio.shield(held.aria), timeout=_ARIA_WAIT_S)
        if after is not None:
            event = event.model_copy(
                update={"after": after.model_copy(update={"aria_snapshot": aria})}
                if aria
                else {"after": after}
            )
        before = event.before or Observation()
        if before.screenshot is None and event.action is not ActionKind.NAVIGATE and open_page:
            ref = self._last_shot_of(held.tab, before.url)
            if ref is not None:
                event = event.model_copy(
                    update={"before": before.model_copy(update={"screenshot": ref})}
                )
        self._session.add(event)

    async def _observe(self, tab: _Tab) -> Observation:
        page = tab.page
        try:
            title = await asyncio.wait_for(page.title(), timeout=2)
        except Exception:
            title = None
        return Observation(at=utcnow(), url=page.url, title=title)

    async def _remember_secret(self, frame: Frame, css: str) -> None:
        """Keep (in memory) what the sensitive field *css* holds, to mask it wherever it shows."""
        with contextlib.suppress(Exception):
            value = await asyncio.wait_for(frame.evaluate(_FIELD_VALUE_JS, css), timeout=2)
            if isinstance(value, str) and value.strip():
                self._secrets.add(value)
                self._secrets.add(value.strip())

    async def _aria_snapshot(self, page: Page) -> str | None:
        try:
            await page.wait_for_load_state("domcontentloaded", timeout=3000)
            text = await asyncio.wait_for(page.aria_snapshot(mode="ai"), timeout=5)
            for frame in page.frames:
                with contextlib.suppress(Exception):
                    self._secrets.update(await frame.evaluate(_SENSITIVE_VALUES_JS))
            return redact_snapshot(text, self._secrets)
        except Exception:
            return None

    # ── screenshots ─────────────────────────────────────────────────────────────────────────

    def _give_screenshot_to_held(self, tab: _Tab, ref: str, url: str | None) -> None:
        """Held events on *tab* whose own screenshot failed get the next one of their page."""
        for held in self._held:
            before = held.event.before or Observation()
            if held.tab is tab and before.screenshot is None and before.url == url:
                held.event = held.event.model_copy(
                    update={"before": before.model_copy(update={"screenshot": ref})}
                )

    async def _peek_pre_shot(self, tab: _Tab) -> str | None:
        """The last pointerdown's screenshot, if recent (it stays for the click to take)."""
        shot = tab.pre_shot
        if shot is None:
            return None
        asked_at, task = shot
        if asyncio.get_running_loop().time() - asked_at > _PRE_SHOT_MAX_AGE_S:
            return None
        return await _result(task)

    async def _take_pre_shot(self, tab: _Tab) -> str | None:
        ref = await self._peek_pre_shot(tab)
        tab.pre_shot = None
        return ref

    async def _screenshot(
        self, tab: _Tab, target: Any, *, expect_url: str | None = None
    ) -> str | None:
        """A JPEG of the page with the target outlined and sensitive fields masked.

        With *expect_url*, no shot is taken once the page shows another URL. A shot begun on the
        right page is kept even if a navigation committed while it was taken: the frame was
        captured before the new page painted.
        """
        if self._media is None or tab.page.is_closed():
            return None
        page = tab.page
        if expect_url is not None and page.url != expect_url:
            return None
        css = target.get("css") if isinstance(target, dict) else None
        async with tab.shooting:
            with contextlib.suppress(Exception):  # the outline is a nicety; the shot matters
                await page.evaluate(_MARK_TARGET_JS, css)
            try:
                data = await page.screenshot(
                    type="jpeg",
                    quality=_SCREENSHOT_QUALITY,
                    mask=[page.locator(SENSITIVE_CSS)],
                    style=_HIGHLIGHT_CSS,
                    timeout=5000,
                )
            except Exception as exc:  # the page moved on: this action gets no shot of its own
                log.debug("no screenshot: %s", str(exc).splitlines()[0] if str(exc) else exc)
                return None
        ref = self._media.put(data, "jpg")
        tab.last_shot = (expect_url or page.url, ref)
        return ref

    @staticmethod
    def _last_shot_of(tab: _Tab, url: str | None) -> str | None:
        """The newest screenshot of *tab* while it showed *url* (the page just before)."""
        if tab.last_shot is not None and url is not None and tab.last_shot[0] == url:
            return tab.last_shot[1]
        return None


def _now_ms() -> float:
    """Now, in ms since the epoch: the clock the page's ``Date.now()`` reports on."""
    return time.time() * 1000
