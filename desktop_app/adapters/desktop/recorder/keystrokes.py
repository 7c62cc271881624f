"""Keys as the desktop recorder sees them: pynput's keys named, modifiers, hotkey events."""

from __future__ import annotations

from typing import Any, Final

from desktop_app.adapters.desktop.keys import normalise_key_name
from desktop_app.adapters.desktop.recorder.inputs import Key
from desktop_app.core.models.trajectory import ActionKind, Event, Modifier, Observation

__all__ = [
    "COMMAND_MODIFIERS",
    "MODIFIER_KEYS",
    "SPECIAL_KEYS",
    "hotkey",
    "key_parts",
    "modifiers_of",
]

#: Keys recorded as a hotkey even without a modifier.
SPECIAL_KEYS: Final = frozenset(
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
COMMAND_MODIFIERS: Final = frozenset({"ctrl", "alt", "cmd"})
#: Modifier names as events hold them, in the order a hotkey presses them.
_MODIFIERS: Final = (
    ("ctrl", Modifier.CONTROL),
    ("alt", Modifier.ALT),
    ("shift", Modifier.SHIFT),
    ("cmd", Modifier.META),
)
MODIFIER_KEYS: Final = frozenset({"ctrl", "alt", "alt_gr", "shift", "cmd"})
#: X11 keysyms pynput reports without a name: Shift+Tab is ISO_Left_Tab.
_KEYSYM_NAMES: Final = {0xFE20: "tab"}


def key_parts(key: Any) -> tuple[str | None, str | None]:
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


def modifiers_of(held: frozenset[str]) -> tuple[Modifier, ...]:
    return tuple(modifier for name, modifier in _MODIFIERS if name in held)


def hotkey(key: Key, name: str) -> Event:
    window = key.window
    return Event(
        action=ActionKind.HOTKEY,
        at=key.at,
        key=name,
        modifiers=modifiers_of(key.modifiers),
        before=Observation(
            at=key.at,
            window_title=window.title if window is not None else None,
            app=window.app if window is not None else None,
        ),
    )
