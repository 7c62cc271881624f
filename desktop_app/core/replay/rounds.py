"""What one round of a loop teaches the next: the locator a heal found for a step, kept as a
template of the round's values, is tried by the next rounds before healing again (an
experience learned on the first item serves the second).

Only a locator that finds the item the same way the step does is kept: when the step's own
locators name the item (``{item}``), so must the learned one; one that pins a record or a
position never is (it would find the first round's row again).
"""

from __future__ import annotations

from collections.abc import Mapping, Set

from desktop_app.core.items import pins_record
from desktop_app.core.models.target import Locator, Target
from desktop_app.core.templating import placeholders, render, templated

__all__ = ["learned_locator", "with_learned"]


def learned_locator(
    found: Locator, recorded: Target, values: Mapping[str, str], loop_names: Set[str]
) -> Locator | None:
    """*found* (the locator a heal used this round) as a template of the round's loop values,
    or None when it may not serve another round."""
    if pins_record(found):
        return None
    round_values = {name: values[name] for name in loop_names if name in values}
    learned = found.with_texts(lambda text: templated(text, round_values))
    needed = {n for loc in recorded.locators for t in loc.texts for n in placeholders(t)}
    has = {n for t in learned.texts for n in placeholders(t)}
    if (needed & loop_names) - has:
        return None
    return learned


def with_learned(target: Target, learned: Locator | None, values: Mapping[str, str]) -> Target:
    """*target* with *learned* (rendered for this round) tried second: never first, so an
    element found by it is not taken as found the way it was recorded (an irreversible step
    still asks)."""
    if learned is None:
        return target
    try:
        rendered = learned.with_texts(lambda text: render(text, values))
    except KeyError:
        return target
    if rendered in target.locators:
        return target
    locators = (*target.locators[:1], rendered, *target.locators[1:])
    return target.model_copy(update={"locators": locators})
