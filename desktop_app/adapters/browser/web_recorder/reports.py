"""What the page scripts report an action as: its kind, its time, and the event made of it."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any, Final

from pydantic import ValidationError

from desktop_app.adapters.browser.targets import target_from_payload
from desktop_app.adapters.browser.web_recorder.tabs import Tab
from desktop_app.core.models.common import utcnow
from desktop_app.core.models.trajectory import (
    ActionKind,
    Event,
    Modifier,
    Observation,
    ScrollDelta,
    SecretPlaceholder,
)

__all__ = ["ACTIONS", "event_from_report", "when"]

log = logging.getLogger(__name__)

ACTIONS: Final[dict[str, ActionKind]] = {
    "click": ActionKind.CLICK,
    "double_click": ActionKind.DOUBLE_CLICK,
    "fill": ActionKind.FILL,
    "select": ActionKind.SELECT,
    "check": ActionKind.CHECK,
    "uncheck": ActionKind.UNCHECK,
    "press": ActionKind.PRESS,
    "submit": ActionKind.SUBMIT,
    "upload": ActionKind.UPLOAD,
    "scroll": ActionKind.SCROLL,
}
_MODIFIERS: Final = {m.value: m for m in Modifier}


def when(ms: Any) -> datetime:
    try:
        return datetime.fromtimestamp(float(ms) / 1000, UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return utcnow()


def event_from_report(tab: Tab, data: dict[str, Any], action: ActionKind) -> Event | None:
    target = target_from_payload(data.get("target"))
    if action in {ActionKind.CLICK, ActionKind.DOUBLE_CLICK, ActionKind.FILL} and target is None:
        return None
    sensitive = bool(isinstance(data.get("target"), dict) and data["target"].get("sensitive"))
    value: str | SecretPlaceholder | None = None
    if action is ActionKind.FILL or action is ActionKind.SELECT:
        if sensitive or (target is not None and target.is_sensitive):
            label = target.fingerprint.name if target and target.fingerprint else None
            value = SecretPlaceholder(label=label)
        else:
            raw = data.get("value")
            value = str(raw) if raw is not None else ""
    modifiers = tuple(_MODIFIERS[m] for m in data.get("modifiers") or () if m in _MODIFIERS)
    scroll = None
    if action is ActionKind.SCROLL:
        scroll = ScrollDelta(dx=float(data.get("dx") or 0), dy=float(data.get("dy") or 0))
    options = data.get("options") if action is ActionKind.SELECT else None
    at = when(data.get("t_start") or data.get("t"))
    ended = when(data.get("t")) if data.get("t_start") else None
    try:
        return Event(
            action=action,
            at=at,
            ended_at=ended if ended is not None and ended >= at else None,
            target=target,
            value=value,
            key=data.get("key") if action is ActionKind.PRESS else None,
            modifiers=modifiers,
            scroll=scroll,
            files=tuple(str(f) for f in data.get("files") or ()),
            options=tuple(str(o) for o in options or () if isinstance(o, str)),
            tab=tab.id,
            frame=data.get("frame"),
            before=Observation(at=at, url=data.get("url"), title=data.get("title")),
        )
    except ValidationError as exc:
        log.warning("recorder dropped a %s report: %d invalid fields", action, exc.error_count())
        return None
