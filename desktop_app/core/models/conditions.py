"""What a step expects, a success check checks and a block decides by: expectations about the
page or the desktop, and conditions (expectations plus an element merely present and a value
compared with another)."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, model_validator

from desktop_app.core.models.common import FrozenModel, MediaRef
from desktop_app.core.models.target import Target

__all__ = [
    "COMPARISONS",
    "Comparison",
    "Condition",
    "ElementHidden",
    "ElementPresent",
    "ElementVisible",
    "Expectation",
    "ImageVisible",
    "TextPresent",
    "TitleMatches",
    "UrlMatches",
    "ValueCompare",
    "WindowTitleMatches",
]


class UrlMatches(FrozenModel):
    """The page URL matches a pattern (``*`` matches anything; ``regex`` for a regular one)."""

    kind: Literal["url"] = "url"
    pattern: str = Field(min_length=1)
    match: Literal["glob", "regex", "exact"] = "glob"


class TitleMatches(FrozenModel):
    """The page title contains this text."""

    kind: Literal["title"] = "title"
    text: str = Field(min_length=1)


class ElementVisible(FrozenModel):
    """An element is visible."""

    kind: Literal["visible"] = "visible"
    target: Target


class ElementHidden(FrozenModel):
    """An element is hidden or gone."""

    kind: Literal["hidden"] = "hidden"
    target: Target


class ElementPresent(FrozenModel):
    """An element is in the page, shown or not (a hidden row, a collapsed panel)."""

    kind: Literal["present"] = "present"
    target: Target


class TextPresent(FrozenModel):
    """Some text is on the page."""

    kind: Literal["text"] = "text"
    text: str = Field(min_length=1)


class WindowTitleMatches(FrozenModel):
    """The active desktop window's title matches a pattern."""

    kind: Literal["window_title"] = "window_title"
    pattern: str = Field(min_length=1)
    match: Literal["glob", "regex", "exact"] = "glob"


class ImageVisible(FrozenModel):
    """A recorded image anchor is visible on screen."""

    kind: Literal["image"] = "image"
    anchor: MediaRef


Expectation = Annotated[
    UrlMatches
    | TitleMatches
    | ElementVisible
    | ElementHidden
    | ElementPresent
    | TextPresent
    | WindowTitleMatches
    | ImageVisible,
    Field(discriminator="kind"),
]


Comparison = Literal[
    "equals",
    "not_equals",
    "contains",
    "not_contains",
    "matches",
    "empty",
    "not_empty",
    "greater",
    "less",
]
#: How a :class:`ValueCompare` compares, in words (the editor's choices, the guide's phrases).
COMPARISONS: dict[str, str] = {
    "equals": "is",
    "not_equals": "is not",
    "contains": "contains",
    "not_contains": "does not contain",
    "matches": "matches the pattern",
    "empty": "is empty",
    "not_empty": "is not empty",
    "greater": "is more than",
    "less": "is less than",
}


class ValueCompare(FrozenModel):
    """A value (a ``{parameter}``, a ``{variable}`` a step extracted, a loop's ``{item}``)
    compared with another.

    Text compares as text, ignoring case and the spaces around it; ``greater`` and ``less``
    compare numbers (a value that is no number makes the condition false, never a guess);
    ``matches`` is a regular expression searched in the value; ``empty`` and ``not_empty``
    ignore ``to``.
    """

    kind: Literal["value"] = "value"
    value: str = Field(min_length=1)
    op: Comparison = "equals"
    to: str = ""

    @model_validator(mode="after")
    def _pattern_compiles(self) -> ValueCompare:
        if self.op == "matches" and "{" not in self.to:
            try:
                re.compile(self.to)
            except re.error as exc:
                raise ValueError(f"not a regular expression: {exc}") from None
        return self


Condition = Annotated[
    UrlMatches
    | TitleMatches
    | ElementVisible
    | ElementHidden
    | ElementPresent
    | TextPresent
    | WindowTitleMatches
    | ImageVisible
    | ValueCompare,
    Field(discriminator="kind"),
]
"""What an ``if`` or a ``repeat_until`` decides by: any expectation, or a value compared."""
