"""What a web recording holds while it runs, and how it writes into the events it stored."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

from pydantic import ValidationError

from desktop_app.adapters.browser.effects import effects_from_payload
from desktop_app.adapters.browser.page_reads import field_value, snapshot_of_one_moment
from desktop_app.adapters.browser.pauses import Pauses
from desktop_app.adapters.browser.step_pictures import StepPictures
from desktop_app.adapters.browser.web_recorder.reports import when
from desktop_app.adapters.browser.web_recorder.tabs import Tab
from desktop_app.core.models.trajectory import Event, Observation
from desktop_app.core.ports import MediaStore
from desktop_app.core.recording import RecordingSession

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Frame, Page

    from desktop_app.adapters.browser.launch import BrowserSession

__all__ = ["Recent", "RecorderState"]

log = logging.getLogger(__name__)

K = TypeVar("K")
V = TypeVar("V")

#: How many of the newest events (and of actions' effects reports) are kept in memory.
_KEPT: Final = 500


class Recent(OrderedDict[K, V]):
    """The newest :data:`_KEPT` entries: what later observations can still be about (they come
    within seconds), while a long recording's memory stays flat."""

    def __setitem__(self, key: K, value: V) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        while len(self) > _KEPT:
            self.popitem(last=False)


class RecorderState:
    """What a web recording holds while it runs (its tabs, the events stored, the work under
    way, the secrets typed), and how later observations are written into stored events."""

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
        self._tabs: dict[Page, Tab] = {}
        self._active: Tab | None = None
        self._closed = asyncio.Event()
        self._consumer: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._tab_count = 0
        # What is stored, to write later observations into: index → event, and each action's
        # id (as the page names it) → the index of its newest event.
        self._stored: Recent[int, Event] = Recent()
        self._by_ref: Recent[str, int] = Recent()
        # The newest effects report of each action: also for the events reported after it (the
        # later reports of a typing burst carry it on).
        self._effects_seen: Recent[str, dict[str, Any]] = Recent()
        self._dropped_refs: set[str] = set()
        self._last_navigation: dict[str, int] = {}  # tab id → index of its newest navigation
        self._pictures = (
            StepPictures(media, self._store_picture, self._effects_seen.get) if media else None
        )
        self._pauses = Pauses()
        self._paused_url: tuple[Tab, str] | None = None
        self._marks: list[asyncio.Future[str | None]] = []
        # Values typed into sensitive fields, in memory only: masked in everything stored
        # later, also where a page shows them back (a saved record's details).
        self._secrets: set[str] = set()

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        """Run *coro* in the background, owned by the recorder (cancelled when it stops)."""
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

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
            after={"at": when(data.get("t")), "url": url, "title": title},
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
