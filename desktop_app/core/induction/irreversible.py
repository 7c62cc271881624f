"""Which recorded actions commit to something that cannot be undone, from what the recording shows.

A step is irreversible when acting commits: a replay then never does it twice, and asks before
it acts on an element found by anything but its first recorded locator. The evidence, each from
the recording alone:

* **words**: what the control says (its name, text, value, title) or the option chosen in a
  select ("Delete selected contacts"): :data:`IRREVERSIBLE`. A field's own words (a click into
  "Confirm password", Enter in "Send to") are not the action's.
* **requests** the action caused: a ``DELETE`` always; a ``POST``, ``PUT`` or ``PATCH`` whose
  endpoint (its path's last word) is such a verb (``/contact/delete/``, ``/orders/7/cancel``).
* **the app asking first**: a ``confirm()`` the person answered OK (the app itself holds what
  follows to be committing, whatever its words); a page or dialog the action led to that asks
  about committing ("Are you sure you want to delete…?", "Delete 1 contact?"). The action that
  led there chose what to commit (which record, which action): it is irreversible, and so is the
  action on that page that answers yes ("Yes, I'm sure": its words say nothing, the page did).
* **the page it was done on**: a change sent to the server (``POST``, ``PUT``, ``PATCH``,
  ``DELETE``) from a page whose heading, title or address says so ("Delete multiple objects",
  ``/contact/5/delete/``), or after a committing option was chosen there (the action select's
  "Delete selected contacts", then "Go").

Not evidence: typing, ticking a box, opening a menu, following a link, a search (``GET``), and a
plain create or update (``POST`` to ``/contacts/add/``): those can be undone by another edit,
and an irreversible flag on every save would stop every healed form for a confirmation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit

from desktop_app.core.induction.naming import label_of
from desktop_app.core.models.target import LocatorStrategy, Target
from desktop_app.core.models.trajectory import ActionKind, Effects, Event

__all__ = ["IRREVERSIBLE", "Evidence", "irreversible_events"]

#: Words on a control (or an option chosen) that mean its effect cannot be taken back.
IRREVERSIBLE: Final = re.compile(
    r"\b(submit|send|pay|purchase|buy|place order|checkout|delete|remove|erase|destroy|purge|"
    r"wipe|confirm|transfer|approve|publish|book|order now|sign and send|wire|unsubscribe|"
    r"(?:cancel|close) (?:my |your |the |this )?(?:subscription|order|booking|reservation|"
    r"membership|account|plan|payment))\b",
    re.IGNORECASE,
)
#: What an endpoint's last word says it does, for a request that changes something: the verbs
#: of :data:`IRREVERSIBLE` that a path uses as verbs (not ``book``, a noun in most paths), and
#: ``cancel`` (an endpoint's cancel cancels something; a control's "Cancel" leaves a form).
_ENDPOINT: Final = re.compile(
    r"^(submit|send|pay|purchase|buy|checkout|delete|remove|erase|destroy|purge|wipe|confirm|"
    r"transfer|approve|publish|unsubscribe|cancel)$",
    re.IGNORECASE,
)
#: A page or dialog asking before it acts (about what: its other words say).
_ASKS: Final = re.compile(
    r"\b(are you sure|do you (?:really )?want to|really want to)\b", re.IGNORECASE
)
#: A page or dialog saying that what follows is final.
_FINAL: Final = re.compile(
    r"\b(can ?not be undone|can[’']t be undone|can ?not be reversed|permanently|"
    r"irreversibl[ey])\b",
    re.IGNORECASE,
)
#: How a person answers such a question yes (besides the committing words themselves).
_YES: Final = re.compile(
    r"\b(yes|ok|okay|continue|proceed|sure|i understand|agree|go ahead|do it|accept)\b",
    re.IGNORECASE,
)
#: How a person answers it no.
_NO: Final = re.compile(
    r"\b(no|cancel|back|close|keep|dismiss|not now|never ?mind|abort|return)\b", re.IGNORECASE
)
#: Methods of a request that changes something on the server.
_CHANGES: Final = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: Keys that act on the control that has the focus (a button, a link).
_ACTIVATING_KEYS: Final = frozenset({"Enter", " ", "Space", "Spacebar"})
_FIELD_ROLES: Final = frozenset(
    {"textbox", "searchbox", "combobox", "spinbutton", "checkbox", "radio", "switch", "slider"}
)
_BUTTON_TYPES: Final = frozenset({"submit", "button", "reset", "image"})
_ACTING: Final = frozenset(
    {
        ActionKind.CLICK,
        ActionKind.DOUBLE_CLICK,
        ActionKind.PRESS,
        ActionKind.SELECT,
        ActionKind.CHECK,
        ActionKind.UNCHECK,
        ActionKind.SUBMIT,
    }
)
#: The words of a path segment, camelCase split: ``bulkDelete`` → bulk, Delete.
_WORD_PARTS: Final = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_QUOTE_MAX: Final = 60


@dataclass(frozen=True, slots=True)
class Evidence:
    """Why an action cannot be undone. ``own_words``: the control said so itself (its name, the
    option chosen), which a reviewer sees in the step's title; else what the page did."""

    why: str
    own_words: bool = False


