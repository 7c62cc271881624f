"""The desktop as replay sees it: windows, screenshots, image anchors, mouse and keyboard.

:class:`DesktopPort` is what desktop steps (``desktop_click``, ``desktop_type``, ``hotkey``) and
desktop expectations (a window title, an image anchor visible) need; ``adapters/desktop`` gives it
over pynput, mss and OpenCV. Coordinates are screen pixels; a step's ``point`` is relative to its
window's top-left corner, so a window that moved still gets the same click.

Image anchors are PNG crops of the screen around the recorded click (the recorder stores them in
the media store; the step's target has them as an ``image_anchor`` locator, and its fingerprint's
``bbox`` says where the crop was, relative to the window).

Elements are what the platform's accessibility API says is in a window (AT-SPI on Linux, UI
Automation on Windows, AX on macOS): a role, a name, where it is, its states. A step recorded on
an element that had one finds it again by role and name, before any image; an application that
exposes no tree (Tk, most games) is driven by images alone. Role names are AT-SPI's ("push
button", "text", "password text", "check box"); the other platforms' adapters map theirs to them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Literal, Protocol

from desktop_app.core.errors import ProceduraError
from desktop_app.core.models.common import BoundingBox

__all__ = [
    "SCALES",
    "DesktopPort",
    "DesktopUnavailable",
    "Element",
    "ImageMatch",
    "MouseButton",
    "Window",
]

MouseButton = Literal["left", "right", "middle"]

#: The scales replay tries an image anchor at: a geometric ladder from 0.5 to 2.0 in steps of
#: 2^(1/7) (10.4 %), nearest to 1.0 first (on equal scores the nearer scale wins). A copy drawn
#: at a scale between two rungs is at most 5 % off the nearer one (the adapter fits it closer).
SCALES: Final[tuple[float, ...]] = tuple(
    round(2 ** (step / 7), 3) for step in sorted(range(-7, 8), key=lambda n: (abs(n), n))
)


class DesktopUnavailable(ProceduraError):
    """The desktop cannot be recorded or driven here (no display, a missing library)."""


@dataclass(frozen=True, slots=True)
class Window:
    """A top-level window as the platform reports it now.

    Args:
        handle: the platform's id for it (an X11 window id, an HWND, ...).
        title: its title ("" when it has none).
        app: the application that owns it (X11: the WM_CLASS class; else the process name).
        box: where it is on the screen, in screen pixels (its client area).
        pid: the owning process, when the platform says.
    """

    handle: int
    title: str
    app: str | None
    box: BoundingBox
    pid: int | None = None


@dataclass(frozen=True, slots=True)
class ImageMatch:
    """Where an image anchor was found: its box on the screen, how well it matched (0..1), and
    at what scale (the anchor was resized by *scale* to match: 2.0 on a screen drawn at twice
    the size it was recorded at)."""

    box: BoundingBox
    score: float
    scale: float = 1.0


@dataclass(frozen=True, slots=True)
class Element:
    """One element of a window, as the platform's accessibility API shows it now.

    Args:
        role: what it is, as AT-SPI names roles ("push button", "text", "password text").
        name: its accessible name, else the text of the label the application ties to it
            (a labelled-by relation); "" when it has neither.
        box: where it is on the screen (screen pixels).
        states: what it is now, as AT-SPI names states ("focused", "editable", "showing",
            "enabled", "checked", ...).
        path: its ancestors from the window down, each ``role`` or ``role "name"``; the window
            itself is left out (its title changes; the step's window says which one).
        ref: the adapter's own handle for it (opaque to the core), to focus it or read it.
    """

    role: str
    name: str
    box: BoundingBox
    states: frozenset[str] = frozenset()
    path: tuple[str, ...] = ()
    ref: object = field(default=None, compare=False, hash=False)

    @property
    def editable(self) -> bool:
        """Whether text can be typed into it."""
        return "editable" in self.states

    @property
    def secret(self) -> bool:
        """Whether it hides what is typed (a password field)."""
        return self.role == "password text"


class DesktopPort(Protocol):
    """What replay needs of the desktop. Every method may raise :class:`DesktopUnavailable`."""

    async def windows(self) -> list[Window]:
        """The visible top-level windows, topmost first."""
        ...

    async def active_window(self) -> Window | None:
        """The window that has the keyboard focus, if any."""
        ...

    async def focus(self, window: Window) -> None:
        """Raise *window* and give it the keyboard focus."""
        ...

    async def screenshot(self, box: BoundingBox | None = None) -> bytes:
        """A PNG of the screen, or of *box* (screen pixels) only."""
        ...

    async def find_image(
        self,
        anchor: bytes,
        *,
        box: BoundingBox | None = None,
        limit: int = 3,
        scales: Sequence[float] = (1.0,),
        part: BoundingBox | None = None,
    ) -> list[ImageMatch]:
        """Where the PNG *anchor* appears in a fresh screenshot (of *box* only, if given): up to
        *limit* distinct places, best first (places that overlap the best are not repeated),
        the anchor resized to each of *scales* in turn; only its *part* (anchor pixels), if
        given."""
        ...

    async def elements(self, window: Window) -> list[Element] | None:
        """The elements shown in *window*, as its application's accessibility tree has them
        (parents before children); None when the application exposes no tree (or there is no
        accessibility bus), so that images must do."""
        ...

    async def focus_element(self, element: Element) -> bool:
        """Give *element* the keyboard focus; whether it has it now."""
        ...

    async def element_text(self, element: Element) -> str | None:
        """The text *element* shows now (a field's value), or None when it exposes none."""
        ...

    async def move(self, x: float, y: float) -> None:
        """Move the pointer to (*x*, *y*) without clicking (what is under it may change its
        look: a hovered button)."""
        ...

    async def click(
        self, x: float, y: float, *, button: MouseButton = "left", count: int = 1
    ) -> None:
        """Move the pointer to (*x*, *y*) and click."""
        ...

    async def type_text(self, text: str) -> None:
        """Type *text* into whatever has the keyboard focus."""
        ...

    async def hotkey(self, keys: Sequence[str]) -> None:
        """Press *keys* together, modifiers first (``["ctrl", "s"]``), then release them."""
        ...
