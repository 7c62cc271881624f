"""Desktop elements told apart by what a person reads: their role and their name or label.

The recorder describes the element clicked or typed into (:func:`describe`); replay finds it
again among a window's elements (:func:`find`). Both see the same names (:func:`names`): the
element's accessible name, else its label — the one the application ties to it (a labelled-by
relation, which the adapter has already made its name), else the text that labels it on the
screen: a label on its row just to its left, else just above it. Many real forms tie none, and a
field's label is what a person goes by; a field moved with its label to another row, or with
another row spacing, keeps it.

Never by position: elements alike in role and name are told apart by their path (the roles and
names of their ancestors), and where that does not settle it there is no answer — images, the
LLM or a person take over. A coin toss between two fields is a value typed into the wrong one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from desktop_app.core.models.common import BoundingBox, Point
from desktop_app.core.models.target import Fingerprint, Locator, LocatorStrategy, Target
from desktop_app.core.replay.desktop import Element

__all__ = [
    "LABEL_ROLES",
    "Lookup",
    "accessible_locator",
    "describe",
    "element_at",
    "find",
    "names",
    "point_in",
    "recorded_box",
]

#: Roles whose text labels other elements.
LABEL_ROLES: Final = frozenset({"label", "static", "text label"})
#: Roles a click means (the element clicked, rather than what it contains).
_ACTIONABLE: Final = frozenset(
    {
        "push button", "toggle button", "check box", "radio button", "combo box", "menu item",
        "check menu item", "radio menu item", "menu", "page tab", "link", "list item",
        "table cell", "tree item", "spin button", "slider", "text", "password text", "entry",
        "editbar", "icon",
    }
)  # fmt: skip
#: How far (pixels) a label may sit left of its field, or above it.
_LEFT_PX: Final = 300
_ABOVE_PX: Final = 28


def names(elements: Sequence[Element]) -> list[str]:
    """Each element's name as a person reads it (its own, else its label's; "" if none)."""
    labels = [e for e in elements if e.role in LABEL_ROLES and e.name and _visible(e.box)]
    return [e.name or _label_of(e, labels) for e in elements]


def element_at(elements: Sequence[Element], x: float, y: float) -> int | None:
    """The index of the element a click at (*x*, *y*) is on: the smallest actionable one
    there (a button rather than the label drawn inside it), else the smallest; None if none."""
    there = [i for i, e in enumerate(elements) if _inside(e.box, x, y)]
    if not there:
        return None
    acting = [i for i in there if _acts(elements[i])]
    return min(acting or there, key=lambda i: elements[i].box.width * elements[i].box.height)


def accessible_locator(target: Target | None) -> Locator | None:
    """The step's ``accessible`` locator, if it has one."""
    if target is None:
        return None
    return next((x for x in target.locators if x.strategy is LocatorStrategy.ACCESSIBLE), None)


def describe(
    elements: Sequence[Element], index: int, window: BoundingBox
) -> tuple[Locator, Fingerprint]:
    """The ``accessible`` locator and the fingerprint of ``elements[index]`` (its box relative
    to *window*), as the recorder stores them for the step."""
    element = elements[index]
    name = names(elements)[index]
    box = element.box
    return (
        Locator(strategy=LocatorStrategy.ACCESSIBLE, value=element.role, name=name or None),
        Fingerprint(
            role=element.role,
            name=name or None,
            ancestors=element.path,
            attributes={
                "element_box": _box_text(box, window),
                "states": " ".join(sorted(element.states & _KEPT_STATES)),
            },
        ),
    )


@dataclass(frozen=True, slots=True)
class Lookup:
    """What :func:`find` made of a window's elements: the one element, or why there is none."""

    element: Element | None
    why: str
    alike: int = 0  # when there is none: how many elements are alike in role and name

    @property
    def ambiguous(self) -> bool:
        """Whether several elements are what the locator names (none may be picked)."""
        return self.element is None and self.alike > 1


