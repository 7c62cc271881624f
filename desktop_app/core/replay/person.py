"""The last rung of the ladder: a person, asked through whatever front end started the run.

The GUI answers with dialogs, the command line on the terminal. Without a person (``None``, as
under ``--non-interactive``) every question is answered "no": the step fails with a report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from desktop_app.core.models.common import BoundingBox
from desktop_app.core.replay.browser import Handle

__all__ = ["Choice", "Person", "PersonAnswer", "Question"]


@dataclass(frozen=True, slots=True)
class Choice:
    """An element the person may point at: how a person names it (``the "Save" button``),
    how to reach it, how like the recorded one it is (0–1), and the locator, for the curious."""

    label: str
    handle: Handle
    score: float | None = None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Question:
    """What replay needs from a person.

    ``kind`` is ``confirm`` (may this irreversible step act on the element it found?) or
    ``locate`` (which element does this step mean? ``choices`` are the likeliest ones, best
    first; ``suggested`` is the index of a clear best, None when none stands out).

    ``element`` names the element as a person sees it (``the "Delete" button``), never by a
    locator; ``locator`` is how the run found it, for the curious. ``picture`` is the step's
    recorded screenshot (the element outlined in it) and ``box`` the element's box in it, in
    the page's CSS pixels, when the recording has them.
    """

    kind: Literal["confirm", "locate"]
    step_title: str
    message: str
    element: str | None = None
    choices: tuple[Choice, ...] = ()
    suggested: int | None = None
    locator: str | None = None
    picture: str | None = None
    box: BoundingBox | None = None


@dataclass(frozen=True, slots=True)
class PersonAnswer:
    """The person's answer: confirm (yes), decline (no), pick an element, skip, or abort."""

    action: Literal["confirm", "decline", "pick", "skip", "abort"]
    handle: Handle | None = None
    note: str = ""


class Person(Protocol):
    """Someone who can answer a :class:`Question` while a run waits."""

    async def ask(self, question: Question) -> PersonAnswer:
        """The answer (the run waits for it)."""
        ...
