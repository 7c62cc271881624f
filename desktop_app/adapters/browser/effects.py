"""What the page's effects script (``resources/recorder/effects.js``) reports, as core models.

Whatever of it is not valid is left out (never guessed); text that holds a secret typed in this
recording is masked before it is kept.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Collection
from datetime import UTC, datetime
from typing import Any, Final

from pydantic import ValidationError

from desktop_app.core.models.trajectory import (
    BrowserDialog,
    Effects,
    FieldChange,
    RequestSeen,
    TextChange,
)
from desktop_app.core.redaction import redact_effects

__all__ = ["effects_from_payload", "ms_of"]

_MAX_TEXT: Final = 500


def _text(value: Any) -> str:
    return str(value)[:_MAX_TEXT] if value is not None else ""


def ms_of(value: Any) -> float | None:
    """A number of milliseconds in a page's payload (a moment or a length), or None when it
    is not a finite number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _moment(ms: Any) -> datetime | None:
    if not isinstance(ms, int | float) or isinstance(ms, bool) or not ms > 0:
        return None
    try:
        return datetime.fromtimestamp(float(ms) / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


def _texts(raw: Any) -> tuple[TextChange, ...]:
    found = []
    for item in raw if isinstance(raw, list) else ():
        if not isinstance(item, dict):
            continue
        with contextlib.suppress(ValidationError, TypeError, ValueError):
            found.append(
                TextChange(
                    text=_text(item.get("text")),
                    role=item.get("role"),
                    gone=bool(item.get("gone")),
                )
            )
    return tuple(found)


def effects_from_payload(data: dict[str, Any], secrets: Collection[str]) -> Effects:
    """The :class:`Effects` an ``effects`` report tells, its texts masked for *secrets*."""
    values = []
    for item in data.get("values_changed") or ():
        if isinstance(item, dict):
            with contextlib.suppress(ValidationError, TypeError, ValueError):
                values.append(
                    FieldChange(
                        field=_text(item.get("field")),
                        value=_text(item.get("value")),
                    )
                )
    requests = []
    for item in data.get("requests") or ():
        if isinstance(item, dict):
            status = item.get("status")
            with contextlib.suppress(ValidationError, TypeError, ValueError):
                requests.append(
                    RequestSeen(
                        method=str(item.get("method") or "GET")[:16],
                        path=_text(item.get("path")),
                        status=status if isinstance(status, int) else None,
                    )
                )
    dialogs = []
    for item in data.get("browser_dialogs") or ():
        if isinstance(item, dict):
            with contextlib.suppress(ValidationError, TypeError, ValueError):
                dialogs.append(
                    BrowserDialog.model_validate(
                        {
                            "kind": item.get("kind"),
                            "message": _text(item.get("message"))[:500],
                            "accepted": item.get("accepted") is not False,
                        }
                    )
                )
    effects = Effects(
        dom_changed=bool(data.get("dom_changed")),
        texts_known=data.get("texts_known") is not False,
        texts_added=_texts(data.get("texts_added")),
        texts_removed=_texts(data.get("texts_removed")),
        items_added=_count(data.get("items_added")),
        items_removed=_count(data.get("items_removed")),
        dialogs_opened=_count(data.get("dialogs_opened")),
        dialogs_closed=_count(data.get("dialogs_closed")),
        browser_dialogs=tuple(dialogs),
        values_changed=tuple(values),
        requests=tuple(requests),
        left_page=bool(data.get("left_page")),
        settled=bool(data.get("settled")),
        first_change_at=_moment(data.get("first_change")),
    )
    return redact_effects(effects, secrets)
