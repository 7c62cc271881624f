"""The desktop recorder: pynput's listeners capture each press, one worker thread makes events."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import queue
import threading
import time
from collections import deque
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from desktop_app.adapters.desktop import require_display
from desktop_app.adapters.desktop.accessibility import Tree, open_tree
from desktop_app.adapters.desktop.recorder.anchors import cut_anchor
from desktop_app.adapters.desktop.recorder.inputs import (
    Burst,
    HeldClick,
    Key,
    Note,
    Pause,
    Press,
    Shot,
    Stop,
)
from desktop_app.adapters.desktop.recorder.keystrokes import (
    COMMAND_MODIFIERS,
    MODIFIER_KEYS,
    SPECIAL_KEYS,
    hotkey,
    key_parts,
    modifiers_of,
)
from desktop_app.adapters.desktop.recorder.ordering import SETTLE_S, Reorder, Timeline, stamped
from desktop_app.adapters.desktop.recorder.pixels import cut_shot, paint, png
from desktop_app.adapters.desktop.recorder.titles import TitleWatch
from desktop_app.adapters.desktop.recorder.windows import handle_of, title_matches, window_at
from desktop_app.core.models.common import BoundingBox, Point, utcnow
from desktop_app.core.models.target import Fingerprint, Locator, Target
from desktop_app.core.models.trajectory import ActionKind, Event, Observation, SecretPlaceholder
from desktop_app.core.ports import MediaStore
from desktop_app.core.recording import RecordingSession
from desktop_app.core.replay.desktop import DesktopUnavailable, Element, Window
from desktop_app.core.replay.desktop_elements import describe, element_at

if TYPE_CHECKING:
    from desktop_app.adapters.desktop.x11 import X11

__all__ = ["DesktopRecorder"]

log = logging.getLogger(__name__)

#: How often (seconds) the pointer's moves take a screenshot, and how old one may be (seconds)
#: to stand for the screen before a press.
REST_S: Final = 0.05
FRESH_S: Final = 1.5
#: How long (seconds) before the press a screenshot must have begun to show the screen before it.
_GRAB_LEAD_S: Final = 0.005

#: A second press of the same button this soon and this close makes a double click.
_DOUBLE_CLICK_S: Final = 0.4
_DOUBLE_CLICK_PX: Final = 5
_BUTTONS: Final = frozenset({"left", "right", "middle"})


class DesktopRecorder:
    """Records the person's clicks, typing and hotkeys on the desktop into *session*.

    Args:
        session: where events go (started by the caller; used from the event loop's thread).
        media: where screenshots and image anchors go.

    Use it from the event loop's thread: :meth:`start`, then :meth:`stop` (awaited) before
    finishing the session. The controls (:meth:`pause`, :meth:`add_note`, the sensitive and
    excluded windows) may be used from any thread.
    """

    def __init__(self, session: RecordingSession, media: MediaStore) -> None:
        self._session = session
        self._media = media
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: queue.Queue[tuple[float, float, Press | Key | Note | Pause] | Stop] = (
            queue.Queue()
        )
        self._worker: threading.Thread | None = None
        self._listeners: list[Any] = []
        self._mouse_listener: Any = None
        self._keys_listener: Any = None
        self._timeline = Timeline()
        self._x11: X11 | None = None
        self._mss: Any = None
        # The accessibility tree (None: images only), used under the capture lock.
        self._tree: Tree | None = None
        # One press is captured at a time, in the order they come, on one X11 connection.
        self._capture = threading.Lock()
        self._held_modifiers: frozenset[str] = frozenset()
        self._paused = False
        self._stopping = False
        # Rules, replaced whole (never mutated) so the threads read them without a lock.
        self._rules = threading.Lock()
        self._sensitive_windows: tuple[str, ...] = ()
        self._sensitive_regions: tuple[tuple[str, BoundingBox], ...] = ()
        self._excluded_handles: frozenset[int] = frozenset()
        self._excluded_pids: frozenset[int] = frozenset({os.getpid()})
        # The worker's own state.
        self._burst: Burst | None = None
        self._held: HeldClick | None = None
        # The window last clicked in a sensitive region of: typing is secret until the next click.
        self._secret_window: int | None = None
        self._last_window: Window | None = None
        # The field the last click was on (its window's handle and its description): what is
        # typed next goes there, until a key moves the focus (Tab) or another window is used.
        self._clicked_field: tuple[int, Target] | None = None
        # The screen as the pointer last came to rest (the mouse listener's thread only): what
        # a click's anchor is cut from, before the application redraws for the press.
        self._shots: deque[tuple[float, Shot, tuple[Window, ...]]] = deque(maxlen=4)
        # Every window's title changes, with the server's times (None: titles as read).
        self._title_watch: TitleWatch | None = None

    # ── lifecycle ───────────────────────────────────────────────────────────────────────────

    @property
    def trajectory_id(self) -> str:
        """The id of the trajectory being recorded."""
        return self._session.trajectory_id

    def start(self) -> None:
        """Start listening (call it on the event loop's thread).

        Raises:
            DesktopUnavailable: no display, a library missing, or an X server without the
                RECORD extension (the input cannot be listened to).
        """
        require_display()
        import mss
        from pynput import keyboard, mouse  # type: ignore[import-untyped]

        from desktop_app.adapters.desktop.x11 import X11

        self._loop = asyncio.get_running_loop()
        self._x11 = X11()
        if not self._x11.has_extension("RECORD"):
            raise DesktopUnavailable(
                "the desktop's mouse and keyboard cannot be listened to: the X server lacks the "
                "RECORD extension"
            )
        self._mss = mss.MSS()
        self._tree = open_tree()
        self._title_watch = _watch_titles()
        self._worker = threading.Thread(target=self._work, name="desktop-recorder", daemon=True)
        self._worker.start()
        self._mouse_listener = stamped(mouse.Listener)(
            on_move=self._on_move, on_click=self._on_click
        )
        self._keys_listener = stamped(keyboard.Listener)(
            on_press=self._on_key_press, on_release=self._on_key_release
        )
        self._listeners = [self._mouse_listener, self._keys_listener]
        for listener in self._listeners:
            listener.start()
        for listener in self._listeners:
            listener.wait()

    async def stop(self) -> None:
        """Stop listening and store what is still under way (a click, a burst of typing).

        Once it returns every event has been handed to the session.
        """
        if self._stopping:
            return
        self._stopping = True
        await asyncio.to_thread(self._stop_listeners)
        if self._worker is not None:
            self._queue.put(Stop())
            # The worker hands events to the loop in order; the join's completion comes after.
            await asyncio.to_thread(self._worker.join)
        if self._mss is not None:
            self._mss.close()
        if self._x11 is not None:
            self._x11.close()
        if self._tree is not None:
            with self._capture:
                self._tree.close()
        if self._title_watch is not None:
            await asyncio.to_thread(self._title_watch.stop)

    def _stop_listeners(self) -> None:
        for listener in self._listeners:
            listener.stop()
            _wake(listener)
        for listener in self._listeners:
            with contextlib.suppress(Exception):  # what ended it has been logged already
                listener.join(timeout=5)

    # ── controls ────────────────────────────────────────────────────────────────────────────

    @property
    def paused(self) -> bool:
        """Whether input is being dropped for now."""
        return self._paused

    def pause(self) -> None:
        """Drop what the person does from now on, until :meth:`resume`."""
        if not self._paused:
            self._paused = True
            self._put(Pause())

    def resume(self) -> None:
        """Record again."""
        self._paused = False

    def add_note(self, text: str) -> None:
        """Record a note from the person at this point (kept in order with the actions)."""
        text = text.strip()
        if text:
            self._put(Note(utcnow(), text))

    @property
    def last_window(self) -> Window | None:
        """The window last clicked or typed in (what "Mark window sensitive" marks)."""
        return self._last_window

    def mark_sensitive_window(self, title_pattern: str) -> None:
        """Treat windows matching *title_pattern* as sensitive from now on.

        A window matches when its title or application contains the pattern, ignoring case;
        ``*`` and ``?`` match any text and any one character. What is typed into it is stored
        as a secret placeholder, it is painted over in every screenshot, and clicks in it get no
        image anchor.
        """
        if title_pattern.strip():
            with self._rules:
                self._sensitive_windows = (*self._sensitive_windows, title_pattern.strip())

    def mark_sensitive_region(self, window_title: str, box: BoundingBox) -> None:
        """Treat *box* (relative to the window's top-left corner) of windows matching
        *window_title* (as in :meth:`mark_sensitive_window`) as sensitive from now on.

        The region is painted over in every screenshot; a click inside it gets no image anchor,
        and what is typed after it, until the next click, is stored as a secret placeholder.
        """
        with self._rules:
            self._sensitive_regions = (*self._sensitive_regions, (window_title.strip(), box))

    def exclude_window(self, handle: int) -> None:
        """Leave out everything done in the window *handle* (one of Procedura's own)."""
        with self._rules:
            self._excluded_handles = self._excluded_handles | {handle}

    # ── the listener threads: capture, then hand over ───────────────────────────────────────

    def _on_move(self, x: int, y: int, injected: bool) -> None:
        """Keep a screenshot of where the pointer goes, at most every :data:`REST_S`."""
        if injected or self._paused or self._stopping:
            return
        now = time.monotonic()
        if self._shots and now - self._shots[-1][0] < REST_S:
            return
        try:
            with self._capture:
                shot = self._grab(x, y)
                windows = tuple(self._x11.windows()) if self._x11 is not None else ()
        except Exception:  # the press grabs for itself
            return
        if shot is not None:
            self._shots.append((now, shot, windows))

    def _title_before(self, window: Window | None, server_ms: int | None) -> Window | None:
        """*window* with the title it had just before the input at *server_ms* (the X server's
        time of it): read now, it may already be the input's own effect (a form retitled
        "Contact saved" by the click on Save). As read when there is no watcher."""
        watch = self._title_watch
        if window is None or watch is None or server_ms is None:
            return window
        title = watch.title_before(window.handle, server_ms)
        return window if title is None or title == window.title else replace(window, title=title)

    def _before_press(self, clock: float, when: float) -> tuple[Shot, tuple[Window, ...]] | None:
        """The screen and the windows just before the press that happened at *when* and was
        heard at *clock*: the newest the pointer's moves took that began before the press,
        lately. A press reaches the application as soon as us, so a screenshot begun after it
        may show its effect (the field focused, the first keys typed into it at machine speed):
        then the one before stands, from where the pointer was before (an anchor is cut from
        the element's own rows, which the pointer elsewhere does not change)."""
        for taken, shot, windows in reversed(self._shots):
            if clock - taken > FRESH_S:
                break
            if taken < when - _GRAB_LEAD_S:
                return shot, windows
        return None

    def _on_click(self, x: int, y: int, button: Any, pressed: bool, injected: bool) -> None:
        name = getattr(button, "name", None)
        if not pressed or injected or self._paused or self._stopping or name not in _BUTTONS:
            return
        at, clock = utcnow(), time.monotonic()
        server_ms = self._mouse_listener.server_time
        when = self._timeline.when(server_ms, clock)
        try:
            with self._capture:
                before = self._before_press(clock, when)
                shot: Shot | None
                if before is not None:  # the screen and the windows' titles before the press
                    shot, windows = before
                else:
                    shot = self._grab(x, y)
                    windows = tuple(self._x11.windows()) if self._x11 is not None else ()
                window = self._title_before(window_at(windows, x, y), server_ms)
                pids = self._x11.pids_at(x, y) if self._x11 is not None else frozenset()
                elements = None if pids & self._excluded_pids else self._elements(window)
                self._put(
                    Press(
                        at=at,
                        clock=clock,
                        x=x,
                        y=y,
                        button=name,
                        modifiers=modifiers_of(self._held_modifiers),
                        window=window,
                        windows=windows,
                        shot=shot,
                        screen=_box(self._mss.monitors[0]),
                        elements=elements,
                        pids=pids,
                    ),
                    when,
                )
        except Exception as exc:  # never let the listener die: the recording goes on
            log.warning("desktop recorder: a click could not be captured: %s", exc)

    def _elements(self, window: Window | None) -> tuple[Element, ...] | None:
        """(Capture lock held.) *window*'s elements by accessibility; None without a tree."""
        if self._tree is None or window is None or self._excluded(window):
            return None
        found = self._tree.elements(window)
        return tuple(found) if found is not None else None

    def _grab(self, x: int, y: int) -> Shot | None:
        """The monitor holding (*x*, *y*), as it is now."""
        monitors = self._mss.monitors
        monitor = next(
            (
                m
                for m in monitors[1:]
                if m["left"] <= x < m["left"] + m["width"]
                and m["top"] <= y < m["top"] + m["height"]
            ),
            monitors[0],
        )
        try:
            shot = self._mss.grab(monitor)
        except Exception as exc:
            log.warning("desktop recorder: no screenshot: %s", exc)
            return None
        return Shot(pixels=bytes(shot.raw), box=_box(monitor))

    def _on_key_press(self, key: Any, injected: bool) -> None:
        try:
            name, char = key_parts(key)
            if name in MODIFIER_KEYS:
                self._held_modifiers = self._held_modifiers | {name}
                return
            if (name is None and char is None) or injected or self._paused or self._stopping:
                return
            at, clock = utcnow(), time.monotonic()
            server_ms = self._keys_listener.server_time
            with self._capture:
                window = self._x11.active_window() if self._x11 is not None else None
                window = self._title_before(window, server_ms)
                self._put(
                    Key(at, name, char, self._held_modifiers, window),
                    self._timeline.when(server_ms, clock),
                )
        except Exception as exc:  # never let the listener die (and never log the key)
            log.warning(
                "desktop recorder: a key press could not be captured: %s", type(exc).__name__
            )

    def _on_key_release(self, key: Any, injected: bool) -> None:
        name, _ = key_parts(key)
        if name in MODIFIER_KEYS:
            self._held_modifiers = self._held_modifiers - {name}

    # ── the worker thread: events in order ──────────────────────────────────────────────────

    def _work(self) -> None:
        """Handle input in the order it happened (:mod:`.ordering`), each item once it has
        waited :data:`.ordering.SETTLE_S` for what the other listener heard before it."""
        pending: Reorder[Press | Key | Note | Pause] = Reorder()
        while True:
            held = self._held
            # A click is single once no second press can still come, settled as well.
            release = None if held is None else held.press.clock + _DOUBLE_CLICK_S + SETTLE_S
            dues = [due for due in (pending.due(), release) if due is not None]
            try:
                entry = self._queue.get(
                    timeout=max(0.0, min(dues) - time.monotonic()) if dues else None
                )
            except queue.Empty:
                entry = None
            if isinstance(entry, Stop):
                for item in pending.drain():
                    self._safely(item)
                self._safely(None)
                self._burst = None
                return
            if entry is not None:
                when, arrived, item = entry
                if not pending.push(when, item, arrived):
                    # Heard after what came after it was handled: never typed in the wrong
                    # place (a password's last keys as plain text after the click on Save).
                    log.warning("desktop recorder: an input arrived too late and was dropped")
            now = time.monotonic()
            for item in pending.ready(now):
                self._safely(item)
            if release is not None and self._held is held and now >= release:
                self._safely(None)

    def _safely(self, item: Press | Key | Note | Pause | None) -> None:
        """Handle *item* (None: store the held click as a single one); never end the worker."""
        try:
            if item is None:
                self._release_click()
            else:
                self._handle(item)
        except Exception as exc:
            log.warning("desktop recorder: an event was lost: %s", type(exc).__name__)

    def _put(self, item: Press | Key | Note | Pause, when: float | None = None) -> None:
        """Hand *item*, which happened at *when* (default: now), to the worker."""
        arrived = time.monotonic()
        self._queue.put((arrived if when is None else when, arrived, item))

    def _handle(self, item: Press | Key | Note | Pause) -> None:
        if isinstance(item, Press) and self._is_second_press(item):
            return
        self._release_click()
        if isinstance(item, Press):
            self._burst = None
            self._secret_window = None
            if not self._excluded(item.window) and not item.pids & self._excluded_pids:
                self._click(item)  # (a press on Procedura's tray icon or menu is its own)
        elif isinstance(item, Key):
            self._key(item)
        elif isinstance(item, Note):
            self._burst = None
            self._note(item)
        else:
            self._burst = None

    def _emit(self, event: Event) -> None:
        """Hand *event* to the session, on the loop's thread, in the order emitted."""
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._session.add, event)

    # clicks

    def _is_second_press(self, press: Press) -> bool:
        """Whether *press* makes the held click a double click (then stored as one)."""
        held = self._held
        if held is None:
            return False
        first = held.press
        if not (
            press.button == first.button
            and press.clock - first.clock <= _DOUBLE_CLICK_S
            and abs(press.x - first.x) <= _DOUBLE_CLICK_PX
            and abs(press.y - first.y) <= _DOUBLE_CLICK_PX
        ):
            return False
        self._held = None
        self._emit(self._click_event(held, clicks=2, ended_at=press.at))
        return True

    def _release_click(self) -> None:
        """Store the held click as a single click: no second press came in time."""
        held, self._held = self._held, None
        if held is not None:
            self._emit(self._click_event(held, clicks=1))

    def _click(self, press: Press) -> None:
        window = press.window
        area = window.box if window is not None else press.screen
        sensitive = False
        region: BoundingBox | None = None
        if window is not None:
            region = next((r for r in self._regions_of(window) if _inside_box(press, r)), None)
            if region is not None:
                sensitive = True
                self._secret_window = window.handle
            sensitive = sensitive or self._is_sensitive(window)
        screenshot = None
        target = None
        element, described = self._element_clicked(press, area, sensitive and region is None)
        if element is not None and sensitive and not element.editable:
            element = described = None  # a field's label is not secret; what else shows may be
        extents = element.box if element is not None and element.box.width > 0 else None
        cut = cut_shot(press.shot, area) if press.shot is not None else None
        if cut is not None:
            image, origin = cut
            masks = [box for w in press.windows for box in self._masks_of(w)]
            paint(image, origin, masks)
            screenshot = self._media.put(png(image), "png")
            if not sensitive:
                target = cut_anchor(
                    self._media, image, origin, area, press, window, masks, element=extents
                )
            elif region is not None and window is not None and not self._is_sensitive(window):
                # In a sensitive region: the anchor is what is beside it (its label, say).
                target = cut_anchor(
                    self._media,
                    image,
                    origin,
                    area,
                    press,
                    window,
                    masks,
                    beside=region,
                    element=extents,
                )
        target = _joined(described, target)
        self._held = HeldClick(
            press=press,
            screenshot=screenshot,
            target=target,
            point=Point(x=press.x - area.x, y=press.y - area.y),
        )
        self._last_window = window
        self._clicked_field = None
        if window is not None and element is not None and element.editable and target is not None:
            self._clicked_field = (
                window.handle,
                Target(locators=target.locators[:1], fingerprint=target.fingerprint),
            )

    def _element_clicked(
        self, press: Press, area: BoundingBox, in_sensitive_window: bool
    ) -> tuple[Element | None, tuple[Locator, Fingerprint] | None]:
        """The element the press is on and its description, by accessibility (None, None
        without a tree, off any element, or in a sensitive window: nothing of it is kept)."""
        elements = press.elements
        if not elements or in_sensitive_window:
            return None, None
        index = element_at(elements, press.x, press.y)
        if index is None:
            return None, None
        return elements[index], describe(elements, index, area)

    def _click_event(
        self, held: HeldClick, *, clicks: int, ended_at: datetime | None = None
    ) -> Event:
        press = held.press
        target = held.target
        if target is not None and target.fingerprint is not None and clicks != 1:
            fingerprint = target.fingerprint
            attributes = {**fingerprint.attributes, "clicks": str(clicks)}
            target = target.model_copy(
                update={"fingerprint": fingerprint.model_copy(update={"attributes": attributes})}
            )
        window = press.window
        return Event(
            action=ActionKind.DESKTOP_CLICK,
            at=press.at,
            ended_at=ended_at,
            point=held.point,
            modifiers=press.modifiers,
            target=target,
            before=Observation(
                at=press.at,
                window_title=window.title if window is not None else None,
                app=window.app if window is not None else None,
                screenshot=held.screenshot,
            ),
            after=self._after(window),
        )

    def _after(self, window: Window | None) -> Observation | None:
        """*window*'s title now, once its click is over (what the click's step expects when
        nothing follows it on the desktop: the form retitled "Saved"); None when it is gone."""
        if window is None or self._x11 is None:
            return None
        try:
            with self._capture:
                now = self._x11.window(window.handle)
        except Exception:  # the display went away: nothing observed
            return None
        if now is None:
            return None
        return Observation(at=utcnow(), window_title=now.title, app=now.app)

    # keys

    def _key(self, key: Key) -> None:
        window = key.window
        burst = self._burst
        if burst is not None and handle_of(burst.window) != handle_of(window):
            burst = self._burst = None  # another window: a new burst
        if self._excluded(window):
            return
        self._last_window = window
        held = key.modifiers
        name = key.name
        if held & COMMAND_MODIFIERS or name in SPECIAL_KEYS:
            self._burst = None
            self._clicked_field = None  # Tab, Enter, a shortcut: the focus may be elsewhere now
            label = name or (key.char or "").lower()
            if label:
                self._emit(hotkey(key, label))
        elif name == "backspace":
            if burst is None or (not burst.secret and not burst.text):
                self._burst = None
                self._emit(hotkey(key, "backspace"))
            else:
                if burst.text:
                    burst.text.pop()
                self._emit(self._typed(burst, key))
        elif key.char is not None and (key.char == " " or key.char.isprintable()):
            if burst is None:
                into = self._into(window)  # a password field's typing is secret by itself
                secret = self._secret(window) or (into is not None and into.is_sensitive)
                burst = self._burst = Burst(at=key.at, window=window, secret=secret, into=into)
            if not burst.secret:
                burst.text.append(key.char)
            self._emit(self._typed(burst, key))

    def _into(self, window: Window | None) -> Target | None:
        """The element typing into *window* now goes to: the field last clicked in it, else
        the element with the keyboard focus (by accessibility; None when there is no tree or
        the focus is not on a field). The clicked field first: the application may not have
        moved its focus yet when the first key arrives at machine speed."""
        if window is None or self._excluded(window):
            return None
        clicked = self._clicked_field
        if clicked is not None and clicked[0] == window.handle:
            return clicked[1]
        if self._is_sensitive(window):
            return None
        with self._capture:
            elements = self._elements(window)
        if not elements:
            return None
        index = next((i for i, e in enumerate(elements) if "focused" in e.states), None)
        if index is None or not elements[index].editable:
            return None
        locator, fingerprint = describe(elements, index, window.box)
        return Target(locators=(locator,), fingerprint=fingerprint)

    def _secret(self, window: Window | None) -> bool:
        """Whether typing into *window* now must not be kept."""
        if window is not None and self._is_sensitive(window):
            return True
        return self._secret_window is not None and (
            window is None or window.handle == self._secret_window
        )

    @staticmethod
    def _typed(burst: Burst, key: Key) -> Event:
        window = burst.window
        title = window.title if window is not None else None
        value: str | SecretPlaceholder = (
            SecretPlaceholder(label=title or None) if burst.secret else "".join(burst.text)
        )
        return Event(
            action=ActionKind.DESKTOP_TYPE,
            at=burst.at,
            ended_at=max(key.at, burst.at),
            value=value,
            target=burst.into,
            typed=True,
            before=Observation(
                at=burst.at, window_title=title, app=window.app if window is not None else None
            ),
        )

    # notes

    def _note(self, note: Note) -> None:
        window = self._last_window
        self._emit(
            Event(
                action=ActionKind.NOTE,
                at=note.at,
                value=note.text,
                before=Observation(
                    at=note.at,
                    window_title=window.title if window is not None else None,
                    app=window.app if window is not None else None,
                ),
            )
        )

    # rules

    def _excluded(self, window: Window | None) -> bool:
        return window is not None and (
            window.handle in self._excluded_handles or window.pid in self._excluded_pids
        )

    def _is_sensitive(self, window: Window) -> bool:
        return any(title_matches(pattern, window) for pattern in self._sensitive_windows)

    def _regions_of(self, window: Window) -> list[BoundingBox]:
        """The sensitive regions of *window*, in screen pixels."""
        box = window.box
        return [
            BoundingBox(x=box.x + r.x, y=box.y + r.y, width=r.width, height=r.height)
            for pattern, r in self._sensitive_regions
            if title_matches(pattern, window)
        ]

    def _masks_of(self, window: Window) -> list[BoundingBox]:
        """What to paint over of *window* in screenshots, in screen pixels."""
        return [window.box] if self._is_sensitive(window) else self._regions_of(window)


# ── helpers ─────────────────────────────────────────────────────────────────────────────────


def _wake(listener: Any) -> None:
    """Make a stopped pynput X11 listener end now.

    pynput 1.8 disables its RECORD context on the connection its thread is blocked reading, so
    the thread only notices at the next input event (and fails if the display is gone by then).
    Disabling it from the listener's other connection, as the RECORD protocol expects, ends it
    at once. Other platforms' listeners have no such attributes and need nothing.
    """
    display = getattr(listener, "_display_stop", None)
    context = getattr(listener, "_context", None)
    if display is not None and context is not None:
        with contextlib.suppress(Exception):
            display.record_disable_context(context)
            display.flush()


def _watch_titles() -> TitleWatch | None:
    """Window titles watched with the server's times, or None (titles as read at each input)."""
    watch = TitleWatch()
    try:
        watch.start()
    except Exception as exc:
        log.info("desktop recorder: window titles not watched (%s)", exc)
        watch.stop()
        return None
    return watch


def _joined(described: tuple[Locator, Fingerprint] | None, anchor: Target | None) -> Target | None:
    """The click's target: the element by accessibility first, then its image anchor (the
    fingerprint holds both: the element's role, name and box, the anchor's box)."""
    if described is None:
        return anchor
    locator, fingerprint = described
    if anchor is None:
        return Target(locators=(locator,), fingerprint=fingerprint)
    kept = anchor.fingerprint or Fingerprint()
    return Target(
        locators=(locator, *anchor.locators),
        fingerprint=kept.model_copy(
            update={
                "role": fingerprint.role,
                "name": fingerprint.name,
                "ancestors": fingerprint.ancestors,
                "attributes": {**kept.attributes, **fingerprint.attributes},
            }
        ),
    )


def _box(monitor: dict[str, int]) -> BoundingBox:
    return BoundingBox(
        x=monitor["left"], y=monitor["top"], width=monitor["width"], height=monitor["height"]
    )


def _inside_box(press: Press, box: BoundingBox) -> bool:
    return box.x <= press.x < box.x + box.width and box.y <= press.y < box.y + box.height
