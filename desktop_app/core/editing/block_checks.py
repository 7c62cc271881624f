"""What a block still needs, in words: steps inside, a condition with something to look for,
something to go over, an item name of its own.

:func:`block_problems` is called by :func:`desktop_app.core.editing.validate` for each block,
with the names known where the block is; the steps inside are checked like any other step.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final, Literal

from desktop_app.core.models.workflow import (
    Condition,
    CsvRows,
    ElementHidden,
    ElementPresent,
    ElementVisible,
    ForEachStep,
    IfStep,
    ListItems,
    PageItems,
    Parameter,
    ParameterType,
    RepeatUntilStep,
    Step,
    TextPresent,
    TitleMatches,
    TryStep,
    UrlMatches,
    ValueCompare,
    WindowTitleMatches,
    item_variables,
)
from desktop_app.core.templating import placeholders

__all__ = ["Problem", "block_problems", "condition_problems"]

#: One problem: its severity, what to do, and the field of the block it is in.
Problem = tuple[Literal["error", "warning"], str, str]

_IDENTIFIER: Final = re.compile(r"^[a-z_][a-z0-9_]*$")


def _named(step: Step) -> str:
    return f"'{step.title.strip()}'" if step.title.strip() else "this block"


def block_problems(
    step: Step, known: set[str], params: Mapping[str, Parameter], secrets: set[str]
) -> list[Problem]:
    """What block *step* still needs (nothing for a step that is no block); *known*: the
    parameters and variables known where it is."""
    found: list[Problem] = []
    name = _named(step)
    if isinstance(step, IfStep):
        if not step.steps and not step.otherwise:
            found.append(
                ("error", f"add a step inside {name}: what to do when the condition holds", "steps")
            )
        found += condition_problems(step.condition)
    elif isinstance(step, RepeatUntilStep):
        if not step.steps:
            found.append(("error", f"add a step inside {name}: what each round does", "steps"))
        found += condition_problems(step.condition)
    elif isinstance(step, TryStep):
        if not step.steps:
            found.append(("error", f"add a step inside {name}: what to try", "steps"))
        if not step.otherwise:
            found.append(
                (
                    "error",
                    f"add a step under Otherwise in {name}: what to do when a step tried fails",
                    "otherwise",
                )
            )
    elif isinstance(step, ForEachStep):
        if not step.steps:
            found.append(("error", f"add a step inside {name}: what to do with each item", "steps"))
        found += _source_problems(step, known, params, secrets)
    return found


def condition_problems(condition: Condition) -> list[Problem]:
    """What a block's condition still needs: text to look for, an address, a locator, a value."""
    if isinstance(condition, TextPresent | TitleMatches) and not condition.text.strip():
        return [("error", "the condition has no text yet: say which text to look for", _TEXT)]
    if isinstance(condition, UrlMatches | WindowTitleMatches) and not condition.pattern.strip():
        return [("error", "the condition has no pattern yet: give the pattern to match", _PATTERN)]
    if (
        isinstance(condition, ElementVisible | ElementHidden | ElementPresent)
        and not condition.target.locators
    ):
        return [("error", "the condition has no locator for its element: add one", "condition")]
    if isinstance(condition, ValueCompare):
        if not condition.value.strip():
            return [("error", _NO_VALUE, "condition.value")]
        if condition.op not in ("empty", "not_empty") and not condition.to.strip():
            return [("warning", _NOTHING_TO_COMPARE, "condition.to")]
    return []


_TEXT: Final = "condition.text"
_PATTERN: Final = "condition.pattern"
_NO_VALUE: Final = "say which value the condition looks at, e.g. {status}"
_NOTHING_TO_COMPARE: Final = "the value is compared with nothing; say with what, or use “is empty”"
_NO_LIST: Final = "say what the loop goes over, e.g. {invoices} (a list parameter)"


def _source_problems(
    step: ForEachStep, known: set[str], params: Mapping[str, Parameter], secrets: set[str]
) -> list[Problem]:
    found: list[Problem] = []
    source = step.over
    if isinstance(source, ListItems):
        value = source.value.strip()
        if not value:
            found.append(
                (
                    "error",
                    "say what the loop goes over, e.g. {invoices} (a list parameter)",
                    "over.value",
                )
            )
        for used in placeholders(value):
            if used in secrets:
                found.append(
                    ("error", "a loop cannot go over a secret: its items would show", "over.value")
                )
            param = params.get(used)
            if param is not None and param.type not in (ParameterType.LIST, ParameterType.SECRET):
                found.append(
                    (
                        "warning",
                        f"{{{used}}} is a {param.type.value} parameter, so the loop has one "
                        "item; make it a list (one item per line) to go over several",
                        "over.value",
                    )
                )
    elif isinstance(source, CsvRows):
        if not source.path.strip():
            found.append(("error", "say which CSV file to read, e.g. {orders_file}", "over.path"))
        if not source.column.strip():
            found.append(("error", "say which column holds the item", "over.column"))
    elif isinstance(source, PageItems) and not source.css.strip():
        found.append(
            ("error", "say which elements on the page are the items, e.g. tr or li", "over.css")
        )
    if not _IDENTIFIER.fullmatch(step.item):
        found.append(
            (
                "error",
                f"the item is called {step.item!r}: use lowercase letters, digits and _ "
                "(e.g. invoice)",
                "item",
            )
        )
    names = item_variables(step)
    clash = next((n for n in names if n in known), None)
    if clash is not None:
        found.append(
            (
                "error",
                f"{{{clash}}} is already a parameter or a variable; give the loop's item "
                "another name",
                "item" if clash == step.item else "over.fields",
            )
        )
    if len(set(names)) != len(names):
        found.append(("error", "a field has the item's name; rename one of them", "over.fields"))
    return found
