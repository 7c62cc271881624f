"""The picture of each recorded step: the frame the screen showed as the step began.

Frames come from the tab's screencast (:class:`~desktop_app.adapters.browser.tab_watch.TabWatch`),
each stamped with when it reached the screen, and are chosen by the page's own account of
when it drew what (``effects.js``): when it was done drawing the element acted on as it was
then, when the action began, when the page began the frame showing its first response. A
frame that reached the screen before the page began drawing a change cannot show it. A step's
picture is never a frame of what the step led to:

1. the newest frame on screen before the action began, if it reached the screen after the
   page was done drawing the element as it was acted on (it shows the element in place);
2. else, when that drawing reached the screen only after the action began (a busy page, a
   script acting at machine speed): the newest frame that did, before the page began drawing
   its first response, before it began to unload, before the next action, and within
   :data:`CATCH_UP_MS`;
3. else, if no frame reached the screen after the page was done drawing the element, the
   newest that did while it was being drawn (the page learns it was done only at its next
   task, which a busy machine may run late);
4. else the newest frame of the page, at its address, before the action (the element may
   not show yet, or not where it was);
5. else none: a step without a picture rather than a picture of something else.

Rules 1 and 2 take the newest frame they may, so a picture shows the element as acted on
unless the only frames were stamped within :data:`RECEIPT_LAG_MS` of its drawing (Chromium
stamps a frame when it receives it, not when it was captured): a script acting on an element
the moment it was redrawn, on a loaded machine, may get a picture of the moment before. Rules
3 and 4 are the same kind of last resort. This happens
   only when no frame at all reached the screen between the page's drawing at its address
   (or the element's) and its response to the action: a script acting faster than the screen
   on a loaded machine. It is logged, with the frames that did come (:class:`PictureChoice`).

A page opened gets the newest frame since its first paint shortly after it loaded, before
anything was done on it (or, if its first action came before any frame, the frame that
showed it as it was then, by rule 2). The element acted on is outlined and every sensitive
field painted over (:func:`~desktop_app.adapters.browser.frames.picture_of`), off the event
loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from desktop_app.adapters.browser.effects import ms_of
from desktop_app.adapters.browser.frames import Box, picture_of
from desktop_app.core.ports import MediaStore

if TYPE_CHECKING:
    from playwright.async_api import Frame, Page

    from desktop_app.adapters.browser.tab_watch import Frame as Painted
    from desktop_app.adapters.browser.tab_watch import TabWatch

__all__ = ["CATCH_UP_MS", "RECEIPT_LAG_MS", "Began", "PictureChoice", "StepPictures"]

log = logging.getLogger(__name__)

#: How long after an action began a frame the page had drawn before it may reach the screen.
CATCH_UP_MS: Final = 300.0
#: How late a frame may reach the recorder after the compositor captured it: Chromium stamps a
#: screencast frame when the browser receives it, so one stamped this soon after the page was
#: done drawing the element may show it a moment before (two frames at 60 Hz).
RECEIPT_LAG_MS: Final = 34.0
#: How long after a page loaded its picture is taken (unless an action begins first).
_PAGE_SHOT_DELAY_S: Final = 0.3
#: How long after that the page's first action may still be reported (typing is reported
#: within half a second of its first keystroke).
_ACTION_REPORT_S: Final = 0.6
#: The visible sensitive fields of a frame (viewport pixels), to paint over in a picture.
_MASKS_JS: Final = "() => window.__proceduraEffects ? window.__proceduraEffects.masks() : []"


@dataclass(frozen=True)
class Began:
    """An action as its picture needs it: when it began (ms since the epoch) and its id."""

    at_ms: float
    ref: str | None


@dataclass(frozen=True)
class PictureChoice:
    """How an action's picture was chosen, logged with it (``extra={"picture": ...}``).

    *rule* is the module's rule that gave the frame (``in place``, ``caught up``, ``being
    drawn``, ``page``) or ``none``; *frame_ms* when that frame reached the recorder, *drawn_ms*
    when the page was done drawing the element as acted on (ms since the epoch, None if not
    known). With none, no frame reached the screen from *since_ms* (the earliest moment a frame
    could show the page as acted on) until *until_ms* (after which it may show what the action
    did); *frames* are when the frames kept then reached it.
    """

    began_ms: float
    rule: str
    frame_ms: float | None
    drawn_ms: float | None
    since_ms: float
    until_ms: float
    frames: tuple[float, ...]


class StepPictures:
    """Makes and stores the pictures of recorded steps.

    Args:
        media: where pictures go.
        store: called with a step's index and its picture's reference, once stored.
        effects_of: the newest ``effects`` report about the action with an id, if any came.
    """

    def __init__(
        self,
        media: MediaStore,
        store: Callable[[int, str], None],
        effects_of: Callable[[str], dict[str, Any] | None],
    ) -> None:
        self._media = media
        self._store = store
        self._effects_of = effects_of
        self._generation = 0
        self._ending = asyncio.Event()

    def end(self) -> None:
        """The recording ends: every report has come, nothing more is worth waiting for."""
        self._ending.set()

    def invalidate(self) -> None:
        """A field was marked sensitive: pictures being made now may show its value (dropped)."""
        self._generation += 1

    async def of_action(
        self,
        watch: TabWatch,
        page: Page,
        frame: Frame | None,
        index: int,
        data: dict[str, Any],
        began: float,
        newest_action: Callable[[], float | None],
    ) -> None:
        """The picture of the action at *index* (its report *data*), which began at *began*."""
        generation = self._generation
        action = Began(began, data.get("action") if isinstance(data.get("action"), str) else None)
        page_since = _page_since(data)
        ready_drawn = ms_of(data.get("ready_drawn"))
        painted, rule = None, "none"
        earliest, latest = page_since, began  # what any rule would have taken a frame from
        if ready_drawn is not None:
            since = max(page_since, ready_drawn)
            painted, rule = await watch.newest_between(since, began), "in place"
            if painted is None:
                limit = await self._catch_up_limit(action, newest_action)
                latest = max(latest, limit)
                painted, rule = await watch.newest_between(since, limit), "caught up"
            drawing = ms_of(data.get("ready_drawing"))
            if painted is None and drawing is not None and drawing < ready_drawn:
                # None on screen since it was done: the one that came while it was drawn
                # (the page may tell it was done a little after it was).
                earliest = min(earliest, drawing)
                painted, rule = await watch.newest_between(drawing, began), "being drawn"
        if painted is None:
            painted, rule = await watch.newest_between(page_since, began), "page"
        choice = PictureChoice(
            began,
            rule,
            painted.at_ms if painted else None,
            ready_drawn,
            earliest,
            latest,
            tuple(f.at_ms for f in watch.frames()),
        )
        if painted is None:
            # Acted on before the screen showed the page as it was then (a script faster than
            # the screen, a loaded machine): no picture rather than one of something else.
            log.info(
                "step %d has no picture: no frame reached the screen from %+.0f ms to %+.0f ms "
                "of its beginning (frames then: %s)",
                index,
                earliest - began,
                latest - began,
                _near(watch, began),
                extra={"picture": choice},
            )
            return
        log.debug(
            "picture of step %d (began %.0f, ready drawing %s, drawn %s): %s, frame of %.0f",
            index,
            began,
            _from(data.get("ready_drawing"), began),
            _from(ready_drawn, began),
            rule,
            painted.at_ms,
            extra={"picture": choice},
        )
        target = data.get("target")
        fingerprint = target.get("fingerprint") if isinstance(target, dict) else None
        outline = _box(fingerprint.get("bbox")) if isinstance(fingerprint, dict) else None
        masks = _boxes(data.get("masks"))  # where the acting frame's fields were then
        offset = await _frame_offset(frame)
        if offset is not None:  # an action in a child frame: its boxes are in its viewport
            outline = _moved(outline, offset)
            masks = [m for m in (_moved(b, offset) for b in masks) if m is not None]
        masks += await _live_masks(page)
        await self._keep(index, painted, outline, masks, _scroll_of(data), generation)

    async def of_page(
        self,
        watch: TabWatch,
        page: Page,
        index: int,
        data: dict[str, Any],
        loaded: float,
        first_action: Callable[[float], Began | None],
        newest_action: Callable[[], float | None],
    ) -> None:
        """The picture of the page a navigation at *index* opened (its ``loaded`` report):
        *first_action* tells the first action begun on it after a moment (ms)."""
        generation = self._generation
        shown = ms_of(data.get("shown"))
        since = -math.inf if shown is None else shown
        wait = loaded / 1000 + _PAGE_SHOT_DELAY_S + _ACTION_REPORT_S - time.time()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ending.wait(), timeout=max(0.0, wait))
        until = loaded + _PAGE_SHOT_DELAY_S * 1000
        first = first_action(since)
        if first is not None and first.at_ms < until:
            until = first.at_ms
        painted = await watch.newest_between(since, until)
        if painted is None and first is not None:  # acted on before a frame of it came
            painted = await watch.newest_between(
                since, await self._catch_up_limit(first, newest_action)
            )
        log.debug(
            "picture of page %d (shown %s, loaded %.0f): %s",
            index,
            shown,
            loaded,
            f"frame of {painted.at_ms:.0f}" if painted else "none",
        )
        if painted is None:
            return
        masks = _boxes(data.get("masks")) + await _live_masks(page)
        await self._keep(index, painted, None, masks, None, generation)

    async def _catch_up_limit(
        self, action: Began, newest_action: Callable[[], float | None]
    ) -> float:
        """Until when a frame that reached the screen after *action* began still shows the
        page as it was then (see the module's rule 2); waits briefly for what the page did."""
        began = action.at_ms
        limit = began + CATCH_UP_MS
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CATCH_UP_MS / 1000 * 3
        while (report := self._effects_of(action.ref) if action.ref else None) is None:
            if loop.time() > deadline:
                return began  # what the page did is not known: nothing after the action
            await asyncio.sleep(0.02)
        first_change = ms_of(report.get("first_change"))
        if first_change is not None:
            # The frame showing the change began then; else (not begun when the page
            # reported) the change itself is the bound.
            limit = min(limit, ms_of(report.get("first_change_frame")) or first_change)
        elif not report.get("settled"):
            reported = ms_of(report.get("t"))  # nothing changed until then; later, not known
            limit = min(limit, began if reported is None else reported)
        acted = newest_action()
        if acted is not None and acted > began:
            limit = min(limit, acted)
        log.debug(
            "  caught up until %+.0f ms (first change %s, its frame %s, settled %s, next %s)",
            limit - began,
            _from(report.get("first_change"), began),
            _from(report.get("first_change_frame"), began),
            report.get("settled"),
            _from(acted, began),
        )
        return limit

    async def _keep(
        self,
        index: int,
        painted: Painted,
        outline: Box | None,
        masks: list[Box],
        scroll: tuple[float, float] | None,
        generation: int,
    ) -> None:
        jpeg = await asyncio.to_thread(
            picture_of, painted, outline=outline, masks=masks, scroll=scroll
        )
        if jpeg is None or generation != self._generation:
            return  # a field was marked sensitive meanwhile: this frame may show its value
        ref = await asyncio.to_thread(self._media.put, jpeg, "jpg")
        if generation != self._generation:
            return
        self._store(index, ref)


def _box(raw: Any) -> Box | None:
    if not isinstance(raw, dict):
        return None
    try:
        return Box(float(raw["x"]), float(raw["y"]), float(raw["width"]), float(raw["height"]))
    except (KeyError, TypeError, ValueError):
        return None


def _boxes(raw: Any) -> list[Box]:
    if not isinstance(raw, list):
        return []
    return [b for b in (_box(r) for r in raw) if b is not None]


async def _frame_offset(frame: Frame | None) -> tuple[float, float] | None:
    """Where a child frame's viewport sits in the page's (None for the top frame)."""
    if frame is None or frame.parent_frame is None:
        return None
    with contextlib.suppress(Exception):
        element = await frame.frame_element()
        box = await element.bounding_box()
        if box is not None:
            return box["x"], box["y"]
    return None


async def _live_masks(page: Page) -> list[Box]:
    """The sensitive fields every frame of *page* shows now (painted over as well: a picture
    is of a moment ago, and a field rarely moves)."""
    masks: list[Box] = []
    for frame in list(page.frames):
        with contextlib.suppress(Exception):
            boxes = _boxes(await asyncio.wait_for(frame.evaluate(_MASKS_JS), timeout=1))
            offset = await _frame_offset(frame)
            if offset is not None:
                boxes = [m for m in (_moved(b, offset) for b in boxes) if m is not None]
            masks += boxes
    return masks


def _moved(box: Box | None, offset: tuple[float, float]) -> Box | None:
    if box is None:
        return None
    return Box(box.x + offset[0], box.y + offset[1], box.width, box.height)


def _from(moment: Any, origin: float) -> str:
    ms = ms_of(moment)
    return "-" if ms is None else f"{ms - origin:+.0f} ms"


def _near(watch: TabWatch, moment_ms: float) -> list[int]:
    return [round(f.at_ms - moment_ms) for f in watch.frames() if abs(f.at_ms - moment_ms) < 2000]


def _page_since(data: dict[str, Any]) -> float:
    """Since when frames are of the page at the address an action began at: its document's
    first paint, and the page's drawing at its newest address."""
    shown = ms_of(data.get("shown"))
    moved = ms_of(data.get("address_drawn"))
    since = -math.inf if shown is None else shown
    return since if moved is None else max(since, moved)


def _scroll_of(data: dict[str, Any]) -> tuple[float, float] | None:
    scroll = data.get("scroll")
    if isinstance(scroll, dict):
        x, y = ms_of(scroll.get("x")), ms_of(scroll.get("y"))
        if x is not None and y is not None:
            return x, y
    return None
