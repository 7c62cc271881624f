"""Expectations (a step's checks, a workflow's success check), locators and what a recorded
action did, in words: one line each, the same in the editor, diffs and the CLI.

The line is a lower-case clause, so callers can use it alone (``page shows “Saved”``) or inside
a sentence (``wait until page shows “Saved”``).
"""

from __future__ import annotations

import re
from typing import Final, Literal

from desktop_app.core.models.target import Locator, LocatorStrategy, Target
from desktop_app.core.models.trajectory import Effects
from desktop_app.core.models.workflow import (
    COMPARISONS,
    Condition,
    CsvRows,
    ElementHidden,
    ElementPresent,
    ElementVisible,
    Expectation,
    ImageVisible,
    ItemSource,
    ListItems,
    TextPresent,
    TitleMatches,
    UrlMatches,
    ValueCompare,
    WindowTitleMatches,
)

__all__ = [
    "describe_condition",
    "describe_effects",
    "describe_expectation",
    "describe_locator",
    "describe_source",
    "item_noun",
]

#: The most characters of quoted text a description carries.
_QUOTE_LIMIT: Final = 120


def describe_expectation(expectation: Expectation | Condition) -> str:
    """*expectation* (or a block's condition) in one line, e.g. ``URL matches
    https://example.test/*``, ``{status} is "Unpaid"``."""
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
        case ElementPresent(target=target):
            return f"{_first_locator(target)} is on the page"
        case ValueCompare(value=value, op=op, to=to):
            words = COMPARISONS[op]
            return f"{value} {words}" + ("" if op in ("empty", "not_empty") else f" {_quote(to)}")
        case WindowTitleMatches(pattern=pattern, match=how):
            return f"window title {_matches(how, pattern)}"
        case ImageVisible(anchor=anchor):
            return f"recorded image {anchor[:8]}… is on screen"


describe_condition = describe_expectation


def describe_source(source: ItemSource) -> str:
    """What a loop goes over, in a few words: ``the lines of {names}``, ``the rows of
    {orders} (column "Order")``, ``the rows on the page holding "Unpaid"``."""
    if isinstance(source, ListItems):
        return f"the lines of {source.value}"
    if isinstance(source, CsvRows):
        return f"the rows of {source.path} (column {_quote(source.column)})"
    noun = item_noun(source.css)
    holding = f" holding {_quote(source.contains)}" if source.contains else ""
    return f"the {noun}s on the page{holding}"


#: What a person calls a repeated item, by the tag or role its selector starts with.
_ITEM_NOUNS: Final = {
    "tr": "row",
    "row": "row",
    "li": "list item",
    "listitem": "list item",
    "option": "option",
    "article": "card",
    "fieldset": "group",
    "radiogroup": "group",
    "group": "group",
}
_ITEM_HEAD: Final = re.compile(r"""^\s*(?:\[role=["']?([\w-]+)["']?\]|([a-zA-Z][\w-]*))""")


def item_noun(css: str) -> str:
    """What a person calls the repeated item *css* matches: ``tr`` is a "row", ``li`` a "list
    item", ``[role="row"]`` a "row", ``div.card`` a "card"; anything else an "item"."""
    found = _ITEM_HEAD.match(css)
    word = (found.group(1) or found.group(2)).lower() if found else ""
    if word not in _ITEM_NOUNS and "card" in css.lower():
        return "card"
    return _ITEM_NOUNS.get(word, "item")


def describe_locator(locator: Locator) -> str:
    """*locator* in one line: :meth:`Locator.describe` (``role=button[name="Save"]``), except
    that one looking inside a repeated item says so in words, e.g.
    ``in the row showing “{full_name}”: checkbox``."""
    scope = locator.within
    if scope is None:
        return locator.describe()
    if locator.strategy is LocatorStrategy.ROLE:
        inner = locator.value + (f" {_quote(locator.name)}" if locator.name is not None else "")
        if locator.nth is not None:
            inner += f" (match {locator.nth + 1})"
    else:
        inner = locator.model_copy(update={"within": None}).describe()
    where = f"in the {item_noun(scope.css)} showing {_quote(scope.text)}"
    if scope.outer is not None:
        where += f" in the {item_noun(scope.outer.css)} showing {_quote(scope.outer.text)}"
    return f"{where}: {inner}"


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
    return describe_locator(target.locators[0]) if target.locators else "(no locator)"
