"""Recording what a person does on the desktop: clicks, typing and hotkeys, with screenshots.

pynput's mouse and keyboard listeners report each press on their own threads. A click is
captured there at once, before the application under it has reacted: a screenshot of the
monitor (mss) and the window under the pointer (X11). Everything else happens on one worker
thread, in the order the presses came: the screenshot is cropped to the window, sensitive parts
are painted over, an image anchor is cut around the click, both are encoded as PNG and put in
the media store, keystrokes are coalesced into typed text, hotkeys recognised, and each event
is handed to the event loop, where the :class:`~desktop_app.core.recording.RecordingSession`
stores it at once (the session is used from the loop's thread only, as its listeners expect).

What the events look like (the inducer and replay rely on it):

* ``desktop_click``: ``point`` relative to the window's top-left corner; ``before`` has the
  window's title and application and a screenshot of the window taken at the press; the target
  is the image anchor (a crop of about 96×48 pixels centred on the click, clipped to the window),
  its fingerprint's ``bbox`` where that crop is in the window, its ``name`` the window title and
  its attributes the ``button`` and the number of ``clicks`` (a second press of the same button
  at the same spot within 0.4 s makes a double click of the first: one event). A click inside a
  sensitive window or region has no anchor (and no target).
* ``desktop_type``: one event per keystroke, each with the whole text typed so far in the burst
  (BackSpace applied) and the same ``at`` (when the burst began); a click, a hotkey, another
  window, a note or a pause ends the burst. Typed into a sensitive window, or after a click in a
  sensitive region (until the next click), the value is a secret placeholder and the characters
  are never kept.
* ``hotkey``: a key pressed with Ctrl, Alt or Meta held, and Enter, Tab, Escape, Delete, the
  arrows, Home, End, Page Up/Down and function keys with or without modifiers. Key names are
  :mod:`~desktop_app.adapters.desktop.keys`' canonical names (a letter in lower case).

Left out: input into Procedura's own windows (those of this process, and any the caller
excludes, such as the terminal a recording was started from), input the platform reports as
injected (on X11 only events sent with ``XSendEvent``: XTEST input, as from ``xdotool`` or
pynput's controllers, cannot be told from a person's), and anything done while paused.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import logging
import math
import os
import queue
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from desktop_app.adapters.desktop import require_display
from desktop_app.adapters.desktop.keys import normalise_key_name
from desktop_app.core.models.common import BoundingBox, Point, utcnow
from desktop_app.core.models.target import Fingerprint, Locator, LocatorStrategy, Target
from desktop_app.core.models.trajectory import (
    ActionKind,
    Event,
    Modifier,
    Observation,
    SecretPlaceholder,
)
from desktop_app.core.ports import MediaStore
from desktop_app.core.recording import RecordingSession
from desktop_app.core.replay.desktop import DesktopUnavailable, Window

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from desktop_app.adapters.desktop.x11 import X11

__all__ = ["ANCHOR_SIZE", "MASK_COLOUR", "DesktopRecorder", "terminal_window"]

log = logging.getLogger(__name__)

#: The colour sensitive windows and regions are painted over with in screenshots (RGB).
MASK_COLOUR: Final = (255, 0, 255)
#: Width and height of the image anchor cut around a click.
ANCHOR_SIZE: Final = (96, 48)
#: How often (seconds) the pointer's moves take a screenshot, and how old one may be (seconds)
#: and how far from the press (pixels) to stand for the screen before it.
REST_S: Final = 0.05
FRESH_S: Final = 1.5
NEAR_PX: Final = 4
#: The widths an anchor is tried at, until nothing else in its window looks like it.
ANCHOR_WIDTHS: Final = (96, 160, 256, 400)
#: Another place in the window scoring this much or more makes an anchor ambiguous.
UNIQUE_BELOW: Final = 0.9

#: A second press of the same button this soon and this close makes a double click.
_DOUBLE_CLICK_S: Final = 0.4
_DOUBLE_CLICK_PX: Final = 5
#: Keys recorded as a hotkey even without a modifier.
_SPECIAL_KEYS: Final = frozenset(
    {
        "enter",
        "tab",
        "esc",
        "delete",
        "home",
        "end",
        "page_up",
        "page_down",
        "left",
        "right",
        "up",
        "down",
        *(f"f{n}" for n in range(1, 21)),
    }
)
#: Modifiers that make a key a hotkey (Shift alone only changes what is typed; AltGr too).
_COMMAND_MODIFIERS: Final = frozenset({"ctrl", "alt", "cmd"})
#: Modifier names as events hold them, in the order a hotkey presses them.
_MODIFIERS: Final = (
    ("ctrl", Modifier.CONTROL),
    ("alt", Modifier.ALT),
    ("shift", Modifier.SHIFT),
    ("cmd", Modifier.META),
)
_MODIFIER_KEYS: Final = frozenset({"ctrl", "alt", "alt_gr", "shift", "cmd"})
_BUTTONS: Final = frozenset({"left", "right", "middle"})
#: X11 keysyms pynput reports without a name: Shift+Tab is ISO_Left_Tab.
_KEYSYM_NAMES: Final = {0xFE20: "tab"}


# ── what the listener threads hand to the worker ────────────────────────────────────────────


@dataclass(frozen=True)
class _Shot:
    """The pixels of one monitor (BGRA rows), grabbed at a press, and where that monitor is."""

    pixels: bytes
    box: BoundingBox


@dataclass(frozen=True)
class _Press:
    at: datetime
    clock: float  # time.monotonic() at the press
    x: int
    y: int
    button: str
    modifiers: tuple[Modifier, ...]
    window: Window | None
    windows: tuple[Window, ...]  # every visible window then (to mask the sensitive ones)
    shot: _Shot | None
    screen: BoundingBox  # the whole desktop (where a click outside any window is relative to)


@dataclass(frozen=True)
class _Key:
    at: datetime
    name: str | None  # canonical key name (keys.normalise_key_name), None for a plain character
    char: str | None  # what the key types, if anything
    modifiers: frozenset[str]  # canonical names of the modifiers held
    window: Window | None


@dataclass(frozen=True)
class _Note:
    at: datetime
    text: str


class _Pause:
    """The person paused: what was under way (a burst of typing, a click) ends here."""


class _Stop:
    """No more input: finish what is under way and end the worker."""


# ── the worker's state ──────────────────────────────────────────────────────────────────────


@dataclass
class _Burst:
    """Keystrokes typed into one window since the last click, hotkey or window change."""

    at: datetime
    window: Window | None
    secret: bool
    text: list[str] = field(default_factory=list)


@dataclass
class _HeldClick:
    """A click waiting to learn whether a second press makes it a double click."""

    press: _Press
    screenshot: str | None
    target: Target | None
    point: Point


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
        self._queue: queue.Queue[_Press | _Key | _Note | _Pause | _Stop] = queue.Queue()
        self._worker: threading.Thread | None = None
        self._listeners: list[Any] = []
        self._x11: X11 | None = None
        self._mss: Any = None
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
        self._burst: _Burst | None = None
        self._held: _HeldClick | None = None
        # The window last clicked in a sensitive region of: typing is secret until the next click.
        self._secret_window: int | None = None
        self._last_window: Window | None = None
        # The screen as the pointer last came to rest (the mouse listener's thread only): what
        # a click's anchor is cut from, before the application redraws for the press.
        self._resting: tuple[float, int, int, _Shot, tuple[Window, ...]] | None = None

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
        self._worker = threading.Thread(target=self._work, name="desktop-recorder", daemon=True)
        self._worker.start()
        self._listeners = [
            mouse.Listener(on_move=self._on_move, on_click=self._on_click),
            keyboard.Listener(on_press=self._on_key_press, on_release=self._on_key_release),
        ]
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
            self._queue.put(_Stop())
            # The worker hands events to the loop in order; the join's completion comes after.
            await asyncio.to_thread(self._worker.join)
        if self._mss is not None:
            self._mss.close()
        if self._x11 is not None:
            self._x11.close()

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
            self._queue.put(_Pause())

    def resume(self) -> None:
        """Record again."""
        self._paused = False

    def add_note(self, text: str) -> None:
        """Record a note from the person at this point (kept in order with the actions)."""
        text = text.strip()
        if text:
            self._queue.put(_Note(utcnow(), text))

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
        if self._resting is not None and now - self._resting[0] < REST_S:
            return
        try:
            with self._capture:
                shot = self._grab(x, y)
                windows = tuple(self._x11.windows()) if self._x11 is not None else ()
        except Exception:  # the press grabs for itself
            return
        if shot is not None:
            self._resting = (now, x, y, shot, windows)

    def _before_press(
        self, x: int, y: int, clock: float
    ) -> tuple[_Shot, tuple[Window, ...]] | None:
        """The screen and the windows just before the press at (*x*, *y*): what the pointer's
        moves last took, if it was taken near there and lately (a press is seen by the
        application as soon as by us: it may already have redrawn or retitled its window)."""
        resting = self._resting
        if resting is None:
            return None
        taken, rx, ry, shot, windows = resting
        if clock - taken > FRESH_S or abs(rx - x) > NEAR_PX or abs(ry - y) > NEAR_PX:
            return None
        return shot, windows

    def _on_click(self, x: int, y: int, button: Any, pressed: bool, injected: bool) -> None:
        name = getattr(button, "name", None)
        if not pressed or injected or self._paused or self._stopping or name not in _BUTTONS:
            return
        at, clock = utcnow(), time.monotonic()
        try:
            with self._capture:
                before = self._before_press(x, y, clock)
                shot: _Shot | None
                if before is not None:  # the screen and the windows' titles before the press
                    shot, windows = before
                else:
                    shot = self._grab(x, y)
                    windows = tuple(self._x11.windows()) if self._x11 is not None else ()
                self._queue.put(
                    _Press(
                        at=at,
                        clock=clock,
                        x=x,
                        y=y,
                        button=name,
                        modifiers=_modifiers(self._held_modifiers),
                        window=_window_at(windows, x, y),
                        windows=windows,
                        shot=shot,
                        screen=_box(self._mss.monitors[0]),
                    )
                )
        except Exception as exc:  # never let the listener die: the recording goes on
            log.warning("desktop recorder: a click could not be captured: %s", exc)

    def _grab(self, x: int, y: int) -> _Shot | None:
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
        return _Shot(pixels=bytes(shot.raw), box=_box(monitor))

    def _on_key_press(self, key: Any, injected: bool) -> None:
        try:
            name, char = _key_parts(key)
            if name in _MODIFIER_KEYS:
                self._held_modifiers = self._held_modifiers | {name}
                return
            if (name is None and char is None) or injected or self._paused or self._stopping:
                return
            at = utcnow()
            with self._capture:
                window = self._x11.active_window() if self._x11 is not None else None
                self._queue.put(_Key(at, name, char, self._held_modifiers, window))
        except Exception as exc:  # never let the listener die (and never log the key)
            log.warning(
                "desktop recorder: a key press could not be captured: %s", type(exc).__name__
            )

    def _on_key_release(self, key: Any, injected: bool) -> None:
        name, _ = _key_parts(key)
        if name in _MODIFIER_KEYS:
            self._held_modifiers = self._held_modifiers - {name}

    # ── the worker thread: events in order ──────────────────────────────────────────────────

    def _work(self) -> None:
        while True:
            held = self._held
            due = None if held is None else held.press.clock + _DOUBLE_CLICK_S
            try:
                item = self._queue.get(
                    timeout=None if due is None else max(0.0, due - time.monotonic())
                )
            except queue.Empty:
                item = None
            try:
                if item is None:
                    self._release_click()
                elif isinstance(item, _Stop):
                    self._release_click()
                    self._burst = None
                    return
                else:
                    self._handle(item)
            except Exception as exc:
                log.warning("desktop recorder: an event was lost: %s", type(exc).__name__)

    def _handle(self, item: _Press | _Key | _Note | _Pause) -> None:
        if isinstance(item, _Press) and self._is_second_press(item):
            return
        self._release_click()
        if isinstance(item, _Press):
            self._burst = None
            self._secret_window = None
            if not self._excluded(item.window):
                self._click(item)
        elif isinstance(item, _Key):
            self._key(item)
        elif isinstance(item, _Note):
            self._burst = None
            self._note(item)
        else:
            self._burst = None

    def _emit(self, event: Event) -> None:
        """Hand *event* to the session, on the loop's thread, in the order emitted."""
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._session.add, event)

    # clicks

    def _is_second_press(self, press: _Press) -> bool:
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

    def _click(self, press: _Press) -> None:
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
        cut = _cut(press.shot, area) if press.shot is not None else None
        if cut is not None:
            image, origin = cut
            masks = [box for w in press.windows for box in self._masks_of(w)]
            _paint(image, origin, masks)
            screenshot = self._media.put(_png(image), "png")
            if not sensitive:
                target = self._anchor(image, origin, area, press, window, masks)
            elif region is not None and window is not None and not self._is_sensitive(window):
                # In a sensitive region: the anchor is what is beside it (its label, say).
                target = self._anchor(image, origin, area, press, window, masks, beside=region)
        self._held = _HeldClick(
            press=press,
            screenshot=screenshot,
            target=target,
            point=Point(x=press.x - area.x, y=press.y - area.y),
        )
        self._last_window = window

    def _anchor(
        self,
        image: npt.NDArray[np.uint8],
        origin: BoundingBox,
        area: BoundingBox,
        press: _Press,
        window: Window | None,
        masks: Sequence[BoundingBox] = (),
        beside: BoundingBox | None = None,
    ) -> Target | None:
        """The image anchor around the click: cut from *image* (the window, masked).

        It is :data:`ANCHOR_SIZE` unless that much looks the same elsewhere in the window, or
        a few pixels along (the inside of a text field does): then it is widened, up to
        :data:`ANCHOR_WIDTHS`' last, until it takes in something that pins the spot down (the
        field's edge or label). Wider, not taller: a row of a form tends to move as a whole
        when the layout changes. It never takes in a masked (sensitive) region: the mask is not
        on the screen at replay. For a click inside a sensitive region (*beside*), it is cut
        from the strip left of the region, else right of it, on the click's rows: the click is
        then at an offset outside the anchor.
        """
        from desktop_app.adapters.desktop.imaging import matches_only_at

        height = ANCHOR_SIZE[1]
        cut = None
        for width in ANCHOR_WIDTHS:
            if beside is None:
                wanted = _clear_of(
                    BoundingBox(
                        x=press.x - width // 2, y=press.y - height // 2, width=width, height=height
                    ),
                    masks,
                    press,
                )
            else:
                wanted = _beside(beside, width, height, press, area, masks)
            cut = _cut_array(image, origin, wanted) if wanted is not None else None
            if cut is None:
                return None
            crop, where = cut
            at_x, at_y = int(where.x - origin.x), int(where.y - origin.y)
            if matches_only_at(image, crop, at_x, at_y, below=UNIQUE_BELOW):
                break
        assert cut is not None
        crop, where = cut
        ref = self._media.put(_png(crop), "png")
        return Target(
            locators=(Locator(strategy=LocatorStrategy.IMAGE_ANCHOR, value=ref),),
            fingerprint=Fingerprint(
                name=window.title if window is not None else None,
                bbox=BoundingBox(
                    x=where.x - area.x, y=where.y - area.y, width=where.width, height=where.height
                ),
                attributes={"button": press.button, "clicks": "1"},
            ),
        )

    def _click_event(
        self, held: _HeldClick, *, clicks: int, ended_at: datetime | None = None
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
        )

    # keys

    def _key(self, key: _Key) -> None:
        window = key.window
        burst = self._burst
        if burst is not None and _handle_of(burst.window) != _handle_of(window):
            burst = self._burst = None  # another window: a new burst
        if self._excluded(window):
            return
        self._last_window = window
        held = key.modifiers
        name = key.name
        if held & _COMMAND_MODIFIERS or name in _SPECIAL_KEYS:
            self._burst = None
            label = name or (key.char or "").lower()
            if label:
                self._emit(_hotkey(key, label))
        elif name == "backspace":
            if burst is None or (not burst.secret and not burst.text):
                self._burst = None
                self._emit(_hotkey(key, "backspace"))
            else:
                if burst.text:
                    burst.text.pop()
                self._emit(self._typed(burst, key))
        elif key.char is not None and (key.char == " " or key.char.isprintable()):
            if burst is None:
                burst = self._burst = _Burst(at=key.at, window=window, secret=self._secret(window))
            if not burst.secret:
                burst.text.append(key.char)
            self._emit(self._typed(burst, key))

    def _secret(self, window: Window | None) -> bool:
        """Whether typing into *window* now must not be kept."""
        if window is not None and self._is_sensitive(window):
            return True
        return self._secret_window is not None and (
            window is None or window.handle == self._secret_window
        )

    @staticmethod
    def _typed(burst: _Burst, key: _Key) -> Event:
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
            typed=True,
            before=Observation(
                at=burst.at, window_title=title, app=window.app if window is not None else None
            ),
        )

    # notes

    def _note(self, note: _Note) -> None:
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
        return any(_matches(pattern, window) for pattern in self._sensitive_windows)

    def _regions_of(self, window: Window) -> list[BoundingBox]:
        """The sensitive regions of *window*, in screen pixels."""
        box = window.box
        return [
            BoundingBox(x=box.x + r.x, y=box.y + r.y, width=r.width, height=r.height)
            for pattern, r in self._sensitive_regions
            if _matches(pattern, window)
        ]

    def _masks_of(self, window: Window) -> list[BoundingBox]:
        """What to paint over of *window* in screenshots, in screen pixels."""
        return [window.box] if self._is_sensitive(window) else self._regions_of(window)