def find(elements: Sequence[Element], locator: Locator, path: Sequence[str] = ()) -> Lookup:
    """The element *locator* (an ``accessible`` one) names among *elements*: the only one of
    its role and name, else the only one of those with the recorded *path*; else none."""
    name = locator.name or ""
    read = names(elements)
    alike = [
        e for e, n in zip(elements, read, strict=True) if e.role == locator.value and n == name
    ]
    what = f'{locator.value} "{name}"' if name else f"an unnamed {locator.value}"
    if not alike:
        return Lookup(None, f"no {what} in the window")
    if len(alike) == 1 and (name or tuple(alike[0].path) == tuple(path)):
        return Lookup(alike[0], f"the only {what} in the window")
    same_path = [e for e in alike if tuple(e.path) == tuple(path)]
    if len(same_path) == 1:
        return Lookup(same_path[0], f"the only {what} in its place in the window")
    return Lookup(
        None, f"{len(alike)} elements are {what}: not telling them apart by position", len(alike)
    )


def point_in(element: Element, fingerprint: Fingerprint | None, recorded: Point | None) -> Point:
    """Where to click on *element*: at the same place within it as the recorded click was
    within the recorded element (scaled to its size now), else its middle; always inside it."""
    box = element.box
    fx = fy = 0.5
    was = recorded_box(fingerprint)
    if was is not None and recorded is not None and was.width > 0 and was.height > 0:
        fx = (recorded.x - was.x) / was.width
        fy = (recorded.y - was.y) / was.height
    margin_x, margin_y = min(3.0, box.width / 2), min(3.0, box.height / 2)
    x = min(max(box.x + fx * box.width, box.x + margin_x), box.x + box.width - margin_x)
    y = min(max(box.y + fy * box.height, box.y + margin_y), box.y + box.height - margin_y)
    return Point(x=x, y=y)


# ── helpers ─────────────────────────────────────────────────────────────────────────────────

_KEPT_STATES: Final = frozenset({"editable", "focusable", "checkable", "multi line", "read only"})


def _acts(element: Element) -> bool:
    return element.role in _ACTIONABLE or "focusable" in element.states


def _label_of(element: Element, labels: Sequence[Element]) -> str:
    if element.role in LABEL_ROLES:
        return ""
    box = element.box
    left = [
        (box.x - (lab.box.x + lab.box.width), lab)
        for lab in labels
        if lab.box.x + lab.box.width <= box.x + 2
        and box.x - (lab.box.x + lab.box.width) <= _LEFT_PX
        and _rows_overlap(lab.box, box)
    ]
    if left:
        return min(left, key=lambda pair: pair[0])[1].name
    above = [
        (box.y - (lab.box.y + lab.box.height), lab)
        for lab in labels
        if 0 <= box.y - (lab.box.y + lab.box.height) <= _ABOVE_PX
        and box.x - 4 <= lab.box.x < box.x + box.width
    ]
    if above:
        return min(above, key=lambda pair: pair[0])[1].name
    return ""


def _rows_overlap(a: BoundingBox, b: BoundingBox) -> bool:
    """Whether *a* and *b* share at least half the shorter one's height."""
    shared = min(a.y + a.height, b.y + b.height) - max(a.y, b.y)
    return shared >= 0.5 * min(a.height, b.height) > 0


def _inside(box: BoundingBox, x: float, y: float) -> bool:
    return box.x <= x < box.x + box.width and box.y <= y < box.y + box.height


def _visible(box: BoundingBox) -> bool:
    return box.width > 0 and box.height > 0


def _box_text(box: BoundingBox, window: BoundingBox) -> str:
    return ",".join(
        str(round(v)) for v in (box.x - window.x, box.y - window.y, box.width, box.height)
    )


def recorded_box(fingerprint: Fingerprint | None) -> BoundingBox | None:
    """The recorded element's box relative to its window (``element_box``), if kept."""
    text = fingerprint.attributes.get("element_box", "") if fingerprint is not None else ""
    try:
        x, y, width, height = (float(part) for part in text.split(","))
    except ValueError:
        return None
    return BoundingBox(x=x, y=y, width=width, height=height)
