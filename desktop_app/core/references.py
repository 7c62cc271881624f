"""Turning what a person typed (an id, an id prefix, a name) into one id, or a helpful error."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence

from desktop_app.core.errors import AmbiguousReferenceError, NotFoundError

__all__ = ["resolve_reference"]


def resolve_reference(
    ref: str,
    matches: Sequence[tuple[str, str]],
    *,
    noun: str,
    all_names: Callable[[], Sequence[str]] | None = None,
) -> str:
    """The one id *ref* stands for among *matches* (``(id, label)`` pairs a store found).

    Raises:
        NotFoundError: nothing matched; suggests close names when *all_names* is given.
        AmbiguousReferenceError: more than one matched; lists them.
    """
    if len(matches) == 1:
        return matches[0][0]
    if not matches:
        hint = ""
        if all_names is not None:
            close = difflib.get_close_matches(ref, list(all_names()), n=1, cutoff=0.6)
            if close:
                hint = f"; did you mean {close[0]!r}?"
        raise NotFoundError(f"no {noun} matches {ref!r}{hint}")
    listed = ", ".join(f"{i[:8]} ({label})" for i, label in matches[:5])
    raise AmbiguousReferenceError(
        f"{ref!r} matches {len(matches)} {noun}s: {listed}; use more of the id"
    )
