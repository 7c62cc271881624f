"""Recording a demonstration in Chromium: the page's scripts report, we persist at once.

Two scripts run in every page and frame: ``resources/recorder/effects.js`` observes what the
page does and ``resources/recorder/capture.js`` what the person does; both report through the
``__proceduraEmit`` binding. Every observation of an action is made by the page at the moment of
the action (the element pressed, described before the page reacted; the address and title;
when the element was last changed) and every change the page made is attributed by the page to
the action that caused it. So the order reports arrive in, and how late the recorder handles
them, never decides what belongs to which action.

Here each action report becomes an :class:`~desktop_app.core.models.Event`, stored at once
(so a crash loses no more than the last half second of typing), and what is learnt about it
later is written into the same stored event as it arrives: its effects and the page it led to
(``effects`` reports), its picture (a frame Chromium painted before the action began, from the
tab's screencast: see :mod:`~desktop_app.adapters.browser.tab_watch`), the title of a page
opened (``loaded``), who started a navigation, and an ARIA snapshot of where it led, kept only
when no other action began while it was taken.

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
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

from pydantic import ValidationError

from desktop_app.adapters.browser.effects import effects_from_payload, ms_of
from desktop_app.adapters.browser.page_reads import (
    field_value,
    focused_field,
    snapshot_of_one_moment,
)
from desktop_app.adapters.browser.pauses import Pauses
from desktop_app.adapters.browser.step_pictures import Began, StepPictures
from desktop_app.adapters.browser.tab_watch import TabWatch
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

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Frame, Page

    from desktop_app.adapters.browser.launch import BrowserSession

__all__ = ["WebRecorder"]

K = TypeVar("K")
V = TypeVar("V")

log = logging.getLogger(__name__)

_FLUSH_JS: Final = "() => window.__procedura && window.__procedura.flush()"

#: How many of the newest events (and of actions' effects reports) are kept in memory.
_KEPT: Final = 500
#: How long stopping waits for pictures and late observations still being made (a loaded
#: machine may take seconds over the last ones; they are part of the recording).
_FINISH_WAIT_S: Final = 10.0
_MARK_TIMEOUT_S: Final = 5.0

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


class _Recent(OrderedDict[K, V]):
    """The newest :data:`_KEPT` entries: what later observations can still be about (they come
    within seconds), while a long recording's memory stays flat."""

    def __setitem__(self, key: K, value: V) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        while len(self) > _KEPT:
            self.popitem(last=False)


class _Tab:
    """One page being recorded: its id, what Chromium tells about it, its newest action."""

    def __init__(self, page: Page, tab_id: str) -> None:
        self.page = page
        self.id = tab_id
        self.watch: asyncio.Task[TabWatch | None] | None = None
        self.expect_typed = False
        self.last_action_ms: float | None = None  # when the newest action here began
        self.last_ref: str | None = None  # and its id
        self.began: deque[Began] = deque(maxlen=50)  # its recent actions (top frame)

    def first_action_after(self, moment_ms: float) -> Began | None:
        """The first action begun here after *moment_ms* that is known."""
        return min((b for b in self.began if b.at_ms > moment_ms), key=_at_ms, default=None)


def _leave_to_the_person(_dialog: object) -> None:
    """A dialog the person answers themselves (see :meth:`WebRecorder._track`)."""


