"""UI Automation, the accessibility API of Windows, spoken through comtypes.

Untested: no Windows/macOS machine runs our suite; written to the documented API. What was
followed: Microsoft's UI Automation client reference (``IUIAutomation``,
``IUIAutomationElement``, ``IUIAutomationTreeWalker``, ``IUIAutomation2`` timeouts, the
``UIA_*ControlTypeId`` and ``UIA_*PatternId`` constants, ``ValuePattern``, ``TogglePattern``,
``SelectionItemPattern``, ``TextPattern``) and comtypes' ``client.GetModule`` /
``client.CreateObject``, which generate ``comtypes.gen.UIAutomationClient`` from
``UIAutomationCore.dll``'s type library. Only the pure parts (:func:`role_of`, :func:`states_of`)
and :meth:`UiaTree.open` failing off Windows run in our tests.

Win32, WPF, WinForms, Qt, Chromium and UWP applications all answer UI Automation. The window is
``ElementFromHandle(hwnd)``; its descendants are walked with the control view's tree walker
(what a screen reader sees: no layout-only nodes), parents first, each node read through its
``Current*`` properties (one cross-process call each). Offscreen nodes are left out with their
subtrees, as AT-SPI's walk leaves out nodes that are not "showing". Boxes are screen pixels as
UI Automation gives them: physical pixels for a per-monitor DPI-aware process (Procedura under
Qt 6 is one).

Bounded like AT-SPI's walk: :data:`.MAX_ELEMENTS` nodes and :data:`WALK_BUDGET_S` per window,
each call bounded by UI Automation's own connection and transaction timeouts
(:data:`CALL_TIMEOUT_MS`, where ``IUIAutomation2`` exists: Windows 8 and later); a walk cut short
is None (no tree), never part of one. COM is per thread: each thread that uses the tree gets its
own ``CUIAutomation`` object, and elements are used on the thread that found them (the
:class:`~desktop_app.adapters.desktop.accessibility.Tree` protocol's one thread).
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Final

from desktop_app.adapters.desktop.accessibility import MAX_ELEMENTS, focus_taken
from desktop_app.core.models.common import BoundingBox
from desktop_app.core.replay.desktop import Element, Window

__all__ = ["CALL_TIMEOUT_MS", "ROLES", "WALK_BUDGET_S", "Facts", "UiaTree", "role_of", "states_of"]

log = logging.getLogger(__name__)

#: The most time one window's walk may take (seconds).
WALK_BUDGET_S: Final = 2.0
#: UI Automation's connection and transaction timeouts for one call (milliseconds).
CALL_TIMEOUT_MS: Final = 1000
#: The most text :meth:`UiaTree.text` reads from a document (``TextRange.GetText``).
MAX_TEXT: Final = 100_000

#: ``UIA_*ControlTypeId`` → the AT-SPI role the core knows it by (``atspi_role_get_name``).
ROLES: Final[dict[int, str]] = {
    50000: "push button",  # Button
    50001: "calendar",  # Calendar
    50002: "check box",  # CheckBox
    50003: "combo box",  # ComboBox
    50004: "text",  # Edit ("password text" when IsPassword: role_of)
    50005: "link",  # Hyperlink
    50006: "image",  # Image
    50007: "list item",  # ListItem
    50008: "list",  # List
    50009: "menu",  # Menu
    50010: "menu bar",  # MenuBar
    50011: "menu item",  # MenuItem
    50012: "progress bar",  # ProgressBar
    50013: "radio button",  # RadioButton
    50014: "scroll bar",  # ScrollBar
    50015: "slider",  # Slider
    50016: "spin button",  # Spinner
    50017: "status bar",  # StatusBar
    50018: "page tab list",  # Tab
    50019: "page tab",  # TabItem
    50020: "label",  # Text (static text)
    50021: "tool bar",  # ToolBar
    50022: "tool tip",  # ToolTip
    50023: "tree",  # Tree
    50024: "tree item",  # TreeItem
    50026: "panel",  # Group
    50028: "table",  # DataGrid
    50029: "table row",  # DataItem
    50030: "document text",  # Document
    50031: "push button",  # SplitButton
    50032: "window",  # Window (a child window: a dialog, a pane with a window of its own)
    50033: "panel",  # Pane
    50034: "header",  # Header
    50035: "column header",  # HeaderItem
    50036: "table",  # Table
    50037: "title bar",  # TitleBar
    50038: "separator",  # Separator
    50040: "tool bar",  # AppBar
}  # Custom (50025), Thumb (50027), SemanticZoom (50039): "unknown", AT-SPI's own word for it
_EDIT: Final = 50004
_RADIO: Final = 50013

# UIA_*PatternId
_VALUE: Final = 10002
_SELECTION_ITEM: Final = 10010
_TEXT: Final = 10014
_TOGGLE: Final = 10015

# ToggleState
_ON: Final = 1
_INDETERMINATE: Final = 2


def role_of(control_type: int, *, password: bool = False) -> str:
    """The AT-SPI role of a node of *control_type* (``UIA_*ControlTypeId``)."""
    if control_type == _EDIT and password:
        return "password text"
    return ROLES.get(control_type, "unknown")


@dataclass(frozen=True, slots=True)
class Facts:
    """What one node says of itself, as UI Automation's properties and patterns give it.

    Args:
        control_type: ``CurrentControlType``.
        focused: ``CurrentHasKeyboardFocus``.
        focusable: ``CurrentIsKeyboardFocusable``.
        enabled: ``CurrentIsEnabled``.
        offscreen: ``CurrentIsOffscreen``.
        read_only: its ``ValuePattern``'s ``CurrentIsReadOnly``; None without the pattern.
        toggle: its ``TogglePattern``'s ``CurrentToggleState`` (0 off, 1 on, 2 indeterminate);
            None without the pattern.
        selected: its ``SelectionItemPattern``'s ``CurrentIsSelected``; None without it.
    """

    control_type: int
    focused: bool = False
    focusable: bool = False
    enabled: bool = False
    offscreen: bool = False
    read_only: bool | None = None
    toggle: int | None = None
    selected: bool | None = None


def states_of(facts: Facts) -> frozenset[str]:
    """The AT-SPI states a node with these *facts* is in.

    "editable" only where UI Automation says a value can be set (a ``ValuePattern`` that is not
    read-only), never guessed from the control type. A radio button's selection is AT-SPI's
    "checked", as GTK and Qt report it; a list item's or tab's is "selected".
    """
    states: set[str] = set()
    if facts.focused:
        states.add("focused")
    if facts.focusable:
        states.add("focusable")
    if facts.enabled:
        states |= {"enabled", "sensitive"}
    if not facts.offscreen:
        states |= {"showing", "visible"}
    if facts.read_only is not None:
        states.add("read only" if facts.read_only else "editable")
    if facts.toggle is not None:
        states.add("checkable")
        if facts.toggle == _ON:
            states.add("checked")
        elif facts.toggle == _INDETERMINATE:
            states.add("indeterminate")
    if facts.selected is not None:
        if facts.control_type == _RADIO:
            states.add("checkable")
            if facts.selected:
                states.add("checked")
        else:
            states.add("selectable")
            if facts.selected:
                states.add("selected")
    return frozenset(states)


class _NoAnswer(Exception):
    """A call failed or timed out: the application is busy, gone, or the node vanished."""


class _TooBig(Exception):
    """The window has more elements than one walk reads, or takes too long to walk."""


class UiaTree:
    """UI Automation for this process: one ``CUIAutomation`` per thread that uses it."""

    def __init__(self, uia: Any, automation: Any) -> None:
        self._uia = uia  # comtypes.gen.UIAutomationClient
        self._local = threading.local()
        self._local.automation = automation
        self._closed = False

    @classmethod
    def open(cls) -> UiaTree:
        """Load UI Automation (``UIAutomationCore.dll`` through comtypes).

        Raises:
            OSError: not Windows, comtypes missing, or UI Automation not loadable: one line
                saying which.
        """
        platform = sys.platform  # (a variable: mypy type-checks the rest on every platform)
        if platform != "win32":
            raise OSError(f"UI Automation is Windows' accessibility API; this is {platform}")
        try:
            import comtypes.client  # type: ignore[import-not-found,import-untyped,unused-ignore]
        except Exception as exc:
            raise OSError(f"UI Automation needs the comtypes package ({_one_line(exc)})") from None
        try:
            comtypes.client.GetModule("UIAutomationCore.dll")
            from comtypes.gen import (  # type: ignore[import-not-found,import-untyped,unused-ignore]
                UIAutomationClient,
            )

            automation = _create(UIAutomationClient)
        except Exception as exc:
            raise OSError(f"cannot load UI Automation: {_one_line(exc)}") from None
        return cls(UIAutomationClient, automation)

    def close(self) -> None:
        """Drop the automation objects (safe to call twice); COM releases them."""
        self._closed = True
        self._local = threading.local()

    # ── Tree ────────────────────────────────────────────────────────────────────────────────

    def elements(self, window: Window) -> list[Element] | None:
        """The elements shown in *window* (its HWND), parents first; None when it does not
        answer, is gone, or the walk was cut short."""
        try:
            automation = self._automation()
            root = _invoke(automation, "ElementFromHandle", window.handle)
            if not root:
                return None
            return self._walk(automation, root)
        except _NoAnswer as exc:
            log.info("accessibility: %r did not answer (%s)", window.title, exc)
            return None
        except _TooBig:
            log.info("accessibility: the window has too many elements to walk; images only")
            return None

    def focus(self, element: Element) -> bool:
        """``SetFocus`` on *element*; whether it reports the keyboard focus within half a
        second."""
        node: Any = element.ref
        if self._closed or node is None:
            return False
        try:
            _invoke(node, "SetFocus")
            return focus_taken(lambda: bool(_get(node, "CurrentHasKeyboardFocus")))
        except _NoAnswer:
            return False

    def text(self, element: Element) -> str | None:
        """*element*'s ``ValuePattern.CurrentValue``, else its ``TextPattern``'s document text;
        None for a password field (never read) or a node with neither."""
        node: Any = element.ref
        if self._closed or node is None or element.secret:
            return None
        try:
            if _get(node, "CurrentIsPassword"):
                return None
            value = self._pattern(node, _VALUE, "IUIAutomationValuePattern")
            if value is not None:
                return str(_get(value, "CurrentValue"))
            text = self._pattern(node, _TEXT, "IUIAutomationTextPattern")
            if text is not None:
                return str(_invoke(_get(text, "DocumentRange"), "GetText", MAX_TEXT))
        except _NoAnswer:
            return None
        return None

    # ── the walk ────────────────────────────────────────────────────────────────────────────

    def _automation(self) -> Any:
        """This thread's ``IUIAutomation`` (made on its first use here)."""
        if self._closed:
            raise _NoAnswer("the tree is closed")
        automation = getattr(self._local, "automation", None)
        if automation is None:
            try:
                automation = _create(self._uia)
            except Exception as exc:
                raise _NoAnswer(f"CUIAutomation: {_one_line(exc)}") from None
            self._local.automation = automation
        return automation

    def _walk(self, automation: Any, root: Any) -> list[Element]:
        deadline = time.monotonic() + WALK_BUDGET_S
        walker = _get(automation, "ControlViewWalker")
        found: list[Element] = []
        stack: list[tuple[Any, tuple[str, ...]]] = [
            (child, ()) for child in reversed(_children(walker, root, deadline))
        ]
        while stack:
            if len(found) >= MAX_ELEMENTS or time.monotonic() > deadline:
                raise _TooBig
            node, path = stack.pop()
            try:
                facts = self._facts(node)
                if facts.offscreen:
                    continue  # nor its children: they are not on the screen either
                password = facts.control_type == _EDIT and bool(_get(node, "CurrentIsPassword"))
                role = role_of(facts.control_type, password=password)
                name = _name(node)
                box = _box(node)
                children = _children(walker, node, deadline)
            except _NoAnswer:
                continue  # gone meanwhile (a tooltip): the rest of the window still counts
            found.append(
                Element(role=role, name=name, box=box, states=states_of(facts), path=path, ref=node)
            )
            step = f'{role} "{name}"' if name else role
            stack.extend((child, (*path, step)) for child in reversed(children))
        return found

    # ── one node ────────────────────────────────────────────────────────────────────────────

    def _facts(self, node: Any) -> Facts:
        control_type = int(_get(node, "CurrentControlType"))
        offscreen = bool(_get(node, "CurrentIsOffscreen"))
        if offscreen:
            return Facts(control_type=control_type, offscreen=True)
        value = self._pattern(node, _VALUE, "IUIAutomationValuePattern")
        toggle = self._pattern(node, _TOGGLE, "IUIAutomationTogglePattern")
        item = self._pattern(node, _SELECTION_ITEM, "IUIAutomationSelectionItemPattern")
        return Facts(
            control_type=control_type,
            focused=bool(_get(node, "CurrentHasKeyboardFocus")),
            focusable=bool(_get(node, "CurrentIsKeyboardFocusable")),
            enabled=bool(_get(node, "CurrentIsEnabled")),
            offscreen=False,
            read_only=None if value is None else bool(_get(value, "CurrentIsReadOnly")),
            toggle=None if toggle is None else int(_get(toggle, "CurrentToggleState")),
            selected=None if item is None else bool(_get(item, "CurrentIsSelected")),
        )

    def _pattern(self, node: Any, pattern_id: int, interface: str) -> Any | None:
        """*node*'s control pattern *pattern_id* as *interface*, or None when it has none."""
        unknown = _invoke(node, "GetCurrentPattern", pattern_id)
        if not unknown:  # a NULL pointer: the node does not support the pattern
            return None
        return _invoke(unknown, "QueryInterface", getattr(self._uia, interface))


