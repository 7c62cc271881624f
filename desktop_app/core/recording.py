"""Recording sessions: persist the raw event stream as it happens, then keep the clean events.

A recorder adapter (web or desktop) calls :meth:`RecordingSession.add` for every event it observes.
Each event is written to the store at once, so a crash loses nothing already added. On
:meth:`RecordingSession.finish` the raw stream is cleaned by :func:`clean_events` (noise dropped,
typing coalesced) and the clean list becomes the trajectory's events; the raw stream stays beside
it for debugging. A session that never finished is found by :func:`recover_abandoned` and kept,
marked ``incomplete``.

Notes the demonstrator adds while recording (``ActionKind.NOTE`` events) are kept in the clean
events where they were made; they never change how the actions around them are cleaned.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from desktop_app.core.models.common import utcnow
from desktop_app.core.models.trajectory import (
    ActionKind,
    Effects,
    Event,
    Modifier,
    Observation,
    Trajectory,
)
from desktop_app.core.ports import MediaStore, TrajectoryStore
from desktop_app.core.redaction import redact_field, scrub_stated_secrets

__all__ = [
    "PROFILE_NAME_RULE",
    "RecordingSession",
    "clean_events",
    "is_profile_name",
    "recover_abandoned",
]

#: What a browser profile name may be made of (it names a folder under ``<home>/profiles``).
PROFILE_NAME_RULE: Final = "letters, digits, '.', '_' and '-' only (at most 64)"
_PROFILE_NAME: Final = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def is_profile_name(name: str) -> bool:
    """Whether *name* can name a browser profile (a plain folder name, never ``.`` or ``..``)."""
    return _PROFILE_NAME.fullmatch(name) is not None and name.strip(".") != ""


#: Roles and tags a person clicks on purpose even when nothing visibly changes.
_INTERACTIVE_ROLES: Final = frozenset(
    {
        "button",
        "link",
        "checkbox",
        "radio",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "tab",
        "option",
        "combobox",
        "textbox",
        "searchbox",
        "spinbutton",
        "switch",
        "slider",
        "treeitem",
    }
)
_INTERACTIVE_TAGS: Final = frozenset(
    {"a", "button", "input", "select", "textarea", "summary", "label", "option", "details"}
)
_FIELD_ROLES: Final = frozenset({"textbox", "searchbox", "combobox", "spinbutton"})
_FIELD_TAGS: Final = frozenset({"input", "textarea", "select"})
_CAUSES_NAVIGATION: Final = frozenset(
    {
        ActionKind.CLICK,
        ActionKind.DOUBLE_CLICK,
        ActionKind.PRESS,
        ActionKind.SUBMIT,
        ActionKind.SELECT,
    }
)
_ACTIONS_ON_A_FIELD: Final = frozenset({ActionKind.FILL, ActionKind.SELECT, ActionKind.PRESS})

#: How close two events must be to count as one accidental repeat, or as cause and effect.
_REPEAT: Final = timedelta(milliseconds=400)
_DOUBLE_CLICK: Final = timedelta(milliseconds=700)
_CONSEQUENCE: Final = timedelta(seconds=3)
#: With no record of who started a navigation: one this soon after the last, with no action
#: between, is the page redirecting (nobody types two addresses within a second and a half).
_REDIRECT: Final = timedelta(milliseconds=1500)
#: Navigations the page started (a link followed, a form sent, its code or a refresh).
_PAGE_STARTED: Final = frozenset({"link", "form", "script", "refresh"})
_USER_ACTIONS: Final = frozenset(
    {
        ActionKind.CLICK,
        ActionKind.DOUBLE_CLICK,
        ActionKind.FILL,
        ActionKind.SELECT,
        ActionKind.CHECK,
        ActionKind.UNCHECK,
        ActionKind.PRESS,
        ActionKind.SUBMIT,
        ActionKind.UPLOAD,
        ActionKind.SCROLL,
    }
)


def _key(event: Event) -> tuple[str, ...] | None:
    """What identifies the element an event acted on: its unique CSS selector, else its locators."""
    if event.target is None:
        return None
    for loc in event.target.locators:
        if loc.strategy == "css":
            return ("css", loc.value)
    return tuple(loc.describe() for loc in event.target.locators)


def _same_element(a: Event, b: Event) -> bool:
    return a.target is not None and _key(a) == _key(b) and a.frame == b.frame


def _is_interactive(event: Event) -> bool:
    fp = event.target.fingerprint if event.target else None
    if fp is None:
        return True  # not observed: never drop on a guess
    return (fp.role or "") in _INTERACTIVE_ROLES or (fp.tag or "") in _INTERACTIVE_TAGS


def _is_field(event: Event) -> bool:
    fp = event.target.fingerprint if event.target else None
    return fp is not None and ((fp.role or "") in _FIELD_ROLES or (fp.tag or "") in _FIELD_TAGS)


def _same_burst(a: Event, b: Event) -> bool:
    """Whether two desktop typing events belong to one burst (it began at the same moment in
    the same window)."""
    return (
        a.action is b.action is ActionKind.DESKTOP_TYPE
        and a.at == b.at
        and (a.before.window_title if a.before else None)
        == (b.before.window_title if b.before else None)
    )


def _end(event: Event) -> datetime:
    return event.ended_at or event.at


def _quiet(event: Event) -> bool:
    """Whether the page showed no response to *event* beyond focus and styling (a click that
    only put the caret in a field, a Tab that only moved the focus)."""
    if event.effects is not None:
        return not event.effects.visible and not event.effects.requests
    return event.effect is False


def _moves_focus_only(event: Event) -> bool:
    """A Tab or Shift+Tab press that did nothing but move the focus."""
    return (
        event.action is ActionKind.PRESS
        and event.key == "Tab"
        and set(event.modifiers) <= {Modifier.SHIFT}
        and (event.effects is None or _quiet(event))
    )


@dataclass
class _TabNavigation:
    """Where a tab is, for cleaning: the clean event its last navigation belongs to (a goto, or
    the action that led there), when that was, and the last action made there since."""

    url: str | None = None
    owner: int | None = None
    at: datetime | None = None
    acted: int | None = None


def clean_events(raw: Sequence[Event]) -> list[Event]:
    """The events a workflow should be induced from: *raw* without noise, typing coalesced.

    Dropped: input Procedura injected; repeated fills of one field (the last value wins, the
    first keystroke's time is kept); a field written again with the value it held right after a
    key pressed in it (the page tidying it as the focus left); the earlier states of a desktop
    typing burst (the last holds the whole text); clicks that only focused a field; Tab and
    Shift+Tab presses that only moved the focus; clicks with no visible effect on something not
    interactive; accidental repeats of a click; the clicks a double click is made of;
    navigations to where the tab already was; form submits caused by the click or key that
    precedes them. Navigations that an action led to fold into that action (its ``after``
    observation shows the new page), and those the page made by itself with no action between
    (an HTTP or client-side redirect, a router rewriting ``/`` to ``/#/``) fold into whatever
    led to the page before: the navigation the person made, or the action. Notes stay, after
    what was cleaned from the actions before them.
    """
    kept = [e for e in raw if not e.injected]
    actions = [e for e in kept if e.action is not ActionKind.NOTE]
    out, sizes = _clean_actions(actions)
    notes: list[tuple[int, Event]] = []
    seen = 0
    for event in kept:
        if event.action is ActionKind.NOTE:
            notes.append((sizes[seen - 1] if seen else 0, event))
        else:
            seen += 1
    for position, note in reversed(notes):
        out.insert(position, note)
    return out


def _clean_actions(events: Sequence[Event]) -> tuple[list[Event], list[int]]:
    """The clean events, and how many there were after each of *events* was taken in."""
    out: list[Event] = []
    before: list[int] = []  # how many clean events there were before each one was taken in
    tabs: dict[str | None, _TabNavigation] = {}
    for i, event in enumerate(events):
        before.append(len(out))
        nxt = events[i + 1] if i + 1 < len(events) else None
        prev = out[-1] if out else None
        action = event.action
        tab = tabs.setdefault(event.tab, _TabNavigation())

        if (
            action is ActionKind.FILL
            and prev is not None
            and prev.action is ActionKind.FILL
            and _same_element(prev, event)
        ):
            out[-1] = event.model_copy(update={"at": prev.at, "ended_at": _end(event)})
            continue

        if (
            action is ActionKind.FILL
            and prev is not None
            and prev.action is ActionKind.PRESS
            and _same_element(prev, event)
            and len(out) >= 2
            and out[-2].action is ActionKind.FILL
            and _same_element(out[-2], event)
            and out[-2].value == event.value
        ):
            # The field written again with what it already held, as the focus left it (a date
            # picker tidying its value on blur): the page's doing, not a second typing.
            out[-1] = _with_effects(prev, event)
            continue

        if action is ActionKind.DESKTOP_TYPE and prev is not None and _same_burst(prev, event):
            out[-1] = event  # the desktop recorder stores a burst's text so far at each key
            continue

        if _moves_focus_only(event) and not _closes_with(event, nxt):
            continue

        if action is ActionKind.CLICK:
            if (
                nxt is not None
                and nxt.action in _ACTIONS_ON_A_FIELD
                and _is_field(event)
                and _same_element(event, nxt)
            ):
                continue  # a click that only focused the field typed into next
            if _is_field(event) and _quiet(event):
                continue  # a click that only put the caret in a field
            if event.effect is False and not _is_interactive(event):
                continue  # a click on plain content that changed nothing
            if (
                prev is not None
                and prev.action is ActionKind.CLICK
                and _same_element(prev, event)
                and event.at - _end(prev) <= _REPEAT
            ):
                continue  # an accidental repeat
            if any(
                later.action is ActionKind.DOUBLE_CLICK
                and _same_element(event, later)
                and later.at - event.at <= _DOUBLE_CLICK
                for later in events[i + 1 : i + 3]
            ):
                continue  # one of the clicks the double click that follows is made of

        if action is ActionKind.NAVIGATE and event.url is not None:
            if tab.url == event.url and tab.acted is None:
                continue  # the tab shows that page already (a navigation seen twice)
            owner = _navigation_owner(event, tab, out)
            if owner is not None:
                out[owner] = _with_after_url(out[owner], event)
            else:
                out.append(event)
                owner = len(out) - 1
            tab.url, tab.owner, tab.at, tab.acted = event.url, owner, event.at, None
            continue

        if (
            action is ActionKind.SUBMIT
            and prev is not None
            and prev.action in {ActionKind.CLICK, ActionKind.PRESS}
            and event.at - _end(prev) <= _CONSEQUENCE
        ):
            continue

        out.append(event)
        if action in _USER_ACTIONS:
            tab.acted = len(out) - 1
    return out, [*before[1:], len(out)]


def _navigation_owner(event: Event, tab: _TabNavigation, out: list[Event]) -> int | None:
    """The clean event *event* (a navigation) folds into, or None when it is a step of its own.

    A navigation the page started belongs to the last action made in its tab since the tab's
    previous navigation; with none, to whatever led to the page it left (the page moved on by
    itself). One the person started in the browser itself (the address bar, a bookmark) is a
    step, unless the page was already leaving during the action just before it (the page's
    doing, whoever Chromium says started it). Without a record of who started it, the old
    rules hold: an action just before it led there unless the address was typed, and a
    navigation right after the last, with no action between, is a redirect.
    """
    started = event.initiated_by
    if started in _PAGE_STARTED:
        if tab.acted is not None:
            return tab.acted
        if tab.owner is not None:
            return tab.owner
        return _popup_opener(event, out)  # a tab the page opened: its first page
    if started == "browser":
        # Unless the page began to leave while the tab's last action was under way, and the
        # address was not typed: some pages go elsewhere in ways Chromium reports as nobody's
        # (NiceGUI's navigation from its server, over its socket).
        acted = out[tab.acted] if tab.acted is not None else None
        left = acted is not None and acted.effects is not None and acted.effects.left_page
        soon = acted is not None and event.at - _end(acted) <= _CONSEQUENCE
        if left and soon and event.typed is not True:
            return tab.acted
        return None
    quick = tab.at is not None and event.at - tab.at <= _REDIRECT
    if tab.acted is None and tab.owner is not None and quick:
        return tab.owner
    prev = out[-1] if out else None
    if event.typed is not True and prev is not None:
        caused = prev.action in _CAUSES_NAVIGATION and event.at - _end(prev) <= _CONSEQUENCE
        if caused:
            return len(out) - 1
    return None


def _closes_with(press: Event, nxt: Event | None) -> bool:
    """Whether the field the key was pressed in is written again next, with a visible effect
    (the key closed a picker that then tidied the value): the key did something after all."""
    return (
        nxt is not None
        and nxt.action is ActionKind.FILL
        and _same_element(press, nxt)
        and nxt.effects is not None
        and nxt.effects.visible
    )


def _with_effects(event: Event, later: Event) -> Event:
    """*event* with what *later* (folded into it) made the page do, when it knew nothing."""
    if later.effects is None or (event.effects is not None and event.effects.visible):
        return event
    return event.model_copy(update={"effects": later.effects})


def _popup_opener(event: Event, out: list[Event]) -> int | None:
    """The action in another tab that opened *event*'s tab just before, if it is the last one."""
    prev = out[-1] if out else None
    if prev is None or prev.action not in _CAUSES_NAVIGATION or prev.tab == event.tab:
        return None
    return len(out) - 1 if event.at - _end(prev) <= _CONSEQUENCE else None


def _with_after_url(event: Event, navigation: Event) -> Event:
    """*event* whose ``after`` observation shows the page *navigation* led to, and whose
    effects include what that page showed as it loaded (the message a saved form leads to)."""
    if navigation.effects is not None:
        event = event.model_copy(update={"effects": _merged(event.effects, navigation.effects)})
    shot = navigation.before.screenshot if navigation.before else None
    if (
        event.action is ActionKind.NAVIGATE
        and shot
        and not (event.before and event.before.screenshot)
    ):
        # a page the person opened and the page redirected: its picture is where it arrived
        before = (event.before or Observation()).model_copy(update={"screenshot": shot})
        event = event.model_copy(update={"before": before})
    after = navigation.after or navigation.before
    if after is None:
        if navigation.url is None:
            return event
        after = Observation(at=navigation.at, url=navigation.url)
    if event.after is not None and event.after.url == after.url:
        # keep when the action's own observation was made; add what the loaded page showed
        merged = event.after.model_copy(
            update={
                "title": event.after.title or after.title,
                "aria_snapshot": event.after.aria_snapshot or after.aria_snapshot,
            }
        )
        return event.model_copy(update={"after": merged})
    return event.model_copy(update={"after": after})


def _merged(own: Effects | None, loaded: Effects) -> Effects:
    """What an action did, with what the page it led to showed as it loaded: the texts it made
    appear first, then the new page's, each once. Counts and requests stay the action's own."""
    own = own if own is not None else Effects()
    texts = list(own.texts_added)
    seen = {t.text for t in texts}
    texts += [t for t in loaded.texts_added if t.text not in seen]
    return own.model_copy(
        update={
            "texts_added": tuple(texts),
            "left_page": True,  # only a new document reports what it showed as it loaded
            "texts_known": own.texts_known and loaded.texts_known,
            "settled": loaded.settled,
        }
    )


class RecordingSession:
    """One recording in progress, written to the store as it happens.

    Listeners (:meth:`subscribe`) see each event once it is stored, and again, rewritten, when a
    field marked sensitive late scrubs it (the rewritten event keeps its ``at``, ``action`` and
    ``tab``: the same event, now without the value).
    """

    def __init__(self, store: TrajectoryStore, header: Trajectory) -> None:
        self._store = store
        self._header = header.model_copy(
            update={
                "events": (),
                "incomplete": True,
                "intent": scrub_stated_secrets(header.intent),
            }
        )
        self._count = 0
        self._started = False
        self._finished: Trajectory | None = None
        self._listeners: list[Callable[[Event], object]] = []

    @property
    def trajectory_id(self) -> str:
        """The id of the trajectory being recorded."""
        return self._header.id

    @property
    def event_count(self) -> int:
        """How many raw events were added."""
        return self._count

    def subscribe(self, listener: Callable[[Event], object]) -> None:
        """Call *listener* with every event stored from now on (and every one rewritten)."""
        self._listeners.append(listener)

    def _tell(self, event: Event) -> None:
        for listener in self._listeners:
            listener(event)

    def start(self) -> None:
        """Create the trajectory, marked incomplete until :meth:`finish`."""
        self._store.begin(self._header)
        self._started = True

    def add(self, event: Event) -> int:
        """Persist one observed event now; returns its position in the raw stream."""
        if not self._started:
            raise RuntimeError("start() the session first")
        if self._finished is not None:
            raise RuntimeError("the session is finished")
        self._store.append_raw_events(self._header.id, [event])
        self._count += 1
        self._tell(event)
        return self._count - 1

    def update(self, index: int, event: Event) -> None:
        """Store what was observed of the event at *index* since it was added (its effects, the
        page it led to, its picture): *event* replaces it. It must be the same event (same
        ``at``, ``action`` and ``tab``) with more known about it: listeners tell them apart so.

        Raises:
            ValueError: there is no event at *index*.
        """
        if self._finished is not None:
            raise RuntimeError("the session is finished")
        if not 0 <= index < self._count:
            raise ValueError(f"no raw event {index} in this recording")
        self._store.replace_raw_events(self._header.id, {index: event})
        self._tell(event)

    def redact_field(self, css: str, media: MediaStore | None = None) -> dict[int, Event]:
        """Scrub what was typed into the field *css*, for a field marked sensitive late.

        Its values become secret placeholders in the events stored so far, text that showed
        them is masked (ARIA snapshots, the page's reported effects), and screenshots taken
        since the first value are deleted from *media*. Returns the events rewritten, by their
        position in the raw stream.
        """
        stored = self._store.raw_events(self._header.id)
        redaction = redact_field(stored, css)
        if redaction.events:
            self._store.replace_raw_events(self._header.id, redaction.events)
            for index in sorted(redaction.events):
                self._tell(redaction.events[index])
        if media is not None:
            for ref in redaction.dropped_media:
                media.delete(ref)
        return dict(redaction.events)

    def finish(self, *, intent: str | None = None, secrets: Iterable[str] = ()) -> Trajectory:
        """Clean the raw stream, store the clean events and mark the trajectory complete.

        *secrets*: the values the recorder saw typed into secret fields (kept in memory only);
        the intent is stored with them masked, as with any secret it states.
        """
        if self._finished is not None:
            return self._finished
        raw = self._store.raw_events(self._header.id)
        update: dict[str, object] = {
            "ended_at": utcnow(),
            "incomplete": False,
            "events": tuple(clean_events(raw)),
            "intent": scrub_stated_secrets(
                self._header.intent if intent is None else intent, secrets
            ),
        }
        trajectory = Trajectory.model_validate({**self._header.model_dump(), **update})
        self._store.finish(trajectory)
        self._finished = trajectory
        return trajectory


def recover_abandoned(store: TrajectoryStore) -> list[str]:
    """Keep the events of recordings that never finished (a crash or ``kill -9``).

    Call it only while holding the writer lock and before recording anything: every trajectory
    still marked incomplete with raw events but no clean ones then belongs to a recorder that
    died. Its clean events are derived from the raw stream and it stays marked ``incomplete``.
    Returns the ids recovered.
    """
    recovered = []
    for summary in store.summaries():
        if summary.incomplete and summary.event_count == 0 and summary.raw_event_count > 0:
            raw = store.raw_events(summary.id)
            header = store.get(summary.id)
            trajectory = header.model_copy(
                update={
                    "events": tuple(clean_events(raw)),
                    # never before it began (an event's clock may be behind the header's)
                    "ended_at": max(header.started_at, *(_end(e) for e in raw)),
                    "incomplete": True,
                }
            )
            store.finish(trajectory)
            recovered.append(summary.id)
    return recovered
