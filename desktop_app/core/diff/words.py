"""Values in words as a diff shows them, and how alike two texts are (a step in words is
:func:`desktop_app.core.step_kinds.describe_step`)."""

from __future__ import annotations

import difflib
from typing import Any

from pydantic import BaseModel

from desktop_app.core.describe import describe_condition, describe_source
from desktop_app.core.models.workflow import (
    CsvRows,
    ElementHidden,
    ElementPresent,
    ElementVisible,
    ImageVisible,
    ListItems,
    PageItems,
    TextPresent,
    TitleMatches,
    UrlMatches,
    ValueCompare,
    WindowTitleMatches,
)
from desktop_app.core.step_kinds.spec import number, quote

__all__: list[str] = []


def _show(name: str, value: Any) -> str:
    """A field value in words."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if name == "timeout_s" and isinstance(value, int | float):
        return f"{number(value)} s"
    if name == "screenshot":
        return "recorded"
    if isinstance(value, int | float):
        return number(value)
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, UrlMatches | TitleMatches | TextPresent | WindowTitleMatches):
        return describe_condition(value)
    if isinstance(value, ElementVisible | ElementHidden | ElementPresent | ImageVisible):
        return describe_condition(value)
    if isinstance(value, ValueCompare):
        return describe_condition(value)
    if isinstance(value, ListItems | CsvRows | PageItems):
        return describe_source(value)
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "none"
    if isinstance(value, tuple | list):
        return ", ".join(str(v) for v in value) or "none"
    if isinstance(value, BaseModel):
        return ", ".join(f"{k}={_show(k, v)}" for k, v in value.model_dump().items())
    return str(value)


def _similarity(a: str, b: str) -> float:
    if a == b:
        return 1.0
    return difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio()
