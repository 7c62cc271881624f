"""Names and titles people read: parameter names from field labels, step titles, labels."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Final

from desktop_app.core.models.target import LocatorStrategy, Target

__all__ = ["label_of", "snake_case", "unique_name"]

_RESERVED: Final = frozenset({"value", "field", "input"})


def snake_case(text: str, *, fallback: str = "value") -> str:
    """*text* as a snake_case identifier: "Full name *" → ``full_name``, "E-mail" → ``e_mail``."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    words = re.findall(r"[A-Za-z0-9]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", ascii_text))
    name = "_".join(w.lower() for w in words)[:40].strip("_")
    if not name:
        return fallback
    return f"p_{name}" if name[0].isdigit() else name


def unique_name(base: str, taken: Iterable[str]) -> str:
    """*base*, or *base* with the smallest suffix ``_2``, ``_3``… not in *taken*."""
    used = set(taken)
    if base not in used:
        return base
    n = 2
    while f"{base}_{n}" in used:
        n += 1
    return f"{base}_{n}"


def label_of(target: Target | None) -> str | None:
    """What a person calls the element: its accessible name, label, placeholder or text."""
    if target is None:
        return None
    fp = target.fingerprint
    if fp is not None and fp.name:
        return fp.name.rstrip(" *").strip()
    for strategy in (
        LocatorStrategy.LABEL,
        LocatorStrategy.PLACEHOLDER,
        LocatorStrategy.TEXT,
    ):
        for loc in target.locators:
            if loc.strategy is strategy:
                return loc.value.rstrip(" *").strip()
    for loc in target.locators:
        if loc.strategy is LocatorStrategy.ROLE and loc.name:
            return loc.name
    if fp is not None:
        for attr in ("aria-label", "name", "id", "placeholder", "title"):
            value = fp.attributes.get(attr)
            if value and attr in ("name", "id") and re.search(r"\d{3,}", value):
                continue  # a generated id ("ember491") names nothing a person knows
            if value and attr in ("name", "id"):
                # A form name or id is a programmer's word: "_selected_action" → "selected action".
                value = " ".join(re.split(r"[_\-\s]+", value)).strip()
            if value:
                return value
    return None