def terminal_window() -> Window | None:
    """The window of the terminal this process runs in (to leave out what is typed there, such
    as the Ctrl+C that ends a recording), if it can be told.

    It is the window ``$WINDOWID`` names (xterm, Konsole, kitty, Alacritty…), else the active
    window when a window manager says which one that is.

    Raises:
        DesktopUnavailable: there is no display to ask.
    """
    from desktop_app.adapters.desktop.x11 import X11

    with X11() as x11:
        window = None
        with contextlib.suppress(ValueError):
            window = x11.window(int(os.environ.get("WINDOWID", "")))
        if window is None and x11.has_window_manager():
            window = x11.active_window()
        return window


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


def _key_parts(key: Any) -> tuple[str | None, str | None]:
    """The canonical name of a pynput key (None for a character key) and what it types."""
    if key is None:
        return None, None
    char = getattr(key, "char", None)
    name = getattr(key, "name", None)  # pynput's Key members; a KeyCode has no name
    if isinstance(name, str):
        try:
            canonical: str | None = normalise_key_name(name)
        except ValueError:
            canonical = None
        return canonical, " " if canonical == "space" else None
    if char is None:
        return _KEYSYM_NAMES.get(getattr(key, "vk", None) or 0), None
    if len(char) == 1 and 0 < ord(char) < 27:  # Ctrl+letter as a control character (Windows)
        char = chr(ord(char) + 96)
    return None, char


