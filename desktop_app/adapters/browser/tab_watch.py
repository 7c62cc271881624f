"""What Chromium itself says about a tab while it is recorded: its painted frames and who
started each of its navigations.

Both come over a CDP session of the tab's own:

- **Frames.** Chromium's screencast sends the frames it puts on screen, each stamped with the
  moment it was swapped there (some time after the page's main thread drew it; under load,
  long after). A tab keeps the last few seconds of them, so the picture of an action can be
  one that was on screen *before* the action began (its stamp older than the action's
  page-side ``t_start``), however late the recorder gets to it, and never a frame of what the
  action led to.
- **Navigations.** ``Page.frameRequestedNavigation`` and ``Page.frameScheduledNavigation`` name
  why the page itself started a navigation (a link, a form, its script, a refresh), and
  ``Page.navigatedWithinDocument`` how a same-document one happened (history API or fragment).
  A navigation with no such record was started in the browser itself (the address bar, a
  bookmark, back or forward).
"""

from __future__ import annotations

import asyncio
import base64
import bisect
import contextlib
import logging
import math
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from desktop_app.core.models.trajectory import NavigationInitiator

if TYPE_CHECKING:
    from playwright.async_api import CDPSession

__all__ = ["Frame", "TabWatch"]

log = logging.getLogger(__name__)

#: How long painted frames are kept, and how many at most.
_KEEP_S: Final = 10.0
_KEEP_FRAMES: Final = 40
#: The screencast's size limit and JPEG quality (the stored picture is encoded again).
_MAX_SIZE: Final = (1600, 1200)
_QUALITY: Final = 60
#: How long to wait for frames painted before an action that may still be on their way.
_IN_FLIGHT_S: Final = 0.3

_REASONS: Final[dict[str, NavigationInitiator]] = {
    "anchorClick": "link",
    "formSubmissionGet": "form",
    "formSubmissionPost": "form",
    "scriptInitiated": "script",
    "reload": "script",
    "initialFrameNavigation": "script",
    "metaTagRefresh": "refresh",
    "httpHeaderRefresh": "refresh",
}


@dataclass(frozen=True)
class Frame:
    """One painted frame: when (ms since the epoch), the JPEG, and how it maps to the page
    (CSS pixels of the viewport per image pixel, and the page's scroll offset then)."""

    at_ms: float
    jpeg: bytes
    css_width: float
    css_height: float
    offset_top: float
    scroll_x: float
    scroll_y: float


@dataclass
class _Commit:
    url: str
    same_document: bool
    how: str | None  # navigatedWithinDocument's navigationType
    intents: tuple[tuple[str, str], ...]  # (reason, url) recorded since the previous commit


