"""Screen images: PNG in and out, crops, masks, and finding an image anchor on the screen.

Pure functions of bytes (or decoded arrays): nothing here touches the display. OpenCV is
imported inside the functions that use it (:func:`~desktop_app.adapters.desktop.require_display`
says when it is missing).

Finding an anchor is OpenCV's template matching with ``TM_CCOEFF_NORMED``: the correlation of
the anchor with a place after removing each one's mean brightness. It is 1.0 for identical
pixels, unchanged by a uniform change of brightness or contrast (a hovered button still
matches), and near 0 for unrelated content. Grey finds, colour scores: the whole screen is
searched in greyscale, and the best places are then scored again on the three colour channels,
that score being the one reported. So two buttons alike but for their hue (a red error border,
a selected tab) still score apart, at greyscale's cost: on a 1024×768 screen OpenCV takes about
15-25 ms to search in grey and 90-200 ms in colour (measured on a loaded 2-core machine), while
rescoring a dozen places takes well under a millisecond. An anchor of one flat grey level
cannot say where anything is (OpenCV would score it 1 everywhere): it finds no match.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from desktop_app.core.models.common import BoundingBox
from desktop_app.core.replay.desktop import ImageMatch

if TYPE_CHECKING:
    import numpy.typing as npt

    Image = npt.NDArray[np.uint8]
    """A decoded image: height × width × 3, BGR (OpenCV's order)."""

__all__ = [
    "crop",
    "decode_png",
    "encode_png",
    "find_image",
    "image_size",
    "mask",
    "matches_only_at",
]

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

#: How many of the best greyscale places :func:`find_image` scores again in colour (at least).
_CANDIDATES = 12


def decode_png(png: bytes) -> Image:
    """The pixels of the PNG *png* (BGR; an alpha channel is dropped, grey becomes colour).

    Raises:
        ValueError: *png* is not an image OpenCV can read.
    """
    import cv2

    image = cv2.imdecode(np.frombuffer(png, dtype=np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        raise ValueError("not a readable image")
    return np.asarray(image, dtype=np.uint8)  # IMREAD_COLOR is 8-bit already: no copy


def encode_png(image: Image) -> bytes:
    """*image* (BGR) as PNG bytes."""
    import cv2

    ok, encoded = cv2.imencode(".png", image)
    if not ok:
        raise ValueError("the image cannot be encoded as PNG")
    return encoded.tobytes()


def image_size(png: bytes) -> tuple[int, int]:
    """Width and height of the PNG *png*, read from its header (nothing is decoded).

    Raises:
        ValueError: *png* is not a PNG.
    """
    if len(png) < 24 or not png.startswith(_PNG_SIGNATURE) or png[12:16] != b"IHDR":
        raise ValueError("not a PNG")
    width, height = struct.unpack(">II", png[16:24])
    return width, height


def crop(png: bytes, box: BoundingBox) -> tuple[bytes, BoundingBox] | None:
    """The part of *png* inside *box* (image pixels), and the box actually cut.

    A box reaching past the image's edges is clipped to them (an anchor recorded near the screen
    edge is smaller than asked, and off-centre); fractional edges are rounded outwards. None when
    the box and the image do not overlap.
    """
    image = decode_png(png)
    pixels = _pixel_box(box, image)
    if pixels is None:
        return None
    left, top, right, bottom = pixels
    cut = BoundingBox(x=left, y=top, width=right - left, height=bottom - top)
    return encode_png(np.ascontiguousarray(image[top:bottom, left:right])), cut


def mask(
    png: bytes, boxes: Iterable[BoundingBox], colour: tuple[int, int, int] = (0, 0, 0)
) -> bytes:
    """*png* with every box in *boxes* (image pixels) painted over in *colour* (RGB, 0..255).

    For screenshots that show something sensitive (a password field): the pixels are replaced,
    not blurred. Boxes are clipped to the image and rounded outwards, so nothing of a fractional
    box stays visible; boxes outside the image are ignored.
    """
    image = decode_png(png)
    red, green, blue = colour
    for box in boxes:
        pixels = _pixel_box(box, image)
        if pixels is not None:
            left, top, right, bottom = pixels
            image[top:bottom, left:right] = (blue, green, red)
    return encode_png(image)


def find_image(screen: bytes | Image, anchor: bytes | Image, limit: int = 3) -> list[ImageMatch]:
    """Where *anchor* appears in *screen* (PNGs or decoded images): up to *limit* places.

    Best first, each with its box in *screen*'s pixels and a score in 0..1 (see the module
    docstring). The places are distinct: once a place is taken, every place overlapping it is
    ruled out before the next is taken (non-maximum suppression), so one button is not reported
    three times one pixel apart. The places are the best in greyscale (at least a dozen are
    considered), ranked by their colour score. Places that do not correlate at all (score 0)
    are not returned; the caller decides which score is good enough. No place when the anchor
    is empty, flat (one grey level), or larger than the screen.
    """
    import cv2

    haystack = decode_png(screen) if isinstance(screen, bytes) else screen
    needle = decode_png(anchor) if isinstance(anchor, bytes) else anchor
    height, width = needle.shape[:2]
    if limit < 1 or height == 0 or width == 0:
        return []
    if height > haystack.shape[0] or width > haystack.shape[1]:
        return []
    grey_needle = _grey(needle)
    if grey_needle.min() == grey_needle.max():  # OpenCV would score a flat anchor 1 everywhere
        return []
    scores = cv2.matchTemplate(_grey(haystack), grey_needle, cv2.TM_CCOEFF_NORMED)
    np.nan_to_num(scores, copy=False, nan=0.0, posinf=0.0, neginf=0.0)
    found: list[ImageMatch] = []
    for _ in range(max(limit, _CANDIDATES)):
        _, grey_score, _, (x, y) = cv2.minMaxLoc(scores)
        if grey_score <= 0:
            break
        place = haystack[y : y + height, x : x + width]
        score = float(cv2.matchTemplate(place, needle, cv2.TM_CCOEFF_NORMED)[0, 0])
        if math.isfinite(score) and score > 0:
            box = BoundingBox(x=x, y=y, width=width, height=height)
            found.append(ImageMatch(box=box, score=min(1.0, score)))
        # Rule out every place whose box would overlap this one's.
        scores[max(0, y - height + 1) : y + height, max(0, x - width + 1) : x + width] = -1.0
    found.sort(key=lambda match: match.score, reverse=True)
    return found[:limit]


def matches_only_at(
    screen: Image, anchor: Image, x: int, y: int, *, below: float, tolerance: int = 2
) -> bool:
    """Whether *anchor* matches *screen* nowhere but at (*x*, *y*) (its top-left, give or take
    *tolerance* pixels): every other placement scores under *below*.

    Stricter than :func:`find_image`'s distinct places: a crop of the inside of a plain text
    field also matches a few pixels along the field, which would put a click elsewhere in it.
    """
    import cv2

    grey_anchor = _grey(anchor)
    if grey_anchor.min() == grey_anchor.max():
        return False  # flat: it matches everywhere
    scores = cv2.matchTemplate(_grey(screen), grey_anchor, cv2.TM_CCOEFF_NORMED)
    np.nan_to_num(scores, copy=False, nan=0.0, posinf=0.0, neginf=0.0)
    top, left = max(0, y - tolerance), max(0, x - tolerance)
    scores[top : y + tolerance + 1, left : x + tolerance + 1] = -1.0
    return bool(scores.max(initial=-1.0) < below)


def _grey(image: Image) -> Image:
    import cv2

    return np.asarray(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), dtype=np.uint8)


def _pixel_box(box: BoundingBox, image: Image) -> tuple[int, int, int, int] | None:
    """*box* as whole pixels inside *image*: left, top, right, bottom; None if it is outside."""
    left = max(0, math.floor(box.x))
    top = max(0, math.floor(box.y))
    right = min(image.shape[1], math.ceil(box.x + box.width))
    bottom = min(image.shape[0], math.ceil(box.y + box.height))
    if right <= left or bottom <= top:
        return None
    return left, top, right, bottom