def _modifiers(held: frozenset[str]) -> tuple[Modifier, ...]:
    return tuple(modifier for name, modifier in _MODIFIERS if name in held)


def _hotkey(key: _Key, name: str) -> Event:
    window = key.window
    return Event(
        action=ActionKind.HOTKEY,
        at=key.at,
        key=name,
        modifiers=_modifiers(key.modifiers),
        before=Observation(
            at=key.at,
            window_title=window.title if window is not None else None,
            app=window.app if window is not None else None,
        ),
    )


def _handle_of(window: Window | None) -> int | None:
    return window.handle if window is not None else None


def _matches(pattern: str, window: Window) -> bool:
    """Whether *window*'s title or application contains *pattern* (case-insensitive, with
    ``*`` and ``?`` wildcards)."""
    wanted = f"*{pattern.lower()}*"
    return any(
        fnmatch.fnmatchcase(text.lower(), wanted) for text in (window.title, window.app or "")
    )


def _box(monitor: dict[str, int]) -> BoundingBox:
    return BoundingBox(
        x=monitor["left"], y=monitor["top"], width=monitor["width"], height=monitor["height"]
    )


def _window_at(windows: Iterable[Window], x: int, y: int) -> Window | None:
    """The topmost of *windows* (topmost first) under (*x*, *y*)."""
    return next((w for w in windows if _inside(x, y, [w.box])), None)


