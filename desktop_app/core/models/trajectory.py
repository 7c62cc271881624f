"""A recorded demonstration: what was observed, in order, never edited."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import AwareDatetime, Field, model_validator

from desktop_app.core.models.common import (
    ID_PATTERN,
    SCHEMA_VERSION,
    FrozenModel,
    MediaRef,
    Point,
    new_id,
    utcnow,
)
from desktop_app.core.models.target import Target

__all__ = [
    "ActionKind",
    "BrowserDialog",
    "Effects",
    "Event",
    "FieldChange",
    "Modifier",
    "NavigationInitiator",
    "Observation",
    "RequestSeen",
    "ScrollDelta",
    "SecretPlaceholder",
    "TextChange",
    "TextRole",
    "Trajectory",
    "TrajectoryKind",
]


class TrajectoryKind(StrEnum):
    """Where the demonstration happened."""

    WEB = "web"
    DESKTOP = "desktop"


class ActionKind(StrEnum):
    """What the demonstrator did."""

    NAVIGATE = "navigate"
    CLICK = "click"
    DOUBLE_CLICK = "double_click"
    FILL = "fill"
    SELECT = "select"
    CHECK = "check"
    UNCHECK = "uncheck"
    PRESS = "press"
    SCROLL = "scroll"
    UPLOAD = "upload"
    SUBMIT = "submit"
    SWITCH_TAB = "switch_tab"
    DESKTOP_CLICK = "desktop_click"
    DESKTOP_TYPE = "desktop_type"
    HOTKEY = "hotkey"
    NOTE = "note"


class Modifier(StrEnum):
    """A modifier key held during an action."""

    ALT = "Alt"
    CONTROL = "Control"
    META = "Meta"
    SHIFT = "Shift"


class SecretPlaceholder(FrozenModel):
    """Stands where a sensitive value was entered; the value itself is never stored."""

    secret: Literal[True] = True
    label: str | None = None


class Observation(FrozenModel):
    """What was seen at one moment. Anything not observed is ``None``."""

    at: AwareDatetime | None = None
    url: str | None = None
    title: str | None = None
    aria_snapshot: str | None = None
    screenshot: MediaRef | None = None
    window_title: str | None = None
    app: str | None = None


#: What showed a line of text: a status or alert message, a dialog, a heading, an item of a
#: list or table; None for anything else.
TextRole = Literal["status", "alert", "dialog", "heading", "item"]

#: Who started a navigation, as the browser tells: ``browser`` (the address bar, a bookmark,
#: back or forward, a reload: the person, outside the page), ``link`` (a link was followed),
#: ``form`` (a form was submitted), ``script`` (the page's code: ``location`` changes, history
#: API calls), ``refresh`` (a meta or HTTP refresh).
NavigationInitiator = Literal["browser", "link", "form", "script", "refresh"]


class TextChange(FrozenModel):
    """A line of visible text that appeared on (or disappeared from) the page.

    ``gone``: it appeared and disappeared again before the page settled (a toast, a spinner).
    """

    text: str = Field(min_length=1, max_length=500)
    role: TextRole | None = None
    gone: bool = False


class FieldChange(FrozenModel):
    """A field whose value the page itself changed (never one acted on, never a secret)."""

    field: str = Field(max_length=500)
    value: str = Field(max_length=5000)


class RequestSeen(FrozenModel):
    """A request an action caused: its method (``WS`` for a socket message) and path."""

    method: str = Field(min_length=1, max_length=16)
    path: str = Field(max_length=2000)
    status: int | None = None


class BrowserDialog(FrozenModel):
    """One of the browser's own dialogs (``alert``, ``confirm``, ``prompt``) an action led to,
    and how the person answered: ``accepted`` is OK (never what was typed into a prompt)."""

    kind: Literal["alert", "confirm", "prompt"]
    message: str = Field(default="", max_length=500)
    accepted: bool = True


class Effects(FrozenModel):
    """What the page did in response to an action, as the page itself saw it.

    Changes are attributed to the action that caused them: by time (what happened after it
    began and before the next action) and by cause (what a request, a timer or a socket message
    it started led to, even after the next action began). ``settled``: the page was quiet for a
    moment after it; False when the next action or the end of the recording came first (more
    may have followed). ``texts_known`` False: the page was too large to read its text cheaply,
    so no text change is known (not: none happened). ``first_change_at``: when the DOM first
    changed after the action began, or the page began to unload (None: neither happened, or
    it was not observed).
    """

    dom_changed: bool = False
    texts_known: bool = True
    texts_added: tuple[TextChange, ...] = ()
    texts_removed: tuple[TextChange, ...] = ()
    items_added: int = Field(default=0, ge=0)
    items_removed: int = Field(default=0, ge=0)
    dialogs_opened: int = Field(default=0, ge=0)
    dialogs_closed: int = Field(default=0, ge=0)
    browser_dialogs: tuple[BrowserDialog, ...] = ()
    values_changed: tuple[FieldChange, ...] = ()
    requests: tuple[RequestSeen, ...] = ()
    left_page: bool = False
    settled: bool = False
    first_change_at: AwareDatetime | None = None

    @property
    def visible(self) -> bool:
        """Whether the person could see the page respond (text, items, dialogs, values, a new
        page): more than a change of focus or style."""
        return bool(
            self.texts_added
            or self.texts_removed
            or self.items_added
            or self.items_removed
            or self.dialogs_opened
            or self.dialogs_closed
            or self.browser_dialogs
            or self.values_changed
            or self.left_page
        )


class ScrollDelta(FrozenModel):
    """How far a scroll moved, in pixels."""

    dx: float = 0
    dy: float = 0


class Event(FrozenModel):
    """One observed action with what was seen before and after it.

    ``effect`` says whether the action changed the page (the DOM or the URL) after it; ``None``
    when that was not observed. ``effects`` says what it changed (``None``: not observed).
    ``options`` are the choices a select offered. ``initiated_by`` says who started a
    navigation. ``injected`` marks input Procedura itself sent.
    """

    action: ActionKind
    at: AwareDatetime
    ended_at: AwareDatetime | None = None
    target: Target | None = None
    value: str | SecretPlaceholder | None = None
    url: str | None = None
    typed: bool | None = None
    key: str | None = None
    modifiers: tuple[Modifier, ...] = ()
    point: Point | None = None
    scroll: ScrollDelta | None = None
    files: tuple[str, ...] = ()
    tab: str | None = None
    frame: str | None = None
    injected: bool = False
    effect: bool | None = None
    effects: Effects | None = None
    options: tuple[str, ...] = ()
    initiated_by: NavigationInitiator | None = None
    before: Observation | None = None
    after: Observation | None = None

    @property
    def is_secret(self) -> bool:
        """Whether the value was sensitive and replaced by a placeholder."""
        return isinstance(self.value, SecretPlaceholder)

    @model_validator(mode="after")
    def _no_plain_secret(self) -> Event:
        if self.target is not None and self.target.is_sensitive and isinstance(self.value, str):
            raise ValueError(
                'a password field\'s value is stored in plain text; record it as {"secret": true}'
            )
        if self.ended_at is not None and self.ended_at < self.at:
            raise ValueError("ended_at is before at")
        return self


class Trajectory(FrozenModel):
    """A demonstration: the stated intent and the ordered events observed.

    ``incomplete`` marks a recording that ended abruptly (a crash, ``kill -9``): the events up to
    then are kept, never silently discarded.
    """

    schema_version: Literal[1] = SCHEMA_VERSION
    document: Literal["trajectory"] = "trajectory"
    # The pattern is checked where documents come in (core.documents), not here: a library
    # written before it was checked still opens.
    id: str = Field(
        default_factory=new_id,
        min_length=1,
        max_length=64,
        json_schema_extra={"pattern": ID_PATTERN},
    )
    intent: str = ""
    kind: TrajectoryKind = TrajectoryKind.WEB
    start_url: str | None = None
    start_app: str | None = None
    started_at: AwareDatetime = Field(default_factory=utcnow)
    ended_at: AwareDatetime | None = None
    recorder: str | None = None
    incomplete: bool = False
    events: tuple[Event, ...] = ()

    @model_validator(mode="after")
    def _ordered(self) -> Trajectory:
        if self.ended_at is not None and self.ended_at < self.started_at:
            raise ValueError("ended_at is before started_at")
        return self
