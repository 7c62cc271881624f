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

Several scales (a screen drawn larger or smaller than when the anchor was recorded): each
scale but 1.0 is searched on the screen at half size and placed to the pixel on the whole;
the best places are then fitted between the rungs of the ladder (a wide anchor of text loses
most of its score a few per cent off its scale: a 300 px row at 0.95 scored 0.76 at 1.0).
Measured for a 262×34 anchor (a form row) with the 15 rungs of :data:`SCALES`, on a loaded
2-core machine: 36 ms in a 420×300 window (6 ms at 1.0 alone), 96 ms on a 1024×768 screen
(20 ms at 1.0 alone). A copy resampled half a pixel off the anchor's grid blurs its 1 px
lines differently and scores 0.85-0.9 rather than 0.99.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Final

import numpy as np

from desktop_app.core.models.common import BoundingBox
from desktop_app.core.replay.desktop import SCALES, ImageMatch

if TYPE_CHECKING:
    import numpy.typing as npt

    Image = npt.NDArray[np.uint8]
    """A decoded image: height × width × 3, BGR (OpenCV's order)."""
    _Place = tuple[float, BoundingBox, float]
    """A place found: its grey score, its box, the scale."""

__all__ = [
    "MIN_SIDE",
    "SCALES",
    "crop",
    "decode_png",
    "encode_png",
    "find_image",
    "image_size",
    "mask",
    "matches_only_at",
]

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

#: A resized anchor smaller than this on a side says too little to be found by: it is skipped.
MIN_SIDE: Final = 8

#: How far (pixels) a place found on the screen at half size is searched around on the whole.
_REFINE_PX = 3
#: Places sharing this much of the smaller box are one place: two rows of a compact form,
#: whose anchors overlap by their padding, are still two.
_OVERLAP = 0.25
#: How many of the best places are fitted between the rungs of the scale ladder.
_FITTED = 6
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


def find_image(
    screen: bytes | Image,
    anchor: bytes | Image,
    limit: int = 3,
    scales: Sequence[float] = (1.0,),
) -> list[ImageMatch]:
    """Where *anchor* appears in *screen* (PNGs or decoded images): up to *limit* places.

    Best first, each with its box in *screen*'s pixels, a score in 0..1 (see the module
    docstring) and the scale it was found at: the anchor is tried resized to each of *scales*
    (a box found at 2.0 is twice the anchor's size). The places are distinct, across scales
    too: once a place is taken, every place overlapping it, at any scale, is ruled out before
    the next is taken (non-maximum suppression), so one button is not reported three times one
    pixel or one scale apart, and the second place is a different spot of the screen (what a
    caller weighs the first against). The places are the best in greyscale (at least a dozen
    are considered), ranked by their colour score; on equal scores the scale listed first wins.
    Places that do not correlate at all (score 0) are not returned; the caller decides which
    score is good enough. A scale is skipped when the resized anchor is larger than the screen
    or, but for 1.0, smaller than :data:`MIN_SIDE` pixels on a side; no place when the anchor
    is empty or flat (one grey level).
    """
    haystack = decode_png(screen) if isinstance(screen, bytes) else screen
    needle = decode_png(anchor) if isinstance(anchor, bytes) else anchor
    if limit < 1 or needle.shape[0] == 0 or needle.shape[1] == 0:
        return []
    grey_haystack = _grey(haystack)
    half: Image | None = None  # the screen at half size, made when a scale first needs it
    wanted = max(limit, _CANDIDATES)
    # Each scale's best places (distinct at that scale), then the best of all, distinct across
    # scales: the same spot at a neighbouring scale scores nearly as well, and must not crowd
    # out a second, different spot.
    pooled: list[tuple[float, int, BoundingBox]] = []
    for order, scale in enumerate(scales):
        resized = _resized(needle, scale)
        if resized is None or not _fits(resized, haystack):
            continue
        grey_needle = _grey(resized)
        if scale == 1.0 or min(grey_needle.shape[:2]) < 2 * MIN_SIDE:
            places = _grey_places(grey_haystack, grey_needle, wanted)
        else:  # found on the screen at half size, placed to the pixel on the whole
            if half is None:
                half = _resized(grey_haystack, 0.5)
            places = _refined(grey_haystack, half, grey_needle, wanted)
        pooled.extend((grey_score, order, box) for grey_score, box in places)
    pooled.sort(key=lambda place: (-place[0], place[1]))
    taken = _distinct([(score, box, float(scales[order])) for score, order, box in pooled], wanted)
    if len(scales) > 1:  # fitted between the rungs of the ladder, then made distinct again
        grey_needle = _grey(needle)
        ladder = sorted(set(scales))
        fitted = [
            _fitted(grey_haystack, grey_needle, place, ladder) if rank < _FITTED else place
            for rank, place in enumerate(taken)
        ]
        taken = _distinct(sorted(fitted, key=lambda place: -place[0]), wanted)
    found: list[ImageMatch] = []
    for _, box, scale in taken:
        resized = _resized(needle, scale)
        assert resized is not None  # it was found at that scale
        x, y, width, height = int(box.x), int(box.y), int(box.width), int(box.height)
        place = haystack[y : y + height, x : x + width]
        if abs(scale - 1.0) >= 0.02:
            place, resized = _softened(place, scale), _softened(resized, scale)
        score = float(_match(place, resized)[0, 0])
        if math.isfinite(score) and score > 0:
            found.append(ImageMatch(box=box, score=min(1.0, score), scale=scale))
    found.sort(key=lambda match: match.score, reverse=True)  # stable: ties keep the scale order
    return found[:limit]


