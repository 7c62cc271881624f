"""AT-SPI, the accessibility API of the Linux desktop, spoken over D-Bus with jeepney.

GTK, Qt (with accessibility on), LibreOffice, Firefox and Chromium (with
``--force-renderer-accessibility``) register with the accessibility bus, a D-Bus bus of its own
whose address the session bus gives (``org.a11y.Bus.GetAddress``), or ``AT_SPI_BUS_ADDRESS``.
Each application is an ``org.a11y.atspi.Accessible`` tree: frames (its windows), then panels,
buttons, fields, labels. Every node answers ``GetRoleName``, ``GetState`` and, through
``org.a11y.atspi.Component``, ``GetExtents`` (screen pixels); fields answer
``org.a11y.atspi.Text``. The interfaces are documented in at-spi2-core's ``xml/*.xml``.

D-Bus directly, rather than pyatspi: pyatspi needs PyGObject and the system's GObject
introspection data, which a virtual environment does not have; jeepney is pure Python. Each call
is one round trip to the application (a fraction of a millisecond on a small form), bounded by
:data:`CALL_TIMEOUT_S`; a window's walk is bounded by :data:`MAX_ELEMENTS` and
:data:`WALK_BUDGET_S`, and a walk cut short by either returns None (no tree) rather than part of
one: a search over part of a window could call an element unique that is not.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any, Final

from desktop_app.adapters.desktop.accessibility import MAX_ELEMENTS, focus_taken
from desktop_app.core.models.common import BoundingBox
from desktop_app.core.replay.desktop import Element, Window

__all__ = ["CALL_TIMEOUT_S", "STATES", "WALK_BUDGET_S", "AtSpiTree"]

log = logging.getLogger(__name__)

#: How long one call may take before the application counts as not answering (seconds).
CALL_TIMEOUT_S: Final = 1.0
#: The most time one window's walk may take (seconds).
WALK_BUDGET_S: Final = 3.0

#: AT-SPI's states, in the order of their bits (``AtspiStateType``).
STATES: Final = (
    "invalid", "active", "armed", "busy", "checked", "collapsed", "defunct", "editable",
    "enabled", "expandable", "expanded", "focusable", "focused", "has tooltip", "horizontal",
    "iconified", "modal", "multi line", "multiselectable", "opaque", "pressed", "resizable",
    "selectable", "selected", "sensitive", "showing", "single line", "stale", "transient",
    "vertical", "visible", "manages descendants", "indeterminate", "required", "truncated",
    "animated", "invalid entry", "supports autocompletion", "selectable text", "is default",
    "visited", "checkable", "has popup", "read only",
)  # fmt: skip

_LABELLED_BY: Final = 2  # AtspiRelationType
_ACCESSIBLE: Final = "org.a11y.atspi.Accessible"
_COMPONENT: Final = "org.a11y.atspi.Component"
_TEXT: Final = "org.a11y.atspi.Text"
_REGISTRY: Final = ("org.a11y.atspi.Registry", "/org/a11y/atspi/accessible/root")
_SCREEN: Final = 0  # ATSPI_COORD_TYPE_SCREEN
_NULL_PATH: Final = "/org/a11y/atspi/null"

Ref = tuple[str, str]  # bus name, object path


class _NoAnswer(Exception):
    """A call failed or timed out: the application is busy, gone, or has no such interface."""


class AtSpiTree:
    """The accessibility bus of this session (one connection; one thread at a time)."""

    def __init__(self, connection: Any) -> None:
        self._connection = connection
        self._pids: dict[str, int | None] = {}

    @classmethod
    def open(cls) -> AtSpiTree:
        """Connect to the accessibility bus.

        Raises:
            OSError: there is no accessibility bus (no session bus, or at-spi2-core is not
                running): one line saying so.
        """
        from jeepney.io.blocking import open_dbus_connection  # type: ignore[import-untyped]

        address = os.environ.get("AT_SPI_BUS_ADDRESS") or _bus_address()
        try:
            return cls(open_dbus_connection(bus=address, auth_timeout=CALL_TIMEOUT_S))
        except Exception as exc:
            raise OSError(f"cannot connect to the accessibility bus: {exc}") from None

    def close(self) -> None:
        """Close the connection (safe to call twice)."""
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()

    # ── Tree ────────────────────────────────────────────────────────────────────────────────

    def elements(self, window: Window) -> list[Element] | None:
        """The elements shown in *window*, parents first; None when its application is not on
        the bus, the window is not among its frames, or the walk was cut short."""
        try:
            found = self._frame(window)
            if found is None:
                return None
            return self._walk(*found)
        except _NoAnswer as exc:
            log.info("accessibility: %r did not answer (%s)", window.title, exc)
            return None

    def focus(self, element: Element) -> bool:
        """Ask *element*'s application to focus it; whether it reports the focus within half a
        second (the toolkit may move it on its next turn of the event loop)."""
        ref = _ref(element)
        try:
            self._call(ref, _COMPONENT, "GrabFocus")
            return focus_taken(lambda: "focused" in self._states(ref))
        except _NoAnswer:
            return False

    def text(self, element: Element) -> str | None:
        """The text *element* holds (``Text.GetText`` of all of it); None when it has none."""
        try:
            (text,) = self._call(_ref(element), _TEXT, "GetText", "ii", (0, -1))
        except _NoAnswer:
            return None
        return str(text)

    # ── the walk ────────────────────────────────────────────────────────────────────────────

    def _frame(self, window: Window) -> tuple[Ref, float] | None:
        """The frame (top-level accessible) that is *window*, and the scale of its application
        (its extents times the scale are screen pixels): of the application with the window's
        process, the one titled as the window, else the one covering it.

        GTK drawing at ``GDK_SCALE=2`` gives its extents in its own pixels, half the screen's:
        a frame whose box, scaled by the window's size over its own, is the window is that
        window at that scale."""
        best: tuple[float, Ref, float] | None = None
        for app in self._children(_REGISTRY):
            if window.pid is not None and self._pid(app[0]) not in (None, window.pid):
                continue
            try:
                frames = self._children(app)
            except _NoAnswer:
                continue  # an application that hangs is not the one
            for frame in frames:
                try:
                    name = self._name(frame)
                    box = self._extents(frame)
                except _NoAnswer:
                    continue
                scale = _scale(box, window.box)
                overlap = _overlap(_scaled(box, scale), window.box)
                score = overlap + (1.0 if name and name == window.title else 0.0)
                if overlap > 0.5 and (best is None or score > best[0]):
                    best = (score, frame, scale)
        return (best[1], best[2]) if best is not None else None

    def _walk(self, frame: Ref, scale: float = 1.0) -> list[Element] | None:
        deadline = time.monotonic() + WALK_BUDGET_S
        found: list[Element] = []
        stack: list[tuple[Ref, tuple[str, ...]]] = [
            (child, ()) for child in reversed(self._children(frame))
        ]
        while stack:
            if len(found) >= MAX_ELEMENTS or time.monotonic() > deadline:
                log.info("accessibility: the window has too many elements to walk; images only")
                return None
            ref, path = stack.pop()
            try:
                states = self._states(ref)
                if "showing" not in states or "defunct" in states:
                    continue  # nor its children: they are not on the screen either
                role = self._role(ref)
                name = self._name(ref) or self._label(ref)
                box = _scaled(self._extents(ref), scale)
                children = self._children(ref)
            except _NoAnswer:
                continue  # gone meanwhile (a tooltip): the rest of the window still counts
            found.append(Element(role=role, name=name, box=box, states=states, path=path, ref=ref))
            step = f'{role} "{name}"' if name else role
            stack.extend((child, (*path, step)) for child in reversed(children))
        return found

    # ── one node ────────────────────────────────────────────────────────────────────────────

    def _children(self, ref: Ref) -> list[Ref]:
        (children,) = self._call(ref, _ACCESSIBLE, "GetChildren")
        return [(str(bus), str(path)) for bus, path in children if path != _NULL_PATH]

    def _role(self, ref: Ref) -> str:
        (role,) = self._call(ref, _ACCESSIBLE, "GetRoleName")
        return str(role)

    def _name(self, ref: Ref) -> str:
        (variant,) = self._call(
            ref, "org.freedesktop.DBus.Properties", "Get", "ss", (_ACCESSIBLE, "Name")
        )
        return str(variant[1]).strip()

    def _states(self, ref: Ref) -> frozenset[str]:
        (words,) = self._call(ref, _ACCESSIBLE, "GetState")
        bits = sum(int(word) << (32 * i) for i, word in enumerate(words))
        return frozenset(name for i, name in enumerate(STATES) if bits >> i & 1)

    def _extents(self, ref: Ref) -> BoundingBox:
        try:
            ((x, y, width, height),) = self._call(ref, _COMPONENT, "GetExtents", "u", (_SCREEN,))
        except _NoAnswer:
            return BoundingBox(x=0, y=0, width=0, height=0)  # not a component: nowhere
        return BoundingBox(x=x, y=y, width=max(0, width), height=max(0, height))

    def _label(self, ref: Ref) -> str:
        """The name of what labels *ref* (a labelled-by relation), or ""."""
        try:
            (relations,) = self._call(ref, _ACCESSIBLE, "GetRelationSet")
        except _NoAnswer:
            return ""
        for kind, targets in relations:
            if kind == _LABELLED_BY:
                for bus, path in targets:
                    try:
                        name = self._name((str(bus), str(path)))
                    except _NoAnswer:
                        continue
                    if name:
                        return name
        return ""

    def _pid(self, bus: str) -> int | None:
        if bus not in self._pids:
            try:
                (pid,) = self._call(
                    ("org.freedesktop.DBus", "/org/freedesktop/DBus"),
                    "org.freedesktop.DBus",
                    "GetConnectionUnixProcessID",
                    "s",
                    (bus,),
                )
                self._pids[bus] = int(pid)
            except _NoAnswer:
                self._pids[bus] = None
        return self._pids[bus]

    def _call(
        self, ref: Ref, interface: str, method: str, signature: str | None = None, body: Any = ()
    ) -> Any:
        from jeepney import DBusAddress, new_method_call  # type: ignore[import-untyped]
        from jeepney.wrappers import unwrap_msg  # type: ignore[import-untyped]

        if self._connection is None:
            raise _NoAnswer("the connection is closed")
        address = DBusAddress(ref[1], bus_name=ref[0], interface=interface)
        try:
            reply = self._connection.send_and_get_reply(
                new_method_call(address, method, signature, body), timeout=CALL_TIMEOUT_S
            )
            return unwrap_msg(reply)
        except Exception as exc:  # a D-Bus error reply, a timeout, a closed connection
            raise _NoAnswer(f"{method}: {exc}") from None


def _bus_address() -> str:
    """The accessibility bus's address, as the session bus's ``org.a11y.Bus`` gives it."""
    from jeepney import DBusAddress, new_method_call
    from jeepney.io.blocking import open_dbus_connection
    from jeepney.wrappers import unwrap_msg

    if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        raise OSError("no session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
    try:
        with open_dbus_connection(bus="SESSION", auth_timeout=CALL_TIMEOUT_S) as session:
            reply = session.send_and_get_reply(
                new_method_call(
                    DBusAddress("/org/a11y/bus", bus_name="org.a11y.Bus", interface="org.a11y.Bus"),
                    "GetAddress",
                ),
                timeout=CALL_TIMEOUT_S,
            )
            (address,) = unwrap_msg(reply)
    except Exception as exc:
        raise OSError(f"the session bus gives no accessibility bus ({exc})") from None
    return str(address)


def _ref(element: Element) -> Ref:
    ref = element.ref
    if not (isinstance(ref, tuple) and len(ref) == 2):
        raise ValueError("not an element of this accessibility bus")
    return str(ref[0]), str(ref[1])


def _scale(frame: BoundingBox, window: BoundingBox) -> float:
    """The scale the frame's extents are drawn at: the window's size over the frame's when
    both sides agree on one above 1 (a scaled GTK), else 1 (screen pixels)."""
    if frame.width <= 0 or frame.height <= 0:
        return 1.0
    across, down = window.width / frame.width, window.height / frame.height
    if across > 1.2 and abs(across - down) < 0.05 * across:
        return round(across * 4) / 4  # toolkits scale by whole or quarter steps
    return 1.0


def _scaled(box: BoundingBox, scale: float) -> BoundingBox:
    if scale == 1.0:
        return box
    return BoundingBox(
        x=box.x * scale, y=box.y * scale, width=box.width * scale, height=box.height * scale
    )


def _overlap(a: BoundingBox, b: BoundingBox) -> float:
    """How much of *b* (0..1 of its area) *a* covers."""
    width = min(a.x + a.width, b.x + b.width) - max(a.x, b.x)
    height = min(a.y + a.height, b.y + b.height) - max(a.y, b.y)
    area = b.width * b.height
    return max(0.0, width) * max(0.0, height) / area if area > 0 else 0.0
