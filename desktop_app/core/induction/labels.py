"""Labels the stated intent names: "Click the 'Submit' button", "Open the Reports tab", "Set the
status to Customer", "Delete the to-do Buy milk".

What the demonstration clicked or chose (a button, a link, a tab, an option of a custom list, a
radio button, or the item a control sits in: ``tr with "Maria Garcia"``) becomes a parameter
when the intent names its whole label, as whole words:

* quoted ('Submit', "Submit", ‘Submit’, “Submit”), any case; or
* next to a word that says what it is ("the Reports tab", "the button Save"), any case; or
* written as the label is written (same case), and not the sentence's first word (its verb:
  "Submit the report" does not name the Submit button).

A label every page shows (navigation: in a ``nav`` or ``header``, or on every page from the
first that showed it) is named only the first two ways: "Show the shipped orders" does not
name the Orders link, "Open the Orders page" does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from desktop_app.core.induction.intent import PUNCTUATION
from desktop_app.core.induction.naming import snake_case
from desktop_app.core.models.target import LocatorStrategy, Target
from desktop_app.core.models.trajectory import ActionKind, Event

__all__ = ["CONTROL_WORDS", "Mention", "choices_for", "is_navigation", "mention", "name_for"]

#: Words that say what a control is, next to its label.
CONTROL_WORDS: Final = frozenset(
    {
        "button",
        "link",
        "tab",
        "menu",
        "option",
        "item",
        "entry",
        "page",
        "view",
        "section",
        "filter",
        "card",
        "row",
    }
)
_OPENING: Final = "'\"‘“«"
_CLOSING: Final = "'\"’”»"
#: Words that never name a parameter: articles, pronouns, prepositions, conjunctions.
_FILLERS: Final = frozenset(
    {
        "a",
        "an",
        "the",
        "this",
        "that",
        "these",
        "those",
        "my",
        "our",
        "your",
        "its",
        "their",
        "it",
        "them",
        "to",
        "as",
        "into",
        "in",
        "on",
        "for",
        "of",
        "from",
        "by",
        "with",
        "at",
        "and",
        "or",
        "then",
        "called",
        "named",
    }
)
_BEFORE_LINK: Final = re.compile(r"([^\W\d_][\w-]*)\s+(?:to|as|into)\s*$")
#: A word (letters, maybe hyphenated), not a value such as a date or a number.
_WORD: Final = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
_NAV_ANCESTOR: Final = re.compile(r"^(?:nav|header)(?=$|[.#\[])")
#: Roles whose siblings are the other choices, in an ARIA snapshot.
_CHOICE_ROLES: Final = ("option", "tab", "radio")


@dataclass(frozen=True)
class Mention:
    """Where the intent names a label, and how."""

    start: int
    end: int
    quoted: bool
    control: str | None  # the word next to it that says what it is
    same_case: bool
    first: bool  # the sentence's first word

    def names(self, *, navigation: bool) -> bool:
        """Whether it names the label (a navigation label needs quotes or a control word)."""
        if self.quoted or self.control is not None:
            return True
        return not navigation and self.same_case and not self.first


def _word(text: str) -> str:
    return text.strip(PUNCTUATION + " ").lower()


def _neighbours(intent: str, start: int, end: int) -> tuple[str, str]:
    """The words just before and just after ``intent[start:end]``."""
    before = intent[:start].split()
    after = intent[end:].split()
    return (_word(before[-1]) if before else "", _word(after[0]) if after else "")


def _mentions(intent: str, label: str) -> list[Mention]:
    left = r"(?<!\w)" if re.match(r"\w", label[0]) else ""
    right = r"(?!\w)" if re.match(r"\w", label[-1]) else ""
    found = []
    for match in re.finditer(left + re.escape(label) + right, intent, re.IGNORECASE):
        start, end = match.span()
        before, after = _neighbours(intent, start, end)
        opening, closing = intent[start - 1 : start], intent[end : end + 1]
        quoted = bool(opening and closing) and opening in _OPENING and closing in _CLOSING
        control = after if after in CONTROL_WORDS else before if before in CONTROL_WORDS else None
        found.append(
            Mention(
                start=start,
                end=end,
                quoted=quoted,
                control=control,
                same_case=match.group(0) == label,
                first=not intent[:start].strip(PUNCTUATION + " "),
            )
        )
    return found


def mention(intent: str, label: str, *, navigation: bool) -> Mention | None:
    """The first place *intent* names *label* (see the module's description), if any."""
    return next((m for m in _mentions(intent, label) if m.names(navigation=navigation)), None)


def _role(target: Target) -> str | None:
    for loc in target.locators:
        if loc.strategy is LocatorStrategy.ROLE:
            return loc.value
    return target.fingerprint.role if target.fingerprint is not None else None


def name_for(intent: str, found: Mention, target: Target, *, item: bool) -> str:
    """A parameter name for the label *found* names: the word saying what it is ("tab"), else
    the word before it ("the to-do Buy milk" → ``to_do``), else the word it is set as ("the
    status to Customer" → ``status``), else ``item`` for an item, the group's name for a radio
    button, the element's role, or ``label``."""
    if found.control is not None:
        return found.control
    head = intent[: found.start].rstrip(_OPENING + " ")
    words = head.split()
    before = _word(words[-1]) if len(words) >= 2 else ""
    if _WORD.fullmatch(before) and before not in _FILLERS:
        return snake_case(before, fallback="label")
    linked = _BEFORE_LINK.search(head)
    if linked is not None and linked.group(1).lower() not in _FILLERS:
        return snake_case(linked.group(1), fallback="label")
    if item:
        return "item"
    role = _role(target)
    group = target.fingerprint.attributes.get("name") if target.fingerprint else None
    if role == "radio" and group:
        return snake_case(group, fallback="radio")  # the group's name: "status"
    return snake_case(role, fallback="label") if role else "label"


def is_navigation(events: Sequence[Event], target: Target, label: str) -> bool:
    """Whether *label* is one every page shows: its element is in a ``nav`` or ``header``, or
    every page the recording loaded showed it from the first that did (two pages at least)."""
    fp = target.fingerprint
    if fp is not None and any(_NAV_ANCESTOR.match(a) for a in fp.ancestors):
        return True
    pages = [
        e.effects
        for e in events
        if e.effects is not None
        and e.effects.texts_known
        and (e.effects.left_page or e.action is ActionKind.NAVIGATE)
    ]
    showing = [any(t.text == label for t in page.texts_added) for page in pages]
    if True not in showing:
        return False
    since = showing[showing.index(True) :]
    return len(since) >= 2 and all(since)


def _siblings(snapshot: str, role: str, label: str) -> tuple[str, ...]:
    """The labels of the *role* elements beside the one called *label* in an ARIA snapshot."""
    lines = snapshot.splitlines()
    own = re.compile(rf'^(\s*)- {role} "{re.escape(label)}"')
    sibling = re.compile(rf'^\s*- {role} "(.*?)"')
    for i, line in enumerate(lines):
        match = own.match(line)
        if match is None:
            continue
        indent = len(match.group(1))
        start = i
        while start > 0 and len(lines[start - 1]) - len(lines[start - 1].lstrip()) >= indent:
            start -= 1
        labels = []
        for other in lines[start:]:
            depth = len(other) - len(other.lstrip())
            if depth < indent:
                break
            found = sibling.match(other)
            if depth == indent and found is not None:
                labels.append(found.group(1))
        return tuple(labels)
    return ()


def choices_for(event: Event, target: Target, label: str) -> tuple[str, ...]:
    """The choices the clicked *label* was one of (the options of its list, the tabs of its
    tab list), as recorded; empty when not known."""
    if label in event.options:
        return event.options
    role = _role(target)
    if role not in _CHOICE_ROLES:
        return ()
    for observation in (event.before, event.after):
        snapshot = observation.aria_snapshot if observation is not None else None
        if snapshot:
            labels = _siblings(snapshot, role, label)
            if len(labels) >= 2:
                return labels
    return ()
