"""The web recorder: what the page scripts report, made into events stored at once."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from desktop_app.adapters.browser.effects import ms_of
from desktop_app.adapters.browser.page_reads import focused_field
from desktop_app.adapters.browser.step_pictures import Began
from desktop_app.adapters.browser.tab_watch import TabWatch
from desktop_app.adapters.browser.targets import target_from_payload
from desktop_app.adapters.browser.web_recorder.reports import ACTIONS, event_from_report, when
from desktop_app.adapters.browser.web_recorder.state import RecorderState
from desktop_app.adapters.browser.web_recorder.tabs import Tab, watch_result
from desktop_app.core.errors import BrowserError
from desktop_app.core.induction.naming import label_of
from desktop_app.core.models.common import utcnow
from desktop_app.core.models.trajectory import ActionKind, Event, Observation

if TYPE_CHECKING:
    from playwright.async_api import Frame, Page

__all__ = ["WebRecorder"]

log = logging.getLogger(__name__)

_FLUSH_JS: Final = "() => window.__procedura && window.__procedura.flush()"

#: How long stopping waits for pictures and late observations still being made (a loaded
#: machine may take seconds over the last ones; they are part of the recording).
_FINISH_WAIT_S: Final = 10.0
_MARK_TIMEOUT_S: Final = 5.0


def _leave_to_the_person(_dialog: object) -> None:
    """A dialog the person answers themselves (see :meth:`WebRecorder._track`)."""


class WebRecorder(RecorderState):
    """Records what a person does in a browser context into a :class:`RecordingSession`.

    Args:
        browser: the launched or attached browser.
        session: where events go (started by the caller).
        media: where screenshots go; None to take none.
        capture_script: the path of ``capture.js`` (``effects.js`` is the one beside it).
        on_scrubbed: called after a field marked sensitive late was scrubbed from the store
            (to purge what the database may still hold of the old values, such as its log).
    """

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
        await watch_result(tab.watch)  # painting is watched before the first page opens
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
            watch = await watch_result(tab.watch)
            if watch is not None:
                await watch.stop()

    async def _observe_the_end(self, tab: Tab) -> None:
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

    def _track(self, page: Page) -> Tab:
        """Start following *page* (synchronously, so none of its first navigations is missed)."""
        tab = self._tabs.get(page)
        if tab is not None:
            return tab
        self._tab_count += 1
        tab = Tab(page, f"tab-{self._tab_count}")
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
        action = ACTIONS.get(str(kind))
        if action is None:
            return  # anything newer: nothing to record
        self._switch_to(tab, when(data.get("t_start") or data.get("t")))
        event = event_from_report(tab, data, action)
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

    def _on_effects(self, tab: Tab, data: dict[str, Any]) -> None:
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

    async def _snapshot_after(self, tab: Tab, index: int, ref: str) -> None:
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

    async def _on_sensitive_marked(self, tab: Tab, frame: Frame, data: dict[str, Any]) -> None:
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

    def _scrub_field(self, tab: Tab, css: str) -> None:
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

    async def _classify(self, tab: Tab, index: int, url: str, typed: bool | None) -> None:
        """Who started the navigation at *index*, and whether its address was typed."""
        watch = await watch_result(tab.watch)
        initiated_by = await watch.initiator(url) if watch is not None else None
        if typed is None:
            if initiated_by is not None and initiated_by != "browser":
                typed = False  # the page's doing, whatever the history entry says
            else:
                typed = await self._typed(tab)
        self._update(index, initiated_by=initiated_by, typed=typed)

    async def _typed(self, tab: Tab) -> bool | None:
        """Whether the current navigation was typed by the user (Chromium's transition type)."""
        watch = await watch_result(tab.watch)
        if watch is None:
            return None
        transition = await watch.transition()
        return transition in {"typed", "auto_bookmark", "generated"} if transition else None

    def _on_loaded(self, tab: Tab, data: dict[str, Any]) -> None:
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

    async def _snapshot_loaded(self, tab: Tab, index: int, url: str) -> None:
        began = tab.last_action_ms
        snapshot = await self._aria_snapshot_of_one_moment(tab.page)
        if snapshot is not None and tab.last_action_ms == began and tab.page.url == url:
            self._update(index, after={"aria_snapshot": snapshot})

    def _switch_to(self, tab: Tab, at: datetime) -> None:
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
            watch = await watch_result(tab.watch)
            if watch is not None:
                await watch.stop()
        if self._active is tab:
            self._active = next(iter(self._tabs.values()), None)
        if not self._tabs:
            self._closed.set()

    # ── pictures ────────────────────────────────────────────────────────────────────────────

    async def _picture_of_action(
        self, tab: Tab, frame: Frame | None, index: int, data: dict[str, Any], began: float
    ) -> None:
        watch = await watch_result(tab.watch)
        if watch is not None and self._pictures is not None:
            await self._pictures.of_action(
                watch, tab.page, frame, index, data, began, lambda: tab.last_action_ms
            )

    async def _picture_of_page(
        self, tab: Tab, index: int, data: dict[str, Any], loaded: float
    ) -> None:
        watch = await watch_result(tab.watch)
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