def _create(uia: Any) -> Any:
    """A new ``IUIAutomation`` for the calling thread (COM initialised on it first), with
    :data:`CALL_TIMEOUT_MS` timeouts where ``IUIAutomation2`` has them."""
    import comtypes  # type: ignore[import-not-found,import-untyped,unused-ignore]
    import comtypes.client  # type: ignore[import-not-found,import-untyped,unused-ignore]

    # Initialised already on this thread (maybe in another apartment) is an OSError: usable.
    with contextlib.suppress(OSError):
        comtypes.CoInitializeEx()
    coclass = getattr(uia, "CUIAutomation8", None) or uia.CUIAutomation
    automation = comtypes.client.CreateObject(coclass, interface=uia.IUIAutomation)
    try:
        newer = automation.QueryInterface(uia.IUIAutomation2)
        newer.ConnectionTimeout = CALL_TIMEOUT_MS
        newer.TransactionTimeout = CALL_TIMEOUT_MS
    except Exception:  # before Windows 8: the default timeouts (2 s to connect, 20 s a call)
        log.debug("accessibility: IUIAutomation2 not available; default UIA timeouts")
    return automation


def _children(walker: Any, node: Any, deadline: float) -> list[Any]:
    """*node*'s children in the control view, first to last."""
    found: list[Any] = []
    child = _invoke(walker, "GetFirstChildElement", node)
    while child:  # a NULL pointer ends the list
        if len(found) >= MAX_ELEMENTS or time.monotonic() > deadline:
            raise _TooBig
        found.append(child)
        child = _invoke(walker, "GetNextSiblingElement", child)
    return found


