"""The picture of each recorded step: the frame the screen showed as the step began.

Frames come from the tab's screencast (:class:`~desktop_app.adapters.browser.tab_watch.TabWatch`),
chosen by the page's own account of the moment (``effects.js``): when the action began, when
its element was last changed, when the page last began drawing, when it first responded. A
step's picture is never a frame of what the step led to:

1. the newest frame swapped to the screen before the action began, if it was swapped after the
   element acted on was last changed (it shows the element in place);
2. else, when the page had drawn the element before the action but that frame reached the
   screen only after it began (a busy page, a script acting at machine speed): that frame, if
   it arrived before the page's first change in response, before it began to unload, before
   the next action, and within :data:`CATCH_UP_MS`;
3. else the newest frame of the page before the action (the element may not show yet);
4. else none: a step without a picture rather than a picture of something else.

A page opened gets the newest frame painted since its first paint, shortly after it loaded
and before anything was done on it. The element acted on is outlined and every sensitive field
painted over (:func:`~desktop_app.adapters.browser.frames.picture_of`), off the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from desktop_app.adapters.browser.frames import Box, picture_of
from desktop_app.core.models.trajectory import Effects
from desktop_app.core.ports import MediaStore

if TYPE_CHECKING:
    from playwright.async_api import Frame, Page

    from desktop_app.adapters.browser.tab_watch import Frame as Painted
    from desktop_app.adapters.browser.tab_watch import TabWatch

__all__ = ["CATCH_UP_MS", "StepPictures"]

#: How long after an action began a frame the page had drawn before it may reach the screen.
CATCH_UP_MS: Final = 300.0
#: How long after a page loaded its picture is taken (unless an action begins first).
_PAGE_SHOT_DELAY_S: Final = 0.3
#: The visible sensitive fields of a frame (viewport pixels), to paint over in a picture.
_MASKS_JS: Final = "() => window.__proceduraEffects ? window.__proceduraEffects.masks() : []"


class StepPictures:
    """Makes and stores the pictures of recorded steps.

    Args:
        media: where pictures go.
        store: called with a step's index and its picture's reference, once stored.
        effects_of: what is known so far of what the step at an index made the page do.
    """

    def __init__(
        self,
        media: MediaStore,
        store: Callable[[int, str], None],
        effects_of: Callable[[int], Effects | None],
    ) -> None:
        self._media = media
        self._store = store
        self._effects_of = effects_of
        self._generation = 0

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
        ready = _ms(data.get("ready"))
        painted, in_place = await watch.frame_before(
            began, ready_ms=ready, shown_ms=_ms(data.get("shown"))
        )
        drawn = _ms(data.get("drawn"))
        if not in_place and ready is not None and drawn is not None and drawn >= ready:
            limit = await self._catch_up_limit(index, began, newest_action)
            painted = await watch.first_frame_after(drawn, limit) or painted
        if painted is None:
            return
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
        newest_action: Callable[[], float | None],
    ) -> None:
        """The picture of the page a navigation at *index* opened (its ``loaded`` report)."""
        generation = self._generation
        await asyncio.sleep(max(0.0, loaded / 1000 + _PAGE_SHOT_DELAY_S - time.time()))
        until = loaded + _PAGE_SHOT_DELAY_S * 1000
        acted = newest_action()
        if acted is not None and acted > loaded:
            until = min(until, acted)
        painted, _ = await watch.frame_before(until, ready_ms=None, shown_ms=_ms(data.get("shown")))
        if painted is None:
            return
        masks = _boxes(data.get("masks")) + await _live_masks(page)
        await self._keep(index, painted, None, masks, None, generation)

    async def _catch_up_limit(
        self, index: int, began: float, newest_action: Callable[[], float | None]
    ) -> float:
        """Until when a frame swapped after the action at *index* began still shows the page
        as it was then (see the module's rule 2); waits briefly for what the page did."""
        limit = began + CATCH_UP_MS
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CATCH_UP_MS / 1000 * 3
        while (effects := self._effects_of(index)) is None:
            if loop.time() > deadline:
                return began  # what the page did is not known: nothing after the action
            await asyncio.sleep(0.02)
        if effects.first_change_at is not None:
            limit = min(limit, effects.first_change_at.timestamp() * 1000)
        acted = newest_action()
        if acted is not None and acted > began:
            limit = min(limit, acted)
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


def _ms(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


def _box(raw: Any) -> Box | None:
    if not isinstance(raw, dict):
        return None
    try:
        return Box(float(raw["x"]), float(raw["y"]), float(raw["width"]), float(raw["height"]))
    except (KeyError, TypeError, ValueError):
        return None


def _boxes(raw: Any) -> list[Box]:
    return [b for b in (_box(r) for r in raw if isinstance(raw, list)) if b is not None]


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


def _scroll_of(data: dict[str, Any]) -> tuple[float, float] | None:
    scroll = data.get("scroll")
    if isinstance(scroll, dict):
        x, y = _ms(scroll.get("x")), _ms(scroll.get("y"))
        if x is not None and y is not None:
            return x, y
    return None
