"""The kinds of step that wait, check, or hand work on: wait until, make sure, run another
workflow, let the assistant do it."""

from __future__ import annotations

from typing import Any, Final

from desktop_app.core.describe import describe_expectation
from desktop_app.core.models.workflow import (
    AgentStep,
    AssertStep,
    CallStep,
    TextPresent,
    WaitForStep,
)
from desktop_app.core.step_kinds.spec import KindField, KindSpec, quote

__all__ = ["FLOW_KINDS"]


def _shows_nothing_yet() -> TextPresent:
    # A condition still to be given its text: validation reports it until it has some.
    return TextPresent.model_construct(text="")


# ── wait, check ─────────────────────────────────────────────────────────────────────────────

WAIT_FOR: Final = KindSpec(
    kind="wait_for",
    model=WaitForStep,
    label="Wait until",
    family="check",
    performer="browser",
    target="none",
    fields=(KindField("condition", "Until", "condition"),),
    describe=lambda step: f"wait until {describe_expectation(step.condition)}",
    detail=lambda step: describe_expectation(step.condition),
    blank=lambda title: WaitForStep(
        title=title or "Wait until the page shows…", condition=_shows_nothing_yet()
    ),
)

ASSERT: Final = KindSpec(
    kind="assert",
    model=AssertStep,
    label="Check that",
    family="check",
    performer="browser",
    target="none",
    fields=(KindField("condition", "Check", "condition"),),
    describe=lambda step: f"make sure {describe_expectation(step.condition)}",
    detail=lambda step: describe_expectation(step.condition),
    blank=lambda title: AssertStep(
        title=title or "Check that the page shows…", condition=_shows_nothing_yet()
    ),
)


# ── hand work on ────────────────────────────────────────────────────────────────────────────


def _call_line(step: CallStep) -> str:
    version = f" v{step.version}" if step.version is not None else ""
    args = ", ".join(f"{k}={v}" for k, v in step.arguments.items())
    return f"run workflow {step.workflow_id[:8]}{version}" + (f" with {args}" if args else "")


CALL: Final = KindSpec(
    kind="call",
    model=CallStep,
    label="Run another workflow",
    family="delegate",
    performer="procedura",
    target="none",
    fields=(
        KindField("workflow_id", "Workflow", "readonly", noun="called workflow"),
        KindField("version", noun="called version"),
        KindField("arguments", "Arguments", "arguments"),
    ),
    describe=_call_line,
    detail=lambda step: f"workflow {step.workflow_id[:8]}",
    # A call needs a workflow to call: the editor makes one from the library, not blank.
)

AGENT: Final = KindSpec(
    kind="agent",
    model=AgentStep,
    label="Let the assistant do it",
    family="delegate",
    performer="procedura",
    target="none",
    fields=(
        KindField("instruction", "Instruction", "template", "What the assistant should do"),
        KindField("output_variable", "Store result as", "optional_text"),
        KindField(
            "max_actions",
            "At most",
            "int",
            "How many actions before it gives up",
            low=1,
            high=100,
            suffix=" actions",
        ),
    ),
    describe=lambda step: f"let the agent {quote(step.instruction, 80)}",
    detail=lambda step: step.instruction,
    blank=lambda title: AgentStep.model_construct(
        title=title or "Let the assistant do it", instruction=""
    ),
)

#: The kinds that wait, check or hand work on.
FLOW_KINDS: Final[tuple[KindSpec[Any], ...]] = (WAIT_FOR, ASSERT, CALL, AGENT)
