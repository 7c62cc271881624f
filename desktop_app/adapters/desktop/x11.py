"""Top-level windows on X11 (python-xlib, which pynput brings on Linux): list, find, focus.

With a window manager the EWMH properties are used (``_NET_CLIENT_LIST_STACKING``,
``_NET_ACTIVE_WINDOW``, ``_NET_WM_NAME``, ``_NET_WM_PID``); without one (a bare Xvfb) the root
window's mapped children and the input focus stand in for them.

Every function takes the :class:`X11` connection; it is not thread-safe: use one per thread.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from desktop_app.core.models.common import BoundingBox
from desktop_app.core.replay.desktop import DesktopUnavailable, Window

__all__ = ["X11"]


class X11:
    """One connection to the X server named by ``DISPLAY``.

    Raises:
        DesktopUnavailable: no display, or it cannot be opened.
    """

    def __init__(self, display: str | None = None) -> None:
        try:
            from Xlib import X, Xatom, error
            from Xlib import display as xdisplay
        except ImportError as exc:
            raise DesktopUnavailable(f"python-xlib cannot be loaded: {exc}") from None
        name = display or os.environ.get("DISPLAY")
        if not name:
            raise DesktopUnavailable("DISPLAY is not set: there is no X11 display to use")
        try:
            self._display = xdisplay.Display(name)
        except (error.DisplayError, OSError) as exc:
            raise DesktopUnavailable(f"cannot open the X11 display {name}: {exc}") from None
        self._X = X
        self._Xatom = Xatom
        self._error = error
        self._root = self._display.screen().root
        self._atoms: dict[str, int] = {}

    def close(self) -> None:
        """Close the connection."""
        with contextlib.suppress(Exception):
            self._display.close()

    def __enter__(self) -> X11:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # ── queries ─────────────────────────────────────────────────────────────────────────────

    def windows(self) -> list[Window]:
        """The mapped top-level windows that have a title or a class, topmost first."""
        found = []
        for handle in reversed(self._stacking()):
            window = self.window(handle)
            if window is not None and (window.title or window.app):
                found.append(window)
        return found

    def window(self, handle: int) -> Window | None:
        """The window *handle* as it is now (None if it is gone or not shown)."""
        try:
            xwin = self._display.create_resource_object("window", handle)
            if xwin.get_attributes().map_state != self._X.IsViewable:
                return None
            geometry = xwin.get_geometry()
            origin = xwin.translate_coords(self._root, 0, 0)
            return Window(
                handle=handle,
                title=self._title(xwin),
                app=self._app(xwin),
                box=BoundingBox(
                    x=-origin.x, y=-origin.y, width=geometry.width, height=geometry.height
                ),
                pid=self._pid(xwin),
            )
        except self._error.XError:
            return None

    def active_window(self) -> Window | None:
        """The top-level window with the keyboard focus.

        When the focus follows the pointer (``PointerRoot``, as on a display without a window
        manager) or is on the root window (where X puts it back when the focused window
        closes), that is the window under the pointer, never the root itself.
        """
        active = self._property(self._root, "_NET_ACTIVE_WINDOW", self._Xatom.WINDOW)
        if active and active[0]:
            return self.window(int(active[0]))
        focus = self._display.get_input_focus().focus
        if focus == self._X.PointerRoot or (
            not isinstance(focus, int) and focus is not None and focus.id == self._root.id
        ):  # keys go to the window under the pointer (the root has the focus once the window
            # that had it closed: X reverts it there)
            pointer = self._root.query_pointer()
            return self.window_at(pointer.root_x, pointer.root_y)
        if isinstance(focus, int) or focus is None:  # no window has the focus
            return None
        top = self._top_level(focus)
        return self.window(top) if top else None

    def window_at(self, x: int, y: int) -> Window | None:
        """The topmost window under the screen point (*x*, *y*)."""
        for window in self.windows():
            box = window.box
            if box.x <= x < box.x + box.width and box.y <= y < box.y + box.height:
                return window
        return None

    def pids_at(self, x: int, y: int) -> frozenset[int]:
        """The processes owning any window under the screen point (*x*, *y*), from the
        top-level one down to the innermost: a tray icon embedded in a panel is its own
        process's, and a popup menu (override-redirect, in no window manager's list) too."""
        pids: set[int] = set()
        xwin = self._root
        with contextlib.suppress(self._error.XError):
            for _ in range(32):  # windows nest a few levels deep; never loop for ever
                child = xwin.translate_coords(self._root, x, y).child
                if not child:
                    break
                xwin = child
                pid = self._pid(xwin)
                if pid is not None:
                    pids.add(pid)
        return frozenset(pids)

    def has_window_manager(self) -> bool:
        """Whether a window manager runs (it says which window is active, stacks and frames)."""
        return bool(self._property(self._root, "_NET_SUPPORTING_WM_CHECK", self._Xatom.WINDOW))

    def has_extension(self, name: str) -> bool:
        """Whether the X server offers the extension *name* (``"RECORD"``, ``"XTEST"``)."""
        return bool(self._display.has_extension(name))

    # ── actions ─────────────────────────────────────────────────────────────────────────────

    def focus(self, window: Window) -> None:
        """Raise *window* and give it the keyboard focus (through the window manager if any)."""
        xwin = self._display.create_resource_object("window", window.handle)
        if self.has_window_manager():
            from Xlib.protocol import event as xevent

            message = xevent.ClientMessage(
                window=xwin,
                client_type=self._atom("_NET_ACTIVE_WINDOW"),
                data=(32, [2, self._X.CurrentTime, 0, 0, 0]),  # 2: a pager-like request
            )
            mask = self._X.SubstructureRedirectMask | self._X.SubstructureNotifyMask
            self._root.send_event(message, event_mask=mask)
        xwin.configure(stack_mode=self._X.Above)
        with contextlib.suppress(self._error.XError):
            xwin.set_input_focus(self._X.RevertToParent, self._X.CurrentTime)
        self._display.sync()

    # ── internals ───────────────────────────────────────────────────────────────────────────

    def _stacking(self) -> list[int]:
        """Top-level window ids, bottom first."""
        for name in ("_NET_CLIENT_LIST_STACKING", "_NET_CLIENT_LIST"):
            listed = self._property(self._root, name, self._Xatom.WINDOW)
            if listed:
                return [int(w) for w in listed]
        return [child.id for child in self._root.query_tree().children]

    def _top_level(self, xwin: Any) -> int | None:
        """The child of the root that contains *xwin*."""
        with contextlib.suppress(self._error.XError):
            while True:
                tree = xwin.query_tree()
                if tree.parent == 0 or tree.parent.id == self._root.id:
                    return int(xwin.id)
                xwin = tree.parent
        return None

    def _atom(self, name: str) -> int:
        if name not in self._atoms:
            self._atoms[name] = self._display.intern_atom(name)
        return self._atoms[name]

    def _property(self, xwin: Any, name: str, kind: int) -> Any:
        with contextlib.suppress(self._error.XError):
            prop = xwin.get_full_property(self._atom(name), kind)
            return None if prop is None else prop.value
        return None

    def _title(self, xwin: Any) -> str:
        value = self._property(xwin, "_NET_WM_NAME", self._atom("UTF8_STRING"))
        if value is None:
            with contextlib.suppress(self._error.XError):
                value = xwin.get_wm_name()
        if isinstance(value, bytes):
            return value.decode("utf-8", "replace")
        return str(value or "")

    def _app(self, xwin: Any) -> str | None:
        with contextlib.suppress(self._error.XError):
            wm_class = xwin.get_wm_class()
            if wm_class:
                return str(wm_class[-1])
        return None

    def _pid(self, xwin: Any) -> int | None:
        value = self._property(xwin, "_NET_WM_PID", self._Xatom.CARDINAL)
        return int(value[0]) if value is not None and len(value) else None
