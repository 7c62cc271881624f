"""Steps some demonstrations of a task have and others lack, because the page showed them
something the others did not (a dialog, a cookie banner, a confirmation): an ``if`` that
does them only when that element is on the page.

A run of steps is such a branch when its first step acts on an element the recording shows
came with a dialog: it is inside one (a ``dialog`` element, ``role=dialog``, a container
called a modal, popup, overlay, banner, cookie or consent notice), acting on it closed a
dialog, or the action before it opened one. The ``if`` holds when that element is visible,
found by its own locators only (role and name, label, placeholder, test id, text: never a
CSS or XPath path, which another element may match on a page without the dialog).

An ``if`` rather than an optional step: an optional step is tried every run, and a try on a
page without the dialog may heal onto another element and act on it; the ``if`` acts only
when the element is there, and otherwise does nothing, at once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from desktop_app.core.models.target import LocatorStrategy, Target
from desktop_app.core.models.trajectory import Event
from desktop_app.core.models.workflow import ElementVisible, Step

__all__ = ["IF_WAIT_S", "came_with_a_dialog", "shown_condition"]

#: How long a branch's ``if`` waits for its element (a dialog that comes a moment late).
IF_WAIT_S: Final = 2.0
#: Words of a container's tag, id or classes that say it is an interstitial.
_DIALOG_WORDS: Final = re.compile(
    r"(?:^|[^a-z])(dialog|modal|popup|pop-up|overlay|banner|cookies?|consent|interstitial|gdpr)"
    r"(?:[^a-z]|$)",
    re.IGNORECASE,
)
#: Locators that name the element itself (a condition never goes by a path or a position).
_OWN: Final = frozenset(
    {
        LocatorStrategy.ROLE,
        LocatorStrategy.LABEL,
        LocatorStrategy.PLACEHOLDER,
        LocatorStrategy.TEST_ID,
        LocatorStrategy.TEXT,
    }
)


def came_with_a_dialog(events: Sequence[Event], index: int) -> bool:
    """Whether the element *events[index]* acted on came with a dialog: it is in one,
    acting on it closed one, or the action before it opened one."""
    event = events[index]
    if event.effects is not None and event.effects.dialogs_closed > 0:
        return True
    previous = next(
        (e for e in reversed(events[:index]) if e.action.value != "note" and not e.injected), None
    )
    if previous is not None and previous.effects is not None and previous.effects.dialogs_opened:
        return True
    fp = event.target.fingerprint if event.target is not None else None
    if fp is None:
        return False
    if fp.role in {"dialog", "alertdialog"}:
        return True
    return any(_DIALOG_WORDS.search(ancestor) for ancestor in fp.ancestors)


def shown_condition(step: Step) -> ElementVisible | None:
    """The condition "the element *step* acts on is visible", found by its own locators only;
    None when it has none (no ``if`` can be sure of it)."""
    target = step.target_or_none
    if target is None:
        return None
    own = tuple(
        loc
        for loc in target.locators
        if loc.strategy in _OWN and loc.within is None and not loc.positional
    )
    if not own:
        return None
    return ElementVisible(target=Target(locators=own, fingerprint=target.fingerprint))
