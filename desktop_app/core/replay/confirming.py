"""Asking before an irreversible step acts on an element its recording did not name first; the
browser's own questions a step met; a verification that stops before an irreversible step."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from desktop_app.core.models.run import FailureKind, Resolution
from desktop_app.core.models.workflow import Step
from desktop_app.core.redaction import mask_secrets
from desktop_app.core.replay.browser import BrowserPort
from desktop_app.core.replay.ladder import Found, RunAborted, StepFailed, Tracker
from desktop_app.core.replay.naming import element_words, found_by_words
from desktop_app.core.replay.person import Person, Question

__all__ = [
    "STOPPED_BEFORE",
    "StoppedBefore",
    "check_dialogs",
    "confirm_irreversible",
    "unattended_refusal",
]

#: How the error of a verification run that stopped before an irreversible step begins.
STOPPED_BEFORE: Final = "stopped before step"


class StoppedBefore(Exception):
    """A verification run (``stop_before_irreversible``) reached an irreversible step and ended
    there, as asked: the run is done, unverified, with every step before it checked."""


async def check_dialogs(browser: BrowserPort, tracker: Tracker, secrets: Sequence[str]) -> None:
    """Note the browser's own questions the step met; fail it if one was not expected (it was
    cancelled: the recording never answered such a question)."""
    for dialog in await browser.dialogs():
        message = mask_secrets(dialog.message[:100], secrets)
        answer = "OK" if dialog.accepted else "Cancel"
        tracker.note(f"the page said '{message}' ({dialog.kind}): answered {answer}")
        if dialog.kind in ("confirm", "prompt") and not dialog.expected:
            raise StepFailed(
                f"the page asked '{message}', a question the recording never answered; "
                "it was cancelled",
                kind=FailureKind.REFUSED,
            )


async def confirm_irreversible(
    bound: Step,
    found: Found,
    tracker: Tracker,
    *,
    person: Person | None,
    assume_yes: bool,
    title: str,
    browser: BrowserPort,
) -> bool:
    """Go on with an irreversible *bound* only when ``--yes`` was given, or in a run a person
    attends when its element was found by its first recorded locator or the person says so (a
    fallback locator, the fingerprint, a remembered repair, the LLM: each is a judgement, and a
    wrong one here cannot be undone). An unattended run without ``--yes`` does no irreversible
    step at all. True when a person was asked and confirmed.

    The question names the element as a person sees it (its role and name now, as the page
    describes it, else as recorded, else the step's title) and carries the step's recorded
    picture; the locator goes along only for the curious.

    Raises:
        StepFailed: an unattended run without ``--yes``, or the person said no.
        RunAborted: the person stopped the run.
    """
    if not bound.irreversible:
        return False
    if assume_yes:
        if found.resolution is not Resolution.DIRECT:
            tracker.note("irreversible step confirmed in advance (--yes)")
        return False
    target = bound.target_or_none
    recorded_fp = target.fingerprint if target is not None else None
    recorded = element_words(recorded_fp, fallback=title) or title
    if person is None:
        how = (
            "" if found.resolution is Resolution.DIRECT else f" (found by {found.resolution.value})"
        )
        raise StepFailed(unattended_refusal(f"{recorded}{how}"), kind=FailureKind.REFUSED)
    if found.resolution is Resolution.DIRECT:
        return False
    described = await browser.describe(found.handle)
    now = element_words(described.fingerprint) if described and described.fingerprint else None
    was = (
        f"It was recorded on {recorded}; this time its element"
        if now is not None and now != recorded
        else "Its element"
    )
    answer = await person.ask(
        Question(
            kind="confirm",
            step_title=title,
            message=(
                f"This step cannot be undone. {was} was found by "
                f"{found_by_words(found.resolution)}, not by its first recorded locator. "
                "Go ahead?"
            ),
            element=now or recorded,
            locator=found.handle.describe(),
            picture=bound.screenshot,
            box=recorded_fp.bbox if recorded_fp is not None else None,
        )
    )
    if answer.action == "abort":
        raise RunAborted("aborted by the person asked to confirm")
    if answer.action != "confirm":
        raise StepFailed("the irreversible step was not confirmed", kind=FailureKind.REFUSED)
    tracker.note("irreversible step confirmed by a person")
    return True


def unattended_refusal(what: str) -> str:
    """Why an unattended run without ``--yes`` did not do an irreversible step on *what*."""
    return (
        f"irreversible step ({what}): a run nobody attends does it only with --yes; "
        "run interactively or with --yes"
    )
