"""Steps that hold steps: ``if`` … ``otherwise``, ``for_each`` item, ``repeat_until``, ``try`` …
``otherwise``, and what a ``for_each`` goes over.

A block's own steps are ``steps`` (the body: what an ``if`` does when its condition holds, what a
loop does for each item, what a ``try`` tries); ``if`` and ``try`` have ``otherwise`` too (what is
done when the condition does not hold, or when a step tried failed). Blocks nest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Annotated, Final, Literal

from pydantic import Field

from desktop_app.core.models.common import FrozenModel, Identifier
from desktop_app.core.models.conditions import Condition
from desktop_app.core.models.step_base import StepBase

if TYPE_CHECKING:
    from desktop_app.core.models.workflow import Step

__all__ = [
    "BLOCK_KINDS",
    "MAX_DEPTH",
    "Block",
    "CsvRows",
    "ForEachStep",
    "IfStep",
    "ItemSource",
    "ListItems",
    "PageItems",
    "RepeatUntilStep",
    "TryStep",
    "branches",
    "item_variables",
    "map_steps",
    "walk",
]

#: How deep blocks may nest (a loop in a condition in a loop…).
MAX_DEPTH: Final = 6
#: How long an ``if`` waits for its condition to hold before it takes ``otherwise``, by default.
IF_WAIT_S: Final = 1.0
#: The kinds of step that hold steps.
BLOCK_KINDS: Final = frozenset({"if", "for_each", "repeat_until", "try"})


# ── what a loop goes over ───────────────────────────────────────────────────────────────────


class ListItems(FrozenModel):
    """The items of a list: a ``list`` parameter or a variable (an ``extract``, an agent's
    answer), one item per line; blank lines are no items."""

    kind: Literal["list"] = "list"
    value: str = Field(min_length=1)
    """A template, e.g. ``{invoices}``."""


class CsvRows(FrozenModel):
    """The rows of a CSV file (UTF-8, a header row first): the item is the row's value in
    ``column``; ``fields`` names other columns, each a variable of the iteration."""

    kind: Literal["csv"] = "csv"
    path: str = Field(min_length=1)
    """The file, a template (``{orders_file}``): a run never reads a file nobody gave it."""
    column: str = Field(min_length=1)
    fields: dict[Identifier, str] = Field(default_factory=dict)
    """Variable name → column header."""


class PageItems(FrozenModel):
    """The items of a list or table on the page: the elements ``css`` matches (rows, list items,
    cards), in page order, holding the text ``contains`` (every one when None), read once when
    the loop begins.

    The item is the whole text of the element ``key`` finds inside it (a cell, a title; the
    item's own text when None). Steps inside find the item again by that text (a locator
    ``within`` the item holding "{item}"), never by its position: an item acted on may move or
    go, and two items showing the same text stop the run rather than guess.
    """

    kind: Literal["page"] = "page"
    css: str = Field(min_length=1)
    contains: str | None = None
    key: str | None = None
    fields: dict[Identifier, str] = Field(default_factory=dict)
    """Variable name → a CSS selector inside the item, whose text the variable holds."""


ItemSource = Annotated[ListItems | CsvRows | PageItems, Field(discriminator="kind")]


# ── blocks ──────────────────────────────────────────────────────────────────────────────────


class IfStep(StepBase):
    """Do ``steps`` when the condition holds, else ``otherwise``.

    The condition is looked at once the page is ready, and given ``timeout_s`` to hold (a
    dialog that comes a moment after the page): when it does not, ``otherwise`` is done.
    """

    kind: Literal["if"] = "if"
    condition: Condition
    timeout_s: float = Field(default=IF_WAIT_S, gt=0, le=3600)
    steps: tuple[Step, ...] = ()
    otherwise: tuple[Step, ...] = ()


class ForEachStep(StepBase):
    """Do ``steps`` once for every item, with the item in ``{item}`` (the name ``item`` says)
    and its fields in their variables; at most ``limit`` items (more fails the step before
    the first is done: a loop never stops half-way through a list it was not told to cut).

    ``confirm``: an irreversible step inside is confirmed for ``each`` item, or ``once`` for
    the whole run (the first confirmation answers for the items after it).
    """

    kind: Literal["for_each"] = "for_each"
    over: ItemSource
    item: Identifier = "item"
    limit: int = Field(default=100, ge=1, le=10_000)
    confirm: Literal["each", "once"] = "each"
    steps: tuple[Step, ...] = Field(min_length=1)


class RepeatUntilStep(StepBase):
    """Do ``steps`` until the condition holds (looked at before each round, so nothing is done
    when it already holds); failing after ``max_rounds`` rounds without it holding."""

    kind: Literal["repeat_until"] = "repeat_until"
    condition: Condition
    timeout_s: float = Field(default=IF_WAIT_S, gt=0, le=3600)
    """How long the condition may take to hold, each time it is looked at."""
    max_rounds: int = Field(default=20, ge=1, le=1000)
    confirm: Literal["each", "once"] = "each"
    steps: tuple[Step, ...] = Field(min_length=1)


class TryStep(StepBase):
    """Do ``steps``; when one fails, ``otherwise`` instead, from where the failure left the
    page. A failure after an irreversible step was done is never caught: the run stops."""

    kind: Literal["try"] = "try"
    steps: tuple[Step, ...] = Field(min_length=1)
    otherwise: tuple[Step, ...] = Field(min_length=1)


Block = IfStep | ForEachStep | RepeatUntilStep | TryStep


def branches(step: object) -> tuple[tuple[str, tuple[Step, ...]], ...]:
    """The lists of steps *step* holds, by field name (``steps``, ``otherwise``); none for a
    step that is no block."""
    if isinstance(step, IfStep | TryStep):
        return (("steps", step.steps), ("otherwise", step.otherwise))
    if isinstance(step, ForEachStep | RepeatUntilStep):
        return (("steps", step.steps),)
    return ()


def walk(steps: tuple[Step, ...]) -> Iterator[Step]:
    """Every step in *steps* and in the blocks among them, each block before its own steps."""
    for step in steps:
        yield step
        for _name, inner in branches(step):
            yield from walk(inner)


def map_steps(steps: tuple[Step, ...], change: Callable[[Step, bool], Step]) -> tuple[Step, ...]:
    """*steps* with ``change(step, in_loop)`` applied to every step that is no block, however
    deep (*in_loop*: inside a ``for_each`` or a ``repeat_until``); blocks are rebuilt around
    what their steps became."""
    return _mapped(steps, change, in_loop=False)


def _mapped(
    steps: tuple[Step, ...], change: Callable[[Step, bool], Step], *, in_loop: bool
) -> tuple[Step, ...]:
    result = []
    for step in steps:
        held = branches(step)
        if not held:
            result.append(change(step, in_loop))
            continue
        looping = in_loop or isinstance(step, ForEachStep | RepeatUntilStep)
        update = {name: _mapped(inner, change, in_loop=looping) for name, inner in held}
        result.append(step.model_copy(update=update))
    return tuple(result)


def item_variables(step: ForEachStep) -> tuple[str, ...]:
    """The variables each iteration of *step* sets: the item and its fields."""
    return (step.item, *step.over.fields) if not isinstance(step.over, ListItems) else (step.item,)
