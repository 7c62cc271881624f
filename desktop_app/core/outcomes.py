"""How a run ended, in the words the command line, the window and the tray all use.

A run that did every step while nothing showed the task was done (no success check, or a step a
person skipped) ends ``unverified``, shown as "done, unverified": never as a success, never as a
failure.
"""

from __future__ import annotations

from typing import Final

from desktop_app.core.models.run import Run, RunStatus, RunStep, RunTrigger, StepStatus
from desktop_app.core.replay.confirming import STOPPED_BEFORE
from desktop_app.core.replay.engine import SUCCESS_TITLE

__all__ = [
    "NO_SUCCESS_CHECK_ADVICE",
    "UNVERIFIED_WORDS",
    "checked_success",
    "failure_lines",
    "outcome_reason",
    "outcome_words",
    "verification_words",
    "verified",
]

#: How an unverified run is named to people.
UNVERIFIED_WORDS: Final = "done, unverified"

#: What to do about a run that ended unverified because its workflow has no success check.
NO_SUCCESS_CHECK_ADVICE: Final = "add one in the editor"

#: The ``step_id`` of the run record's step for the workflow's success check.
_SUCCESS_STEP_ID: Final = "success"

_WORDS: Final[dict[RunStatus, str]] = {
    RunStatus.RUNNING: "running",
    RunStatus.SUCCEEDED: "succeeded",
    RunStatus.UNVERIFIED: UNVERIFIED_WORDS,
    RunStatus.FAILED: "failed",
    RunStatus.ABORTED: "aborted",
    RunStatus.INTERRUPTED: "interrupted",
}


def outcome_words(status: RunStatus) -> str:
    """``succeeded``, ``done, unverified``, ``failed``, ``aborted``, ``interrupted`` or
    ``running``."""
    return _WORDS[status]


def checked_success(run: Run) -> bool:
    """Whether the run checked its workflow's success check (the record's last step)."""
    return any(
        step.step_id == _SUCCESS_STEP_ID and step.title == SUCCESS_TITLE for step in run.steps
    )


def outcome_reason(run: Run) -> str:
    """Why *run* ended as it did (its ``error``), with what to do about an unverified run whose
    workflow has no success check; ``""`` when there is nothing to say."""
    reason = run.error or ""
    if run.status is RunStatus.UNVERIFIED and not checked_success(run):
        return f"{reason or 'nothing showed the task was done'} ({NO_SUCCESS_CHECK_ADVICE})"
    return reason


def failure_lines(step: RunStep) -> list[str]:
    """Why a failed step failed, beyond its error, a line each: the kind of failure, what the
    page said, the page's elements most like the one not found. None for other steps."""
    lines = []
    if step.failure is not None:
        lines.append(f"why: {step.failure.words}")
    if step.page_messages:
        lines.append("the page says: " + "; ".join(f'"{m}"' for m in step.page_messages))
    if step.nearest:
        lines.append("nearest on the page: " + ", ".join(step.nearest))
    return lines


def _stopped_before(run: Run) -> bool:
    return run.status is RunStatus.UNVERIFIED and (run.error or "").startswith(STOPPED_BEFORE)


def verified(run: Run) -> bool:
    """Whether a verification run found nothing wrong: it succeeded, or every step went until
    it stopped before an irreversible one, as a verification does."""
    if run.trigger is not RunTrigger.VERIFY:
        return False
    return run.status is RunStatus.SUCCEEDED or _stopped_before(run)


def verification_words(run: Run) -> str:
    """What a verification run showed, in one line."""
    done = sum(s.status is StepStatus.SUCCEEDED for s in run.steps if s.title != SUCCESS_TITLE)
    failed = run.first_failure
    if failed is not None:
        why = f" ({failed.failure.words})" if failed.failure is not None else ""
        return f"verification failed at step {failed.index + 1} '{failed.title}'{why}"
    if _stopped_before(run):
        return f"verified: {done} step(s) went as expected, then {run.error}; nothing after it ran"
    if run.status is RunStatus.SUCCEEDED:
        return f"verified: all {done} step(s) went as expected and the success check held"
    return f"not verified: {outcome_words(run.status)}" + (f" ({run.error})" if run.error else "")
