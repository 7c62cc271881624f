"""Window titles as they were at an instant: every change, with the X server's time of it.

A click's step names its window by the title it had just before the press. Read when the
recorder hears the press, the title may already be the press's own effect (a form retitled
"Contact saved" by the click on Save): the application hears the press as soon as the recorder.
So a watcher of its own (:class:`TitleWatch`, one X connection and one thread) hears each
top-level window's title change as a PropertyNotify event, stamped by the server; the title a
window had before a press is the last one set before the press's server time.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import threading
from collections import deque
from typing import Any, Final

__all__ = ["TitleWatch"]

log = logging.getLogger(__name__)

#: How many title changes are kept per window.
_KEPT: Final = 32
#: How often (seconds) the watcher's thread looks whether it was asked to stop.
_WAKE_S: Final = 0.2


class TitleWatch:
    """Watches every top-level window's title from :meth:`start` to :meth:`stop` (X11 only).

    Raises:
        Exception: :meth:`start` when the display cannot be opened (the caller goes without).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._history: dict[int, deque[tuple[int, str]]] = {}
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._display: Any = None

    def start(self) -> None:
        """Open the connection, note the titles there are, and watch for changes."""
        from Xlib import X
        from Xlib import display as xdisplay

        self._display = xdisplay.Display(os.environ.get("DISPLAY"))
        self._X = X
        root = self._display.screen().root
        root.change_attributes(event_mask=X.SubstructureNotifyMask | X.PropertyChangeMask)
        self._names = {self._display.intern_atom(name) for name in ("_NET_WM_NAME", "WM_NAME")}
        self._client_list = self._display.intern_atom("_NET_CLIENT_LIST")
        self._watch_all()
        self._display.sync()
        self._thread = threading.Thread(target=self._run, name="desktop-titles", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop watching and close the connection."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._display is not None:
            with contextlib.suppress(Exception):
                self._display.close()

    def title_before(self, handle: int, server_ms: int) -> str | None:
        """The title window *handle* had just before the server time *server_ms*; None when
        it is not known (a window the watcher never saw)."""
        with self._lock:
            changes = self._history.get(handle)
            if not changes:
                return None
            before = [title for at, title in changes if at < server_ms]
            return before[-1] if before else changes[0][1]

    # ── the watcher's thread ────────────────────────────────────────────────────────────────

    def _run(self) -> None:
        X = self._X
        fileno = self._display.fileno()
        while not self._stopping.is_set():
            try:
                if not self._display.pending_events():
                    select.select([fileno], [], [], _WAKE_S)
                    if not self._display.pending_events():
                        continue
                event = self._display.next_event()
                if event.type == X.PropertyNotify:
                    if event.atom in self._names:
                        self._note(int(event.window.id), int(event.time))
                    elif event.atom == self._client_list:
                        self._watch_all()  # a window manager listed a new window
                elif event.type in (X.MapNotify, X.CreateNotify):
                    self._watch(event.window, 0)
            except Exception as exc:  # the display went away: the recorder goes without
                log.info("window titles: no longer watched (%s)", type(exc).__name__)
                return

    def _watch_all(self) -> None:
        root = self._display.screen().root
        listed = root.get_full_property(self._client_list, self._X.AnyPropertyType)
        windows = (
            [self._display.create_resource_object("window", int(w)) for w in listed.value]
            if listed is not None
            else []
        )
        for xwin in [*windows, *root.query_tree().children]:
            self._watch(xwin, 0)

    def _watch(self, xwin: Any, at: int) -> None:
        with contextlib.suppress(Exception):  # gone meanwhile
            handle = int(xwin.id)
            with self._lock:
                if handle in self._history:
                    return
            xwin.change_attributes(event_mask=self._X.PropertyChangeMask)
            self._note(handle, at)

    def _note(self, handle: int, at: int) -> None:
        with contextlib.suppress(Exception):
            xwin = self._display.create_resource_object("window", handle)
            value = xwin.get_full_property(
                self._display.intern_atom("_NET_WM_NAME"), self._display.intern_atom("UTF8_STRING")
            )
            title = value.value if value is not None else xwin.get_wm_name()
            if isinstance(title, bytes):
                title = title.decode("utf-8", "replace")
            with self._lock:
                changes = self._history.setdefault(handle, deque(maxlen=_KEPT))
                if not changes or changes[-1][1] != str(title or ""):
                    changes.append((at, str(title or "")))
