"""Which steps and checks are the desktop's, and what a run of a workflow needs opened."""

from __future__ import annotations

from desktop_app.core.models.workflow import (
    AssertStep,
    Condition,
    Expectation,
    ImageVisible,
    Step,
    WaitForStep,
    WindowTitleMatches,
    Workflow,
    walk,
)
from desktop_app.core.step_kinds import kind_spec

__all__ = ["is_desktop_expectation", "is_desktop_step", "needs_browser", "needs_desktop"]


def is_desktop_step(step: Step) -> bool:
    """Whether *step* acts on the desktop (not in a browser)."""
    return kind_spec(step.kind).performer == "desktop"


def is_desktop_expectation(expectation: Expectation | Condition) -> bool:
    """Whether *expectation* is checked on the desktop (a window title, an image anchor)."""
    return isinstance(expectation, WindowTitleMatches | ImageVisible)


def _on_desktop(step: Step) -> bool:
    if is_desktop_step(step):
        return True
    if isinstance(step, WaitForStep | AssertStep):
        return is_desktop_expectation(step.condition)
    return False


def needs_desktop(workflow: Workflow) -> bool:
    """Whether a run of *workflow* drives the desktop (a desktop step or check)."""
    return any(
        _on_desktop(step) or any(is_desktop_expectation(e) for e in step.expectations)
        for step in walk(workflow.steps)
    )


def needs_browser(workflow: Workflow) -> bool:
    """Whether a run of *workflow* needs a browser: any step not on the desktop (a called
    workflow counts: it may be a web one)."""
    return any(not _on_desktop(step) for step in workflow.steps)