def _inside(x: float, y: float, boxes: Iterable[BoundingBox]) -> bool:
    return any(b.x <= x < b.x + b.width and b.y <= y < b.y + b.height for b in boxes)


def _pixel_box(box: BoundingBox, within: BoundingBox) -> tuple[int, int, int, int] | None:
    """*box* clipped to *within* as whole pixels relative to *within*: left, top, right, bottom
    (rounded outwards); None if they do not overlap."""
    left = max(0, math.floor(box.x - within.x))
    top = max(0, math.floor(box.y - within.y))
    right = min(int(within.width), math.ceil(box.x + box.width - within.x))
    bottom = min(int(within.height), math.ceil(box.y + box.height - within.y))
    if right <= left or bottom <= top:
        return None
    return left, top, right, bottom


def _cut(shot: _Shot, area: BoundingBox) -> tuple[npt.NDArray[np.uint8], BoundingBox] | None:
    """The part of *shot* inside *area* (BGR), and where that part is on the screen."""
    import numpy as np

    width, height = int(shot.box.width), int(shot.box.height)
    pixels = np.frombuffer(shot.pixels, dtype=np.uint8).reshape(height, width, 4)
    return _cut_array(pixels[:, :, :3], shot.box, area)


def _beside(
    region: BoundingBox,
    width: int,
    height: int,
    press: _Press,
    area: BoundingBox,
    masks: Sequence[BoundingBox],
) -> BoundingBox | None:
    """A strip of *width* next to *region* (left, else right, within *area*) on the rows of
    the click, clear of every mask; None if neither side has room."""
    top = press.y - height // 2
    left_room = region.x - area.x
    right_room = area.x + area.width - (region.x + region.width)
    for room, x in (
        (left_room, region.x - min(width, left_room)),
        (right_room, region.x + region.width),
    ):
        if room < 16:
            continue
        strip = BoundingBox(x=x, y=top, width=min(width, room), height=height)
        overlaps = [
            m
            for m in masks
            if m.x < strip.x + strip.width
            and strip.x < m.x + m.width
            and m.y < strip.y + strip.height
            and strip.y < m.y + m.height
        ]
        if not overlaps:
            return strip
    return None


