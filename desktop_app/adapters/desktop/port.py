"""The desktop replay drives: :class:`SystemDesktop`, the :class:`DesktopPort` over X11.

Windows are listed and focused with python-xlib (:mod:`.x11`), screenshots taken with mss, the
mouse and keyboard driven with pynput's controllers, image anchors found with OpenCV
(:mod:`.imaging`). Coordinates are screen pixels: on X11 the root window is the screen.

Every method is a coroutine that does its blocking work off the event loop, so the asyncio/Qt
loop never waits on the X server. The X connections (python-xlib's, mss's and pynput's) are not
thread-safe, so one dedicated worker thread owns them all and runs every call that touches the
display, one at a time; CPU work that does not (PNG encoding, template matching) runs in the
default thread pool instead, leaving that thread free.

Ordering needs no sleeps: each pynput and python-xlib request is synced with the X server before
the call returns, so a click, then typed text, then another click reach the application's event
queue in that order, whichever connection sent them.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from desktop_app.adapters.desktop import require_display
from desktop_app.adapters.desktop.accessibility import Tree, open_tree
from desktop_app.adapters.desktop.imaging import crop, encode_png, find_image
from desktop_app.adapters.desktop.keys import MODIFIERS, normalise_key_name
from desktop_app.adapters.desktop.x11 import X11
from desktop_app.core.models.common import BoundingBox
from desktop_app.core.replay.desktop import (
    DesktopUnavailable,
    Element,
    ImageMatch,
    MouseButton,
    Window,
)

if TYPE_CHECKING:
    from desktop_app.adapters.desktop.imaging import Image

__all__ = ["FOCUS_TIMEOUT", "SystemDesktop"]

#: How long :meth:`SystemDesktop.focus` waits for the window to become the active one (seconds).
FOCUS_TIMEOUT = 3.0

_T = TypeVar("_T")


class SystemDesktop:
    """The desktop of this session (X11), as replay drives it.

    Open it with :meth:`open` (which says clearly when the desktop cannot be driven) and close it
    with :meth:`close`, or use it as ``async with await SystemDesktop.open() as desktop``.
    """

    def __init__(self) -> None:
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="procedura-desktop")
        self._device: _Device | None = None
        self._closed = False

    @classmethod
    async def open(cls) -> SystemDesktop:
        """Connect to the display.

        Raises:
            DesktopUnavailable: no display, or pynput, mss or OpenCV cannot be loaded (one line
                saying which and what to do).
        """
        desktop = cls()
        try:
            await desktop._call(lambda _device: None)
        except BaseException:
            await desktop.close()
            raise
        return desktop

    async def close(self) -> None:
        """Close the display connections and stop the worker thread (safe to call twice)."""
        if self._closed:
            return
        self._closed = True
        try:
            await asyncio.get_running_loop().run_in_executor(self._thread, self._drop_device)
        finally:
            self._thread.shutdown(wait=False)

    async def __aenter__(self) -> SystemDesktop:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    # ── DesktopPort ─────────────────────────────────────────────────────────────────────────

    async def windows(self) -> list[Window]:
        """The visible top-level windows, topmost first."""
        return await self._call(lambda device: device.x11.windows())

    async def active_window(self) -> Window | None:
        """The window that has the keyboard focus, if any."""
        return await self._call(lambda device: device.x11.active_window())

    async def focus(self, window: Window) -> None:
        """Raise *window*, give it the keyboard focus, and wait until it is the active window.

        Raises:
            DesktopUnavailable: the window is not shown (any more), or it did not become the
                active window within :data:`FOCUS_TIMEOUT` seconds (the window manager refused).
        """

        def request(device: _Device) -> bool:
            if device.x11.window(window.handle) is None:
                return False
            device.x11.focus(window)
            return True

        def state(device: _Device) -> tuple[Window | None, bool]:
            return device.x11.active_window(), device.x11.window(window.handle) is not None

        gone = DesktopUnavailable(f"the window {window.title!r} is not shown any more")
        if not await self._call(request):
            raise gone
        deadline = time.monotonic() + FOCUS_TIMEOUT
        while True:
            active, shown = await self._call(state)
            if active is not None and active.handle == window.handle:
                return
            if not shown:
                raise gone
            if time.monotonic() > deadline:
                now = f"{active.title!r} has it" if active else "no window has it"
                raise DesktopUnavailable(
                    f"the window {window.title!r} did not take the keyboard focus"
                    f" within {FOCUS_TIMEOUT:g} s ({now})"
                )
            await asyncio.sleep(0.02)

    async def screenshot(self, box: BoundingBox | None = None) -> bytes:
        """A PNG of the screen, or of *box* (screen pixels; clipped to the screen) only.

        Raises:
            ValueError: *box* is entirely off the screen.
        """
        grabbed = await self._call(lambda device: device.grab(box))
        if grabbed is None:
            raise ValueError(f"the box {box} is off the screen")
        return await asyncio.to_thread(encode_png, grabbed[0])

    async def find_image(
        self,
        anchor: bytes,
        *,
        box: BoundingBox | None = None,
        limit: int = 3,
        scales: Sequence[float] = (1.0,),
        part: BoundingBox | None = None,
    ) -> list[ImageMatch]:
        """Where the PNG *anchor* (its *part* only, in anchor pixels, if given) appears on the
        screen now (in *box* only, if given).

        Up to *limit* distinct places, best first, boxes in screen pixels, scores in 0..1, the
        anchor tried at each of *scales* (see :func:`.imaging.find_image`; the core's
        ``SCALES`` is the ladder replay uses); none when *box* is off the screen, smaller than
        the anchor at every scale, or *part* is outside the anchor.

        Raises:
            ValueError: *anchor* is not an image.
        """
        if part is not None:
            cut = await asyncio.to_thread(crop, anchor, part)
            if cut is None:
                return []
            anchor = cut[0]
        grabbed = await self._call(lambda device: device.grab(box))
        if grabbed is None:
            return []
        image, origin = grabbed
        found = await asyncio.to_thread(find_image, image, anchor, limit, scales)
        return [
            ImageMatch(
                box=match.box.model_copy(
                    update={"x": match.box.x + origin.x, "y": match.box.y + origin.y}
                ),
                score=match.score,
                scale=match.scale,
            )
            for match in found
        ]

    async def elements(self, window: Window) -> list[Element] | None:
        """*window*'s elements by accessibility (:mod:`.accessibility`); None when its
        application shows no tree, or there is no accessibility here."""

        def walk(device: _Device) -> list[Element] | None:
            tree = device.tree()
            return tree.elements(window) if tree is not None else None

        return await self._call(walk)

    async def focus_element(self, element: Element) -> bool:
        """Give *element* the keyboard focus through accessibility; whether it has it."""

        def focus(device: _Device) -> bool:
            tree = device.tree()
            return tree is not None and tree.focus(element)

        return await self._call(focus)

    async def element_text(self, element: Element) -> str | None:
        """The text *element* shows, through accessibility (None: it exposes none)."""

        def read(device: _Device) -> str | None:
            tree = device.tree()
            return tree.text(element) if tree is not None else None

        return await self._call(read)

    async def move(self, x: float, y: float) -> None:
        """Move the pointer to (*x*, *y*), rounded to whole pixels (nothing is clicked)."""
        await self._call(lambda device: device.move(round(x), round(y)))

    async def click(
        self, x: float, y: float, *, button: MouseButton = "left", count: int = 1
    ) -> None:
        """Move the pointer to (*x*, *y*), rounded to whole pixels, and click *count* times."""
        await self._call(lambda device: device.click(round(x), round(y), button, count))

    async def type_text(self, text: str) -> None:
        """Type *text* into whatever has the keyboard focus (``\\n`` presses Enter).

        Returns once the X server has every key event, queued for the focused application.

        Raises:
            ValueError: a character cannot be typed on this keyboard.
        """
        await self._call(lambda device: device.type_text(text))

    async def hotkey(self, keys: Sequence[str]) -> None:
        """Press *keys* together, then release them in reverse order.

        Key names are normalised (:func:`.keys.normalise_key_name`: ``"Control"``, ``"ctrl_l"``
        and ``"ctrl"`` are one key) and modifiers are pressed first whatever their place in
        *keys*.

        Raises:
            ValueError: a key name is unknown, or the key is missing on this platform (nothing
                is pressed then).
        """
        names = list(dict.fromkeys(normalise_key_name(key) for key in keys))
        names.sort(key=lambda name: name not in MODIFIERS)  # stable: modifiers first
        await self._call(lambda device: device.hotkey(names))

    # ── the worker thread ───────────────────────────────────────────────────────────────────

    async def _call(self, work: Callable[[_Device], _T]) -> _T:
        """Run *work* with the device on the worker thread; its result."""
        if self._closed:
            raise DesktopUnavailable("this desktop connection is closed")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._thread, self._on_device, work)

    def _on_device(self, work: Callable[[_Device], _T]) -> _T:
        """(Worker thread.) Open the device if needed and run *work*.

        A failure of the display (the X server went away, a request refused) is reported as
        :class:`DesktopUnavailable` and the connections are dropped, so the next call reconnects.
        """
        if self._device is None:
            require_display()
            self._device = _Device()
        device = self._device
        try:
            return work(device)
        except device.failures as exc:
            self._drop_device()
            raise DesktopUnavailable(f"the desktop did not respond: {exc!r}") from exc

    def _drop_device(self) -> None:
        """(Worker thread.) Close the connections, if open."""
        if self._device is not None:
            self._device.close()
            self._device = None


class _Device:
    """The display connections: python-xlib for windows, mss, pynput's mouse and keyboard.

    Created and used on the worker thread only.

    Raises:
        DesktopUnavailable: a connection cannot be opened.
    """

    def __init__(self) -> None:
        import mss
        import Xlib.error  # type: ignore[import-untyped,unused-ignore]
        from pynput import keyboard, mouse  # type: ignore[import-untyped,unused-ignore]

        #: What the display's libraries raise when the display fails.
        self.failures: tuple[type[BaseException], ...] = (
            Xlib.error.XError,
            Xlib.error.ConnectionClosedError,
            mss.ScreenShotError,
            OSError,
            *_pynput_failures(),
        )
        self._keyboard_module: Any = keyboard
        self._mouse_module: Any = mouse
        self._tree: Tree | None = None
        self._tree_tried = False
        try:
            with contextlib.ExitStack() as undo:
                self.x11 = X11()
                undo.callback(self.x11.close)
                self._screen = mss.MSS()
                undo.callback(self._screen.close)
                self._mouse: Any = mouse.Controller()
                self._keyboard: Any = keyboard.Controller()
                undo.pop_all()
        except self.failures as exc:
            raise DesktopUnavailable(f"cannot open the display for input: {exc!r}") from None

    def close(self) -> None:
        """Close every connection (pynput's controllers close theirs when dropped)."""
        self.x11.close()
        self._screen.close()
        self._mouse = self._keyboard = None
        if self._tree is not None:
            self._tree.close()

    def tree(self) -> Tree | None:
        """The accessibility tree, opened at the first use (None, once and for all, when there
        is none: images alone then)."""
        if not self._tree_tried:
            self._tree_tried = True
            self._tree = open_tree()
        return self._tree

    def grab(self, box: BoundingBox | None) -> tuple[Image, BoundingBox] | None:
        """The screen's pixels (BGR) in *box* clipped to the screen, and the box grabbed."""
        screen = self._screen.monitors[0]  # every monitor together: the X11 root window
        left, top = screen["left"], screen["top"]
        right, bottom = left + screen["width"], top + screen["height"]
        if box is not None:
            left, top = max(left, math.floor(box.x)), max(top, math.floor(box.y))
            right = min(right, math.ceil(box.x + box.width))
            bottom = min(bottom, math.ceil(box.y + box.height))
            if right <= left or bottom <= top:
                return None
        width, height = right - left, bottom - top
        shot = self._screen.grab({"left": left, "top": top, "width": width, "height": height})
        pixels = np.frombuffer(shot.raw, dtype=np.uint8).reshape(shot.height, shot.width, 4)
        image = np.ascontiguousarray(pixels[:, :, :3])  # BGRA → BGR, a copy of its own
        return image, BoundingBox(x=left, y=top, width=width, height=height)

    def move(self, x: int, y: int) -> None:
        self._mouse.position = (x, y)

    def click(self, x: int, y: int, button: MouseButton, count: int) -> None:
        self._mouse.position = (x, y)
        self._mouse.click(getattr(self._mouse_module.Button, button), count)

    def type_text(self, text: str) -> None:
        try:
            self._keyboard.type(text)
        except self._keyboard.InvalidCharacterException as exc:
            index, character = exc.args
            raise ValueError(
                f"cannot type {character!r} (character {index + 1} of the text) on this keyboard"
            ) from None

    def hotkey(self, names: Sequence[str]) -> None:
        """Press the keys *names* (canonical, see :mod:`.keys`) in order; release in reverse."""
        keys = [self._key(name) for name in names]
        pressed: list[Any] = []
        try:
            for key in keys:
                self._keyboard.press(key)
                pressed.append(key)
        finally:
            for key in reversed(pressed):
                self._keyboard.release(key)

    def _key(self, name: str) -> Any:
        keyboard = self._keyboard_module
        if len(name) == 1:
            return keyboard.KeyCode.from_char(name)
        try:
            return getattr(keyboard.Key, name)
        except AttributeError:  # pynput has insert, menu, media keys… on some platforms only
            raise ValueError(f"there is no {name!r} key on this platform") from None


def _pynput_failures() -> tuple[type[BaseException], ...]:
    """pynput's error for a failed X request (Linux only, in a private module)."""
    try:
        from pynput._util.xorg import X11Error  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        return ()
    return (X11Error,)