def matches_only_at(
    screen: Image,
    anchor: Image,
    x: int,
    y: int,
    *,
    below: float,
    tolerance: int = 2,
    scales: Sequence[float] = (1.0,),
) -> bool:
    """Whether *anchor* matches *screen* nowhere but at (*x*, *y*) (its top-left, give or take
    *tolerance* pixels): every other placement scores under *below* (in grey), at each of
    *scales*.

    Stricter than :func:`find_image`'s distinct places: a crop of the inside of a plain text
    field also matches a few pixels along the field, which would put a click elsewhere in it.
    At a scale other than 1.0 the anchor resized around its own spot (each box holding the
    other's centre) is that spot, not another place: only the others count.
    """
    grey_screen = _grey(screen)
    grey_anchor = _grey(anchor)
    if grey_anchor.min() == grey_anchor.max():
        return False  # flat: it matches everywhere
    height, width = grey_anchor.shape[:2]
    for scale in scales:
        resized = _resized(grey_anchor, scale)
        if resized is None or not _fits(resized, grey_screen):
            continue
        scores = _scores(grey_screen, resized)
        if scores is None:
            continue
        if scale == 1.0:
            top, left = max(0, y - tolerance), max(0, x - tolerance)
            scores[top : y + tolerance + 1, left : x + tolerance + 1] = -1.0
        else:
            high, wide = resized.shape[:2]
            # Placements whose centre is in the anchor's box and whose box holds its centre.
            reach_x = min(width, wide) / 2
            reach_y = min(height, high) / 2
            centre_x, centre_y = x + (width - wide) / 2, y + (height - high) / 2
            left = max(0, math.ceil(centre_x - reach_x))
            top = max(0, math.ceil(centre_y - reach_y))
            right = math.floor(centre_x + reach_x) + 1
            bottom = math.floor(centre_y + reach_y) + 1
            scores[top:bottom, left:right] = -1.0
        if float(scores.max(initial=-1.0)) >= below:
            return False
    return True


def _softened(image: Image, scale: float) -> Image:
    """*image* blurred as much as resampling by *scale* blurs: an anchor drawn again at
    another size (another font size, a doubled scale) has its one-pixel lines and its glyphs'
    hinting drawn differently, which costs a resized anchor a tenth of its score or more
    though it is the same thing; softened alike, both compare by their shapes. The blur grows
    with the scale, and stays light: softened more, rows alike but for their labels score as
    close as the rows themselves. Measured on the Tk test form: its rows re-laid out at 1.2x
    (a larger font) scored 0.83-0.89 sharp and 0.89-0.94 softened, the other rows 0.75 or
    less; at 2x, 0.75-0.87 sharp and 0.81-0.93 softened."""
    import cv2

    sigma = 0.5 + abs(math.log2(scale)) / 2
    return np.asarray(cv2.GaussianBlur(image, (0, 0), sigma), dtype=np.uint8)


def _resized(image: Image, scale: float) -> Image | None:
    """*image* resized by *scale* (area averaging to shrink, bilinear to grow); None when that
    is smaller than :data:`MIN_SIDE` on a side (at 1.0: when it is empty) or *scale* is not
    positive."""
    import cv2

    if scale == 1.0:
        return image if image.shape[0] > 0 and image.shape[1] > 0 else None
    if not scale > 0:
        return None
    height, width = image.shape[:2]
    size = (round(width * scale), round(height * scale))
    if min(size) < MIN_SIDE:
        return None
    how = cv2.INTER_AREA if scale < 1.0 else cv2.INTER_LINEAR
    return np.asarray(cv2.resize(image, size, interpolation=how), dtype=np.uint8)


def _fits(needle: Image, haystack: Image) -> bool:
    return bool(needle.shape[0] <= haystack.shape[0] and needle.shape[1] <= haystack.shape[1])


def _scores(haystack: Image, needle: Image) -> npt.NDArray[np.float32] | None:
    """OpenCV's ``TM_CCOEFF_NORMED`` map of *needle* over *haystack* (NaN as 0); None for a
    flat needle, which OpenCV would score 1 everywhere."""
    if needle.min() == needle.max():
        return None
    scores = _match(haystack, needle)
    np.nan_to_num(scores, copy=False, nan=0.0, posinf=0.0, neginf=0.0)
    return scores


def _match(haystack: Image, needle: Image) -> npt.NDArray[np.float32]:
    import cv2

    return np.asarray(cv2.matchTemplate(haystack, needle, cv2.TM_CCOEFF_NORMED), np.float32)