def _quoted(text: str) -> str:
    text = " ".join(text.split())
    return f"'{text if len(text) <= _QUOTE_MAX else text[: _QUOTE_MAX - 1] + '…'}'"


def _is_field(target: Target) -> bool:
    """A control that holds a value (a text field, a box, a list) rather than one that acts."""
    fp = target.fingerprint
    roles = {loc.value for loc in target.locators if loc.strategy is LocatorStrategy.ROLE}
    if fp is not None:
        roles.add(fp.role or "")
        tag = (fp.tag or "").lower()
        kind = fp.attributes.get("type", "").lower()
        if tag in {"textarea", "select"} or (tag == "input" and kind not in _BUTTON_TYPES):
            return True
    return bool(roles & _FIELD_ROLES)


def _words(target: Target | None) -> list[str]:
    """What the control says: its name, texts, value and title."""
    if target is None:
        return []
    words = [label_of(target) or ""]
    for loc in target.locators:
        if loc.strategy is LocatorStrategy.TEXT:
            words.append(loc.value)
        elif loc.strategy is LocatorStrategy.ROLE and loc.name:
            words.append(loc.name)
    fp = target.fingerprint
    if fp is not None:
        words += [fp.name or "", fp.text or ""]
        words += [fp.attributes.get(a, "") for a in ("aria-label", "title", "value")]
    return [w for w in words if w]


def _says(texts: Iterable[str]) -> str | None:
    """The first of *texts* with a committing word."""
    return next((t for t in texts if IRREVERSIBLE.search(t)), None)


def _names(texts: Iterable[str]) -> str | None:
    """The first of *texts* (headings, titles) that names a committing act: it begins with
    the verb ("Delete multiple objects", "Pay invoice"; not "Address Book")."""
    return next((t for t in texts if IRREVERSIBLE.match(t.strip())), None)


def _path_words(path: str) -> list[str]:
    """The words of an address's path segments, in order: ``/bulkDelete-items/`` → bulk,
    delete, items."""
    words: list[str] = []
    for segment in path.split("/"):
        for part in re.split(r"[-_.~+\s]+", segment):
            words += [w.lower() for w in _WORD_PARTS.findall(part)]
    return words


def _endpoint_verb(path: str) -> str | None:
    """The committing verb an endpoint's last segment names (ids aside), if any."""
    segments = [s for s in path.split("/") if s and not re.fullmatch(r"[\d\W_]+|[0-9a-f-]{8,}", s)]
    if not segments:
        return None
    return next((w for w in _path_words(segments[-1]) if _ENDPOINT.match(w)), None)


