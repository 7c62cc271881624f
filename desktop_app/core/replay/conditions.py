"""Whether a block's condition holds: on the page (through the browser or the desktop), or
between two values (a parameter, a variable a step read, a loop's item, and what it is
compared with)."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Final

from desktop_app.core.models.run import FailureKind
from desktop_app.core.models.workflow import Condition, Expectation, ValueCompare
from desktop_app.core.replay.ladder import StepFailed
from desktop_app.core.replay.render import render_condition

__all__ = ["as_number", "compare", "condition_holds"]

#: A number as people write it in a page or a list: an optional sign, digits (with ``,``
#: between groups of three), an optional decimal part; currency signs and words around it are
#: let be ("$1,234.50", "12 items").
_NUMBER: Final = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")


def as_number(text: str) -> float | None:
    """The one number *text* holds, or None when it holds none or several (never a guess)."""
    found = _NUMBER.findall(text)
    if len(found) != 1:
        return None
    return float(found[0].replace(",", ""))


def _same(text: str) -> str:
    return " ".join(text.split()).casefold()


def compare(check: ValueCompare) -> bool:
    """Whether the (rendered) comparison holds.

    Raises:
        StepFailed: a ``matches`` pattern is no regular expression.
    """
    value, to = check.value, check.to
    match check.op:
        case "empty":
            return not value.strip()
        case "not_empty":
            return bool(value.strip())
        case "equals" | "not_equals":
            a, b = as_number(value), as_number(to)
            numbers = a is not None and b is not None and _NUMBER.fullmatch(value.strip())
            same = (
                a == b if numbers and _NUMBER.fullmatch(to.strip()) else _same(value) == _same(to)
            )
            return same if check.op == "equals" else not same
        case "contains":
            return _same(to) in _same(value)
        case "not_contains":
            return _same(to) not in _same(value)
        case "matches":
            try:
                return re.search(to, value) is not None
            except re.error as exc:
                raise StepFailed(f"{to!r} is not a regular expression: {exc}") from None
        case "greater" | "less":
            a, b = as_number(value), as_number(to)
            if a is None or b is None:
                return False
            return a > b if check.op == "greater" else a < b


async def condition_holds(
    condition: Condition,
    values: Mapping[str, str],
    *,
    timeout_s: float,
    on_page: Callable[[Expectation, float], Awaitable[bool]],
) -> bool:
    """Whether *condition*, its placeholders filled from *values*, holds (a condition about the
    page is given *timeout_s* to; ``on_page`` looks).

    Raises:
        StepFailed: a placeholder has no value here, or a pattern is no regular expression.
    """
    try:
        rendered = render_condition(condition, values)
    except KeyError as exc:
        raise StepFailed(
            f"{{{exc.args[0]}}} has no value here (a step that was not done sets it)",
            kind=FailureKind.NOT_AS_EXPECTED,
        ) from None
    if isinstance(rendered, ValueCompare):
        return compare(rendered)
    return await on_page(rendered, timeout_s)
