"""Locators that learn which of them works: how each of a step's locators did across the runs of
a version, used to rank them in the version a repair proposes, and said in its change note.

A run's record names the locator that found each step's element and how (the first recorded
one, a lower recorded one, a heal). From it: the locator that found the element found it once
more; the recorded locators ranked before it were tried and failed (all of them, when the step
healed). A proposal puts the locators that found the element most often first and those that
only failed last, keeping the rest in their order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from desktop_app.core.models.run import Resolution, Run, RunStatus, StepStatus
from desktop_app.core.models.target import Locator
from desktop_app.core.models.workflow import Step
from desktop_app.core.replay.render import render_text

__all__ = ["RECENT", "LocatorEvidence", "evidence_of", "ranked"]

#: Evidence is read from at most this many of the version's newest finished runs.
RECENT: Final = 50


@dataclass(frozen=True, slots=True)
class LocatorEvidence:
    """How a step's locators did over some runs (by :meth:`Locator.describe`)."""

    runs: int = 0
    found: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)

    def score(self, locator: Locator) -> int:
        """Runs it found the element in, less runs it was tried in and failed."""
        key = locator.describe()
        return self.found[key] - self.failed[key]

    def words(self, title: str) -> str | None:
        """The evidence in one clause for a change note, or None when there is none."""
        if not self.runs or not (self.found or self.failed):
            return None
        parts = [f"{key} found it in {n}" for key, n in self.found.most_common(2)]
        parts += [f"{key} failed in {n}" for key, n in self.failed.most_common(2)]
        return f"'{title}' over {self.runs} run(s): " + ", ".join(parts)


def evidence_of(step: Step, version: int, runs: Iterable[Run]) -> LocatorEvidence:
    """How *step*'s locators did in the finished runs of *version* among *runs* (the newest
    :data:`RECENT`)."""
    target = step.target_or_none
    if target is None:
        return LocatorEvidence()
    mine = [r for r in runs if r.workflow_version == version and r.status is not RunStatus.RUNNING][
        :RECENT
    ]
    found: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    counted = 0
    for run in mine:
        record = next((s for s in run.steps if s.step_id == step.id), None)
        if record is None or record.status is not StepStatus.SUCCEEDED:
            continue
        if record.resolution is None or record.resolution is Resolution.NOT_NEEDED:
            continue
        counted += 1
        values = {k: str(v) for k, v in run.parameters.items()}
        recorded = [render_text(loc.describe(), values) for loc in target.locators]
        used = record.locator.describe() if record.locator is not None else None
        rank = recorded.index(used) if used in recorded else len(recorded)
        if record.resolution is Resolution.DIRECT:
            rank = 0
        if used is not None and rank < len(recorded):
            found[target.locators[rank].describe()] += 1
        elif used is not None:
            found[used] += 1
        for loc in target.locators[:rank]:
            failed[loc.describe()] += 1
    return LocatorEvidence(runs=counted, found=found, failed=failed)


def ranked(locators: Sequence[Locator], evidence: LocatorEvidence) -> list[Locator]:
    """*locators* with those that found the element most often first and those that only
    failed last; among equals, their order."""
    return sorted(locators, key=lambda loc: -evidence.score(loc))
