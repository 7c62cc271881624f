"""Which frame becomes a step's picture, given what reached the screen when and what the page
said it drew when: the rules of ``step_pictures`` on timelines a loaded machine produces. The
frames are real JPEGs through the real choice, encoding and media store; only the browser is
left out (its frames and the page's reports are given as they arrive from it).
"""

from __future__ import annotations

import asyncio
import base64
import time
from pathlib import Path
from typing import Any, ClassVar

import cv2
import numpy as np
import pytest

from desktop_app.adapters.browser.step_pictures import StepPictures
from desktop_app.adapters.browser.tab_watch import TabWatch
from desktop_app.adapters.media_store import FileMediaStore

BEGAN = time.time() * 1000  # when the action began (ms since the epoch)


class _NoFrames:
    """What a page with no child frames and no sensitive field answers."""

    frames: ClassVar[list[Any]] = []


def _frame(at: float, shade: int) -> dict[str, Any]:
    """A screencast frame swapped *at* ms from the action's beginning, filled with *shade*."""
    image = np.full((60, 80, 3), shade, dtype=np.uint8)
    ok, jpeg = cv2.imencode(".jpg", image)
    assert ok
    return {
        "data": base64.b64encode(jpeg.tobytes()).decode(),
        "metadata": {"timestamp": (BEGAN + at) / 1000, "deviceWidth": 80, "deviceHeight": 60},
    }


def _picture(
    tmp_path: Path,
    frames: list[tuple[float, int]],
    *,
    began: dict[str, Any],
    report: dict[str, Any] | None,
    next_action_at: float | None = None,
) -> int | None:
    """The shade of the picture chosen for an action (None: it got none)."""
    media = FileMediaStore(tmp_path / "media")
    stored: dict[int, str] = {}
    moments = {"t", "first_change", "first_change_frame"}  # given from the action's beginning
    reports = {}
    if report is not None:
        given = {"t": 400, **report}
        reports["a1"] = {
            k: BEGAN + v if k in moments and v is not None else v for k, v in given.items()
        }

    async def choose() -> None:
        watch = TabWatch(session=None)  # type: ignore[arg-type]  # frames are given here
        for at, shade in frames:
            watch._on_frame(_frame(at, shade))
        pictures = StepPictures(media, stored.__setitem__, reports.get)
        data = {"action": "a1", **{k: BEGAN + v for k, v in began.items() if v is not None}}
        newest = None if next_action_at is None else BEGAN + next_action_at
        await pictures.of_action(watch, _NoFrames(), None, 0, data, BEGAN, lambda: newest)  # type: ignore[arg-type]

    asyncio.run(choose())
    if 0 not in stored:
        return None
    image = cv2.imread(str(media.path(stored[0])))
    return round(float(image.mean()) / 10) * 10


#: The element was drawn 300 ms before the action (done 290 ms before), at its address since.
DRAWN = {"shown": -5000, "address_drawn": -1000, "ready_drawing": -300, "ready_drawn": -290}
#: The page began drawing its response 10 ms after the action began.
ANSWERED = {"first_change": 5, "first_change_frame": 10, "settled": True}


def test_the_newest_frame_on_screen_before_the_action_once_its_element_was_drawn(
    tmp_path: Path,
) -> None:
    frames = [(-900, 40), (-280, 120), (-100, 200), (30, 250)]
    assert _picture(tmp_path, frames, began=DRAWN, report=ANSWERED) == 200


def test_a_frame_that_reached_the_screen_late_shows_the_page_as_it_was(tmp_path: Path) -> None:
    # The element's frame reached the screen just after the action began, before the page
    # began drawing its response: that one, not the stale frame before the action.
    frames = [(-900, 40), (4, 120), (30, 250)]
    assert _picture(tmp_path, frames, began=DRAWN, report=ANSWERED) == 120


@pytest.mark.parametrize(
    ("report", "next_action_at"),
    [
        (ANSWERED, None),  # it may show the response
        ({"first_change": None, "settled": False, "t": 2}, None),  # not known after 2 ms
        ({"first_change": None, "settled": True}, 3),  # the next action began before it
        (None, None),  # what the page did never came: nothing after the action
    ],
    ids=["after-the-response-began", "after-the-report", "after-the-next-action", "no-report"],
)
def test_never_a_frame_that_may_show_what_the_action_led_to(
    tmp_path: Path, report: dict[str, Any] | None, next_action_at: float | None
) -> None:
    frames = [(-900, 40), (20, 250)]
    # The older frame at the same address: the page, the element perhaps not drawn yet.
    assert (
        _picture(tmp_path, frames, began=DRAWN, report=report, next_action_at=next_action_at) == 40
    )


def test_a_frame_that_came_while_the_element_was_drawn_when_none_came_after(
    tmp_path: Path,
) -> None:
    # A loaded machine: the page learnt its drawing was done 40 ms after the frame came.
    began = {**DRAWN, "ready_drawn": -250}
    frames = [(-1500, 40), (-290, 120), (20, 250)]
    assert _picture(tmp_path, frames, began=began, report=ANSWERED) == 120


def test_no_picture_rather_than_one_of_the_page_before(tmp_path: Path) -> None:
    # The address changed 200 ms ago and no frame of the page at it came before the action.
    began = {"shown": -5000, "address_drawn": -200, "ready_drawing": -200, "ready_drawn": -190}
    frames = [(-900, 40), (-400, 120), (20, 250)]
    assert _picture(tmp_path, frames, began=began, report=ANSWERED) is None
