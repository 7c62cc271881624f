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

__all__ = [
    "ELEMENT_PAD",
    "FALLBACK_HEIGHT",
    "MAX_WIDTH",
    "UNIQUE_BELOW",
    "WIDEN_STEP",
    "cut_anchor",
    "element_at",
]

#: Pixels added around the element on each side: its edge, and the focus ring drawn just outside.
ELEMENT_PAD: Final = 4
#: Height of the box around the click when no element's edges are found (nor given).
FALLBACK_HEIGHT: Final = 32
#: The widest an anchor gets, widened until nothing else in its window looks like it.
MAX_WIDTH: Final = 400
#: How much wider an anchor gets each time it is widened.
WIDEN_STEP: Final = 40
#: Another place in the window scoring this much or more makes an anchor ambiguous.
UNIQUE_BELOW: Final = 0.9
#: How far in from an element's edge the band of edges drawn along it ends (pixels).
_BAND: Final = 2
#: Columns of one colour that make a space between words (between letters there are fewer).
_GAP: Final = 5
#: How much a column's channels may vary and still be of one colour.
_FLAT: Final = 12
#: An element found by its edges is at least this wide and high (smaller: a glyph, a dot).
_SMALLEST: Final = 12
#: ... and covers at most this much of the window (more: a panel, a group box, the window).
_LARGEST: Final = 0.6


