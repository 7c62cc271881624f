"""The Windows (UI Automation) and macOS (AX) accessibility adapters, where they can run: here.

Neither platform runs our suite, so what is tested is what is pure: both modules import on
Linux, their tables give the AT-SPI roles and states the core reads (a button is a "push
button", a secure text field "password text"), the macOS window is picked by title then place,
and ``open()`` off its platform fails with one line, as ``open_tree`` logs it.
"""

from __future__ import annotations

import importlib.util
import sys

import pytest

from desktop_app.adapters.desktop.accessibility import MAX_ELEMENTS, ax, uia
from desktop_app.core.models.common import BoundingBox
from desktop_app.core.replay.desktop import Window

# The AT-SPI role names (``atspi_role_get_name``) the two tables may give.
ATSPI_ROLES = frozenset(
    {
        "calendar", "check box", "column header", "combo box", "date editor", "dialog",
        "document text", "document web", "header", "heading", "image", "label", "level bar",
        "link", "list", "list item", "menu", "menu bar", "menu item", "page tab",
        "page tab list", "panel", "password text", "progress bar", "push button",
        "radio button", "scroll bar", "scroll pane", "separator", "slider", "spin button",
        "split pane", "status bar", "table", "table cell", "table row", "text", "title bar",
        "toggle button", "tool bar", "tool tip", "tree", "tree item", "tree table", "unknown",
        "window",
    }
)  # fmt: skip


def _box(x: float, y: float, width: float, height: float) -> BoundingBox:
    return BoundingBox(x=x, y=y, width=width, height=height)


# ── Windows: UI Automation ──────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("control_type", "role"),
    [
        (50000, "push button"),  # Button
        (50002, "check box"),  # CheckBox
        (50003, "combo box"),  # ComboBox
        (50004, "text"),  # Edit
        (50005, "link"),  # Hyperlink
        (50007, "list item"),  # ListItem
        (50011, "menu item"),  # MenuItem
        (50013, "radio button"),  # RadioButton
        (50019, "page tab"),  # TabItem
        (50020, "label"),  # Text
        (50025, "unknown"),  # Custom
        (99999, "unknown"),  # not a control type at all
    ],
)
def test_uia_control_types_map_to_atspi_roles(control_type: int, role: str) -> None:
    assert uia.role_of(control_type) == role


def test_uia_password_edit_is_password_text_and_only_an_edit_is() -> None:
    assert uia.role_of(50004, password=True) == "password text"
    assert uia.role_of(50000, password=True) == "push button"


def test_uia_roles_are_atspi_roles() -> None:
    assert set(uia.ROLES.values()) <= ATSPI_ROLES


def test_uia_states_of_a_focused_writable_field() -> None:
    facts = uia.Facts(
        control_type=50004, focused=True, focusable=True, enabled=True, read_only=False
    )
    assert uia.states_of(facts) == {
        "focused", "focusable", "enabled", "sensitive", "showing", "visible", "editable",
    }  # fmt: skip


def test_uia_states_of_toggles_selections_and_read_only_values() -> None:
    checked = uia.states_of(uia.Facts(control_type=50002, enabled=True, toggle=1))
    assert {"checkable", "checked"} <= checked
    assert "checked" not in uia.states_of(uia.Facts(control_type=50002, toggle=0))
    assert "indeterminate" in uia.states_of(uia.Facts(control_type=50002, toggle=2))
    # A radio button's selection is "checked" (as GTK and Qt say); a tab's is "selected".
    assert "checked" in uia.states_of(uia.Facts(control_type=50013, selected=True))
    assert "selected" in uia.states_of(uia.Facts(control_type=50019, selected=True))
    read_only = uia.states_of(uia.Facts(control_type=50004, read_only=True))
    assert "read only" in read_only and "editable" not in read_only
    # No ValuePattern: not editable, whatever the control type.
    assert "editable" not in uia.states_of(uia.Facts(control_type=50004))
    disabled = uia.states_of(uia.Facts(control_type=50000, offscreen=True))
    assert not disabled & {"enabled", "sensitive", "showing", "visible"}


# ── macOS: the AX API ───────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("ax_role", "subrole", "parent_role", "role"),
    [
        ("AXButton", None, "AXWindow", "push button"),
        ("AXTextField", None, "AXGroup", "text"),
        ("AXTextArea", None, "AXScrollArea", "text"),
        ("AXSecureTextField", None, "AXWindow", "password text"),
        # A web page's password input: an AXTextField whose subrole says it is secure.
        ("AXTextField", "AXSecureTextField", "AXWebArea", "password text"),
        ("AXCheckBox", None, "AXWindow", "check box"),
        ("AXCheckBox", "AXSwitch", "AXWindow", "check box"),
        ("AXPopUpButton", None, "AXWindow", "combo box"),
        ("AXComboBox", None, "AXWindow", "combo box"),
        ("AXMenuItem", None, "AXMenu", "menu item"),
        ("AXStaticText", None, "AXWindow", "label"),
        ("AXLink", None, "AXWebArea", "link"),
        ("AXRadioButton", None, "AXRadioGroup", "radio button"),
        ("AXRadioButton", None, "AXTabGroup", "page tab"),
        ("AXRow", "AXOutlineRow", "AXOutline", "tree item"),
        ("AXSomethingNew", None, "AXWindow", "unknown"),
    ],
)
def test_ax_roles_map_to_atspi_roles(
    ax_role: str, subrole: str | None, parent_role: str, role: str
) -> None:
    assert ax.role_of(ax_role, subrole, parent_role) == role


