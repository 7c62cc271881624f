"""Image anchors sized to the element and found at several scales: drawn forms, real PNGs."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from desktop_app.adapters.desktop.imaging import (
    SCALES,
    decode_png,
    encode_png,
    find_image,
    matches_only_at,
)
from desktop_app.adapters.desktop.recorder.anchors import ELEMENT_PAD, cut_anchor, element_at
from desktop_app.adapters.desktop.recorder.inputs import Press
from desktop_app.adapters.media_store import FileMediaStore
from desktop_app.core.models.common import BoundingBox

Image = npt.NDArray[np.uint8]

LABELS = ("Name", "Email", "Phone", "Street", "City", "Country")
FIELD_X, FIELD_W, FIELD_H = 110, 220, 22


def _form(gap: int, labels: tuple[str, ...] = LABELS, top: int = 12) -> Image:
    """A compact form: a label and a white, bordered text field per row, *gap* px apart."""
    image = np.full((top + gap * len(labels) + 20, 360, 3), 236, np.uint8)
    for row, label in enumerate(labels):
        y = top + row * gap
        cv2.putText(
            image, label, (12, y + 16), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (20, 20, 20), 1, cv2.LINE_AA
        )
        cv2.rectangle(
            image, (FIELD_X, y), (FIELD_X + FIELD_W - 1, y + FIELD_H - 1), (255, 255, 255), -1
        )
        cv2.rectangle(
            image, (FIELD_X, y), (FIELD_X + FIELD_W - 1, y + FIELD_H - 1), (122, 122, 122), 1
        )
    return decode_png(encode_png(image))  # as a screenshot comes: through PNG


def _screen_with(panel: Image, factor: float, at: tuple[int, int]) -> Image:
    screen = np.full((600, 900, 3), 200, np.uint8)
    how = cv2.INTER_CUBIC if factor > 1 else cv2.INTER_AREA
    copy = cv2.resize(panel, None, fx=factor, fy=factor, interpolation=how)
    x, y = at
    screen[y : y + copy.shape[0], x : x + copy.shape[1]] = copy
    return decode_png(encode_png(screen))


def _press(x: int, y: int) -> Press:
    return Press(
        at=datetime.now(UTC),
        clock=0.0,
        x=x,
        y=y,
        button="left",
        modifiers=(),
        window=None,
        windows=(),
        shot=None,
        screen=BoundingBox(x=0, y=0, width=900, height=600),
    )


def _whole(image: Image) -> BoundingBox:
    return BoundingBox(x=0, y=0, width=image.shape[1], height=image.shape[0])


def _cut(
    media: FileMediaStore, form: Image, x: int, y: int, **kwargs: object
) -> tuple[Image, BoundingBox, dict[str, str]]:
    """The anchor cut for a click at (*x*, *y*) on *form*, its box and its attributes."""
    area = _whole(form)
    target = cut_anchor(media, form, area, area, _press(x, y), None, **kwargs)  # type: ignore[arg-type]
    assert target is not None and target.fingerprint is not None
    box = target.fingerprint.bbox
    assert box is not None
    return decode_png(media.get(target.locators[0].value)), box, dict(target.fingerprint.attributes)


def test_an_anchor_is_found_at_twice_and_at_four_fifths_its_size() -> None:
    # The Email row (field at y 45..67), padded by 5: at 0.8 its edges fall on whole pixels,
    # as a screen drawn at 0.8 would draw them (a copy resampled half a pixel off blurs its
    # 1 px lines differently, and scores 0.85-0.9).
    panel = _form(gap=30, top=15)
    anchor = panel[40:70, 5:335].copy()
    for factor, at in ((2.0, (40, 30)), (0.8, (300, 200))):
        screen = _screen_with(panel, factor, at)
        found = find_image(encode_png(screen), encode_png(anchor), limit=2, scales=SCALES)
        best = found[0]
        assert best.score > 0.95
        assert abs(best.scale - factor) <= 0.01
        assert abs(best.box.x - (at[0] + 5 * factor)) <= 1
        assert abs(best.box.y - (at[1] + 40 * factor)) <= 1
        assert abs(best.box.width - 330 * factor) <= 2 and abs(best.box.height - 30 * factor) <= 1
        assert len(found) == 1 or found[1].score < best.score - 0.05  # the other rows differ
    # At 1.0 only (as before), neither copy is found well.
    small = find_image(_screen_with(panel, 0.8, (300, 200)), anchor, limit=1)
    assert not small or small[0].score < 0.85


def test_look_alike_rows_give_two_matches_close_in_score() -> None:
    panel = _form(gap=26, labels=("Phone", "Phone", "City"))
    anchor = panel[12 - ELEMENT_PAD : 12 + FIELD_H + ELEMENT_PAD, 4:334].copy()
    for scales in ((1.0,), SCALES):
        found = find_image(panel, anchor, limit=2, scales=scales)
        assert len(found) == 2
        assert {int(m.box.y) for m in found} == {12 - ELEMENT_PAD, 38 - ELEMENT_PAD}
        assert found[0].score - found[1].score < 0.05  # a caller asking a margin refuses
    # And the uniqueness test used when cutting says the same, at one scale or several.
    assert not matches_only_at(panel, anchor, 4, 8, below=0.9)
    assert not matches_only_at(panel, anchor, 4, 8, below=0.9, scales=SCALES)
    unique = panel[64 - ELEMENT_PAD : 64 + FIELD_H + ELEMENT_PAD, 4:334].copy()  # City
    assert matches_only_at(panel, unique, 4, 60, below=0.9, scales=SCALES)


def test_the_anchor_of_a_field_in_a_compact_form_is_its_row(tmp_path: Path) -> None:
    media = FileMediaStore(tmp_path)
    form = _form(gap=26)  # fields 22 px high, 4 px apart
    email_y = 12 + 26
    x, y = FIELD_X + 60, email_y + 11  # inside the Email field
    found = element_at(form, _whole(form), _press(x, y))
    assert found is not None  # the field's edges, to a pixel
    assert abs(found.x - FIELD_X) <= 1 and abs(found.y - email_y) <= 1
    assert abs(found.width - FIELD_W) <= 2 and abs(found.height - FIELD_H) <= 2
    anchor, box, attributes = _cut(media, form, x, y)
    assert box.height == anchor.shape[0] <= FIELD_H + 2 * ELEMENT_PAD  # not the rows around
    assert box.y == email_y - ELEMENT_PAD
    assert box.x <= 12  # widened left to take in the label
    # The field's own box, for replay to find the row by its label and the field apart.
    assert attributes["element_box"] == ",".join(
        str(round(v)) for v in (found.x, found.y, found.width, found.height)
    )

    # Re-spaced (rows 34 px apart, the form moved): the anchor still marks the Email row.
    spaced = _form(gap=34, top=40)
    (best, *others) = find_image(spaced, anchor, limit=2, scales=SCALES)
    assert best.score >= 0.9 and best.scale == 1.0
    assert best.box.y == 40 + 34 - ELEMENT_PAD and best.box.x == box.x
    assert all(other.score < best.score - 0.05 for other in others)


def test_an_element_box_given_sizes_the_anchor(tmp_path: Path) -> None:
    media = FileMediaStore(tmp_path)
    form = _form(gap=26)
    field = BoundingBox(x=FIELD_X, y=38, width=FIELD_W, height=FIELD_H)
    anchor, box, attributes = _cut(media, form, FIELD_X + 20, 49, element=field)
    assert (box.y, box.height) == (38 - ELEMENT_PAD, FIELD_H + 2 * ELEMENT_PAD)
    assert anchor.shape[0] == FIELD_H + 2 * ELEMENT_PAD
    assert attributes["element_box"] == f"{FIELD_X},38,{FIELD_W},{FIELD_H}"


def test_a_click_on_a_flat_background_gets_a_small_box(tmp_path: Path) -> None:
    media = FileMediaStore(tmp_path)
    form = np.vstack([_form(gap=26), np.full((80, 360, 3), 236, np.uint8)])
    cv2.putText(form, "Notes", (150, 215), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0), 1)
    assert element_at(form, _whole(form), _press(170, 230)) is None
    _, box, _ = _cut(media, form, 170, 230)
    assert box.height == 32 and box.y == 230 - 16
