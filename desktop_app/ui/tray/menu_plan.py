"""Which approved workflows the tray menu lists, and in which groups: pinned, recent, by site."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from desktop_app.core.models.workflow import WorkflowStatus
from desktop_app.core.views import RunStats, WorkflowSummary

__all__ = ["RECENT_COUNT", "MenuPlan", "plan_menu"]

#: How many recently run workflows the menu lists after the pinned ones.
RECENT_COUNT: Final = 5


@dataclass(frozen=True, slots=True)
class MenuPlan:
    """The workflows of the tray menu, in the order and groups it shows them."""

    pinned: tuple[WorkflowSummary, ...] = ()
    recent: tuple[WorkflowSummary, ...] = ()
    groups: tuple[tuple[str, tuple[WorkflowSummary, ...]], ...] = ()

    @property
    def count(self) -> int:
        """How many workflows the plan holds."""
        return len(self.pinned) + len(self.recent) + sum(len(g) for _, g in self.groups)


def plan_menu(
    summaries: Sequence[WorkflowSummary],
    stats: dict[str, RunStats],
    *,
    recent: int = RECENT_COUNT,
) -> MenuPlan:
    """Group the approved workflows: pinned, the *recent* last run, the rest by site.

    Each workflow appears once. Within a group names sort alphabetically; recent ones come
    newest first; sites sort alphabetically with workflows that open no site last.
    """
    runnable = [s for s in summaries if s.status is WorkflowStatus.APPROVED]
    pinned = sorted((s for s in runnable if s.pinned), key=_name_key)
    ran: list[tuple[datetime, WorkflowSummary]] = []
    for s in runnable:
        last = stats[s.id].last_run_at if s.id in stats else None
        if not s.pinned and last is not None:
            ran.append((last, s))
    ran.sort(key=lambda pair: pair[0], reverse=True)
    latest = tuple(s for _, s in ran[:recent])
    shown = {s.id for s in pinned} | {s.id for s in latest}
    by_site: dict[str, list[WorkflowSummary]] = {}
    for s in runnable:
        if s.id not in shown:
            by_site.setdefault(s.domains[0] if s.domains else "", []).append(s)
    groups = tuple(
        (site or "Other", tuple(sorted(found, key=_name_key)))
        for site, found in sorted(by_site.items(), key=lambda item: (not item[0], item[0]))
    )
    return MenuPlan(pinned=tuple(pinned), recent=latest, groups=groups)


def _name_key(summary: WorkflowSummary) -> str:
    return summary.name.casefold()
