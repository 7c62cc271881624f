"""Where each step of a workflow is: its JSON path (``steps[3].otherwise[0]``), its number as a
person counts it (``4.2``), and the block and branch holding it.

A block's steps are numbered under the block's own number, on through its branches: an ``if``
numbered 4 with two steps and one step otherwise holds 4.1 and 4.2, and 4.3 otherwise. The
guide, the diff and the bundle's messages count steps this way.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from desktop_app.core.models.workflow import Step, branches

__all__ = ["StepPlace", "step_places"]


@dataclass(frozen=True, slots=True)
class StepPlace:
    """One step and where it is.

    ``index`` is its position in the list holding it (the workflow's steps, or a block's
    ``steps`` or ``otherwise``); ``parent`` is the place of the block holding it (None at the
    top), ``branch`` which of the block's lists (``steps`` or ``otherwise``).
    """

    step: Step
    path: str
    number: str
    index: int
    parent: StepPlace | None = None
    branch: str | None = None

    @property
    def depth(self) -> int:
        """How many blocks hold the step (0 at the top)."""
        return 0 if self.parent is None else self.parent.depth + 1


def step_places(steps: tuple[Step, ...]) -> Iterator[StepPlace]:
    """Every step in *steps* and inside the blocks among them, each block before its steps."""
    yield from _places(steps, "steps", "", 1, None, None)


def _places(
    steps: tuple[Step, ...],
    where: str,
    prefix: str,
    start: int,
    parent: StepPlace | None,
    branch: str | None,
) -> Iterator[StepPlace]:
    for i, step in enumerate(steps):
        place = StepPlace(step, f"{where}[{i}]", f"{prefix}{start + i}", i, parent, branch)
        yield place
        counted = 1
        for name, inner in branches(step):
            yield from _places(
                inner, f"{place.path}.{name}", f"{place.number}.", counted, place, name
            )
            counted += len(inner)