class WebRecorder:
    """Records what a person does in a browser context into a :class:`RecordingSession`.

    Args:
        browser: the launched or attached browser.
        session: where events go (started by the caller).
        media: where screenshots go; None to take none.
        capture_script: the path of ``capture.js`` (``effects.js`` is the one beside it).
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
        self._scripts = (capture_script.with_name("effects.js"), capture_script)
        self._on_scrubbed = on_scrubbed
        self._queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._tabs: dict[Page, _Tab] = {}
        self._active: _Tab | None = None
        self._closed = asyncio.Event()
        self._consumer: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._tab_count = 0
        # What is stored, to write later observations into: index → event, and each action's
        # id (as the page names it) → the index of its newest event.
        self._stored: _Recent[int, Event] = _Recent()
        self._by_ref: _Recent[str, int] = _Recent()
        # The newest effects report of each action: also for the events reported after it (the
        # later reports of a typing burst carry it on).
        self._effects_seen: _Recent[str, dict[str, Any]] = _Recent()
        self._dropped_refs: set[str] = set()
        self._last_navigation: dict[str, int] = {}  # tab id → index of its newest navigation
        self._pictures = (
            StepPictures(media, self._store_picture, self._effects_seen.get) if media else None
        )
        self._pauses = Pauses()
        self._paused_url: tuple[_Tab, str] | None = None
        self._marks: list[asyncio.Future[str | None]] = []
        # Values typed into sensitive fields, in memory only: masked in everything stored
        # later, also where a page shows them back (a saved record's details).
        self._secrets: set[str] = set()

    # ── lifecycle ───────────────────────────────────────────────────────────────────────────

    @property
    def pages(self) -> list[Page]:
        """The pages being recorded, in the order they opened."""
        return [t.page for t in self._tabs.values()]

    @property
    def typed_secrets(self) -> frozenset[str]:
        """The values typed into sensitive fields so far (in memory only: to mask them in the
        intent when the recording is finished)."""
        return frozenset(self._secrets)

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

    async def start(self, url: str | None) -> Page:
        """Inject the scripts everywhere, open (or adopt) a page and go to *url*."""
        await self._context.expose_binding("__proceduraEmit", self._on_binding)
        for script in self._scripts:
            await self._context.add_init_script(path=str(script))
        self._context.on("page", self._on_new_page)
        self._context.on("close", lambda _ctx: self._closed.set())
        if self._browser.browser is not None:
            self._browser.browser.on("disconnected", lambda _b: self._closed.set())
        self._consumer = asyncio.create_task(self._consume(), name="web-recorder")
        existing = list(self._context.pages)
        for page in existing:  # an attached browser's open tabs get the scripts now
            self._track(page)
            for script in self._scripts:
                with contextlib.suppress(Exception):
                    await page.evaluate(script.read_text(encoding="utf-8"))
        page = existing[0] if existing else await self._context.new_page()
        tab = self._track(page)
        await _result(tab.watch)  # painting is watched before the first page opens
        if url:
            tab.expect_typed = True
            await page.goto(url)
        return page

    async def stop(self) -> None:
        """Flush what the pages still hold and what is being observed; stop listening."""
        for tab in list(self._tabs.values()):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(tab.page.evaluate(_FLUSH_JS), timeout=2)
        await self._drain()
        if self._consumer is not None:
            self._consumer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._consumer
        for tab in list(self._tabs.values()):
            await self._observe_the_end(tab)
        if self._pictures is not None:
            self._pictures.end()
        if self._tasks:  # pictures and late observations on their way
            await asyncio.wait(list(self._tasks), timeout=_FINISH_WAIT_S)
        if self._tasks:
            log.warning(
                "%d pictures or observations not done at the end: dropped", len(self._tasks)
            )
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for tab in list(self._tabs.values()):
            watch = await _result(tab.watch)
            if watch is not None:
                await watch.stop()

    async def _observe_the_end(self, tab: _Tab) -> None:
        """What the tab shows as the recording ends is what its last action led to: its title
        and ARIA snapshot, where they were not observed yet (the page loaded just now)."""
        if tab.page.is_closed():
            return
        last = max((i for i, e in self._stored.items() if e.tab == tab.id), default=None)
        navigation = self._last_navigation.get(tab.id)
        if navigation is not None and navigation == last:
            event = self._stored[navigation]
            if event.after is None or event.after.title is None:
                with contextlib.suppress(Exception):
                    title = await asyncio.wait_for(tab.page.title(), timeout=2)
                    self._update(navigation, after={"title": title})
        if last is None:
            return
        event = self._stored[last]
        if event.action is ActionKind.NOTE or (event.after and event.after.aria_snapshot):
            return
        snapshot = await self._aria_snapshot_of_one_moment(tab.page)
        if snapshot is not None:
            self._update(last, after={"aria_snapshot": snapshot})

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

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        """Run *coro* in the background, owned by the recorder (cancelled when it stops)."""
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # ── controls ────────────────────────────────────────────────────────────────────────────

    @property
    def paused(self) -> bool:
        """Whether actions are being dropped for now."""
        return self._pauses.paused

    def pause(self) -> None:
        """Drop what the person does from now on, until :meth:`resume`.

        What they typed just before is still recorded: the pages are asked to send it now.
        """
        if self.paused:
            return
        self._pauses.begin()
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
        self._pauses.end()
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
        focused = await focused_field(tab.page)
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

    async def _flush_pages(self) -> None:
        """Have every page and frame send what was typed and not yet reported."""
        for tab in list(self._tabs.values()):
            if tab.page.is_closed():
                continue
            for frame in list(tab.page.frames):
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(frame.evaluate(_FLUSH_JS), timeout=2)

    # ── intake ──────────────────────────────────────────────────────────────────────────────

    def _on_binding(self, source: dict[str, Any], payload: str) -> None:
        page = source.get("page")
        data: Any = None
        with contextlib.suppress(ValueError, TypeError):
            data = json.loads(payload)
        if not isinstance(data, dict):
            return
        if self._pauses.drops(data):
            if isinstance(data.get("action"), str):
                self._dropped_refs.add(data["action"])
            return  # done while paused: not recorded
        self._queue.put_nowait(("payload", (page, source.get("frame"), data)))

    def _on_new_page(self, page: Page) -> None:
        self._track(page)

    def _track(self, page: Page) -> _Tab:
        """Start following *page* (synchronously, so none of its first navigations is missed)."""
        tab = self._tabs.get(page)
        if tab is not None:
            return tab
        self._tab_count += 1
        tab = _Tab(page, f"tab-{self._tab_count}")
        self._tabs[page] = tab
        page.on("framenavigated", lambda frame: self._on_navigated(page, frame))
        page.on("close", lambda _p: self._queue.put_nowait(("close", page)))
        # A listener that answers nothing: the browser's own dialogs (confirm, alert) stay for
        # the person to answer (without one, Playwright would dismiss them at once). Their
        # answers are noted by the page script, on the action that asked.
        page.on("dialog", _leave_to_the_person)
        tab.watch = self._spawn(self._watch(page))
        if self._active is None:
            self._active = tab
        return tab

    async def _watch(self, page: Page) -> TabWatch | None:
        try:
            watch = TabWatch(await self._context.new_cdp_session(page))
            await watch.start(screencast=self._media is not None)
        except Exception as exc:
            log.debug("no CDP session for a tab: %s", type(exc).__name__)
            return None
        return watch

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
            self._on_navigation(page, url, at)
        elif kind == "payload":
            page, frame, data = item
            await self._on_payload(page, frame, data)
        elif kind == "note":
            text, at = item
            self._on_note(text, at)

    # ── storing, and writing later observations in ──────────────────────────────────────────

    def _add(self, event: Event, ref: str | None = None) -> int:
        index = self._session.add(event)
        self._stored[index] = event
        if ref is not None:
            self._by_ref[ref] = index
            seen = self._effects_seen.get(ref)
            if seen is not None:
                self._apply_effects(index, seen)
        return index

    def _update(self, index: int, **changes: Any) -> None:
        """Write *changes* into the stored event at *index* (fields of the event; ``before``
        and ``after`` changes are dicts of Observation fields, merged)."""
        event = self._stored.get(index)
        if event is None:
            return
        update: dict[str, Any] = {}
        for name, value in changes.items():
            if name in ("before", "after") and isinstance(value, dict):
                current = getattr(event, name) or Observation()
                update[name] = current.model_copy(update=value)
            else:
                update[name] = value
        try:  # checked whole: one bad field must never make the stored recording unreadable
            event = Event.model_validate({**event.model_dump(), **update})
        except ValidationError as exc:
            log.warning("recorder left out an observation: %d invalid fields", exc.error_count())
            return
        self._stored[index] = event
        with contextlib.suppress(RuntimeError):  # the session finished meanwhile
            self._session.update(index, event)

    # ── reports ─────────────────────────────────────────────────────────────────────────────

    async def _on_payload(
        self, page: Page | None, frame: Frame | None, data: dict[str, Any]
    ) -> None:
        if page is None:
            return
        tab = self._track(page)
        kind = data.get("type")
        if kind == "effects":
            self._on_effects(tab, data)
            return
        if kind == "loaded":
            if data.get("frame") is None:
                self._on_loaded(tab, data)
            return
        if kind == "sensitive_marked":
            await self._on_sensitive_marked(tab, frame or page.main_frame, data)
            return
        action = _ACTIONS.get(str(kind))
        if action is None:
            return  # anything newer: nothing to record
        self._switch_to(tab, _when(data.get("t_start") or data.get("t")))
        event = self._event(tab, data, action)
        if event is None:
            return
        if event.is_secret:
            target = data.get("target")
            css = target.get("css") if isinstance(target, dict) else None
            if isinstance(css, str):
                await self._remember_secret(frame or page.main_frame, css)
        ref = data.get("action") if isinstance(data.get("action"), str) else None
        index = self._add(event, ref)
        began = ms_of(data.get("t_start"))
        newest = tab.last_action_ms is None or (began is not None and began >= tab.last_action_ms)
        if ref is not None and began is not None and data.get("frame") is None:
            tab.began.append(Began(began, ref))
            if newest:
                tab.last_action_ms, tab.last_ref = began, ref
        if began is not None and action is not ActionKind.SCROLL and self._pictures is not None:
            self._spawn(self._picture_of_action(tab, frame, index, data, began))

    def _event(self, tab: _Tab, data: dict[str, Any], action: ActionKind) -> Event | None:
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
        modifiers = tuple(_MODIFIERS[m] for m in data.get("modifiers") or () if m in _MODIFIERS)
        scroll = None
        if action is ActionKind.SCROLL:
            scroll = ScrollDelta(dx=float(data.get("dx") or 0), dy=float(data.get("dy") or 0))
        options = data.get("options") if action is ActionKind.SELECT else None
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
                options=tuple(str(o) for o in options or () if isinstance(o, str)),
                tab=tab.id,
                frame=data.get("frame"),
                before=Observation(at=at, url=data.get("url"), title=data.get("title")),
            )
        except ValidationError as exc:
            log.warning(
                "recorder dropped a %s report: %d invalid fields", action, exc.error_count()
            )
            return None

    def _on_effects(self, tab: _Tab, data: dict[str, Any]) -> None:
        ref = data.get("ref")
        if not isinstance(ref, str) or ref in self._dropped_refs:
            return
        self._effects_seen[ref] = data
        index = self._by_ref.get(ref)
        if index is None:  # a typing burst not reported yet: applied once it is
            return
        self._apply_effects(index, data)
        if (
            data.get("settled")
            and ref == tab.last_ref
            and data.get("frame") is None
            and (data.get("texts_added") or data.get("dialogs_opened") or data.get("items_added"))
        ):
            self._spawn(self._snapshot_after(tab, index, ref))

    def _apply_effects(self, index: int, data: dict[str, Any]) -> None:
        effects = effects_from_payload(data, self._secrets)
        stored = self._stored.get(index)
        url = data.get("url_after", data.get("url"))
        title = data.get("title_after", data.get("title"))
        changed_url = stored is not None and stored.before is not None and stored.before.url != url
        self._update(
            index,
            effects=effects,
            effect=effects.dom_changed or effects.left_page or changed_url,
            after={"at": _when(data.get("t")), "url": url, "title": title},
        )

    async def _snapshot_after(self, tab: _Tab, index: int, ref: str) -> None:
        """An ARIA snapshot of what the action at *index* led to, if no other began meanwhile."""
        url = tab.page.url
        snapshot = await self._aria_snapshot_of_one_moment(tab.page)
        if snapshot is not None and tab.last_ref == ref and tab.page.url == url:
            self._update(index, after={"aria_snapshot": snapshot})

    def _on_note(self, text: str, at: datetime) -> None:
        tab = (
            self._active if self._active is not None and not self._active.page.is_closed() else None
        )
        self._add(
            Event(
                action=ActionKind.NOTE,
                at=at,
                value=text,
                tab=tab.id if tab is not None else None,
                before=Observation(at=at, url=tab.page.url if tab is not None else None),
            )
        )

    async def _on_sensitive_marked(self, tab: _Tab, frame: Frame, data: dict[str, Any]) -> None:
        target = data.get("target")
        css = target.get("css") if isinstance(target, dict) else None
        if css and isinstance(target, dict) and target.get("sensitive"):
            await self._remember_secret(frame, css)
            self._scrub_field(tab, css)
        if isinstance(target, dict) and target.get("sensitive"):
            label = label_of(target_from_payload(target)) or ""
            for marked in self._marks:
                if not marked.done():
                    marked.set_result(label)

    def _scrub_field(self, tab: _Tab, css: str) -> None:
        """The person marked a field sensitive, perhaps after typing: scrub what it held."""
        self._stored.update(self._session.redact_field(css, self._media))
        if self._pictures is not None:
            self._pictures.invalidate()  # pictures being made now may show the value: dropped
        watch = tab.watch.result() if tab.watch is not None and tab.watch.done() else None
        if watch is not None:
            watch.forget_frames()
        if self._on_scrubbed is not None:
            self._on_scrubbed()

    # ── navigations ─────────────────────────────────────────────────────────────────────────

    def _on_navigation(self, page: Page, url: str, at: datetime) -> None:
        tab = self._track(page)
        if url in ("about:blank", "") or url.startswith("chrome-error://"):
            return
        typed = True if tab.expect_typed else None
        tab.expect_typed = False
        self._switch_to(tab, at)
        index = self._add(
            Event(
                action=ActionKind.NAVIGATE,
                at=at,
                url=url,
                typed=typed,
                tab=tab.id,
                before=Observation(at=at, url=url),
                after=Observation(at=at, url=url),
            )
        )
        self._last_navigation[tab.id] = index
        self._spawn(self._classify(tab, index, url, typed))

    async def _classify(self, tab: _Tab, index: int, url: str, typed: bool | None) -> None:
        """Who started the navigation at *index*, and whether its address was typed."""
        watch = await _result(tab.watch)
        initiated_by = await watch.initiator(url) if watch is not None else None
        if typed is None:
            if initiated_by is not None and initiated_by != "browser":
                typed = False  # the page's doing, whatever the history entry says
            else:
                typed = await self._typed(tab)
        self._update(index, initiated_by=initiated_by, typed=typed)

    async def _typed(self, tab: _Tab) -> bool | None:
        """Whether the current navigation was typed by the user (Chromium's transition type)."""
        watch = await _result(tab.watch)
        if watch is None:
            return None
        transition = await watch.transition()
        return transition in {"typed", "auto_bookmark", "generated"} if transition else None

    def _on_loaded(self, tab: _Tab, data: dict[str, Any]) -> None:
        """The page of the tab's newest navigation loaded: its title, picture and snapshot."""
        index = self._last_navigation.get(tab.id)
        if index is None or index not in self._stored:
            return
        self._update(index, after={"title": data.get("title")})
        ref = data.get("ref")
        if isinstance(ref, str):  # the page's load, reported like an action's effects
            self._by_ref[ref] = index
            seen = self._effects_seen.get(ref)
            if seen is not None:
                self._apply_effects(index, seen)
        loaded = ms_of(data.get("t"))
        if loaded is not None and self._pictures is not None:
            self._spawn(self._picture_of_page(tab, index, data, loaded))
        self._spawn(self._snapshot_loaded(tab, index, str(data.get("url"))))

    async def _snapshot_loaded(self, tab: _Tab, index: int, url: str) -> None:
        began = tab.last_action_ms
        snapshot = await self._aria_snapshot_of_one_moment(tab.page)
        if snapshot is not None and tab.last_action_ms == began and tab.page.url == url:
            self._update(index, after={"aria_snapshot": snapshot})

    def _switch_to(self, tab: _Tab, at: datetime) -> None:
        if self._active is tab:
            return
        previous, self._active = self._active, tab
        if previous is None:
            return
        self._add(
            Event(
                action=ActionKind.SWITCH_TAB,
                at=at,
                tab=tab.id,
                before=Observation(at=at, url=tab.page.url),
            )
        )

    async def _on_page_closed(self, page: Page) -> None:
        tab = self._tabs.pop(page, None)
        if tab is not None:
            watch = await _result(tab.watch)
            if watch is not None:
                await watch.stop()
        if self._active is tab:
            self._active = next(iter(self._tabs.values()), None)
        if not self._tabs:
            self._closed.set()

    # ── pictures ────────────────────────────────────────────────────────────────────────────

    async def _picture_of_action(
        self, tab: _Tab, frame: Frame | None, index: int, data: dict[str, Any], began: float
    ) -> None:
        watch = await _result(tab.watch)
        if watch is not None and self._pictures is not None:
            await self._pictures.of_action(
                watch, tab.page, frame, index, data, began, lambda: tab.last_action_ms
            )

    async def _picture_of_page(
        self, tab: _Tab, index: int, data: dict[str, Any], loaded: float
    ) -> None:
        watch = await _result(tab.watch)
        if watch is not None and self._pictures is not None:
            await self._pictures.of_page(
                watch,
                tab.page,
                index,
                data,
                loaded,
                tab.first_action_after,
                lambda: tab.last_action_ms,
            )

    def _store_picture(self, index: int, ref: str) -> None:
        self._update(index, before={"screenshot": ref})

    # ── snapshots and secrets ───────────────────────────────────────────────────────────────

    async def _remember_secret(self, frame: Frame, css: str) -> None:
        """Keep (in memory) what the sensitive field *css* holds, to mask it wherever it shows."""
        value = await field_value(frame, css)
        if value.strip():
            self._secrets.add(value)
            self._secrets.add(value.strip())

    async def _aria_snapshot_of_one_moment(self, page: Page) -> str | None:
        return await snapshot_of_one_moment(page, self._secrets)


def _at_ms(action: Began) -> float:
    return action.at_ms


async def _result(task: asyncio.Task[TabWatch | None] | None) -> TabWatch | None:
    if task is None:
        return None
    try:
        return await asyncio.shield(task)
    except Exception:
        return None
