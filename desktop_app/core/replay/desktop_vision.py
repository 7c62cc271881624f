"""Rung 3 of a desktop click: a vision model, shown the recorded anchor and the window now,
says where to click."""

from __future__ import annotations

import asyncio
from typing import Final

from pydantic import BaseModel, Field

from desktop_app.core.llm import LLMError, StructuredLLM
from desktop_app.core.models.common import Point
from desktop_app.core.models.workflow import DesktopClickStep
from desktop_app.core.replay.desktop import DesktopPort, Window
from desktop_app.core.replay.ladder import ReplayOptions, Tracker

__all__ = ["ask_vision"]

_SYSTEM: Final = (
    "You locate one element of a desktop application on a screenshot. The first image is how the "
    "element looked when the procedure was recorded; the second is the application's window now. "
    "Answer where to click on the second image so that the same element is clicked, or found="
    "false if it is not there. Never guess: an element that merely looks similar is not it."
)


class _Spot(BaseModel):
    """Where the vision model says to click, in the screenshot's pixels."""

    found: bool = Field(description="whether the element is on the screenshot")
    x: int = Field(default=0, description="the click's x, pixels from the screenshot's left")
    y: int = Field(default=0, description="the click's y, pixels from the screenshot's top")
    reason: str = Field(default="", description="one short sentence")


async def ask_vision(
    llm: StructuredLLM | None,
    options: ReplayOptions,
    port: DesktopPort,
    step: DesktopClickStep,
    window: Window,
    anchor: bytes,
    tracker: Tracker,
    *,
    secret_typed: bool,
) -> tuple[Point, str] | None:
    """Where the model says to click (on the screen) and why; None when there is no vision
    model, the run may not use it, a secret typed earlier could be on the screen, the step's
    LLM calls are spent, or the model did not find it."""
    if llm is None or not options.use_llm or not options.vision:
        return None
    if secret_typed:
        tracker.note("the screen may show a secret typed earlier: not sent to the LLM")
        return None
    if tracker.llm_calls_here >= options.max_llm_calls_per_step:
        return None
    screen = await port.screenshot(window.box)
    tracker.llm_calls_here += 1
    loop = asyncio.get_running_loop()
    try:
        answer, usage = await loop.run_in_executor(
            None,
            lambda: llm.complete(
                system=_SYSTEM,
                user=(
                    f"The step: {step.title}. The window: {window.title!r}, "
                    f"{window.box.width:.0f} x {window.box.height:.0f} pixels."
                ),
                output=_Spot,
                images=(anchor, screen),
            ),
        )
    except LLMError as exc:
        tracker.spend(exc.usage)
        tracker.note(f"the LLM could not help: {exc.message}")
        return None
    tracker.spend(usage)
    inside = 0 <= answer.x < window.box.width and 0 <= answer.y < window.box.height
    if not answer.found or not inside:
        tracker.note(f"the LLM did not find it: {answer.reason or 'no reason given'}")
        return None
    spot = Point(x=window.box.x + answer.x, y=window.box.y + answer.y)
    return spot, f"the LLM placed it at ({answer.x}, {answer.y}) in the window: {answer.reason}"
