"""What the editor reads off a draft: names a placeholder can use, their uses, a step's summary."""

from __future__ import annotations

from desktop_app.core.describe import describe_expectation, describe_locator
from desktop_app.core.editing.common import _extracted, _template_strings
from desktop_app.core.models.workflow import (
    AgentStep,
    AssertStep,
    CallStep,
    CheckStep,
    DesktopClickStep,
    DesktopTypeStep,
    ExtractStep,
    FillStep,
    GotoStep,
    HotkeyStep,
    PressStep,
    ScrollStep,
    SelectStep,
    Step,
    WaitForStep,
    Workflow,
)
from desktop_app.core.templating import placeholders, render
from desktop_app.core.values import value_text

__all__ = [
    "known_names",
    "parameter_uses",
    "start_url",
    "step_summary",
]


def known_names(workflow: Workflow) -> list[str]:
    """The names a ``{placeholder}`` can use: parameters, then variables steps store."""
    names = [p.name for p in workflow.parameters]
    return names + [n for n in _extracted(workflow) if n not in names]


def parameter_uses(workflow: Workflow, name: str) -> int:
    """How many step fields, success checks (and the intent template) use ``{name}``."""
    count = 0
    for item in (*workflow.steps, *workflow.success):
        for _, text in _template_strings(item.model_dump(mode="json")):
            count += name in placeholders(text)
    intent = workflow.intent_template or ""
    return count + (name in placeholders(intent))


def start_url(workflow: Workflow) -> str | None:
    """Where the workflow starts: its first ``goto`` step's URL, with defaults filled in.

    None when there is no such step, or its URL needs a value that has no default.
    """
    for step in workflow.steps:
        if isinstance(step, GotoStep) and step.url:
            values = {p.name: value_text(p.default) for p in workflow.parameters if p.default}
            try:
                return render(step.url, values)
            except KeyError:
                return None
    return None


def step_summary(step: Step) -> str:
    """One short line about what a step acts on, for its card (its title says what it does)."""
    target = step.target_or_none
    where = describe_locator(target.locators[0]) if target is not None and target.locators else ""
    detail = ""
    if isinstance(step, GotoStep):
        detail = step.url
    elif isinstance(step, FillStep | SelectStep):
        detail = f"← {step.value}" if step.value else "← (empty)"
    elif isinstance(step, CheckStep):
        detail = f"= {str(step.checked).lower()}"
    elif isinstance(step, PressStep):
        detail = step.key
    elif isinstance(step, ExtractStep):
        detail = f"→ {{{step.variable}}}"
    elif isinstance(step, WaitForStep | AssertStep):
        detail = describe_expectation(step.condition)
    elif isinstance(step, CallStep):
        detail = f"workflow {step.workflow_id[:8]}"
    elif isinstance(step, AgentStep):
        detail = step.instruction
    elif isinstance(step, DesktopTypeStep):
        detail = step.text
    elif isinstance(step, HotkeyStep):
        detail = "+".join(step.keys)
    elif isinstance(step, DesktopClickStep):
        detail = step.window_title or step.app or ""
    elif isinstance(step, ScrollStep):
        detail = f"by {step.dx:g}, {step.dy:g}"
    return "  ".join(part for part in (where, detail) if part)
