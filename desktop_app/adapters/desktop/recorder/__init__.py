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

from desktop_app.adapters.desktop.recorder.anchors import (
    ELEMENT_PAD,
    FALLBACK_HEIGHT,
    MAX_WIDTH,
    UNIQUE_BELOW,
)
from desktop_app.adapters.desktop.recorder.pixels import MASK_COLOUR
from desktop_app.adapters.desktop.recorder.service import DesktopRecorder
from desktop_app.adapters.desktop.recorder.windows import terminal_window

__all__ = [
    "ELEMENT_PAD",
    "FALLBACK_HEIGHT",
    "MASK_COLOUR",
    "MAX_WIDTH",
    "UNIQUE_BELOW",
    "DesktopRecorder",
    "terminal_window",
]
