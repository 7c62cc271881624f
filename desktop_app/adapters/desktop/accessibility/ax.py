"""The AX API, the accessibility API of macOS, spoken through pyobjc's ApplicationServices.

Untested: no Windows/macOS machine runs our suite; written to the documented API. What was
followed: Apple's Accessibility (HIServices) reference: ``AXUIElement.h``
(``AXUIElementCreateApplication``, ``AXUIElementCreateSystemWide``,
``AXUIElementCopyAttributeValue``, ``AXUIElementIsAttributeSettable``,
``AXUIElementSetAttributeValue``, ``AXUIElementSetMessagingTimeout``, ``AXIsProcessTrusted``),
``AXValue.h`` (``AXValueGetValue`` with ``kAXValueCGPointType`` / ``kAXValueCGSizeType``),
``AXError.h`` and ``AXAttributeConstants.h`` / ``AXRoleConstants.h`` (the attribute and role
names, which are these literal strings: ``kAXRoleAttribute`` is ``"AXRole"``); and pyobjc's
convention for output parameters (pass None, get ``(error, value)`` back). Only the pure parts
(:func:`role_of`, :func:`states_of`, :func:`name_of`, :func:`pick_window`) and
:meth:`AxTree.open` failing off macOS run in our tests.

AppKit, SwiftUI, Qt and Catalyst applications answer; Chromium and Electron ones expose their
web content only once an assistive application asks for it (``AXManualAccessibility``), which
this adapter does not do. The window is found among its application's ``AXWindows``
(``AXUIElementCreateApplication(pid)``) by title, then by where it is; its descendants are
walked through ``AXChildren``, parents first. Nodes that do not cover part of the window (no
size, or scrolled out of it) are left out with their subtrees, as AT-SPI's walk leaves out nodes
that are not "showing". Boxes are in macOS' global screen coordinates (points, the top-left of
the main display at 0, 0), as ``AXPosition`` and ``AXSize`` give them and as Quartz's window
list gives windows' bounds: on a Retina display one point is two pixels.

The process must be trusted for accessibility (System Settings > Privacy & Security >
Accessibility); :meth:`AxTree.open` says so when it is not. Bounded like AT-SPI's walk:
:data:`.MAX_ELEMENTS` nodes and :data:`WALK_BUDGET_S` per window, each call bounded by the
messaging timeout (:data:`CALL_TIMEOUT_S`, set for the whole process); a walk cut short is None
(no tree), never part of one.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from desktop_app.adapters.desktop.accessibility import MAX_ELEMENTS, focus_taken
from desktop_app.core.models.common import BoundingBox
from desktop_app.core.replay.desktop import Element, Window

__all__ = [
    "CALL_TIMEOUT_S",
    "ROLES",
    "WALK_BUDGET_S",
    "AxFacts",
    "AxTree",
    "name_of",
    "pick_window",
    "role_of",
    "states_of",
]

log = logging.getLogger(__name__)

#: How long one call may take before the application counts as not answering (seconds).
CALL_TIMEOUT_S: Final = 1.0
#: The most time one window's walk may take (seconds).
WALK_BUDGET_S: Final = 2.0

#: ``AXRole`` → the AT-SPI role the core knows it by (``atspi_role_get_name``).
ROLES: Final[dict[str, str]] = {
    "AXButton": "push button",
    "AXMenuButton": "push button",
    "AXColorWell": "push button",
    "AXTextField": "text",
    "AXTextArea": "text",
    "AXSecureTextField": "password text",
    "AXCheckBox": "check box",
    "AXRadioButton": "radio button",
    "AXPopUpButton": "combo box",
    "AXComboBox": "combo box",
    "AXMenuItem": "menu item",
    "AXMenuBarItem": "menu",
    "AXMenu": "menu",
    "AXMenuBar": "menu bar",
    "AXStaticText": "label",
    "AXLink": "link",
    "AXImage": "image",
    "AXGroup": "panel",
    "AXRadioGroup": "panel",
    "AXScrollArea": "scroll pane",
    "AXScrollBar": "scroll bar",
    "AXSlider": "slider",
    "AXIncrementor": "spin button",
    "AXStepper": "spin button",
    "AXProgressIndicator": "progress bar",
    "AXBusyIndicator": "progress bar",
    "AXLevelIndicator": "level bar",
    "AXTabGroup": "page tab list",
    "AXTable": "table",
    "AXOutline": "tree table",
    "AXBrowser": "tree table",
    "AXList": "list",
    "AXRow": "table row",
    "AXCell": "table cell",
    "AXToolbar": "tool bar",
    "AXSplitGroup": "split pane",
    "AXSplitter": "separator",
    "AXDisclosureTriangle": "toggle button",
    "AXSheet": "dialog",
    "AXDrawer": "panel",
    "AXWindow": "window",
    "AXHelpTag": "tool tip",
    "AXDateField": "date editor",
    "AXWebArea": "document web",
    "AXHeading": "heading",
}  # anything else: "unknown", AT-SPI's own word for it

#: ``AXSubrole`` values that decide the role whatever ``AXRole`` says.
_SUBROLES: Final[dict[str, str]] = {
    "AXSecureTextField": "password text",  # a web page's <input type=password> is an AXTextField
    "AXTabButton": "page tab",
    "AXSwitch": "check box",
    "AXToggle": "toggle button",
    "AXOutlineRow": "tree item",
    "AXSearchField": "text",
}
_TEXT_ROLES: Final = frozenset({"AXTextField", "AXTextArea", "AXSecureTextField", "AXComboBox"})
_CHECK_ROLES: Final = frozenset({"AXCheckBox", "AXRadioButton"})

# AXError values
_SUCCESS: Final = 0
#: Errors that mean "this node has no such attribute (or no value for it)", not "no answer".
ABSENT: Final = frozenset(
    {
        -25205,  # kAXErrorAttributeUnsupported
        -25212,  # kAXErrorNoValue
        -25208,  # kAXErrorNotImplemented
        -25201,  # kAXErrorIllegalArgument
    }
)
_POINT: Final = 1  # kAXValueCGPointType
_SIZE: Final = 2  # kAXValueCGSizeType


def role_of(ax_role: str, subrole: str | None = None, parent_role: str | None = None) -> str:
    """The AT-SPI role of a node with *ax_role* and *subrole*, whose parent's ``AXRole`` is
    *parent_role* (an ``AXRadioButton`` in an ``AXTabGroup`` is a tab)."""
    if subrole in _SUBROLES:
        return _SUBROLES[subrole]
    if ax_role == "AXRadioButton" and parent_role == "AXTabGroup":
        return "page tab"
    return ROLES.get(ax_role, "unknown")


@dataclass(frozen=True, slots=True)
class AxFacts:
    """What one node says of itself, as its AX attributes give it.

    Args:
        ax_role: ``AXRole``.
        role: the AT-SPI role (:func:`role_of`).
        focused: ``AXFocused``.
        focusable: whether ``AXFocused`` is settable.
        enabled: ``AXEnabled``; None when the node has no such attribute (static text).
        showing: whether it covers part of its window (:func:`_showing`).
        selected: ``AXSelected``; None when it has none.
        check: ``AXValue`` of a check box or radio button (0 off, 1 on, 2 mixed); else None.
        value_settable: of a text role, whether ``AXValue`` is settable; else None.
    """

    ax_role: str
    role: str
    focused: bool = False
    focusable: bool = False
    enabled: bool | None = None
    showing: bool = True
    selected: bool | None = None
    check: int | None = None
    value_settable: bool | None = None


def states_of(facts: AxFacts) -> frozenset[str]:
    """The AT-SPI states a node with these *facts* is in.

    "enabled" and "sensitive" only where ``AXEnabled`` says so (a label without the attribute
    has neither: no invented state); "editable" only where the value can be set.
    """
    states: set[str] = set()
    if facts.focused:
        states.add("focused")
    if facts.focusable:
        states.add("focusable")
    if facts.enabled:
        states |= {"enabled", "sensitive"}
    if facts.showing:
        states |= {"showing", "visible"}
    if facts.value_settable is not None:
        states.add("editable" if facts.value_settable else "read only")
        if facts.ax_role == "AXTextArea":
            states.add("multi line")
        else:
            states.add("single line")
    if facts.check is not None:
        if facts.role == "page tab":
            states.add("selectable")
            if facts.check == 1:
                states.add("selected")
        else:
            states.add("checkable")
            if facts.check == 1:
                states.add("checked")
            elif facts.check == 2:
                states.add("indeterminate")
    if facts.selected is not None:
        states.add("selectable")
        if facts.selected:
            states.add("selected")
    return frozenset(states)


def name_of(ax_role: str, title: object, description: object, value: object, label: object) -> str:
    """A node's accessible name: ``AXTitle``, else ``AXDescription`` (an icon button's label),
    else, for static text, its ``AXValue`` (its text), else the title or value of its
    ``AXTitleUIElement`` (*label*, the text that labels it); "" when none says anything."""
    candidates = [title, description, value if ax_role == "AXStaticText" else None, label]
    for candidate in candidates:
        if isinstance(candidate, str) and candidate.strip():
            return candidate.strip()
    return ""


def pick_window(windows: Sequence[tuple[str, BoundingBox | None]], window: Window) -> int | None:
    """Which of an application's *windows* (each its ``AXTitle`` and box) is *window*: of those
    with its title, the one covering most of it; else one covering more than half of it."""
    titled = [i for i, (title, _) in enumerate(windows) if window.title and title == window.title]
    if len(titled) == 1:
        return titled[0]
    pool = titled or list(range(len(windows)))
    best: tuple[float, int] | None = None
    for i in pool:
        box = windows[i][1]
        overlap = _overlap(box, window.box) if box is not None else 0.0
        if (titled or overlap > 0.5) and (best is None or overlap > best[0]):
            best = (overlap, i)
    return best[1] if best is not None else None


def _overlap(a: BoundingBox, b: BoundingBox) -> float:
    """How much of *b* (0..1) *a* covers."""
    width = min(a.x + a.width, b.x + b.width) - max(a.x, b.x)
    height = min(a.y + a.height, b.y + b.height) - max(a.y, b.y)
    area = b.width * b.height
    return max(0.0, width) * max(0.0, height) / area if area > 0 else 0.0


def _showing(box: BoundingBox, window: BoundingBox) -> bool:
    """Whether a node at *box* is on the screen in *window*: it has a size and meets it."""
    if box.width <= 0 or box.height <= 0:
        return False
    return (
        box.x < window.x + window.width
        and window.x < box.x + box.width
        and box.y < window.y + window.height
        and window.y < box.y + box.height
    )


class _NoAnswer(Exception):
    """A call failed or timed out: the application is busy, gone, or the node vanished."""


class _TooBig(Exception):
    """The window has more elements than one walk reads, or takes too long to walk."""


class AxTree:
    """The AX API for this process (trusted for accessibility; one thread at a time)."""

    def __init__(self, ax: Any) -> None:
        self._ax: Any = ax  # the ApplicationServices module

    @classmethod
    def open(cls) -> AxTree:
        """Load the AX API and check that this process may use it.

        Raises:
            OSError: not macOS, or pyobjc's ApplicationServices missing: one line saying which.
            PermissionError: the process is not trusted for accessibility: one line saying
                where to allow it.
        """
        platform = sys.platform  # (a variable: mypy type-checks the rest on every platform)
        if platform != "darwin":
            raise OSError(f"the AX API is macOS' accessibility API; this is {platform}")
        try:
            import ApplicationServices  # type: ignore[import-not-found,import-untyped,unused-ignore]
        except Exception as exc:
            raise OSError(
                "the AX API needs the pyobjc-framework-ApplicationServices package "
                f"({_one_line(exc)})"
            ) from None
        if not ApplicationServices.AXIsProcessTrusted():
            raise PermissionError(
                "macOS does not let Procedura read other applications' windows: allow it in "
                "System Settings > Privacy & Security > Accessibility, then restart it"
            )
        system = ApplicationServices.AXUIElementCreateSystemWide()
        if ApplicationServices.AXUIElementSetMessagingTimeout(system, CALL_TIMEOUT_S) != _SUCCESS:
            log.debug("accessibility: could not set the AX messaging timeout; the default (6 s)")
        return cls(ApplicationServices)

    def close(self) -> None:
        """Nothing to close: the AX API holds no connection (safe to call twice)."""
        self._ax = None

    # ── Tree ────────────────────────────────────────────────────────────────────────────────

    def elements(self, window: Window) -> list[Element] | None:
        """The elements shown in *window*, parents first; None when its application does not
        answer, the window is not among its ``AXWindows``, or the walk was cut short."""
        if self._ax is None or window.pid is None:
            return None
        try:
            frame = self._window(window)
            if frame is None:
                return None
            return self._walk(frame, window.box)
        except _NoAnswer as exc:
            log.info("accessibility: %r did not answer (%s)", window.title, exc)
            return None
        except _TooBig:
            log.info("accessibility: the window has too many elements to walk; images only")
            return None

    def focus(self, element: Element) -> bool:
        """Set *element*'s ``AXFocused``; whether it reports the focus within half a second."""
        node = element.ref
        if self._ax is None or node is None:
            return False
        try:
            error = self._ax.AXUIElementSetAttributeValue(node, "AXFocused", True)
            if error != _SUCCESS:
                return False
            return focus_taken(lambda: self._attribute(node, "AXFocused") is True)
        except Exception:  # a bridge error (a released node): no focus
            return False

    def text(self, element: Element) -> str | None:
        """*element*'s ``AXValue`` when it is text; None for a password field (never read), a
        node whose value is not text, or one that does not answer."""
        node = element.ref
        if self._ax is None or node is None or element.secret:
            return None
        try:
            value = self._attribute(node, "AXValue")
        except _NoAnswer:
            return None
        return str(value) if isinstance(value, str) else None

    # ── the walk ────────────────────────────────────────────────────────────────────────────

    def _window(self, window: Window) -> Any | None:
        """The ``AXWindow`` of *window*'s application that is *window* (:func:`pick_window`)."""
        try:
            application = self._ax.AXUIElementCreateApplication(window.pid)
        except Exception as exc:  # a bridge error: no such application to ask
            raise _NoAnswer(f"AXUIElementCreateApplication: {_one_line(exc)}") from None
        frames = list(self._attribute(application, "AXWindows") or ())
        seen: list[tuple[str, BoundingBox | None]] = []
        for frame in frames:
            try:
                title = self._attribute(frame, "AXTitle")
                box: BoundingBox | None = self._box(frame)
            except _NoAnswer:
                title, box = None, None
            seen.append((title if isinstance(title, str) else "", box))
        chosen = pick_window(seen, window)
        return frames[chosen] if chosen is not None else None

    def _walk(self, frame: Any, window_box: BoundingBox) -> list[Element]:
        deadline = time.monotonic() + WALK_BUDGET_S
        found: list[Element] = []
        stack: list[tuple[Any, str, tuple[str, ...]]] = [
            (child, "AXWindow", ()) for child in reversed(self._children(frame))
        ]
        while stack:
            if len(found) >= MAX_ELEMENTS or time.monotonic() > deadline:
                raise _TooBig
            node, parent_role, path = stack.pop()
            try:
                box = self._box(node)
                if box is None or not _showing(box, window_box):
                    continue  # nor its children: they are not on the screen either
                facts = self._facts(node, parent_role)
                name = self._name(node, facts.ax_role)
                children = self._children(node)
            except _NoAnswer:
                continue  # gone meanwhile (a tooltip): the rest of the window still counts
            role = facts.role
            found.append(
                Element(role=role, name=name, box=box, states=states_of(facts), path=path, ref=node)
            )
            step = f'{role} "{name}"' if name else role
            stack.extend((child, facts.ax_role, (*path, step)) for child in reversed(children))
        return found

    # ── one node ────────────────────────────────────────────────────────────────────────────

    def _facts(self, node: Any, parent_role: str) -> AxFacts:
        ax_role = self._string(node, "AXRole")
        role = role_of(ax_role, self._string(node, "AXSubrole") or None, parent_role)
        enabled = self._attribute(node, "AXEnabled")
        selected = self._attribute(node, "AXSelected")
        check: int | None = None
        if ax_role in _CHECK_ROLES:
            value = self._attribute(node, "AXValue")  # a number for these roles, never text
            check = int(value) if isinstance(value, int | float) else None
        return AxFacts(
            ax_role=ax_role,
            role=role,
            focused=self._attribute(node, "AXFocused") is True,
            focusable=self._settable(node, "AXFocused"),
            enabled=None if enabled is None else bool(enabled),
            showing=True,
            selected=None if selected is None else bool(selected),
            check=check,
            value_settable=self._settable(node, "AXValue") if ax_role in _TEXT_ROLES else None,
        )

    def _name(self, node: Any, ax_role: str) -> str:
        label_node = self._attribute(node, "AXTitleUIElement")
        label: object = None
        if label_node is not None:
            try:
                label = self._attribute(label_node, "AXValue") or self._attribute(
                    label_node, "AXTitle"
                )
            except _NoAnswer:
                label = None
        return name_of(
            ax_role,
            self._attribute(node, "AXTitle"),
            self._attribute(node, "AXDescription"),
            self._attribute(node, "AXValue") if ax_role == "AXStaticText" else None,
            label,
        )

    def _children(self, node: Any) -> list[Any]:
        children = list(self._attribute(node, "AXChildren") or ())
        if len(children) > MAX_ELEMENTS:
            raise _TooBig
        return children

    def _box(self, node: Any) -> BoundingBox | None:
        """``AXPosition`` and ``AXSize`` as a box; None when the node has either missing."""
        position = self._attribute(node, "AXPosition")
        size = self._attribute(node, "AXSize")
        if position is None or size is None:
            return None
        try:
            ok_point, point = self._ax.AXValueGetValue(position, _POINT, None)
            ok_size, extent = self._ax.AXValueGetValue(size, _SIZE, None)
        except Exception as exc:  # not an AXValue of that type
            raise _NoAnswer(f"AXValueGetValue: {_one_line(exc)}") from None
        if not (ok_point and ok_size):
            return None
        return BoundingBox(
            x=float(point.x),
            y=float(point.y),
            width=max(0.0, float(extent.width)),
            height=max(0.0, float(extent.height)),
        )

    def _string(self, node: Any, attribute: str) -> str:
        value = self._attribute(node, attribute)
        return str(value) if isinstance(value, str) else ""

    def _settable(self, node: Any, attribute: str) -> bool:
        try:
            error, settable = self._ax.AXUIElementIsAttributeSettable(node, attribute, None)
        except Exception:  # a bridge error: say "not settable" rather than guess
            return False
        return error == _SUCCESS and bool(settable)

    def _attribute(self, node: Any, attribute: str) -> Any:
        """*node*'s *attribute*; None when it has none (:data:`ABSENT`).

        Raises:
            _NoAnswer: the application did not answer within the timeout, the node is gone,
                or the bridge failed.
        """
        try:
            error, value = self._ax.AXUIElementCopyAttributeValue(node, attribute, None)
        except Exception as exc:
            raise _NoAnswer(f"{attribute}: {_one_line(exc)}") from None
        if error == _SUCCESS:
            return value
        if error in ABSENT:
            return None
        raise _NoAnswer(f"{attribute}: AXError {error}")


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
