"""Expectations (a step's checks) and what a recorded action did, in words: one line each, the
same in the editor, diffs and the CLI.

The line is a lower-case clause, so callers can use it alone (``page shows “Saved”``) or inside
a sentence (``wait until page shows “Saved”``).
"""

from __future__ import annotations

from typing import Final, Literal

from desktop_app.core.models.target import Target
from desktop_app.core.models.trajectory import Effects
from desktop_app.core.models.workflow import (
    ElementHidden,
    ElementVisible,
    Expectation,
    ImageVisible,
    TextPresent,
    TitleMatches,
    UrlMatches,
    WindowTitleMatches,
)

__all__ = ["describe_effects", "describe_expectation"]

#: The most characters of quoted text a description carries.
_QUOTE_LIMIT: Final = 120


def describe_expectation(expectation: Expectation) -> str:
    """*expectation* in one line, e.g. ``URL matches https://example.test/*``."""
    match expectation:
        case UrlMatches(pattern=pattern, match=how):
            return f"URL {_matches(how, pattern)}"
        case TitleMatches(text=text):
            return f"page title contains {_quote(text)}"
        case TextPresent(text=text):
            return f"page shows {_quote(text)}"
        case ElementVisible(target=target):
            return f"{_first_locator(target)} is visible"
        case ElementHidden(target=target):
            return f"{_first_locator(target)} is hidden"
        case WindowTitleMatches(pattern=pattern, match=how):
            return f"window title {_matches(how, pattern)}"
        case ImageVisible(anchor=anchor):
            return f"recorded image {anchor[:8]}… is on screen"


def describe_effects(effects: Effects) -> str:
    """What the page did after an action, e.g. ``showed “Saved”, 1 item added, POST /notes``;
    ``no visible change`` when it only restyled or refocused something."""
    parts = []
    added = [t for t in effects.texts_added if not t.gone]
    if added:
        first = sorted(added, key=lambda t: t.role not in {"status", "alert"})[0]
        more = f" and {len(added) - 1} more" if len(added) > 1 else ""
        parts.append(f"showed {_quote(first.text)}{more}")
    if effects.texts_removed:
        parts.append(f"{_count(len(effects.texts_removed), 'text')} gone")
    if effects.items_added:
        parts.append(f"{_count(effects.items_added, 'item')} added")
    if effects.items_removed:
        parts.append(f"{_count(effects.items_removed, 'item')} removed")
    if effects.dialogs_opened:
        parts.append("opened a dialog")
    if effects.dialogs_closed:
        parts.append("closed a dialog")
    if effects.values_changed:
        parts.append(f"changed {_quote(effects.values_changed[0].field or 'a field')}")
    parts += [f"{r.method} {r.path}" for r in effects.requests[:3]]
    if effects.left_page:
        parts.append("left the page")
    if not parts:
        return "changed the page's look only" if effects.dom_changed else "no visible change"
    return ", ".join(parts)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _matches(how: Literal["glob", "regex", "exact"], pattern: str) -> str:
    verb = {"glob": "matches", "regex": "matches regex", "exact": "is"}[how]
    return f"{verb} {pattern or '(empty)'}"


def _quote(text: str) -> str:
    text = text.replace("\n", "⏎")
    if len(text) > _QUOTE_LIMIT:
        text = text[: _QUOTE_LIMIT - 1] + "…"
    return f"“{text}”"


def _first_locator(target: Target) -> str:
    return target.locators[0].describe() if target.locators else "(no locator)"
