"""A field found by its label: the label part of an image anchor found, its element beside it.

An anchor cut around a click in a form row holds the row's label on the left and the element
(a field, a button) on the right. Drawn again at another size, the two do not grow alike: text
at a larger font is not the old text magnified (its glyphs are hinted to the new size), a
field's width is counted in characters and its borders stay one pixel thick. Then no one scale
fits the whole anchor (a Tk form at twice the size: its first row scores 0.81 whole), though
the label still fits at its own (0.95), and the field, a white box whose look is its thin
border, fits at none well (0.78). So, when the whole anchor is not found, the row is found as
a person finds it: by its label, which says which row it is, and then the element just right
of it — the beginning of the element part of the anchor, found on the label's line where the
label part ends (it must be there: a label whose field is gone is not clicked beside).

It never guesses: the label must score :data:`PART_SCORE` and be :data:`AHEAD_BY` better than
any other label found with an element beside it; the element needs :data:`BESIDE_SCORE`
(it says only that an element like it is there: which one, the label says). The click is
placed as recorded relative to the anchor, at the label's scale.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from desktop_app.core.models.common import BoundingBox, Point
from desktop_app.core.replay.desktop import SCALES, DesktopPort, ImageMatch

__all__ = ["AHEAD_BY", "BESIDE_SCORE", "MIN_LABEL_PX", "PART_SCORE", "Paired", "by_parts"]

#: The least score of the label part.
PART_SCORE: Final = 0.85
#: How much better than any other label with an element beside it the best must be.
AHEAD_BY: Final = 0.05
#: The least score of the element's beginning beside the label.
BESIDE_SCORE: Final = 0.6
#: A label part narrower than this (anchor pixels) says too little: no pairing.
MIN_LABEL_PX: Final = 12
#: How far short of the element (anchor pixels) the label part ends.
_MARGIN_PX: Final = 8


@dataclass(frozen=True, slots=True)
class Paired:
    """The place found: where to click, and how well each part matched."""

    point: Point
    label: ImageMatch
    element: ImageMatch

    @property
    def score(self) -> float:
        return self.label.score


async def by_parts(
    port: DesktopPort,
    anchor: bytes,
    anchor_box: BoundingBox,
    element_box: BoundingBox,
    click: Point,
    region: BoundingBox | None,
) -> tuple[Paired | None, str]:
    """The element of the anchor's row, found by its label, and why (or why not).

    *anchor_box*, *element_box* and *click* are as recorded, relative to the window (the
    anchor's and the element's boxes, the click); *region* is where to look (screen pixels).
    """
    split = element_box.x - anchor_box.x
    if (
        split - _MARGIN_PX < MIN_LABEL_PX
        or element_box.x + element_box.width > anchor_box.x + anchor_box.width
    ):
        return None, "no label left of the element in the anchor"
    # Short of the element by a margin: its border or focus ring, a line that does not grow
    # with the text, is not the label's.
    label_part = BoundingBox(x=0, y=0, width=split - _MARGIN_PX, height=anchor_box.height)
    # The element's beginning: its left edge, which a wider or narrower field keeps.
    element_part = BoundingBox(
        x=split,
        y=0,
        width=min(anchor_box.width - split, 2 * anchor_box.height),
        height=anchor_box.height,
    )
    labels = await port.find_image(anchor, box=region, limit=4, scales=SCALES, part=label_part)
    elements = await port.find_image(anchor, box=region, limit=8, scales=SCALES, part=element_part)
    pairs = [
        Paired(_click_at(label, click, anchor_box), label, element)
        for label in labels
        if label.score >= PART_SCORE
        for element in elements
        if element.score >= BESIDE_SCORE and _beside(label, element, split)
    ]
    if not pairs:
        top = max((m.score for m in labels), default=0.0)
        return None, f"no label with its element beside it (the label's best score {top:.2f})"
    pairs.sort(key=lambda pair: pair.score, reverse=True)
    best = pairs[0]
    others = [p for p in pairs[1:] if p.label.box != best.label.box]
    if others and others[0].score > best.score - AHEAD_BY:
        scores = f"{best.score:.2f}, {others[0].score:.2f}"
        return None, f"two labels alike with an element beside them ({scores})"
    return best, (
        f"found by its label at {best.label.scale:.2f}x (score {best.label.score:.2f}), "
        f"the element beside it ({best.element.score:.2f})"
    )


def _beside(label: ImageMatch, element: ImageMatch, split: float) -> bool:
    """Whether *element* begins where the recorded row had it against *label*: *split* anchor
    pixels right of the label part's start (at the label's scale, give or take), on its line."""
    expected = label.box.x + split * label.scale
    if abs(element.box.x - expected) > max(8.0, 0.15 * split * label.scale):
        return False
    label_middle = label.box.y + label.box.height / 2
    element_middle = element.box.y + element.box.height / 2
    return abs(label_middle - element_middle) <= 0.25 * max(label.box.height, element.box.height)


def _click_at(label: ImageMatch, click: Point, anchor_box: BoundingBox) -> Point:
    """The recorded click (relative to the window) placed against the *label* found: the
    label part begins where the anchor does, so the click is where it was from the anchor's
    corner, at the label's scale."""
    return Point(
        x=label.box.x + (click.x - anchor_box.x) * label.scale,
        y=label.box.y + (click.y - anchor_box.y) * label.scale,
    )
