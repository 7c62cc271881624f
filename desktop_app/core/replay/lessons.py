"""What a run teaches, gathered as it goes: the repairs its healed steps made, how each
remembered repair it used did, and the steps its recorded locators found again.

:func:`desktop_app.core.replay.learning.learn` turns them into a proposed version and the
experience memory's records once the run is over.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from desktop_app.core.items import pins_record
from desktop_app.core.models.common import Point
from desktop_app.core.models.run import Resolution
from desktop_app.core.models.target import Locator, Target
from desktop_app.core.models.workflow import Step, Workflow
from desktop_app.core.replay.browser import BrowserPort
from desktop_app.core.replay.ladder import Found

__all__ = ["Lessons", "StepRepair", "repair_of"]


@dataclass(frozen=True, slots=True)
class StepRepair:
    """What a healed step taught: the element's new locators, where and how it was found.

    A desktop click's repair also has the *point* it clicked, relative to its window; its
    ``page_url`` is empty and ``page_title`` the window's title.
    """

    workflow_id: str
    workflow_version: int
    step_id: str
    step_title: str
    step_kind: str
    resolution: Resolution
    target: Target
    used: Locator
    failed: tuple[Locator, ...]
    page_url: str
    reason: str
    experience_id: str | None = None  # the remembered repair it came from (resolution experience)
    point: Point | None = None
    page_title: str | None = None


async def repair_of(
    browser: BrowserPort, workflow: Workflow, original: Step, found: Found
) -> StepRepair | None:
    """What *original* (a step of *workflow*) would learn if acting on *found* works: described
    before acting, since the element may go."""
    described = await browser.describe(found.handle)
    target = original.target_or_none
    if described is None or target is None:
        return None
    return StepRepair(
        workflow_id=workflow.id,
        workflow_version=workflow.version,
        step_id=original.id,
        step_title=original.title,
        step_kind=original.kind,
        resolution=found.resolution,
        target=described,
        used=found.locator
        or next((loc for loc in described.locators if not pins_record(loc)), described.locators[0]),
        failed=tuple(loc for loc in target.locators if loc != found.locator),
        page_url=await browser.url(),
        reason=found.detail,
        experience_id=found.experience_id,
    )


@dataclass(slots=True)
class Lessons:
    """What one run taught so far.

    Attributes:
        repairs: each healed step's repair, once the step held.
        uses: each use of a remembered repair: its id, and whether the step then held.
        as_recorded: the steps (workflow id, step id) the first recorded locator found.
    """

    repairs: list[StepRepair] = field(default_factory=list)
    uses: list[tuple[str, bool]] = field(default_factory=list)
    as_recorded: list[tuple[str, str]] = field(default_factory=list)

    def acted(
        self,
        found: Found,
        step: tuple[str, str],
        *,
        held: bool,
        repair: StepRepair | None = None,
    ) -> None:
        """Note how acting on *found* went for *step* (its workflow's id, its id): whether the
        step then held, and the repair it would teach."""
        if found.resolution is Resolution.EXPERIENCE and found.experience_id is not None:
            self.uses.append((found.experience_id, held))
        if not held:
            return
        if found.resolution is Resolution.DIRECT:
            self.as_recorded.append(step)
        if repair is not None:
            self.repairs.append(repair)
