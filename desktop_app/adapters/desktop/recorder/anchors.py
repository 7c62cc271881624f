"""Image anchors: the crop around a click that replay finds it by, clear of sensitive parts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from desktop_app.adapters.desktop.recorder.inputs import Press
from desktop_app.adapters.desktop.recorder.pixels import cut_array, png
from desktop_app.core.models.common import BoundingBox
from desktop_app.core.models.target import Fingerprint, Locator, LocatorStrategy, Target
from desktop_app.core.ports import MediaStore
from desktop_app.core.replay.desktop import Window

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["ANCHOR_SIZE", "ANCHOR_WIDTHS", "UNIQUE_BELOW", "cut_anchor"]

#: Width and height of the image anchor cut around a click.
ANCHOR_SIZE: Final = (96, 48)
#: The widths an anchor is tried at, until nothing else in its window looks like it.
ANCHOR_WIDTHS: Final = (96, 160, 256, 400)
#: Another place in the window scoring this much or more makes an anchor ambiguous.
UNIQUE_BELOW: Final = 0.9


def cut_anchor(
    media: MediaStore,
    image: npt.NDArray[np.uint8],
    origin: BoundingBox,
    area: BoundingBox,
    press: Press,
    window: Window | None,
    masks: Sequence[BoundingBox] = (),
    beside: BoundingBox | None = None,
) -> Target | None:
    """The image anchor around the click: cut from *image* (the window, masked).

    It is :data:`ANCHOR_SIZE` unless that much looks the same elsewhere in the window, or
    a few pixels along (the inside of a text field does): then it is widened, up to
    :data:`ANCHOR_WIDTHS`' last, until it takes in something that pins the spot down (the
    field's edge or label). Wider, not taller: a row of a form tends to move as a whole
    when the layout changes. It never takes in a masked (sensitive) region: the mask is not
    on the screen at replay. For a click inside a sensitive region (*beside*), it is cut
    from the strip left of the region, else right of it, on the click's rows: the click is
    then at an offset outside the anchor.
    """
    from desktop_app.adapters.desktop.imaging import matches_only_at

    height = ANCHOR_SIZE[1]
    cut = None
    for width in ANCHOR_WIDTHS:
        if beside is None:
            wanted = _clear_of(
                BoundingBox(
                    x=press.x - width // 2, y=press.y - height // 2, width=width, height=height
                ),
                masks,
                press,
            )
        else:
            wanted = _beside(beside, width, height, press, area, masks)
        cut = cut_array(image, origin, wanted) if wanted is not None else None
        if cut is None:
            return None
        crop, where = cut
        at_x, at_y = int(where.x - origin.x), int(where.y - origin.y)
        if matches_only_at(image, crop, at_x, at_y, below=UNIQUE_BELOW):
            break
    assert cut is not None
    crop, where = cut
    ref = media.put(png(crop), "png")
    return Target(
        locators=(Locator(strategy=LocatorStrategy.IMAGE_ANCHOR, value=ref),),
        fingerprint=Fingerprint(
            name=window.title if window is not None else None,
            bbox=BoundingBox(
                x=where.x - area.x, y=where.y - area.y, width=where.width, height=where.height
            ),
            attributes={"button": press.button, "clicks": "1"},
        ),
    )


def _beside(
    region: BoundingBox,
    width: int,
    height: int,
    press: Press,
    area: BoundingBox,
    masks: Sequence[BoundingBox],
) -> BoundingBox | None:
    """A strip of *width* next to *region* (left, else right, within *area*) on the rows of
    the click, clear of every mask; None if neither side has room."""
    top = press.y - height // 2
    left_room = region.x - area.x
    right_room = area.x + area.width - (region.x + region.width)
    for room, x in (
        (left_room, region.x - min(width, left_room)),
        (right_room, region.x + region.width),
    ):
        if room < 16:
            continue
        strip = BoundingBox(x=x, y=top, width=min(width, room), height=height)
        overlaps = [
            m
            for m in masks
            if m.x < strip.x + strip.width
            and strip.x < m.x + m.width
            and m.y < strip.y + strip.height
            and strip.y < m.y + m.height
        ]
        if not overlaps:
            return strip
    return None


def _clear_of(box: BoundingBox, masks: Sequence[BoundingBox], press: Press) -> BoundingBox | None:
    """*box* cut back so that it overlaps none of *masks* and still holds the click; None
    when it cannot (the click is in a mask)."""
    left, top = box.x, box.y
    right, bottom = box.x + box.width, box.y + box.height
    for mask in masks:
        m_left, m_top = mask.x, mask.y
        m_right, m_bottom = mask.x + mask.width, mask.y + mask.height
        if m_right <= left or m_left >= right or m_bottom <= top or m_top >= bottom:
            continue
        if m_left <= press.x < m_right and m_top <= press.y < m_bottom:
            return None
        # Cut on the side of the mask that loses the least of the box.
        cuts = []
        if m_top > press.y:
            cuts.append(((right - left) * (bottom - m_top), "bottom", m_top))
        if m_bottom <= press.y:
            cuts.append(((right - left) * (m_bottom - top), "top", m_bottom))
        if m_left > press.x:
            cuts.append(((bottom - top) * (right - m_left), "right", m_left))
        if m_right <= press.x:
            cuts.append(((bottom - top) * (m_right - left), "left", m_right))
        _, side, edge = min(cuts)
        if side == "bottom":
            bottom = edge
        elif side == "top":
            top = edge
        elif side == "right":
            right = edge
        else:
            left = edge
    if right - left < 8 or bottom - top < 8:
        return None
    return BoundingBox(x=left, y=top, width=right - left, height=bottom - top)
