"""What every step has: an id, a title, expectations, a timeout, and how it may be done."""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from desktop_app.core.models.common import FrozenModel, MediaRef, new_id
from desktop_app.core.models.conditions import Expectation
from desktop_app.core.models.target import Target

__all__ = ["DEFAULT_TIMEOUT_S", "StepBase"]

DEFAULT_TIMEOUT_S: Final = 10.0


def _new_step_id() -> str:
    return new_id()[:12]


class StepBase(FrozenModel):
    """What every kind of step has."""

    id: str = Field(default_factory=_new_step_id, min_length=1, max_length=64)
    title: str = Field(min_length=1, max_length=500)
    expectations: tuple[Expectation, ...] = ()
    timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0, le=3600)
    irreversible: bool = False
    optional: bool = False
    dialog: Literal["accept", "dismiss"] | None = None
    """How to answer a question the browser itself asks while the step acts (a ``confirm``, a
    ``prompt``): OK or Cancel, as the person did when recording. None: the step expects no
    question; one that comes anyway is cancelled and the step fails (an ``alert``, which asks
    nothing, is always acknowledged)."""
    screenshot: MediaRef | None = None
    source_events: tuple[int, ...] = ()
    reacts: bool = False
    """The page reacted to this step's action when it was recorded (its document changed, it
    sent a request, it went to another page). A replay the page does not react to is done once
    more when the page has caught up, and fails when it still gets no reaction: a click that
    did nothing has not happened."""

    @property
    def target_or_none(self) -> Target | None:
        """The element the step acts on, if it has one."""
        target = getattr(self, "target", None)
        return target if isinstance(target, Target) else None
