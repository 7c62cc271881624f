"""What the recorder reads from a page besides its reports: the field that has the focus, the
value of a sensitive field (to mask it wherever it shows; never stored), an ARIA snapshot of
one moment.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import TYPE_CHECKING, Any, Final

from desktop_app.core.redaction import redact_snapshot

if TYPE_CHECKING:
    from playwright.async_api import Frame, Page

__all__ = ["SENSITIVE_CSS", "field_value", "focused_field", "snapshot_of_one_moment"]

#: Fields whose values are secret by their semantics (capture.js draws them as dots; it also
#: finds the ones only their label says are secret).
SENSITIVE_CSS: Final = ", ".join(
    [
        "input[type=password i]",
        "[data-procedura-sensitive=true]",
        "input[autocomplete^=cc- i]",
        "input[autocomplete=one-time-code i]",
        "input[autocomplete=current-password i]",
        "input[autocomplete=new-password i]",
        *(
            f"input[{attr}*={word} i]"
            for attr in ("name", "id")
            for word in ("pass", "secret", "token", "ssn", "iban", "cvv", "cvc", "otp")
        ),
        "input[name=pin i]",
        "input[id=pin i]",
    ]
)

#: The values of sensitive fields, in every frame, to redact from what is stored. They stay in
#: memory for the moment of the redaction and are never stored.
_SENSITIVE_VALUES_JS: Final = (
    f"() => Array.from(document.querySelectorAll({json.dumps(SENSITIVE_CSS)}))"
    '.map(el => el.value || "").filter(v => v.length > 0)'
)

#: The value of the field a CSS selector names (read to redact it, never stored).
_FIELD_VALUE_JS: Final = """(css) => {
  const el = document.querySelector(css);
  if (!el) return "";
  return typeof el.value === "string" ? el.value : (el.innerText || "");
}"""
#: How many actions began in this document (a snapshot taken meanwhile is of no one action).
_ACTION_COUNT_JS: Final = "() => window.__proceduraEffects ? window.__proceduraEffects.count() : -1"
#: The focused value field of a document: its description, and whether it is marked already.
#: ``{"frame": true}`` when the focus is inside a child frame.
_FOCUSED_FIELD_JS: Final = """() => {
  const el = document.activeElement;
  if (!el || el === document.body || el === document.documentElement) return null;
  const tag = el.tagName.toLowerCase();
  if (tag === "iframe" || tag === "frame") return { frame: true };
  const type = tag === "input" ? (el.type || "").toLowerCase() : "";
  const buttonish = ["button", "submit", "reset", "image", "checkbox", "radio", "file", "hidden"];
  const field = tag === "textarea" || tag === "select" || el.isContentEditable ||
    (tag === "input" && !buttonish.includes(type));
  if (!field) return null;
  const api = window.__procedura;
  return {
    frame: false,
    target: api ? api.describe(el) : null,
    marked: el.closest('[data-procedura-sensitive="true"]') !== null,
  };
}"""


async def focused_field(page: Page) -> dict[str, Any] | None:
    """What :data:`_FOCUSED_FIELD_JS` says of the frame holding the focus, if a field."""
    frames = [page.main_frame]
    while frames:
        frame = frames.pop(0)
        try:
            found = await asyncio.wait_for(frame.evaluate(_FOCUSED_FIELD_JS), timeout=2)
        except Exception:
            continue
        if not isinstance(found, dict):
            continue
        if found.get("frame"):
            frames = list(frame.child_frames)  # the focus is in one of them
            continue
        return found
    return None


async def field_value(frame: Frame, css: str) -> str:
    """What the field *css* of *frame* holds now ("" when it is not there)."""
    with contextlib.suppress(Exception):
        value = await asyncio.wait_for(frame.evaluate(_FIELD_VALUE_JS, css), timeout=2)
        if isinstance(value, str):
            return value
    return ""


async def snapshot_of_one_moment(page: Page, secrets: set[str]) -> str | None:
    """The page's ARIA snapshot with every secret masked (the values of its sensitive fields
    are added to *secrets*, in memory), or None when an action began while it was taken (it
    would mix what two actions led to)."""
    try:
        count = await asyncio.wait_for(page.evaluate(_ACTION_COUNT_JS), timeout=2)
        text = await asyncio.wait_for(page.aria_snapshot(mode="ai"), timeout=5)
        for frame in page.frames:
            with contextlib.suppress(Exception):
                secrets.update(await frame.evaluate(_SENSITIVE_VALUES_JS))
        if await asyncio.wait_for(page.evaluate(_ACTION_COUNT_JS), timeout=2) != count:
            return None
        return redact_snapshot(text, secrets)
    except Exception:
        return None