def test_ax_roles_are_atspi_roles() -> None:
    assert set(ax.ROLES.values()) <= ATSPI_ROLES


def test_ax_states_of_fields_check_boxes_and_tabs() -> None:
    field = ax.AxFacts(
        ax_role="AXTextField", role="text", focused=True, focusable=True, enabled=True,
        value_settable=True,
    )  # fmt: skip
    assert ax.states_of(field) == {
        "focused", "focusable", "enabled", "sensitive", "showing", "visible", "editable",
        "single line",
    }  # fmt: skip
    area = ax.AxFacts(ax_role="AXTextArea", role="text", value_settable=False)
    assert {"read only", "multi line"} <= ax.states_of(area)
    box = ax.AxFacts(ax_role="AXCheckBox", role="check box", check=1)
    assert {"checkable", "checked"} <= ax.states_of(box)
    assert "indeterminate" in ax.states_of(ax.AxFacts(ax_role="AXCheckBox", role="x", check=2))
    tab = ax.AxFacts(ax_role="AXRadioButton", role="page tab", check=1)
    assert "selected" in ax.states_of(tab) and "checked" not in ax.states_of(tab)
    # A label without AXEnabled is neither enabled nor disabled: no state is invented.
    label = ax.AxFacts(ax_role="AXStaticText", role="label")
    assert ax.states_of(label) == {"showing", "visible"}


def test_ax_name_is_title_then_description_then_static_text_then_label() -> None:
    assert ax.name_of("AXButton", "Save", "a floppy disk", None, None) == "Save"
    assert ax.name_of("AXButton", "", "Close", None, None) == "Close"
    assert ax.name_of("AXStaticText", None, None, " Name: ", None) == "Name:"
    # A field's value is what was typed, never its name; its label is.
    assert ax.name_of("AXTextField", None, None, "typed", "Email") == "Email"
    assert ax.name_of("AXTextField", None, 3, None, None) == ""


def test_ax_window_is_picked_by_title_then_by_place() -> None:
    target = Window(handle=7, title="Invoice", app="Numbers", box=_box(100, 100, 400, 300), pid=1)
    inspector = ("Inspector", _box(600, 100, 200, 300))
    twin_far = ("Invoice", _box(900, 500, 400, 300))
    twin_here = ("Invoice", _box(100, 100, 400, 300))
    assert ax.pick_window([inspector, twin_far], target) == 1
    assert ax.pick_window([twin_far, inspector, twin_here], target) == 2
    # Retitled since (a document's name changed): the window where it is.
    assert ax.pick_window([inspector, ("Invoice 2", _box(101, 100, 400, 300))], target) == 1
    assert ax.pick_window([inspector], target) is None


# ── both ────────────────────────────────────────────────────────────────────────────────────


def test_walks_share_the_node_cap() -> None:
    assert MAX_ELEMENTS == 2000
    assert uia.WALK_BUDGET_S <= 3 and ax.WALK_BUDGET_S <= 3


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="off-platform failure only")
@pytest.mark.parametrize("tree", [uia.UiaTree, ax.AxTree])
def test_open_off_its_platform_fails_with_one_line(tree: type[uia.UiaTree | ax.AxTree]) -> None:
    with pytest.raises(OSError) as caught:
        tree.open()
    message = str(caught.value)
    assert message and "\n" not in message
    assert sys.platform in message
    assert caught.value.__cause__ is None


@pytest.mark.parametrize(
    ("tree", "platform", "package", "needs"),
    [
        (uia.UiaTree, "win32", "comtypes", "comtypes"),
        (ax.AxTree, "darwin", "ApplicationServices", "pyobjc-framework-ApplicationServices"),
    ],
)
def test_open_without_its_package_fails_with_one_line_naming_it(
    monkeypatch: pytest.MonkeyPatch,
    tree: type[uia.UiaTree | ax.AxTree],
    platform: str,
    package: str,
    needs: str,
) -> None:
    if importlib.util.find_spec(package) is not None:
        pytest.skip(f"{package} is installed here")
    monkeypatch.setattr(sys, "platform", platform)
    with pytest.raises(OSError) as caught:
        tree.open()
    message = str(caught.value)
    assert needs in message and "\n" not in message
    assert caught.value.__cause__ is None
