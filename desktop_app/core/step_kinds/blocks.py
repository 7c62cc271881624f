"""The kinds of step that hold steps: if, for each, repeat until, try."""

from __future__ import annotations

from typing import Any, Final

from desktop_app.core.describe import describe_condition, describe_source
from desktop_app.core.models.workflow import (
    ForEachStep,
    IfStep,
    ListItems,
    RepeatUntilStep,
    TextPresent,
    TryStep,
)
from desktop_app.core.step_kinds.spec import KindField, KindSpec

__all__ = ["BLOCK_SPECS"]


def _shows_nothing_yet() -> TextPresent:
    # A condition still to be given its text: validation reports it until it has some.
    return TextPresent.model_construct(text="")


_BODY = KindField("steps", noun="steps inside")
_OTHERWISE = KindField("otherwise", noun="steps otherwise")
_CONFIRM = KindField(
    "confirm",
    "Confirm irreversible steps",
    "choice",
    "For each round, or once for the whole run",
    options=("each", "once"),
)

IF: Final = KindSpec(
    kind="if",
    model=IfStep,
    label="If",
    family="control",
    performer="procedura",
    target="none",
    fields=(
        KindField("condition", "If", "condition"),
        _BODY,
        _OTHERWISE,
    ),
    describe=lambda step: (
        f"if {describe_condition(step.condition)}: {len(step.steps)} step(s)"
        + (f", otherwise {len(step.otherwise)}" if step.otherwise else "")
    ),
    detail=lambda step: describe_condition(step.condition),
    blank=lambda title: IfStep.model_construct(
        title=title or "If the page shows…", condition=_shows_nothing_yet(), steps=(), otherwise=()
    ),
)

FOR_EACH: Final = KindSpec(
    kind="for_each",
    model=ForEachStep,
    label="For each",
    family="control",
    performer="procedura",
    target="none",
    fields=(
        KindField("over", "Over", "source", "What the loop goes over", noun="what it goes over"),
        KindField("item", "Each item is", "text", "The variable the item is in", noun="item"),
        KindField(
            "limit",
            "At most",
            "int",
            "More items fail the step",
            low=1,
            high=10_000,
            suffix=" items",
            noun="limit of items",
        ),
        _CONFIRM,
        _BODY,
    ),
    describe=lambda step: (
        f"for each {{{step.item}}} in {describe_source(step.over)} (at most {step.limit}): "
        f"{len(step.steps)} step(s)"
    ),
    detail=lambda step: describe_source(step.over),
    blank=lambda title: ForEachStep.model_construct(
        title=title or "For each item",
        over=ListItems.model_construct(value=""),
        item="item",
        limit=100,
        confirm="each",
        steps=(),
    ),
)

REPEAT_UNTIL: Final = KindSpec(
    kind="repeat_until",
    model=RepeatUntilStep,
    label="Repeat until",
    family="control",
    performer="procedura",
    target="none",
    fields=(
        KindField("condition", "Until", "condition"),
        KindField(
            "max_rounds",
            "At most",
            "int",
            "Fail after this many rounds",
            low=1,
            high=1000,
            suffix=" rounds",
            noun="limit of rounds",
        ),
        _CONFIRM,
        _BODY,
    ),
    describe=lambda step: (
        f"repeat until {describe_condition(step.condition)} (at most {step.max_rounds} "
        f"rounds): {len(step.steps)} step(s)"
    ),
    detail=lambda step: describe_condition(step.condition),
    blank=lambda title: RepeatUntilStep.model_construct(
        title=title or "Repeat until the page shows…",
        condition=_shows_nothing_yet(),
        max_rounds=20,
        confirm="each",
        steps=(),
    ),
)

TRY: Final = KindSpec(
    kind="try",
    model=TryStep,
    label="Try",
    family="control",
    performer="procedura",
    target="none",
    fields=(_BODY, _OTHERWISE),
    describe=lambda step: f"try {len(step.steps)} step(s), otherwise {len(step.otherwise)} step(s)",
    detail=lambda step: f"otherwise {len(step.otherwise)} step(s)",
    blank=lambda title: TryStep.model_construct(
        title=title or "Try, otherwise…", steps=(), otherwise=()
    ),
)

#: The kinds that hold steps.
BLOCK_SPECS: Final[tuple[KindSpec[Any], ...]] = (IF, FOR_EACH, REPEAT_UNTIL, TRY)
