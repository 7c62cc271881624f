"""Elements inside repeated items (table rows, list items, cards): found through the one item
that shows a given text, never by their position among look-alikes.

The recorder describes the item an element was in (:class:`ItemContext`: a selector matching
the item and its siblings, the item's own texts, and how to find the element inside it). From
that, :func:`with_item_locator` adds a locator ``within`` the item showing one of those texts:
"the checkbox in the row of Maria Garcia". Induction picks the text a parameter gives
("{full_name}") and ranks that locator first, since the person meant that row.
"""

from __future__ import annotations

import re
from typing import Final

from desktop_app.core.models.target import (
    Fingerprint,
    ItemScope,
    Locator,
    LocatorStrategy,
    Target,
)

__all__ = [
    "inside_item",
    "item_locator",
    "item_locator_rank",
    "pins_record",
    "with_item_locator",
]

#: Locators that name the element itself unambiguously: they stay ahead of one found through
#: its item unless the item is what the step is about.
_OWN_FIRST: Final = frozenset(
    {
        LocatorStrategy.ROLE,
        LocatorStrategy.LABEL,
        LocatorStrategy.PLACEHOLDER,
        LocatorStrategy.TEST_ID,
    }
)


#: A CSS or XPath condition on an attribute that holds a record's key: an id, a value, a link
#: or a data attribute with a number in it (``[value="11"]``, ``#contact-11``,
#: ``[@href="/contacts/11/"]``).
_RECORD_KEY: Final = re.compile(
    r"(?:\[@?(?:id|value|href|data-[\w-]*id|data-key|data-pk)\s*[~|^$*]?=\s*['\"][^'\"]*\d"
    r"|#[\w-]*\d)",
    re.IGNORECASE,
)


def pins_record(locator: Locator) -> bool:
    """Whether *locator* finds its element by a record's key or by its position: right for
    the record it was made on, and for another record or another row, wrong. A repair never
    keeps such a locator."""
    if locator.positional:
        return True
    if locator.strategy in (LocatorStrategy.CSS, LocatorStrategy.XPATH):
        return _RECORD_KEY.search(locator.value) is not None
    return False


def item_locator(fp: Fingerprint | None, text: str | None = None) -> Locator | None:
    """The locator finding *fp*'s element inside the item showing *text* (by default the
    item's first text), or None when the element was not in a repeated item."""
    item = fp.item if fp is not None else None
    if item is None or item.inner is None:
        return None
    chosen = text if text is not None else (item.texts[0] if item.texts else None)
    if not chosen:
        return None
    return inside_item(item.inner, item.css, chosen)


def inside_item(inner: Locator, css: str, text: str) -> Locator:
    """*inner* (a locator relative to an item) looked for inside the item *css* showing *text*:
    an inner locator that looks inside an item of its own (the field wrapper of a line item)
    gets that item as its outer one."""
    scope = ItemScope(css=css, text=text)
    if inner.within is not None:
        scope = inner.within.model_copy(update={"outer": scope})
    return inner.model_copy(update={"within": scope})


def item_locator_rank(target: Target) -> int | None:
    """Where the target's item locator is among its locators, if it has one."""
    return next((i for i, loc in enumerate(target.locators) if loc.within is not None), None)


def with_item_locator(target: Target, text: str | None = None, *, first: bool = False) -> Target:
    """*target* with its item locator (for *text*) in place of any earlier one.

    It ranks first with *first*; else after the locators that name the element itself
    (role and name, label, placeholder, test id) and before text, CSS and XPath ones.
    """
    locator = item_locator(target.fingerprint, text)
    if locator is None:
        return target
    others = [loc for loc in target.locators if loc.within is None]
    if first:
        at = 0
    else:
        at = 0
        while at < len(others) and others[at].strategy in _OWN_FIRST and others[at].nth is None:
            at += 1
    others.insert(at, locator)
    return target.model_copy(update={"locators": tuple(others)})
