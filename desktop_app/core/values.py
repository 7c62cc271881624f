"""A parameter's value as the text a person types for it — one rule for the run form, the run
record, "run again", the editor's defaults and the values a run binds.

``""`` for none, ``true``/``false`` for a yes/no, a number as digits (never an exponent, so
``1e-07`` is ``0.0000001`` and reads back as the same number), anything else as it is.
"""

from __future__ import annotations

import math
from decimal import Decimal

from desktop_app.core.models.common import JsonScalar

__all__ = ["value_text"]


def value_text(value: JsonScalar) -> str:
    """*value* as the raw text a person would type for it (see the module docstring)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return format(Decimal(repr(value)), "f") if math.isfinite(value) else repr(value)
    return str(value)
