"""A recorded demonstration: what was observed, in order, never edited."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import AwareDatetime, Field, model_validator

from desktop_app.core.models.common import (
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
    "Event",
    "Modifier",
    "Observation",
    "ScrollDelta",
    "SecretPlaceholder",
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


class ScrollDelta(FrozenModel):
    """How far a scroll moved, in pixels."""

    dx: float = 0
    dy: float = 0


class Event(FrozenModel):
    """One observed action with what was seen before and after it.

    ``effect`` says whether the action visibly changed the page (the DOM or the URL) shortly
    after it; ``None`` when that was not observed. ``injected`` marks input Procedura itself sent.
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
    id: str = Field(default_factory=new_id, min_length=1, max_length=64)
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
