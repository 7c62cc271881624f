"""What a desktop click teaches, and the repairs remembered for one.

A click found by its image anchor somewhere else (the layout changed, the form is drawn at
another scale) or placed by a vision model teaches a repair: the window's pixels around the spot
it clicked, cut as the recorded anchor was (its size at the scale it was found, the click at the
same place within it), become the step's anchor, and the point clicked and the element's
recorded box move alike. :func:`~desktop_app.core.replay.learning.learn` proposes the repair as
a new version once the run got to the end, and remembers it. A later run of a version that
meets the same drift (the step's recorded anchor is not at its spot, as then) looks for the
remembered anchor at its remembered spot, and clicks there when it is there and nothing else in
the window looks alike: no search of the screen, no vision model.

Nothing is cut once a secret was typed on the desktop in the run: the screen could show it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from desktop_app.core.models.common import BoundingBox, Point
from desktop_app.core.models.experience import Experience
from desktop_app.core.models.run import Resolution
from desktop_app.core.models.target import Fingerprint, Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import DesktopClickStep, Workflow
from desktop_app.core.replay.desktop_elements import recorded_box
from desktop_app.core.replay.lessons import StepRepair
from desktop_app.core.replay.memory import ExperienceMemory

__all__ = ["Spot", "cut_box", "remembered", "repair_of_click"]

#: How many of a step's remembered repairs (the most useful) are looked at for its drift.
_LOOKED_AT: Final = 10
#: The least width and height (pixels) of a fresh anchor: a smaller cut finds anything.
_LEAST_PX: Final = 8.0


@dataclass(frozen=True, slots=True)
class Spot:
    """Where a desktop click goes (screen pixels), how it was found and why.

    ``scale``: the scale its image anchor was found at (1.0 at the recorded spot or where a
    vision model placed it). ``experience``: the remembered repair it came from.
    """

    point: Point
    resolution: Resolution
    detail: str
    scale: float = 1.0
    experience: Experience | None = None


def remembered(
    memory: ExperienceMemory | None,
    workflow: Workflow,
    step: DesktopClickStep,
    *,
    could_ask: bool,
) -> list[Experience]:
    """The remembered repairs of *step* (as *workflow* has it) for the drift it meets when its
    recorded anchor is not at its spot: its own, found when its locators were the ones it has
    now, with the anchor's box and the point clicked; one the vision model found only where
    *could_ask* (this run could ask the model or a person itself) until a run proved it."""
    target = step.target
    if memory is None or target is None:
        return []
    kept = []
    for experience in memory.own(workflow.id, step.id, limit=_LOOKED_AT):
        fingerprint = experience.fingerprint
        if (
            experience.repaired_locator.strategy is not LocatorStrategy.IMAGE_ANCHOR
            or experience.point is None
            or fingerprint is None
            or fingerprint.bbox is None
            or set(experience.failed_locators) != set(target.locators)
        ):
            continue
        if experience.trusted or could_ask:
            kept.append(experience)
    return kept


def cut_box(
    spot: Point, offset: Point, anchor: BoundingBox, scale: float, window: BoundingBox
) -> BoundingBox | None:
    """The part of the screen to cut a fresh anchor from: the recorded *anchor*'s size at
    *scale*, with *spot* at *offset* (the recorded click within the anchor, scaled) within it,
    clipped to *window*; None when too little of it is in the window."""
    left = max(spot.x - offset.x * scale, window.x)
    top = max(spot.y - offset.y * scale, window.y)
    right = min(spot.x + (anchor.width - offset.x) * scale, window.x + window.width)
    bottom = min(spot.y + (anchor.height - offset.y) * scale, window.y + window.height)
    if right - left < _LEAST_PX or bottom - top < _LEAST_PX:
        return None
    return BoundingBox(x=left, y=top, width=right - left, height=bottom - top)


def repair_of_click(
    workflow: Workflow,
    step: DesktopClickStep,
    spot: Spot,
    *,
    window: BoundingBox,
    window_title: str,
    anchor_ref: str | None,
    cut: BoundingBox | None,
) -> StepRepair | None:
    """What *step* (as *workflow* has it) teaches if clicking *spot* in the window at *window*
    works: the fresh anchor *anchor_ref* cut from *cut* (screen pixels), or the remembered
    repair the spot came from. None when there is nothing to teach."""
    target = step.target
    if target is None:
        return None
    point = Point(x=spot.point.x - window.x, y=spot.point.y - window.y)
    if spot.experience is not None:
        experience = spot.experience
        locator, fingerprint = experience.repaired_locator, experience.fingerprint
        point = experience.point or point
    elif anchor_ref is not None and cut is not None:
        locator = Locator(strategy=LocatorStrategy.IMAGE_ANCHOR, value=anchor_ref)
        fingerprint = _moved_fingerprint(target.fingerprint, step.point, point, spot.scale)
        fingerprint = fingerprint.model_copy(
            update={
                "bbox": BoundingBox(
                    x=cut.x - window.x, y=cut.y - window.y, width=cut.width, height=cut.height
                )
            }
        )
    else:
        return None
    return StepRepair(
        workflow_id=workflow.id,
        workflow_version=workflow.version,
        step_id=step.id,
        step_title=step.title,
        step_kind=step.kind,
        resolution=spot.resolution,
        target=Target(locators=(locator,), fingerprint=fingerprint),
        used=locator,
        failed=target.locators,
        page_url="",
        reason=spot.detail,
        experience_id=spot.experience.id if spot.experience is not None else None,
        point=point,
        page_title=window_title,
    )


def _moved_fingerprint(
    fingerprint: Fingerprint | None, was: Point | None, now: Point, scale: float
) -> Fingerprint:
    """*fingerprint* with the recorded element's box moved (and scaled) as the click moved from
    *was* to *now*: rung 0 clicks at the same place within the element, rung 2b finds the
    element beside its label by it."""
    fingerprint = fingerprint or Fingerprint()
    element = recorded_box(fingerprint)
    if element is None or was is None:
        return fingerprint
    moved = (
        now.x + (element.x - was.x) * scale,
        now.y + (element.y - was.y) * scale,
        element.width * scale,
        element.height * scale,
    )
    attributes = {**fingerprint.attributes, "element_box": ",".join(str(round(v)) for v in moved)}
    return fingerprint.model_copy(update={"attributes": attributes})
