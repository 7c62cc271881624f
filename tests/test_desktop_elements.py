"""Desktop elements told apart by role and name or label, never by position (pure: no display)."""

from __future__ import annotations

from desktop_app.core.models.common import BoundingBox, Point
from desktop_app.core.models.target import Locator, LocatorStrategy
from desktop_app.core.replay.desktop import Element
from desktop_app.core.replay.desktop_elements import describe, element_at, find, names, point_in

WINDOW = BoundingBox(x=40, y=40, width=300, height=200)
FIELD = frozenset({"editable", "focusable", "enabled", "showing"})


def _el(
    role: str, name: str, x: float, y: float, w: float = 160, h: float = 30, **kw: object
) -> Element:
    return Element(role=role, name=name, box=BoundingBox(x=x, y=y, width=w, height=h), **kw)  # type: ignore[arg-type]


def _form(row_gap: float = 40, top: float = 56) -> list[Element]:
    """Labels left of unnamed fields, one row each, and a Save button (a GTK form's tree)."""
    rows = []
    for i, label in enumerate(("Name", "Email")):
        y = top + i * row_gap
        rows += [
            _el("label", label, 56, y, w=60),
            _el("text", "", 130, y, states=FIELD, path=("panel",)),
        ]
    return [*rows, _el("push button", "Save", 130, top + 2 * row_gap, states=FIELD - {"editable"})]


def test_an_unnamed_field_is_known_by_the_label_on_its_row() -> None:
    form = _form()
    assert names(form) == ["Name", "Name", "Email", "Email", "Save"]
    alone = [_el("text", "", 130, 56, states=FIELD)]
    assert names(alone) == [""]  # no label anywhere: no name, never a neighbour's


def test_the_field_found_again_after_the_rows_moved_apart() -> None:
    recorded = _form()
    locator, fingerprint = describe(recorded, 3, WINDOW)
    assert locator.describe() == 'accessible=text[name="Email"]'
    relaid = _form(row_gap=64, top=90)
    found = find(relaid, locator, fingerprint.ancestors).element
    assert found is not None and found.box.y == 90 + 64


def test_two_fields_alike_are_not_told_apart_by_position() -> None:
    twins = [
        *_form(),
        _el("label", "Email", 56, 200, w=60),
        _el("text", "", 130, 200, states=FIELD, path=("panel",)),
    ]
    locator = Locator(strategy=LocatorStrategy.ACCESSIBLE, value="text", name="Email")
    lookup = find(twins, locator, ("panel",))
    assert lookup.element is None and "not telling them apart by position" in lookup.why


def test_the_path_tells_apart_what_role_and_name_cannot() -> None:
    a = _el("push button", "OK", 10, 10, path=("panel", 'filler "Billing"'))
    b = _el("push button", "OK", 10, 60, path=("panel", 'filler "Shipping"'))
    locator = Locator(strategy=LocatorStrategy.ACCESSIBLE, value="push button", name="OK")
    assert find([a, b], locator, ("panel", 'filler "Shipping"')).element is b
    assert find([a, b], locator, ("panel",)).element is None


def test_a_click_on_a_buttons_caption_is_a_click_on_the_button() -> None:
    button = _el("push button", "Save", 100, 100, w=80, h=30, states=frozenset({"focusable"}))
    caption = _el("label", "Save", 110, 105, w=40, h=20)
    assert element_at([button, caption], 120, 110) == 0
    assert element_at([button, caption], 5, 5) is None


def test_the_click_lands_at_the_same_place_within_the_element_at_any_size() -> None:
    recorded = _form()
    _, fingerprint = describe(recorded, 1, WINDOW)  # the Name field at (90, 16) in the window
    click = Point(x=90 + 40, y=16 + 15)  # a quarter along, half-way down
    bigger = _el("text", "", 300, 300, w=320, h=60)
    spot = point_in(bigger, fingerprint, click)
    assert (spot.x, spot.y) == (300 + 80, 300 + 30)
