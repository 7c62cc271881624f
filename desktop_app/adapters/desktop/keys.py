"""Key names for hotkeys: one spelling per key, whatever the recording or the person wrote.

A hotkey step holds names such as ``["ctrl", "s"]``. People, browsers and input libraries spell
the same key many ways ("Control", "ctrl_l", "Key.ctrl", "Return", "ArrowLeft", "PgUp");
:func:`normalise_key_name` maps them all to one canonical name, so recordings compare equal and
replay knows what to press.

The canonical names are pynput's ``Key`` member names (``ctrl``, ``alt``, ``shift``, ``cmd``,
``enter``, ``esc``, ``page_up``, ``f1`` …), with left/right modifiers folded into one
(``ctrl_l`` → ``ctrl``), or a single character, kept as it is (``"a"``, ``"A"``, ``"/"``).
Importing this module imports no input library.
"""

from __future__ import annotations

from typing import Final

__all__ = ["KEY_NAMES", "MODIFIERS", "normalise_key_name"]

#: The canonical names of the keys that are not characters.
KEY_NAMES: Final = frozenset(
    {
        "alt",
        "alt_gr",
        "backspace",
        "caps_lock",
        "cmd",
        "ctrl",
        "delete",
        "down",
        "end",
        "enter",
        "esc",
        *(f"f{n}" for n in range(1, 21)),
        "home",
        "insert",
        "left",
        "media_next",
        "media_play_pause",
        "media_previous",
        "media_volume_down",
        "media_volume_mute",
        "media_volume_up",
        "menu",
        "num_lock",
        "page_down",
        "page_up",
        "pause",
        "print_screen",
        "right",
        "scroll_lock",
        "shift",
        "space",
        "tab",
        "up",
    }
)

#: The canonical modifier names, in the order a hotkey presses them.
MODIFIERS: Final = ("ctrl", "alt", "alt_gr", "shift", "cmd")

_ALIASES: Final = {
    # modifiers, either side
    "control": "ctrl",
    "ctl": "ctrl",
    "ctrl_l": "ctrl",
    "ctrl_r": "ctrl",
    "control_l": "ctrl",
    "control_r": "ctrl",
    "alt_l": "alt",
    "alt_r": "alt",
    "option": "alt",
    "opt": "alt",
    "altgr": "alt_gr",
    "iso_level3_shift": "alt_gr",
    "shift_l": "shift",
    "shift_r": "shift",
    "meta": "cmd",
    "meta_l": "cmd",
    "meta_r": "cmd",
    "super": "cmd",
    "super_l": "cmd",
    "super_r": "cmd",
    "win": "cmd",
    "windows": "cmd",
    "command": "cmd",
    "cmd_l": "cmd",
    "cmd_r": "cmd",
    "os": "cmd",
    # the rest
    "return": "enter",
    "kp_enter": "enter",
    "escape": "esc",
    "del": "delete",
    "back_space": "backspace",
    "bksp": "backspace",
    "ins": "insert",
    "pageup": "page_up",
    "pgup": "page_up",
    "prior": "page_up",
    "pagedown": "page_down",
    "pgdn": "page_down",
    "next": "page_down",
    "arrowup": "up",
    "arrowdown": "down",
    "arrowleft": "left",
    "arrowright": "right",
    "capslock": "caps_lock",
    "numlock": "num_lock",
    "scrolllock": "scroll_lock",
    "printscreen": "print_screen",
    "print": "print_screen",
    "prtsc": "print_screen",
    "apps": "menu",
    "contextmenu": "menu",
    "spacebar": "space",
}


def normalise_key_name(name: str) -> str:
    """The canonical name of the key *name* (see the module docstring).

    Names are matched without regard to case, spaces, hyphens, a ``Key.`` prefix (pynput's
    ``str(Key.ctrl_l)``) or angle brackets (pynput's ``<ctrl>``); a single character other than
    a space is returned unchanged.

    >>> [normalise_key_name(k) for k in ("Control", "Key.shift_r", "PageUp", "Return", "A")]
    ['ctrl', 'shift', 'page_up', 'enter', 'A']

    Raises:
        ValueError: *name* is no key this module knows.
    """
    if len(name) == 1:
        return "space" if name == " " else name
    key = name.strip().lower().removeprefix("key.").strip("<>").replace("-", "_").replace(" ", "_")
    key = _ALIASES.get(key, _ALIASES.get(key.replace("_", ""), key))
    if key in KEY_NAMES:
        return key
    raise ValueError(f"unknown key name {name!r}")
