"""Screenshots as pixels: the part of one inside an area, sensitive parts painted over, PNG."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from desktop_app.adapters.desktop.recorder.inputs import Shot
from desktop_app.core.models.common import BoundingBox

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["MASK_COLOUR", "cut_array", "cut_shot", "paint", "png"]

#: The colour sensitive windows and regions are painted over with in screenshots (RGB).
MASK_COLOUR: Final = (255, 0, 255)


def _pixel_box(box: BoundingBox, within: BoundingBox) -> tuple[int, int, int, int] | None:
    """*box* clipped to *within* as whole pixels relative to *within*: left, top, right, bottom
    (rounded outwards); None if they do not overlap."""
    left = max(0, math.floor(box.x - within.x))
    top = max(0, math.floor(box.y - within.y))
    right = min(int(within.width), math.ceil(box.x + box.width - within.x))
    bottom = min(int(within.height), math.ceil(box.y + box.height - within.y))
    if right <= left or bottom <= top:
        return None
    return left, top, right, bottom


def cut_shot(shot: Shot, area: BoundingBox) -> tuple[npt.NDArray[np.uint8], BoundingBox] | None:
    """The part of *shot* inside *area* (BGR), and where that part is on the screen."""
    import numpy as np

    width, height = int(shot.box.width), int(shot.box.height)
    pixels = np.frombuffer(shot.pixels, dtype=np.uint8).reshape(height, width, 4)
    return cut_array(pixels[:, :, :3], shot.box, area)


def cut_array(
    image: npt.NDArray[np.uint8], origin: BoundingBox, area: BoundingBox
) -> tuple[npt.NDArray[np.uint8], BoundingBox] | None:
    """The part of *image* (whose top-left is at *origin* on the screen) inside *area*, and
    where that part is on the screen; None if they do not overlap."""
    import numpy as np

    whole = BoundingBox(x=origin.x, y=origin.y, width=image.shape[1], height=image.shape[0])
    pixels = _pixel_box(area, whole)
    if pixels is None:
        return None
    left, top, right, bottom = pixels
    where = BoundingBox(
        x=origin.x + left, y=origin.y + top, width=right - left, height=bottom - top
    )
    return np.ascontiguousarray(image[top:bottom, left:right]), where


def paint(image: npt.NDArray[np.uint8], origin: BoundingBox, boxes: Iterable[BoundingBox]) -> None:
    """Paint *boxes* (screen pixels) over *image* (whose top-left is at *origin*)."""
    whole = BoundingBox(x=origin.x, y=origin.y, width=image.shape[1], height=image.shape[0])
    red, green, blue = MASK_COLOUR
    for box in boxes:
        pixels = _pixel_box(box, whole)
        if pixels is not None:
            left, top, right, bottom = pixels
            image[top:bottom, left:right] = (blue, green, red)


def png(image: npt.NDArray[np.uint8]) -> bytes:
    from desktop_app.adapters.desktop.imaging import encode_png

    return encode_png(image)
