"""A workflow version's record (:mod:`desktop_app.core.scores`) as the Library's details and the
Review screen show it: one table row per version, the stale flag above it."""

from __future__ import annotations

import html
from collections.abc import Sequence

from desktop_app.core.scores import VersionRecord
from desktop_app.ui import theme

__all__ = ["record_html"]


def _rate(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _row(record: VersionRecord) -> str:
    if not record.runs:
        cells = [f"v{record.version}", "not run yet", "", "", "", ""]
    else:
        cells = [
            f"v{record.version}",
            f"{record.runs}",
            f"{_rate(record.success_rate)}"
            + (f" ({record.unverified} unverified)" if record.unverified else ""),
            _rate(record.heal_rate),
            f"{record.llm_calls} ({record.tokens:,} tok)" if record.llm_calls else "0",
            "–" if record.median_ms is None else f"{record.median_ms / 1000:.1f} s",
        ]
    return "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>"


def record_html(records: Sequence[VersionRecord], *, stale: str | None = None) -> str:
    """*records* (one per version, newest first) as a small table, with the last failure of
    each under it, and the stale flag (*stale* says why) above."""
    parts = []
    if stale is not None:
        parts.append(
            f"<p style='color: {theme.colours().warning};'>⚠ <b>Stale</b>: "
            f"{html.escape(stale)}. Run it to see that it still works, or review it; it is "
            "never archived or deleted for this.</p>"
        )
    head = "".join(
        f"<th align='left'>{h}</th>"
        for h in ("Version", "Runs", "Succeeded", "Healed", "LLM calls", "Median time")
    )
    rows = "".join(_row(r) for r in records)
    parts.append(
        "<table cellspacing='0' cellpadding='3' border='1' "
        f"style='border-color: {theme.colours().line}; border-style: solid;'>"
        f"<tr>{head}</tr>{rows}</table>"
    )
    for record in records:
        if record.last_failure is not None and record.last_failure_at is not None:
            parts.append(
                f"<p>Last failure of v{record.version}, "
                f"{record.last_failure_at.astimezone():%Y-%m-%d %H:%M}: "
                f"{html.escape(record.last_failure)}</p>"
            )
    return "".join(parts)
