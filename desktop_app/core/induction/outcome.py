"""What shows that a step, or the whole task, did its work — read from what the recording saw.

A step's message is the first status or alert text it made appear. The workflow's success check
(``Workflow.success``) is what the end of the recording showed of the task's outcome:

* the new item that holds an entered value (the to-do "{title}", the record's heading
  "{full_name}"), still shown at the end and first shown after the last value was entered (so
  not the page's own frame: "Signed in as {username}" was there before);
* else the status or alert message the final action that changed the page showed, when it was
  still shown at the end (a toast that went away is not); on pages whose messages carry no role, a
  text that final action made appear, that the recording never showed before, and that words
  like a message ("Successfully deleted 1 contact.", "Your changes were saved");
* for a task that removes something: the absence of the removed item that held an entered
  value (an element whose whole text is "{title}"), seen go from the page, or gone from the
  same list when the final action brought it back (a record deleted on the server);
* with any of those, and when the final action led to another address: that address, with
  record ids and the query left open — a weaker check, never the only one;
* for a task that only looks something up (no action of the recording sent the server a
  change: filtering a list, going to a report's second page), the address its final action
  led to, with its query: there, where the task leads is what it is for.

Nothing else: when the recording shows none of these, there is no success check. A text counts
as new only if no page of the recording showed it before the action (its ARIA snapshots and
reported texts): a page's own frame ("Welcome, ann.keeper") is never taken for an outcome.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final
from urllib.parse import urlsplit

from desktop_app.core.induction.slots import Templater
from desktop_app.core.models.target import Locator, LocatorStrategy, Target
from desktop_app.core.models.trajectory import ActionKind, Event, SecretPlaceholder, TextChange
from desktop_app.core.models.workflow import (
    ElementHidden,
    Expectation,
    ParameterType,
    TextPresent,
    UrlMatches,
)
from desktop_app.core.templating import placeholders
from desktop_app.core.urls import normal_url

__all__ = ["NO_SUCCESS_NOTE", "message", "success_checks", "url_pattern"]

#: The note an induction carries when the recording showed nothing of the outcome.
NO_SUCCESS_NOTE: Final = (
    "no success check could be induced: runs will end 'done, unverified' until one is added "
    "in the editor"
)
_STATUS_LINE: Final = re.compile(r'^\s*- (?:status|alert)\b[^:\n]*:\s*"?(.+?)"?\s*$', re.MULTILINE)
_ID_SEGMENT: Final = re.compile(r"/(\d+|[0-9a-f]{8,}|[0-9a-f-]{36})(?=/|$)")
_MESSAGE_ROLES: Final = frozenset({"status", "alert"})
_PLACEHOLDER_ONLY: Final = re.compile(r"\{[a-z_][a-z0-9_]*\}")
#: Which texts tell the outcome best: an item of a list or table, then a heading, then others.
_RANK: Final = {"item": 0, "heading": 1, None: 2, "dialog": 3}
#: Words of a message that reports an outcome, for pages whose messages carry no ARIA role.
_OUTCOME_WORDS: Final = re.compile(
    r"\b(success(?:fully)?|saved|created|added|deleted|removed|updated|changed|sent|submitted|"
    r"completed|archived|cancell?ed|imported|uploaded|published|thank you)\b",
    re.IGNORECASE,
)
#: A line of an ARIA snapshot: its text after the role (quoted name, or ``: text``).
_SNAPSHOT_TEXT: Final = re.compile(r'"((?:[^"\\]|\\.)*)"|:\s+(.+)$')
_NOT_ALNUM: Final = re.compile(r"[\W_]+", re.UNICODE)


def _letters(text: str) -> str:
    """*text* as its letters and digits only, lowercased (how two renderings of one text
    agree: a snapshot splits "Welcome, <b>ann</b>." into parts)."""
    return _NOT_ALNUM.sub("", text).casefold()


#: Snapshot lines that hold no text of the page's own: fields (their value is what was typed)
#: and link targets.
_FIELD_LINE: Final = re.compile(r"^\s*- '?(?:textbox|searchbox|combobox|spinbutton)\b|^\s*- /url:")


def _shown_lines(snapshot: str) -> list[str]:
    """The lines of an ARIA snapshot that show the page's own texts (not fields, not links'
    addresses)."""
    return [line for line in snapshot.splitlines() if not _FIELD_LINE.match(line)]


def _snapshot_letters(snapshot: str, *, fields: bool = True) -> str:
    """The visible texts of an ARIA snapshot, in order, as :func:`_letters` (without what
    fields hold, unless *fields*)."""
    parts = []
    for line in snapshot.splitlines() if fields else _shown_lines(snapshot):
        for quoted, rest in _SNAPSHOT_TEXT.findall(line):
            parts.append(quoted or rest)
    return _letters(" ".join(parts))


def _seen_before(events: Sequence[Event], index: int) -> str:
    """Everything the recording showed before event *index* acted, as :func:`_letters` (its
    pages' ARIA snapshots and the texts actions made appear), joined by a separator."""
    seen: list[str] = []
    for event in events[:index]:
        for observation in (event.before, event.after):
            if observation is not None and observation.aria_snapshot:
                seen.append(_snapshot_letters(observation.aria_snapshot))
        if event.effects is not None:
            seen += [_letters(c.text) for c in event.effects.texts_added]
    current = events[index].before if index < len(events) else None
    if current is not None and current.aria_snapshot:
        seen.append(_snapshot_letters(current.aria_snapshot))
    return "|".join(seen)


def _new_text(text: str, seen: str) -> bool:
    letters = _letters(text)
    return bool(letters) and letters not in seen


def url_pattern(url: str) -> str:
    """A glob for *url* (a template) that tolerates what changes with other values: the ids a
    new record gets (``/contacts/13`` → ``/contacts/*``) and the query string (``?status=shipped``
    → ``?*``). A route in the fragment stays (``#/active``); an empty one (``#``, ``#/``) goes.
    """
    parts = urlsplit(url)
    path = _ID_SEGMENT.sub("/*", parts.path)
    query = "?*" if parts.query else ""
    fragment = f"#{parts.fragment}" if parts.fragment.strip("/!") else ""
    return f"{parts.scheme}://{parts.netloc}{path}{query}{fragment}" if parts.netloc else url


def message(event: Event, values: Templater) -> str | None:
    """The status or alert message *event* made appear, templated: from what the page reported
    (recordings made before pages reported it: the newest status line of the ARIA snapshot)."""
    effects = event.effects
    if effects is not None:
        for change in effects.texts_added:
            if change.role in _MESSAGE_ROLES:
                text = values.checkable(change.text)
                if text is not None:
                    return text
        return None
    after = event.after
    if after is None or not after.aria_snapshot:
        return None
    before_text = event.before.aria_snapshot if event.before else None
    for line in _STATUS_LINE.findall(after.aria_snapshot):
        if before_text and line in before_text:
            continue
        return values.text(line.strip())
    return None


def _final_action(events: Sequence[Event]) -> int | None:
    """The last action that visibly changed the page (in recordings made before pages reported
    their changes: the last one seen to change it)."""
    acted = [i for i, e in enumerate(events) if not e.injected and e.action is not ActionKind.NOTE]
    if any(events[i].effects is not None for i in acted):
        changed = [i for i in acted if _visible(events[i])]
    else:
        changed = [i for i in acted if events[i].effect and events[i].after is not None]
    return changed[-1] if changed else None


def _visible(event: Event) -> bool:
    return event.effects is not None and event.effects.visible


def _shown_at_end(events: Sequence[Event]) -> dict[str, tuple[int, TextChange]]:
    """The texts the page still showed at the end, each with the event that last showed it."""
    shown: dict[str, tuple[int, TextChange]] = {}
    for index, event in enumerate(events):
        effects = event.effects
        if event.injected or effects is None:
            continue
        if effects.left_page:
            shown = {}
        for change in effects.texts_removed:
            shown.pop(change.text, None)
        for change in effects.texts_added:
            if change.gone:
                shown.pop(change.text, None)
            else:
                shown[change.text] = (index, change)
    return shown


def _first_shown(events: Sequence[Event]) -> dict[str, int]:
    """Each text that appeared, with the event it first appeared after."""
    first: dict[str, int] = {}
    for index, event in enumerate(events):
        if event.effects is not None and not event.injected:
            for change in event.effects.texts_added:
                first.setdefault(change.text, index)
    return first


def _lasting_message(
    event: Event, shown: dict[str, tuple[int, TextChange]], values: Templater, seen: str
) -> str | None:
    """The message *event* showed that was still shown at the end, templated: a status or
    alert, else a new text worded like a message."""
    if event.effects is None:
        return message(event, values)
    lasting = [c for c in event.effects.texts_added if not c.gone and c.text in shown]
    for change in lasting:
        if change.role in _MESSAGE_ROLES:
            text = values.checkable(change.text)
            if text is not None:
                return text
    for change in lasting:
        if change.role in ("heading", "dialog") or not _OUTCOME_WORDS.search(change.text):
            continue
        if _new_text(change.text, seen):
            text = values.checkable(change.text)
            if text is not None:
                return text
    return None


def _new_item(
    events: Sequence[Event], shown: dict[str, tuple[int, TextChange]], values: Templater
) -> str | None:
    """The text still shown at the end that holds an entered value and was first shown after
    the last value was entered, and that no page showed before then (a heading first, the
    record's own page; then the one holding the most recently entered value), templated."""
    entered = max((s.since for s in values.slots if s.value is not None), default=-1)
    first = _first_shown(events)
    choices = values.choices()
    candidates: list[tuple[tuple[int, int, int, int], str]] = []
    for text, (index, change) in shown.items():
        if change.role in _MESSAGE_ROLES or first.get(text, -1) < entered:
            continue  # a message (checked as such), or the page's frame, there before
        checkable = values.checkable(text)
        if checkable is None or not placeholders(checkable) or checkable in choices:
            continue  # holds no value, or is an option's own label (its list shows it anyway)
        if not _PLACEHOLDER_ONLY.fullmatch(checkable) and not _new_text(
            text, _seen_before(events, first.get(text, index))
        ):
            # A sentence around a value that a page showed before ("Welcome, {username}": a
            # report lists at most a dozen texts, so its first report may come late) is the
            # page's frame; a value alone (the record's heading) may be shown again anew.
            continue
        newest = max(_since(values, name) for name in placeholders(checkable))
        # A heading that holds a value (the record's own page) first, then the newest value.
        heading = 0 if change.role == "heading" else 1
        candidates.append(((heading, -newest, -index, _RANK.get(change.role, 3)), checkable))
    return min(candidates)[1] if candidates else None


def _since(values: Templater, name: str) -> int:
    slot = values.slot(name)
    return slot.since if slot is not None else -1


def _absences(
    events: Sequence[Event], shown: dict[str, tuple[int, TextChange]], values: Templater
) -> list[Expectation]:
    """For each removed item that held an entered value and was not shown again: the absence
    of an element whose whole text is that value."""
    found: list[Expectation] = []
    for index, event in enumerate(events):
        if event.injected or event.effects is None:
            continue
        for change in event.effects.texts_removed:
            if change.text in shown:
                continue
            for name in placeholders(values.text(change.text)):
                slot = values.slot(name)
                choice = slot is not None and slot.parameter.type is ParameterType.CHOICE
                if slot is None or slot.since > index or choice:
                    continue
                locator = Locator(strategy=LocatorStrategy.TEXT, value=slot.placeholder, exact=True)
                check = ElementHidden(target=Target(locators=(locator,)))
                if check not in found:
                    found.append(check)
                break
    return found


def _page(url: str) -> str:
    """The page an address shows, its query left out (a list searched, or not)."""
    parts = urlsplit(normal_url(url))
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def _gone_from_view(events: Sequence[Event], final: int, values: Templater) -> list[Expectation]:
    """For a page the final action led back to without something (a record deleted on the
    server, the list reloaded): each entered value that the same page (searched or not) showed
    earlier as an element's whole text, and that it shows nowhere now, as the absence of an
    element whose whole text is that value."""
    last = next(
        (
            e.after
            for e in reversed(events[final:])
            if e.after is not None and e.after.aria_snapshot
        ),
        None,
    )
    if last is None or last.aria_snapshot is None or not last.url:
        return []
    at_end = _snapshot_letters(last.aria_snapshot, fields=False)
    before = [
        "\n".join(_shown_lines(o.aria_snapshot))
        for e in events[:final]
        for o in (e.before, e.after)
        if o is not None and o.aria_snapshot and o.url and _page(o.url) == _page(last.url)
    ]
    found: list[Expectation] = []
    for slot in values.slots:
        value = slot.value
        if not value or len(value) < 3 or slot.parameter.type is not ParameterType.TEXT:
            continue
        if _letters(value) in at_end:
            continue
        whole = re.compile(rf'"{re.escape(value)}"|:\s+{re.escape(value)}\s*$', re.MULTILINE)
        if any(whole.search(snapshot) for snapshot in before):
            locator = Locator(strategy=LocatorStrategy.TEXT, value=slot.placeholder, exact=True)
            found.append(ElementHidden(target=Target(locators=(locator,))))
    return found


def _reached(event: Event, values: Templater) -> Expectation | None:
    """The address *event* led to, when it led to another one."""
    before = event.before.url if event.before else None
    after = event.after.url if event.after else None
    if not after or not before or normal_url(after) == normal_url(before):
        return None
    return UrlMatches(pattern=url_pattern(values.url(after)))


#: Methods of requests that change something on the server.
_WRITES: Final = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _wrote(events: Sequence[Event]) -> bool:
    """Whether an action of the recording sent the server a change, a sign-in aside (a write
    from the page where a secret was just entered)."""
    signed_in_at: set[str] = set()
    for event in events:
        if event.injected:
            continue
        where = normal_url(event.before.url) if event.before and event.before.url else ""
        if isinstance(event.value, SecretPlaceholder):
            signed_in_at.add(where)
        effects = event.effects
        if effects is None or where in signed_in_at:
            continue
        if any(request.method.upper() in _WRITES for request in effects.requests):
            return True
    return False


def _looked_up(events: Sequence[Event], final: int, values: Templater) -> Expectation | None:
    """For a task that only looks something up (no action changed anything on the server:
    filter a list, open a report's second page): the address its final action led to, query
    included (``?status={status}&page=2``), as its outcome; else None."""
    reached = _reached(events[final], values)
    wrote = _wrote(events)
    after = events[final].after
    if wrote or reached is None or after is None or not after.url:
        return None
    parts = urlsplit(values.url(after.url))
    if not parts.query:
        return reached
    # Each query value as recorded when it is a parameter's or a number (a page); any other may
    # be a chosen option's own spelling ("shipped" for "Shipped"): left open.
    query = "&".join(
        f"{key}={value if placeholders(value) or value.isdigit() else '*'}" if sep else key
        for key, sep, value in (pair.partition("=") for pair in parts.query.split("&"))
    )
    pattern = f"{parts.scheme}://{parts.netloc}{parts.path}?{query}"
    return UrlMatches(pattern=pattern.replace("[", "[[]"))


def success_checks(events: Sequence[Event], values: Templater) -> tuple[Expectation, ...]:
    """The workflow's success check, from what the end of the recording showed (see the
    module's description); empty when it showed nothing of the outcome."""
    final = _final_action(events)
    if final is None:
        return ()
    shown = _shown_at_end(events)
    found: list[Expectation] = []
    item = _new_item(events, shown, values)
    said = _lasting_message(events[final], shown, values, _seen_before(events, final))
    if item is not None:
        found.append(TextPresent(text=item))
    elif said is not None:
        # Only without a new item to show the outcome: a message may be a toast that goes
        # (the step that made it appear checks it at once).
        found.append(TextPresent(text=said))
    found += _absences(events, shown, values)
    effects = events[final].effects
    if effects is not None and effects.left_page:
        # The same list, shown again without the record that was there: it went.
        found += [e for e in _gone_from_view(events, final, values) if e not in found]
    reached = _reached(events[final], values) if found else None
    if reached is not None:
        found.append(reached)
    if not found:
        looked_up = _looked_up(events, final, values)
        if looked_up is not None:
            found.append(looked_up)
    return tuple(found)
