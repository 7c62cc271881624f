"""Keeping secrets out of what is stored: ARIA snapshots, and fields marked sensitive late."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Final

from desktop_app.core.models.run import MASK
from desktop_app.core.models.target import LocatorStrategy
from desktop_app.core.models.trajectory import (
    Effects,
    Event,
    Observation,
    SecretPlaceholder,
    TextChange,
)

__all__ = [
    "REDACTED",
    "FieldRedaction",
    "mask_secrets",
    "redact_effects",
    "redact_field",
    "redact_snapshot",
]

#: What replaces a secret inside stored text.
REDACTED: Final = "[secret]"

_TEXTBOX_VALUE = re.compile(
    r"^(\s*- (?:textbox|searchbox|combobox)\b[^\n]*?:\s)(.+)$", re.MULTILINE
)
_MIN_LOOSE_LENGTH: Final = 4


def mask_secrets(text: str, secrets: Iterable[str]) -> str:
    """*text* with every secret value in it replaced by :data:`MASK` (the longest first, so a
    secret inside another is not left half-shown)."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def redact_snapshot(snapshot: str, secrets: Iterable[str]) -> str:
    """*snapshot* (ARIA snapshot text) with the value of every field holding a secret masked.

    A field's value is the text after its role line's colon; any other occurrence of a secret of
    four characters or more is masked as well.
    """
    hidden = {s for s in secrets if s}
    if not hidden:
        return snapshot

    def mask(match: re.Match[str]) -> str:
        value = match.group(2).strip().strip('"')
        return match.group(1) + REDACTED if value in hidden else match.group(0)

    redacted = _TEXTBOX_VALUE.sub(mask, snapshot)
    for secret in sorted(hidden, key=len, reverse=True):
        if len(secret) >= _MIN_LOOSE_LENGTH:
            redacted = redacted.replace(secret, REDACTED)
    return redacted


def redact_effects(effects: Effects, secrets: Iterable[str]) -> Effects:
    """*effects* with every secret masked in the texts and values it reports."""
    hidden = [s for s in secrets if s]
    if not hidden:
        return effects

    def texts(changes: tuple[TextChange, ...]) -> tuple[TextChange, ...]:
        return tuple(
            c.model_copy(update={"text": redact_snapshot(c.text, hidden)}) for c in changes
        )

    return effects.model_copy(
        update={
            "texts_added": texts(effects.texts_added),
            "texts_removed": texts(effects.texts_removed),
            "browser_dialogs": tuple(
                d.model_copy(update={"message": redact_snapshot(d.message, hidden)})
                for d in effects.browser_dialogs
            ),
            "values_changed": tuple(
                v.model_copy(
                    update={
                        "value": REDACTED if v.value in hidden else redact_snapshot(v.value, hidden)
                    }
                )
                for v in effects.values_changed
            ),
        }
    )


def _css(event: Event) -> str | None:
    if event.target is None:
        return None
    return next(
        (loc.value for loc in event.target.locators if loc.strategy is LocatorStrategy.CSS), None
    )


class FieldRedaction:
    """What marking a field sensitive after typing into it changes in a recording.

    Attributes:
        events: index → the event as it must now be stored.
        dropped_media: screenshots that may show the value (taken after it was first typed).
    """

    def __init__(self) -> None:
        self.events: dict[int, Event] = {}
        self.dropped_media: set[str] = set()


def redact_field(events: Sequence[Event], css: str) -> FieldRedaction:
    """Scrub the values typed into the field *css* from *events*, as if it had been secret.

    Its fills and selects get a secret placeholder; from the first of them on, screenshots are
    dropped (they may show the value), and ARIA snapshots and the texts of reported effects have
    the values masked.
    """
    result = FieldRedaction()
    values = {e.value for e in events if _css(e) == css and isinstance(e.value, str) and e.value}
    first = next(
        (i for i, e in enumerate(events) if _css(e) == css and isinstance(e.value, str)), None
    )
    if first is None:
        return result
    for index in range(first, len(events)):
        event = events[index]
        update: dict[str, object] = {}
        if _css(event) == css and isinstance(event.value, str):
            label = (
                event.target.fingerprint.name if event.target and event.target.fingerprint else None
            )
            update["value"] = SecretPlaceholder(label=label)
        for side in ("before", "after"):
            observation: Observation | None = getattr(event, side)
            if observation is None:
                continue
            changes: dict[str, object] = {}
            if observation.screenshot is not None:
                result.dropped_media.add(observation.screenshot)
                changes["screenshot"] = None
            if observation.aria_snapshot:
                scrubbed = redact_snapshot(observation.aria_snapshot, values)
                if scrubbed != observation.aria_snapshot:
                    changes["aria_snapshot"] = scrubbed
            if changes:
                update[side] = observation.model_copy(update=changes)
        if event.effects is not None:
            scrubbed_effects = redact_effects(event.effects, values)
            if scrubbed_effects != event.effects:
                update["effects"] = scrubbed_effects
        if update:
            result.events[index] = event.model_copy(update=update)
    return result
