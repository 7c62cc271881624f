"""What a replay carries from step to step: the version and values, where in the workflow
the steps are (a call, a loop's round, a branch), and what the whole run shares."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Literal

from desktop_app.core.models.run import Run, RunStep
from desktop_app.core.models.target import Locator
from desktop_app.core.models.workflow import WorkflowVersion
from desktop_app.core.replay.lessons import Lessons
from desktop_app.core.replay.parameters import BoundParameters

__all__ = ["Context", "ReplayEvent", "ReplayOutcome", "Shared"]


@dataclass(frozen=True, slots=True)
class ReplayEvent:
    """Progress for a front end: a step started (``step`` None) or finished."""

    index: int
    title: str
    step: RunStep | None = None
    note: str = ""
    depth: int = 0
    """How deep the step shows under the blocks and calls it is in."""


@dataclass
class ReplayOutcome:
    """A finished run and what it taught."""

    run: Run
    lessons: Lessons = field(default_factory=Lessons)


@dataclass(slots=True)
class Shared:
    """What every part of one run shares, however deep in calls and blocks.

    Attributes:
        irreversible_done: how many irreversible steps were done so far (a ``try`` never falls
            back after one).
        learned: per step id, the locator a heal found in an earlier round of a loop, as a
            template of the round's values: the next round tries it before healing again.
    """

    irreversible_done: int = 0
    learned: dict[str, Locator] = field(default_factory=dict)


@dataclass(slots=True)
class Context:
    """Where the steps being run are, and with which values.

    Attributes:
        prefix: put before a step's id in the run record (a call's ``<call id>/``, a loop
            round's ``<loop id>#2/``).
        depth: how deep in calls (a bound on calls calling calls).
        level: how deep the steps show under the blocks and calls they are in (the record's
            ``depth``; a loop's rounds show under it, their steps under each round).
        iteration: the innermost loop's round, if any.
        branch: the way the innermost ``if`` or ``try`` took, if any.
        loop_values: the names the innermost loops set for this round (item and fields).
        confirmed: for a loop that confirms irreversible steps once, the steps a person
            confirmed already (None: confirm for each round).
    """

    version: WorkflowVersion
    params: BoundParameters
    prefix: str
    depth: int
    history: list[str] = field(default_factory=list)
    shared: Shared = field(default_factory=Shared)
    level: int = 0
    iteration: int | None = None
    branch: Literal["steps", "otherwise"] | None = None
    loop_values: frozenset[str] = frozenset()
    confirmed: set[str] | None = None

    def inside(self, prefix: str, **changes: object) -> Context:
        """A context for steps one block deeper, their ids after *prefix*."""
        changes.setdefault("level", self.level + 1)
        return dataclasses.replace(self, prefix=prefix, **changes)  # type: ignore[arg-type]