class TabWatch:
    """One tab's CDP session: recent painted frames and the initiators of its navigations."""

    def __init__(self, session: CDPSession) -> None:
        self._session = session
        self._frames: deque[Frame] = deque(maxlen=_KEEP_FRAMES)  # by when they were painted
        self._newest_ms = -math.inf
        self._new_frame = asyncio.Event()
        self._main_frame: str | None = None
        self._intents: list[tuple[str, str]] = []
        self._commits: deque[_Commit] = deque(maxlen=50)
        self._new_commit = asyncio.Event()
        self._casting = False
        self._acks: set[asyncio.Task[Any]] = set()

    async def start(self, *, screencast: bool) -> None:
        """Listen to the tab's navigations and, with *screencast*, to its painted frames."""
        session = self._session
        session.on("Page.frameRequestedNavigation", self._on_intent)
        session.on("Page.frameScheduledNavigation", self._on_intent)
        session.on("Page.frameNavigated", self._on_navigated)
        session.on("Page.navigatedWithinDocument", self._on_within_document)
        await session.send("Page.enable")
        tree = await session.send("Page.getFrameTree")
        self._main_frame = str(tree["frameTree"]["frame"]["id"])
        if screencast:
            session.on("Page.screencastFrame", self._on_frame)
            width, height = _MAX_SIZE
            await session.send(
                "Page.startScreencast",
                {"format": "jpeg", "quality": _QUALITY, "maxWidth": width, "maxHeight": height},
            )
            self._casting = True

    async def stop(self) -> None:
        """Stop the screencast (the tab may be gone already)."""
        if self._casting:
            self._casting = False
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._session.send("Page.stopScreencast"), timeout=2)
        for task in list(self._acks):
            task.cancel()

    # ── frames ──────────────────────────────────────────────────────────────────────────────

    def _on_frame(self, params: dict[str, Any]) -> None:
        session_id = params.get("sessionId")
        if session_id is not None:  # acknowledged at once, or Chromium sends no more
            task = asyncio.ensure_future(
                self._session.send("Page.screencastFrameAck", {"sessionId": session_id})
            )
            self._acks.add(task)
            task.add_done_callback(_forget(self._acks))
        meta = params.get("metadata") or {}
        try:
            frame = Frame(
                at_ms=float(meta["timestamp"]) * 1000,
                jpeg=base64.b64decode(params["data"]),
                css_width=float(meta.get("deviceWidth") or 0),
                css_height=float(meta.get("deviceHeight") or 0),
                offset_top=float(meta.get("offsetTop") or 0),
                scroll_x=float(meta.get("scrollOffsetX") or 0),
                scroll_y=float(meta.get("scrollOffsetY") or 0),
            )
        except (KeyError, TypeError, ValueError):
            return
        now_ms = time.time() * 1000
        while self._frames and now_ms - self._frames[0].at_ms > _KEEP_S * 1000:
            if len(self._frames) == 1:
                break  # the newest frame is what the tab shows still, however old
            self._frames.popleft()
        # Frames can arrive out of the order they were painted in: kept in painting order.
        at = bisect.bisect_right([f.at_ms for f in self._frames], frame.at_ms)
        if len(self._frames) == self._frames.maxlen:
            self._frames.popleft()
            at = max(0, at - 1)
        self._frames.insert(at, frame)
        self._newest_ms = max(self._newest_ms, frame.at_ms)
        self._new_frame.set()

    def frames(self) -> list[Frame]:
        """The frames kept, in the order they reached the screen."""
        return list(self._frames)

    def forget_frames(self) -> None:
        """Drop every frame kept (they may show a value that was just marked sensitive)."""
        self._frames.clear()

    async def newest_between(self, since_ms: float, before_ms: float) -> Frame | None:
        """The newest frame swapped to the screen at or after *since_ms* and before
        *before_ms* (None: none), once the frames swapped before *before_ms* that may still be
        on their way have arrived (waited for briefly)."""
        await self._wait_for_frames_after(before_ms)
        return next((f for f in reversed(self._frames) if since_ms <= f.at_ms < before_ms), None)

    async def _wait_for_frames_after(self, before_ms: float) -> None:
        """Until a frame painted at or after *before_ms* arrived (all older ones have, then),
        or the frames painted before it cannot still be on their way."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(0.0, _IN_FLIGHT_S - (time.time() * 1000 - before_ms) / 1000)
        while self._newest_ms < before_ms:
            left = deadline - loop.time()
            if left <= 0 or not self._casting:
                return
            self._new_frame.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._new_frame.wait(), timeout=left)

    # ── navigations ─────────────────────────────────────────────────────────────────────────

    def _is_main(self, params: dict[str, Any]) -> bool:
        frame = params.get("frame")
        frame_id = frame.get("id") if isinstance(frame, dict) else params.get("frameId")
        if isinstance(frame, dict) and frame.get("parentId"):
            return False
        return self._main_frame is None or frame_id == self._main_frame

    def _on_intent(self, params: dict[str, Any]) -> None:
        if self._is_main(params):
            self._intents.append((str(params.get("reason") or ""), str(params.get("url") or "")))

    def _on_navigated(self, params: dict[str, Any]) -> None:
        if not self._is_main(params):
            return
        frame = params.get("frame") or {}
        url = str(frame.get("url") or "") + str(frame.get("urlFragment") or "")
        self._commit(_Commit(url, False, None, tuple(self._intents)))

    def _on_within_document(self, params: dict[str, Any]) -> None:
        if not self._is_main(params):
            return
        url = str(params.get("url") or "")
        how = params.get("navigationType")
        reasons = tuple(i for i in self._intents if i[1] == url)
        self._commit(_Commit(url, True, str(how) if how else None, reasons))

    def _commit(self, commit: _Commit) -> None:
        self._intents = []
        self._commits.append(commit)
        self._new_commit.set()

    async def transition(self) -> str | None:
        """The transition type of the tab's current history entry ("typed", "link"…)."""
        try:
            history = await asyncio.wait_for(
                self._session.send("Page.getNavigationHistory"), timeout=5
            )
        except Exception:
            return None
        entries = history.get("entries") or []
        index = history.get("currentIndex", -1)
        if not 0 <= index < len(entries):
            return None
        transition = entries[index].get("transitionType")
        return str(transition) if transition else None

    async def initiator(self, url: str, *, timeout_s: float = 1.0) -> NavigationInitiator | None:
        """Who started the navigation to *url* the tab just made (None: not known)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while True:
            for index, commit in enumerate(self._commits):
                if _same_url(commit.url, url):
                    del self._commits[index]
                    return _initiator(commit)
            left = deadline - loop.time()
            if left <= 0:
                return None
            self._new_commit.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._new_commit.wait(), timeout=left)


def _initiator(commit: _Commit) -> NavigationInitiator | None:
    if commit.same_document and commit.how == "historyApi":
        return "script"
    for reason, _url in reversed(commit.intents):
        if reason in _REASONS:
            return _REASONS[reason]
    if commit.same_document and commit.how is None:
        return None  # an older Chromium that does not say how
    return "browser"


def _same_url(a: str, b: str) -> bool:
    return a == b or a.rstrip("#") == b.rstrip("#")


def _forget(tasks: set[asyncio.Task[Any]]) -> Any:
    def done(task: asyncio.Task[Any]) -> None:
        tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.debug("screencast ack failed: %s", task.exception())

    return done
