"""The kinds of step that act on a desktop window: click in it, type in it, press keys.

They come from desktop recordings only (the editor cannot make one from scratch: it needs the
window as it was recorded)."""

from __future__ import annotations

from typing import Any, Final

from desktop_app.core.models.workflow import DesktopClickStep, DesktopTypeStep, HotkeyStep
from desktop_app.core.step_kinds.spec import KindField, KindSpec, number, quote
from desktop_app.core.step_kinds.web import CLICK_FIELDS

__all__ = ["DESKTOP_KINDS"]

#: The window a desktop step acts in.
_WINDOW: Final = KindField(
    "window_title", "Window", "optional_text", "The window's title, as recorded"
)


def _in_window(title: str | None) -> str:
    return f" in {quote(title)}" if title else ""


def _click_line(step: DesktopClickStep) -> str:
    at = f" at ({number(step.point.x)}, {number(step.point.y)})" if step.point else ""
    return f"click{_in_window(step.window_title)}{at}"


DESKTOP_CLICK: Final = KindSpec(
    kind="desktop_click",
    model=DesktopClickStep,
    label="Click in a window",
    family="desktop",
    performer="desktop",
    target="optional",
    fields=(_WINDOW, *CLICK_FIELDS, KindField("app", noun="application"), KindField("point")),
    describe=_click_line,
    detail=lambda step: step.window_title or step.app or "",
)

DESKTOP_TYPE: Final = KindSpec(
    kind="desktop_type",
    model=DesktopTypeStep,
    label="Type in a window",
    family="desktop",
    performer="desktop",
    target="optional",
    fields=(_WINDOW, KindField("text", "Text", "template")),
    describe=lambda step: f"type {quote(step.text)}{_in_window(step.window_title)}",
    detail=lambda step: step.text,
)

HOTKEY: Final = KindSpec(
    kind="hotkey",
    model=HotkeyStep,
    label="Press keys",
    family="desktop",
    performer="desktop",
    target="none",
    fields=(_WINDOW, KindField("keys", "Keys", "keys", "e.g. ctrl+s")),
    describe=lambda step: f"press {'+'.join(step.keys)}",
    detail=lambda step: "+".join(step.keys),
)

#: The desktop kinds.
DESKTOP_KINDS: Final[tuple[KindSpec[Any], ...]] = (DESKTOP_CLICK, DESKTOP_TYPE, HOTKEY)