def cut_anchor(
    media: MediaStore,
    image: npt.NDArray[np.uint8],
    origin: BoundingBox,
    area: BoundingBox,
    press: Press,
    window: Window | None,
    masks: Sequence[BoundingBox] = (),
    beside: BoundingBox | None = None,
    element: BoundingBox | None = None,
) -> Target | None:
    """The image anchor around the click: cut from *image* (the window, masked).

    It is as high as the element clicked, and a few pixels (:data:`ELEMENT_PAD`): *element*
    (screen pixels, the accessible extents, when the recorder knows them), else the smallest
    rectangle of edges around the click (:func:`element_at`), else :data:`FALLBACK_HEIGHT`.
    Never higher: in a compact form a taller anchor takes in the rows above and below, and
    stops matching when the rows are spaced differently. It starts as wide as the element and
    is widened, left first (a row's label is on its left), then right, :data:`WIDEN_STEP` at a
    time up to :data:`MAX_WIDTH`, until nothing else in the window scores
    :data:`UNIQUE_BELOW` or more, nor a few pixels along (the inside of a text field does);
    then its left edge is moved to the space before the word it cuts, if any. It
    never takes in a masked (sensitive) region: the mask is not on the screen at replay. For a
    click inside a sensitive region (*beside*), it is cut from the strip left of the region,
    else right of it, on the element's rows (the click's): the click is then at an offset
    outside the anchor.

    The target's fingerprint has the anchor's box relative to *area* and, when the element's
    box is known (given, or found by its edges), ``attributes["element_box"]``: the element's
    box relative to *area* (``x,y,w,h``).
    """
    from desktop_app.adapters.desktop.imaging import matches_only_at

    found = element
    if found is None and beside is None:
        found = element_at(image, origin, press)
    if found is not None:
        rows = (found.y - ELEMENT_PAD, found.y + found.height + ELEMENT_PAD)
        first = (found.x - ELEMENT_PAD, found.x + found.width + ELEMENT_PAD)
    else:
        rows = (press.y - FALLBACK_HEIGHT // 2, press.y + FALLBACK_HEIGHT // 2)
        first = (press.x - FALLBACK_HEIGHT, press.x + FALLBACK_HEIGHT)
    image_left, image_right = origin.x, origin.x + image.shape[1]
    cut = None
    for left, right in _widths(first, image_left, image_right):
        box = BoundingBox(x=left, y=rows[0], width=right - left, height=rows[1] - rows[0])
        if beside is None:
            wanted = _clear_of(box, masks, press)
        else:
            wanted = _beside(beside, int(box.width), box.y, int(box.height), area, masks)
        cut = cut_array(image, origin, wanted) if wanted is not None else None
        if cut is None:
            return None
        crop, where = cut
        at_x, at_y = int(where.x - origin.x), int(where.y - origin.y)
        if matches_only_at(image, crop, at_x, at_y, below=UNIQUE_BELOW):
            break
    assert cut is not None
    crop, where = cut
    if beside is None and where.x > image_left:
        whole = _whole_words(image, origin, where)
        if whole != where and _clear_of(whole, masks, press) == whole:
            cut = cut_array(image, origin, whole) or cut
            crop, where = cut
    ref = media.put(png(crop), "png")
    attributes = {"button": press.button, "clicks": "1"}
    if found is not None:  # what replay finds the label and the element by apart
        attributes["element_box"] = ",".join(
            str(round(value))
            for value in (found.x - area.x, found.y - area.y, found.width, found.height)
        )
    return Target(
        locators=(Locator(strategy=LocatorStrategy.IMAGE_ANCHOR, value=ref),),
        fingerprint=Fingerprint(
            name=window.title if window is not None else None,
            bbox=BoundingBox(
                x=where.x - area.x, y=where.y - area.y, width=where.width, height=where.height
            ),
            attributes=attributes,
        ),
    )


def element_at(
    image: npt.NDArray[np.uint8], origin: BoundingBox, press: Press
) -> BoundingBox | None:
    """The element under the click as *image* (whose top-left is at *origin*) shows it: the
    smallest rectangle of edges holding the click, at least :data:`_SMALLEST` pixels on a side
    and at most :data:`_LARGEST` of the image (screen pixels); None when there is none (a click
    on a flat background, a control drawn without a border).

    Edges are OpenCV's Canny on the grey image, closed by a pixel; a contour is a rectangle
    when most of its points lie on its bounding box's sides (a glyph's do not).
    """
    import cv2
    import numpy as np

    x, y = press.x - origin.x, press.y - origin.y
    height, width = image.shape[:2]
    if not (0 <= x < width and 0 <= y < height):
        return None
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    edges = cv2.Canny(grey, 40, 120)
    edges = cv2.dilate(edges, np.ones((3, 3), np.uint8))
    contours, hierarchy = cv2.findContours(edges, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_NONE)
    best: tuple[int, int, int, int] | None = None
    for contour, (_, _, _, parent) in zip(
        contours, hierarchy[0] if len(contours) else (), strict=True
    ):
        if parent == -1:
            continue  # the outside of a band of edges: neighbouring elements merge into one
        left, top, wide, high = cv2.boundingRect(contour)
        if not (left <= x < left + wide and top <= y < top + high):
            continue
        if wide < _SMALLEST or high < _SMALLEST or wide * high > _LARGEST * width * height:
            continue
        if best is not None and wide * high >= best[2] * best[3]:
            continue
        points = contour.reshape(-1, 2)
        on_sides = (
            (np.abs(points[:, 0] - left) <= 2)
            | (np.abs(points[:, 0] - (left + wide - 1)) <= 2)
            | (np.abs(points[:, 1] - top) <= 2)
            | (np.abs(points[:, 1] - (top + high - 1)) <= 2)
        )
        if on_sides.mean() >= 0.8:
            best = (left, top, wide, high)
    if best is None:
        return None
    left, top, wide, high = best
    # The inside of the band Canny and the dilation draw along an edge is _BAND px in from it.
    return BoundingBox(
        x=origin.x + left - _BAND,
        y=origin.y + top - _BAND,
        width=wide + 2 * _BAND,
        height=high + 2 * _BAND,
    )


def _whole_words(
    image: npt.NDArray[np.uint8], origin: BoundingBox, box: BoundingBox
) -> BoundingBox:
    """*box* widened left, up to :data:`MAX_WIDTH`, so that its left edge cuts through no
    word: to the nearest run of :data:`_GAP` columns of one colour (on *box*'s rows), a space
    between words and wider than one between letters. A label cut in half matches less well
    once its text or font changes a little."""
    top = max(0, int(box.y - origin.y))
    bottom = min(image.shape[0], int(box.y + box.height - origin.y))
    right = int(box.x + box.width - origin.x)
    rows = image[top:bottom]
    x, blank = int(box.x - origin.x), 0
    while blank < _GAP and x > 0:
        if right - x >= MAX_WIDTH:
            return box  # no room to take in the whole word
        column = rows[:, x]
        blank = blank + 1 if int(column.max()) - int(column.min()) <= _FLAT else 0
        x -= 1
    if blank == _GAP:
        x += _GAP  # the blank column next to the word
    return box.model_copy(update={"x": origin.x + x, "width": right - x})


def _widths(
    first: tuple[float, float], image_left: float, image_right: float
) -> list[tuple[float, float]]:
    """The left and right edges an anchor is tried at: *first*, then widened left by
    :data:`WIDEN_STEP` until the image's left edge, then right, up to :data:`MAX_WIDTH`."""
    left, right = first
    tried = [(left, right)]
    while right - left < MAX_WIDTH:
        if left > image_left:
            left = max(image_left, left - WIDEN_STEP, right - MAX_WIDTH)
        elif right < image_right:
            right = min(image_right, right + WIDEN_STEP, left + MAX_WIDTH)
        else:
            break
        tried.append((left, right))
    return tried


def _beside(
    region: BoundingBox,
    width: int,
    top: float,
    height: int,
    area: BoundingBox,
    masks: Sequence[BoundingBox],
) -> BoundingBox | None:
    """A strip of *width* next to *region* (left, else right, within *area*) on the rows from
    *top* down *height*, clear of every mask; None if neither side has room."""
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
