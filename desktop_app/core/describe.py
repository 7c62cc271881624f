"""Expectations (a step's checks) in words: one line, the same in the editor, diffs and the CLI.

The line is a lower-case clause, so callers can use it alone (``page shows “Saved”``) or inside
a sentence (``wait until page shows “Saved”``).
"""

from __future__ import annotations

from typing import Final, Literal

from desktop_app.core.models.target import Target
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

__all__ = ["describe_expectation"]

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