def _changes(effects: Effects | None) -> bool:
    return effects is not None and any(r.method.upper() in _CHANGES for r in effects.requests)


def _request_evidence(effects: Effects | None) -> str | None:
    if effects is None:
        return None
    for request in effects.requests:
        method = request.method.upper()
        if method == "DELETE":
            return f"it sent DELETE {request.path}"
        if method in _CHANGES and _endpoint_verb(request.path):
            return f"it sent {method} {request.path}"
    return None


def _shown(effects: Effects | None) -> list[tuple[str, str | None]]:
    """The texts (and roles) an action made appear that were still shown once it settled."""
    if effects is None or not effects.texts_known:
        return []
    return [(t.text, t.role) for t in effects.texts_added if not t.gone]


def _question(event: Event, nxt: Event | None) -> str | None:
    """The question about committing the page or dialog *event* led to asks, if it asks one: a
    text that says what follows is final ("This cannot be undone"), a question with a committing
    word ("Delete 1 contact?"), or one asking ("Are you sure?") about what a committing word
    names (in the question, a heading, the page's title or its address)."""
    shown = _shown(event.effects)
    left = event.action is ActionKind.NAVIGATE or (
        event.effects is not None and event.effects.left_page
    )
    if not shown and not left:
        return None  # nothing new on the page: nothing newly asked
    was = event.before.title if event.before else None
    # the title of the page it led to (an observation right after leaving may be the old one)
    titles = [
        o.title
        for o in (event.after, nxt.before if nxt is not None and left else None)
        if o is not None and o.title and o.title != was
    ]
    asking = [  # a status message reports what was done; it asks nothing
        t
        for t, role in shown
        if role != "status"
        and (
            _ASKS.search(t)
            or _FINAL.search(t)
            or (t.rstrip().endswith("?") and IRREVERSIBLE.search(t))
        )
    ]
    asking += [t for t in titles if _ASKS.search(t)]
    if not asking:
        return None
    said = next((t for t in asking if IRREVERSIBLE.search(t) or _FINAL.search(t)), None)
    if said is not None:
        return said
    about = [t for t, role in shown if role in {"heading", "dialog"}] + titles
    landed = nxt.before if nxt is not None and left and nxt.before else event.after
    path = urlsplit(landed.url).path if left and landed is not None and landed.url else ""
    if _names(about) or _endpoint_verb(path):
        return asking[0]
    return None


@dataclass
class _Page:
    """What the person had in front of them: the page's headings, what was chosen on it, the
    question it asked (and which action led to it)."""

    headings: list[str] = field(default_factory=list)
    chosen: dict[str, str] = field(default_factory=dict)
    question: str | None = None

    def says(self, event: Event) -> str | None:
        """Why the page *event* acted on says it commits: a heading or its title begins with a
        committing verb, its address ends with one."""
        before = event.before
        heading = _names(self.headings)
        if heading is not None:
            return f"its page's heading says {_quoted(heading)}"
        title = _names([before.title] if before is not None and before.title else [])
        if title is not None:
            return f"its page's title says {_quoted(title)}"
        path = urlsplit(before.url).path if before is not None and before.url else ""
        if _endpoint_verb(path):
            return f"its page's address says {_quoted(path)}"
        return None


def _own_words(event: Event) -> str | None:
    """The committing words of the control *event* acted on (or the option it chose)."""
    action = event.action
    if action is ActionKind.SELECT and isinstance(event.value, str):
        return event.value if IRREVERSIBLE.search(event.value) else None
    target = event.target
    if target is None or _is_field(target):
        return None
    if action is ActionKind.PRESS and event.key not in _ACTIVATING_KEYS:
        return None
    if action not in {ActionKind.CLICK, ActionKind.DOUBLE_CLICK, ActionKind.PRESS}:
        return None
    return _says(_words(target))


