"""What the demo site remembers: the records, who is signed in, and the log of user actions."""

from __future__ import annotations

import bisect
import json
import math
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from desktop_app.demo_site.data import seed_contacts, seed_orders, seed_reports

__all__ = ["Session", "State", "parse_action"]

_MAX_ACTIONS: Final = 10_000  # the action log keeps the most recent ones


# ── state ────────────────────────────────────────────────────────────────────────────────────────


@dataclass(slots=True)
class Session:
    username: str
    flashes: list[tuple[str, str]] = field(default_factory=list)
    wizard: dict[str, Any] | None = None
    announcement_pending: bool = True


class State:
    """Everything the app remembers; callers hold ``lock`` while they read or change it."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.contacts: dict[int, dict[str, Any]] = {}
        self.orders: list[dict[str, Any]] = []
        self.reports: dict[int, dict[str, Any]] = {}
        self.sessions: dict[str, Session] = {}
        self.actions: list[dict[str, Any]] = []
        self.next_contact_id = 1
        self.next_report_number = 1
        self.reset()

    def reset(self) -> None:
        with self.lock:
            self.contacts = seed_contacts()
            self.orders = seed_orders()
            self.reports = seed_reports()
            self.sessions = {}
            self.actions = []
            self.next_contact_id = max(self.contacts) + 1
            self.next_report_number = max(self.reports) + 1

    def add_action(self, record: dict[str, Any]) -> None:
        """Log one user action in the order it happened (the page's clock), not of arrival."""
        with self.lock:
            bisect.insort(self.actions, record, key=_action_order)
            del self.actions[:-_MAX_ACTIONS]


# ── the action log ───────────────────────────────────────────────────────────────────────────────


def _action_order(record: Mapping[str, Any]) -> tuple[float, int]:
    """When an action happened: the page's time in ms, then its number on that page."""
    return record["t"], record["seq"]


def _is_number(value: object) -> bool:
    """A finite JSON number (not a boolean)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


# Every field of an action record, and the check its value must pass.
_ACTION_FIELDS: Final[dict[str, Callable[[Any], bool]]] = {
    "kind": lambda v: isinstance(v, str) and v in {"click", "change", "submit"},
    "element": lambda v: isinstance(v, str) and 0 < len(v) <= 500,
    "decoy": lambda v: isinstance(v, bool),
    "path": lambda v: isinstance(v, str) and v.startswith("/"),
    "value": lambda v: v is None or isinstance(v, bool | str),
    "seq": lambda v: isinstance(v, int) and not isinstance(v, bool) and v > 0,
    "page": _is_number,
    "t": _is_number,
}


def parse_action(body: bytes) -> dict[str, Any] | None:
    """The record a page sent to ``POST /__actions`` (see ``app.js``), or None if malformed."""
    try:
        data = json.loads(body)
    except ValueError:  # not JSON, or not UTF-8
        return None
    if not isinstance(data, dict):
        return None
    if not all(key in data and valid(data[key]) for key, valid in _ACTION_FIELDS.items()):
        return None
    return {key: data[key] for key in _ACTION_FIELDS}
