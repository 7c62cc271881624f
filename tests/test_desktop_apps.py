"""The desktop test applications themselves: the GTK form on a private accessibility bus, and
the Tk form's other layouts (what the accessibility replay tests and bench/desktop.py stand on)."""

from __future__ import annotations

from pathlib import Path

import pytest
from desktop_support import (
    LABEL_FOR,
    LABELLED_BY,
    Form,
    GtkForm,
    a11y_applications,
    a11y_nodes,
    a11y_session,
    needs_a11y,
    needs_xvfb,
    wait_for,
    xdotool,
    xvfb,
)

pytestmark = [pytest.mark.slow, needs_xvfb]


@needs_a11y
def test_the_gtk_form_is_filled_by_xdotool_and_its_tree_is_on_the_accessibility_bus(
    tmp_path: Path,
) -> None:
    with xvfb(), a11y_session() as a11y, GtkForm(tmp_path / "out.json", x=120, y=90) as form:
        assert form.geometry()[:2] == (120, 90)
        x, y, _, _ = form.geometry()
        name_x, name_y = form.point("name")
        xdotool("mousemove", str(x + name_x), str(y + name_y), "click", "1")
        xdotool("type", "Jane Doe")
        save_x, save_y = form.point("save")
        xdotool("mousemove", str(x + save_x), str(y + save_y), "click", "1")
        assert form.saved() == {"name": "Jane Doe", "email": "", "password_length": 0}
        wait_for(lambda: form.title() == "Contact saved", what="the new title")
        assert "procedura-contact-form" in wait_for(
            lambda: a11y_applications(a11y), what="an application on the accessibility bus"
        )
        nodes = a11y_nodes(a11y, "procedura-contact-form")
        assert ("frame", "Contact saved", frozenset()) in nodes
        assert ("push button", "Save", frozenset()) in nodes
        # Name's label is tied to its field (labelled-by); Email's is not; Password is hidden.
        assert ("label", "Name", frozenset({LABEL_FOR})) in nodes
        assert ("text", "", frozenset({LABELLED_BY})) in nodes
        assert ("text", "", frozenset()) in nodes
        assert ("password text", "", frozenset()) in nodes


def test_the_tk_form_reports_another_layout_when_relaid_out_or_scaled(tmp_path: Path) -> None:
    with xvfb():
        layouts = {}
        for mode, options in (
            ("plain", {}),
            ("relayout", {"relayout": True}),
            ("x2", {"scale": 2}),
        ):
            with Form(tmp_path / f"{mode}.json", **options) as form:
                layouts[mode] = form.layout
    plain, relaid, doubled = layouts["plain"], layouts["relayout"], layouts["x2"]
    assert relaid["name"]["y"] > plain["name"]["y"]  # the banner above
    assert relaid["save"]["x"] < plain["save"]["x"]  # Save on the left
    gap = plain["email"]["y"] - plain["name"]["y"]
    assert relaid["email"]["y"] - relaid["name"]["y"] > gap  # rows further apart
    assert relaid["name"]["height"] > plain["name"]["height"]  # a larger font
    for part in ("name", "email", "password", "save", "window"):
        for size in ("width", "height"):
            assert doubled[part][size] == pytest.approx(2 * plain[part][size], rel=0.25), part