def _grey_places(haystack: Image, needle: Image, count: int) -> list[tuple[float, BoundingBox]]:
    """Up to *count* distinct places of *needle* in *haystack* (both grey), best first, with
    their grey scores (over 0)."""
    import cv2

    scores = _scores(haystack, needle)
    if scores is None:
        return []
    height, width = needle.shape[:2]
    places: list[tuple[float, BoundingBox]] = []
    for _ in range(count):
        _, score, _, (x, y) = cv2.minMaxLoc(scores)
        if score <= 0:
            break
        places.append((float(score), BoundingBox(x=x, y=y, width=width, height=height)))
        # Rule out the places sharing a quarter of this one's box or more, roughly (those
        # sharing less are told apart exactly by _distinct): a neighbouring row is kept.
        near_y, near_x = height // 2, width // 2
        scores[max(0, y - near_y) : y + near_y + 1, max(0, x - near_x) : x + near_x + 1] = -1.0
    return places


def _refined(
    haystack: Image, half: Image | None, needle: Image, count: int
) -> list[tuple[float, BoundingBox]]:
    """:func:`_grey_places` for a needle of at least twice :data:`MIN_SIDE`, four times faster:
    the places are found with both halved (*half* is *haystack* halved), then each is placed
    to the pixel on *haystack* within a few pixels of where the half-size search put it."""
    import cv2

    small = _resized(needle, 0.5)
    if half is None or small is None or not _fits(small, half):
        return _grey_places(haystack, needle, count)
    height, width = needle.shape[:2]
    places: list[tuple[float, BoundingBox]] = []
    for _, rough in _grey_places(half, small, count):
        left = max(0, int(rough.x) * 2 - _REFINE_PX)
        top = max(0, int(rough.y) * 2 - _REFINE_PX)
        right = min(haystack.shape[1], int(rough.x) * 2 + width + _REFINE_PX)
        bottom = min(haystack.shape[0], int(rough.y) * 2 + height + _REFINE_PX)
        if right - left < width or bottom - top < height:
            continue
        scores = _scores(haystack[top:bottom, left:right], needle)
        if scores is None:
            continue
        _, score, _, (x, y) = cv2.minMaxLoc(scores)
        if score > 0:
            box = BoundingBox(x=left + x, y=top + y, width=width, height=height)
            places.append((float(score), box))
    return places


def _distinct(places: Sequence[_Place], count: int) -> list[_Place]:
    """The first *count* of *places* (best first) that do not overlap a better one by
    :data:`_OVERLAP` of the smaller box or more."""
    taken: list[_Place] = []
    for place in places:
        if len(taken) == count:
            break
        if not any(_overlap(place[1], other[1]) >= _OVERLAP for other in taken):
            taken.append(place)
    return taken


def _overlap(one: BoundingBox, other: BoundingBox) -> float:
    """How much of the smaller of *one* and *other* the two share (0..1)."""
    wide = min(one.x + one.width, other.x + other.width) - max(one.x, other.x)
    high = min(one.y + one.height, other.y + other.height) - max(one.y, other.y)
    if wide <= 0 or high <= 0:
        return 0.0
    return wide * high / min(one.width * one.height, other.width * other.height)


def _fitted(haystack: Image, needle: Image, place: _Place, ladder: Sequence[float]) -> _Place:
    """*place* (found at one rung of *ladder*) with the scale between the neighbouring rungs
    that scores best in grey, in eighths of a step around its centre: a copy drawn
    between two rungs is then at most a sixteenth of a step off (0.65 % on :data:`SCALES`)
    rather than half a step, which costs a wide anchor of text most of its score."""
    import cv2

    _, box, scale = place
    rung = ladder.index(scale)
    low = math.log(ladder[rung - 1] / scale) if rung > 0 else 0.0
    high = math.log(ladder[rung + 1] / scale) if rung + 1 < len(ladder) else 0.0
    centre_x, centre_y = box.x + box.width / 2, box.y + box.height / 2
    best = place
    # Quarters of the step either side (the score is jagged: a pixel more or less of height
    # weighs much), then eighths around the best of those.
    tries = [scale * math.exp(side * k / 4) for side in (low, high) if side for k in (1, 2, 3)]
    for sweep in (tries, [0.0, 0.0]):
        if not sweep[0]:
            around = best[2]
            sweep = [around * math.exp(side / 8) for side in (low, high) if side]
        for tried in sweep:
            resized = _resized(needle, tried)
            if resized is None:
                continue
            height, width = resized.shape[:2]
            left = max(0, round(centre_x - width / 2) - _REFINE_PX)
            top = max(0, round(centre_y - height / 2) - _REFINE_PX)
            region = haystack[
                top : top + height + 2 * _REFINE_PX, left : left + width + 2 * _REFINE_PX
            ]
            scores = _scores(region, resized) if _fits(resized, region) else None
            if scores is None:
                continue
            _, there, _, (x, y) = cv2.minMaxLoc(scores)
            if there > best[0]:
                box = BoundingBox(x=left + x, y=top + y, width=width, height=height)
                best = (float(there), box, round(tried, 3))
    return best


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