def _inside_box(press: _Press, box: BoundingBox) -> bool:
    return box.x <= press.x < box.x + box.width and box.y <= press.y < box.y + box.height


def _clear_of(box: BoundingBox, masks: Sequence[BoundingBox], press: _Press) -> BoundingBox | None:
    """*box* cut back so that it overlaps none of *masks* and still holds the click; None
    when it cannot (the click is in a mask)."""
    left, top = box.x, box.y
    right, bottom = box.x + box.width, box.y + box.height
    for mask in masks:
        m_left, m_top = mask.x, mask.y
        m_right, m_bottom = mask.x + mask.width, mask.y + mask.height
        if m_right <= left or m_left >= right or m_bottom <= top or m_top >= bottom:
            continue
        if m_left <= press.x < m_right and m_top <= press.y < m_bottom:
            return None
        # Cut on the side of the mask that loses the least of the box.
        cuts = []
        if m_top > press.y:
            cuts.append(((right - left) * (bottom - m_top), "bottom", m_top))
        if m_bottom <= press.y:
            cuts.append(((right - left) * (m_bottom - top), "top", m_bottom))
        if m_left > press.x:
            cuts.append(((bottom - top) * (right - m_left), "right", m_left))
        if m_right <= press.x:
            cuts.append(((bottom - top) * (m_right - left), "left", m_right))
        _, side, edge = min(cuts)
        if side == "bottom":
            bottom = edge
        elif side == "top":
            top = edge
        elif side == "right":
            right = edge
        else:
            left = edge
    if right - left < 8 or bottom - top < 8:
        return None
    return BoundingBox(x=left, y=top, width=right - left, height=bottom - top)