def _answers_yes(event: Event) -> bool:
    """Whether *event* answers the question on its page yes: its words say so, or (unless they
    say no) it sent the server a change."""
    if event.target is None:
        return _changes(event.effects)
    words = " ".join(_words(event.target))
    if IRREVERSIBLE.search(words) or _YES.search(words):
        return True
    return not _NO.search(words) and _changes(event.effects)


def _says_no(event: Event) -> bool:
    words = " ".join(_words(event.target))
    return bool(_NO.search(words)) and not IRREVERSIBLE.search(words) and not _YES.search(words)


def _evidence(event: Event, page: _Page) -> Evidence | None:
    """Why acting as *event* did cannot be undone, or None."""
    if event.action not in _ACTING:
        return None
    words = _own_words(event)
    if words is not None:
        chose = "it chooses" if event.action is ActionKind.SELECT else "its control says"
        return Evidence(f"{chose} {_quoted(words)}", own_words=True)
    effects = event.effects
    asked = [d for d in (effects.browser_dialogs if effects else ()) if d.kind == "confirm"]
    if asked and asked[-1].accepted:
        question = _quoted(asked[-1].message or "to confirm")
        return Evidence(f"the page asked {question} and it was answered OK")
    sent = _request_evidence(effects)
    if sent is not None:
        return Evidence(sent)
    clicked = event.action in {ActionKind.CLICK, ActionKind.DOUBLE_CLICK, ActionKind.SUBMIT}
    pressed = event.action is ActionKind.PRESS and event.key in _ACTIVATING_KEYS
    if page.question is not None and (clicked or pressed) and _answers_yes(event):
        return Evidence(f"it answers yes to {_quoted(page.question)}")
    if _changes(effects) and not _says_no(event):
        said = page.says(event)
        if said is not None:
            return Evidence(f"it sent a change, and {said}")
        if page.chosen:
            option = next(iter(page.chosen.values()))
            return Evidence(f"it sent a change after {_quoted(option)} was chosen")
    return None


def _chosen(event: Event) -> tuple[str, str | None] | None:
    """What *event* chose on its page for a later submission to act on: (the control, the
    committing option chosen or box ticked, or None when it chose something else), or None
    when it chose nothing."""
    key = label_of(event.target) or ""
    if event.action is ActionKind.SELECT and isinstance(event.value, str):
        return key, event.value if IRREVERSIBLE.search(event.value) else None
    if event.action in {ActionKind.CHECK, ActionKind.UNCHECK}:
        ticked = event.action is ActionKind.CHECK and IRREVERSIBLE.search(key) is not None
        return key, key if ticked else None
    return None


def irreversible_events(events: Sequence[Event]) -> dict[int, Evidence]:
    """The events of a recording (by index) whose action cannot be undone, each with why."""
    found: dict[int, Evidence] = {}
    page = _Page()
    acted = [i for i, e in enumerate(events) if e.action is not ActionKind.NOTE]
    for position, index in enumerate(acted):
        event = events[index]
        nxt = events[acted[position + 1]] if position + 1 < len(acted) else None
        why = _evidence(event, page)
        question = _question(event, nxt)
        if why is None and question is not None and event.action in _ACTING:
            why = Evidence(f"it led to a page asking {_quoted(question)}")
        if why is not None and event.action in _ACTING and not event.injected:
            found[index] = why
        # what the next action has in front of it
        effects = event.effects
        headings = [t for t, role in _shown(effects) if role == "heading"]
        if event.action is ActionKind.NAVIGATE or (effects is not None and effects.left_page):
            page = _Page(headings=headings, question=question)
            continue
        page.headings += headings
        chose = _chosen(event)
        if chose is not None:
            key, option = chose
            if option is not None:
                page.chosen[key] = option
            else:
                page.chosen.pop(key, None)
        if question is not None:
            page.question = question
        elif index in found or _says_no(event):
            page.question = None  # answered
    return found
