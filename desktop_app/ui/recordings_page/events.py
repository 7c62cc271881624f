"""One line a person reads for a recorded event, and the screenshot that shows it."""

from __future__ import annotations

from desktop_app.core.induction.naming import label_of
from desktop_app.core.models.trajectory import ActionKind, Event

__all__ = ["describe_event", "screenshot_of"]

_MAX_VALUE = 60


# ── one line per event ──────────────────────────────────────────────────────────────────────


def _clip(text: str, limit: int = _MAX_VALUE) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_event(event: Event) -> str:
    """What a person reads for *event*: "Type “Jane” into “Full name”", "Click “Save”"."""
    label = label_of(event.target)
    on = f"“{_clip(label, 40)}”" if label else "the element"
    field = f"“{_clip(label, 40)}”" if label else "a field"
    value = event.value
    text = _clip(value) if isinstance(value, str) else ""
    action = event.action
    if action is ActionKind.NAVIGATE:
        title = event.after.title if event.after and event.after.title else None
        where = _clip(title or event.url or "a page", 80)
        return f"Open {where}" + ("" if event.typed is not False else " (followed a link)")
    if action is ActionKind.CLICK:
        return f"Click {on}"
    if action is ActionKind.DOUBLE_CLICK:
        return f"Double-click {on}"
    if action is ActionKind.FILL:
        if event.is_secret:
            return f"Type a secret into {field} (not stored)"
        return f"Type “{text}” into {field}" if text else f"Clear {field}"
    if action is ActionKind.SELECT:
        return f"Choose “{text}” in {field}"
    if action is ActionKind.CHECK:
        return f"Check {on}"
    if action is ActionKind.UNCHECK:
        return f"Uncheck {on}"
    if action is ActionKind.PRESS:
        chord = "+".join([*(m.value for m in event.modifiers), event.key or "a key"])
        return f"Press {chord}" + (f" in {field}" if label else "")
    if action is ActionKind.SCROLL:
        down = event.scroll is None or event.scroll.dy >= 0
        return "Scroll down" if down else "Scroll up"
    if action is ActionKind.UPLOAD:
        return f"Upload {', '.join(event.files) or 'a file'} into {field}"
    if action is ActionKind.SUBMIT:
        return "Submit the form"
    if action is ActionKind.SWITCH_TAB:
        url = event.before.url if event.before and event.before.url else None
        return f"Switch to tab {event.tab or ''}".rstrip() + (f" ({_clip(url, 60)})" if url else "")
    if action is ActionKind.DESKTOP_CLICK:
        window = event.before.window_title if event.before else None
        return f"Click {on}" + (f" in {_clip(window, 40)}" if window else "")
    if action is ActionKind.DESKTOP_TYPE:
        return "Type a secret (not stored)" if event.is_secret else f"Type “{text}”"
    if action is ActionKind.HOTKEY:
        return "Press " + "+".join([*(m.value for m in event.modifiers), event.key or "a key"])
    if action is ActionKind.NOTE:
        return f"Note: {_clip(text, 120)}"
    return action.value.replace("_", " ").capitalize()


def screenshot_of(event: Event) -> str | None:
    """The screenshot that shows *event* (before it took effect, else after)."""
    for observation in (event.before, event.after):
        if observation is not None and observation.screenshot:
            return observation.screenshot
    return None