def _cut_array(
    image: npt.NDArray[np.uint8], origin: BoundingBox, area: BoundingBox
) -> tuple[npt.NDArray[np.uint8], BoundingBox] | None:
    """The part of *image* (whose top-left is at *origin* on the screen) inside *area*, and
    where that part is on the screen; None if they do not overlap."""
    import numpy as np

    whole = BoundingBox(x=origin.x, y=origin.y, width=image.shape[1], height=image.shape[0])
    pixels = _pixel_box(area, whole)
    if pixels is None:
        return None
    left, top, right, bottom = pixels
    where = BoundingBox(
        x=origin.x + left, y=origin.y + top, width=right - left, height=bottom - top
    )
    return np.ascontiguousarray(image[top:bottom, left:right]), where


def _paint(image: npt.NDArray[np.uint8], origin: BoundingBox, boxes: Iterable[BoundingBox]) -> None:
    """Paint *boxes* (screen pixels) over *image* (whose top-left is at *origin*)."""
    whole = BoundingBox(x=origin.x, y=origin.y, width=image.shape[1], height=image.shape[0])
    red, green, blue = MASK_COLOUR
    for box in boxes:
        pixels = _pixel_box(box, whole)
        if pixels is not None:
            left, top, right, bottom = pixels
            image[top:bottom, left:right] = (blue, green, red)


def _png(image: npt.NDArray[np.uint8]) -> bytes:
    from desktop_app.adapters.desktop.imaging import encode_png

    return encode_png(image)
