"""Asking before an irreversible step acts on an element its recording did not name first."""

from __future__ import annotations

from desktop_app.core.models.run import FailureKind, Resolution
from desktop_app.core.models.workflow import Step
from desktop_app.core.replay.ladder import Found, RunAborted, StepFailed, Tracker
from desktop_app.core.replay.person import Person, Question

__all__ = ["confirm_irreversible", "unattended_refusal"]


async def confirm_irreversible(
    bound: Step,
    found: Found,
    tracker: Tracker,
    *,
    person: Person | None,
    assume_yes: bool,
    title: str,
) -> None:
    """Go on with an irreversible *bound* only when ``--yes`` was given, or in a run a person
    attends when its element was found by its first recorded locator or the person says so (a
    fallback locator, the fingerprint, a remembered repair, the LLM: each is a judgement, and a
    wrong one here cannot be undone). An unattended run without ``--yes`` does no irreversible
    step at all.

    Raises:
        StepFailed: an unattended run without ``--yes``, or the person said no.
        RunAborted: the person stopped the run.
    """
    if not bound.irreversible:
        return
    if assume_yes:
        if found.resolution is not Resolution.DIRECT:
            tracker.note("irreversible step confirmed in advance (--yes)")
        return
    element = found.handle.describe()
    if person is None:
        how = (
            "" if found.resolution is Resolution.DIRECT else f" (found by {found.resolution.value})"
        )
        raise StepFailed(unattended_refusal(f"{element}{how}"), kind=FailureKind.REFUSED)
    if found.resolution is Resolution.DIRECT:
        return
    answer = await person.ask(
        Question(
            kind="confirm",
            step_title=title,
            message=(
                f"This step cannot be undone, and its element was found by "
                f"{found.resolution.value}, not by its first recorded locator. Go ahead?"
            ),
            element=element,
        )
    )
    if answer.action == "abort":
        raise RunAborted("aborted by the person asked to confirm")
    if answer.action != "confirm":
        raise StepFailed("the irreversible step was not confirmed", kind=FailureKind.REFUSED)
    tracker.note("irreversible step confirmed by a person")


def unattended_refusal(what: str) -> str:
    """Why an unattended run without ``--yes`` did not do an irreversible step on *what*."""
    return (
        f"irreversible step ({what}): a run nobody attends does it only with --yes; "
        "run interactively or with --yes"
    )
