"""Turning a recorded :class:`~desktop_app.core.models.Locator` into a Playwright locator."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from desktop_app.core.models.target import Locator, LocatorStrategy

if TYPE_CHECKING:
    from playwright.async_api import Frame, Page
    from playwright.async_api import Locator as PlaywrightLocator

__all__ = ["TEST_ID_ATTRIBUTES", "to_playwright"]

#: The attributes a ``test_id`` locator's value may be in, as teams name them.
TEST_ID_ATTRIBUTES = ("data-testid", "data-test", "data-qa")


def to_playwright(scope: Page | Frame, locator: Locator) -> PlaywrightLocator:
    """The Playwright locator for *locator* in *scope* (a page or a frame).

    A locator ``within`` an item looks inside the items (``css``) that hold an element whose
    whole text is the item's ``text``: with two such items it matches in both, so a probe sees
    the ambiguity instead of a silent pick. An item with an outer item is looked for inside
    the outer one (found the same way) only.

    Raises:
        ValueError: an ``image_anchor`` locator, which only the desktop backend resolves.
    """
    inside: Page | Frame | PlaywrightLocator = scope
    for item in locator.within.scopes if locator.within is not None else ():
        inside = inside.locator(item.css).filter(has=scope.get_by_text(item.text, exact=True))
    found = _locate(inside, locator)
    return found if locator.nth is None else found.nth(locator.nth)


def _locate(scope: Page | Frame | PlaywrightLocator, locator: Locator) -> PlaywrightLocator:
    value = locator.value
    match locator.strategy:
        case LocatorStrategy.ROLE:
            return scope.get_by_role(value, name=locator.name, exact=locator.exact)  # type: ignore[arg-type]
        case LocatorStrategy.LABEL:
            return scope.get_by_label(value, exact=locator.exact)
        case LocatorStrategy.PLACEHOLDER:
            return scope.get_by_placeholder(value, exact=locator.exact)
        case LocatorStrategy.TEXT:
            return scope.get_by_text(value, exact=locator.exact)
        case LocatorStrategy.TEST_ID:
            quoted = json.dumps(value)
            return scope.locator(", ".join(f"[{a}={quoted}]" for a in TEST_ID_ATTRIBUTES))
        case LocatorStrategy.CSS:
            return scope.locator(value)
        case LocatorStrategy.XPATH:
            return scope.locator(f"xpath={value}")
        case LocatorStrategy.IMAGE_ANCHOR | LocatorStrategy.ACCESSIBLE:
            raise ValueError(
                f"an {locator.strategy.value} locator is resolved on the desktop, not in a page"
            )