def _name(node: Any) -> str:
    """``CurrentName``, else the name of the node ``CurrentLabeledBy`` points at, else ""."""
    name = str(_get(node, "CurrentName") or "").strip()
    if name:
        return name
    label = _get(node, "CurrentLabeledBy")
    if not label:
        return ""
    return str(_get(label, "CurrentName") or "").strip()


def _box(node: Any) -> BoundingBox:
    """``CurrentBoundingRectangle`` (a RECT: left, top, right, bottom) as a box."""
    rect = _get(node, "CurrentBoundingRectangle")
    return BoundingBox(
        x=rect.left,
        y=rect.top,
        width=max(0, rect.right - rect.left),
        height=max(0, rect.bottom - rect.top),
    )


def _get(node: Any, attribute: str) -> Any:
    """*node*'s property *attribute*, a COM call; any failure of it (a ``COMError``: the
    application is gone, busy past the timeout, or the node vanished) is :class:`_NoAnswer`."""
    try:
        return getattr(node, attribute)
    except Exception as exc:
        raise _NoAnswer(f"{attribute}: {_one_line(exc)}") from None


def _invoke(node: Any, method: str, *args: Any) -> Any:
    """*node*'s *method* called with *args*, a COM call; a failure is :class:`_NoAnswer`."""
    try:
        return getattr(node, method)(*args)
    except Exception as exc:
        raise _NoAnswer(f"{method}: {_one_line(exc)}") from None


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
