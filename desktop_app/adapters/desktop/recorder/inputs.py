"""What the desktop recorder's listener threads hand to its worker, and what the worker holds."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from desktop_app.core.models.common import BoundingBox, Point
from desktop_app.core.models.target import Target
from desktop_app.core.models.trajectory import Modifier
from desktop_app.core.replay.desktop import Element, Window

__all__ = ["Burst", "HeldClick", "Key", "Note", "Pause", "Press", "Shot", "Stop"]

# ── what the listener threads hand to the worker ────────────────────────────────────────────


@dataclass(frozen=True)
class Shot:
    """The pixels of one monitor (BGRA rows), grabbed at a press, and where that monitor is."""

    pixels: bytes
    box: BoundingBox


@dataclass(frozen=True)
class Press:
    at: datetime
    clock: float  # time.monotonic() at the press
    x: int
    y: int
    button: str
    modifiers: tuple[Modifier, ...]
    window: Window | None
    windows: tuple[Window, ...]  # every visible window then (to mask the sensitive ones)
    shot: Shot | None
    screen: BoundingBox  # the whole desktop (where a click outside any window is relative to)
    elements: tuple[Element, ...] | None = None  # the window's, by accessibility (None: no tree)
    pids: frozenset[int] = frozenset()  # the processes of every window under the press


@dataclass(frozen=True)
class Key:
    at: datetime
    name: str | None  # canonical key name (keys.normalise_key_name), None for a plain character
    char: str | None  # what the key types, if anything
    modifiers: frozenset[str]  # canonical names of the modifiers held
    window: Window | None


@dataclass(frozen=True)
class Note:
    at: datetime
    text: str


class Pause:
    """The person paused: what was under way (a burst of typing, a click) ends here."""


class Stop:
    """No more input: finish what is under way and end the worker."""


# ── the worker's state ──────────────────────────────────────────────────────────────────────


@dataclass
class Burst:
    """Keystrokes typed into one window since the last click, hotkey or window change."""

    at: datetime
    window: Window | None
    secret: bool
    text: list[str] = field(default_factory=list)
    into: Target | None = None  # the element typed into, by accessibility


@dataclass
class HeldClick:
    """A click waiting to learn whether a second press makes it a double click."""

    press: Press
    screenshot: str | None
    target: Target | None
    point: Point
