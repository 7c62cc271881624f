"""Why a step failed, for the person fixing it: the kind of failure, what the page said, and the
elements most like the one that was not found.

A failed step's record names its :class:`~desktop_app.core.models.run.FailureKind` (the raiser's
own, where it knew it), the page's error and validation messages at that moment, and, when the
element was missing or could not be told apart, the page's nearest candidates with how alike
each is to the recording. A step that acted but did not lead where it should, on a page that
shows an error, is put down to that error.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from desktop_app.core.models.run import FailureKind
from desktop_app.core.models.target import Fingerprint
from desktop_app.core.redaction import mask_secrets
from desktop_app.core.replay.browser import ActionFailed, BrowserGone, BrowserPort
from desktop_app.core.replay.fingerprint import score

__all__ = ["Diagnosis", "diagnose", "element_words"]

#: The most page messages and nearest candidates a record keeps.
_MOST: Final = 3
#: The most characters of one page message kept.
_MESSAGE_CHARS: Final = 200
#: Candidates less alike than this to the recording are not worth naming.
_WORTH_NAMING: Final = 0.2


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """What a failed step's record says about why."""

    kind: FailureKind | None
    page_messages: tuple[str, ...] = ()
    nearest: tuple[str, ...] = ()


def element_words(fingerprint: Fingerprint) -> str:
    """An element as a person would point at it: ``button "Create record"``."""
    what = fingerprint.role or fingerprint.tag or "element"
    name = " ".join((fingerprint.name or fingerprint.text or "").split())[:60]
    return f'{what} "{name}"' if name else what


async def diagnose(
    browser: BrowserPort,
    kind: FailureKind | None,
    recorded: Fingerprint | None,
    secrets: Iterable[str],
) -> Diagnosis:
    """Look at the page as the step failed on it (what it raised said *kind*; *recorded* is the
    step's element as recorded, if it has one)."""
    secrets = tuple(secrets)
    try:
        said = await browser.page_messages()
    except (ActionFailed, BrowserGone):
        said = []
    messages = tuple(mask_secrets(m[:_MESSAGE_CHARS], secrets) for m in said[:_MOST])
    nearest: tuple[str, ...] = ()
    if recorded is not None and kind in (FailureKind.ELEMENT_MISSING, FailureKind.AMBIGUOUS):
        try:
            candidates = await browser.candidates()
        except (ActionFailed, BrowserGone):
            candidates = []
        scored = sorted(
            ((score(recorded, c.fingerprint).score, c.fingerprint) for c in candidates),
            key=lambda pair: -pair[0],
        )
        nearest = tuple(
            mask_secrets(f"{element_words(fp)} ({alike:.2f})", secrets)
            for alike, fp in scored[:_MOST]
            if alike >= _WORTH_NAMING
        )
    if messages and kind in (None, FailureKind.NOT_AS_EXPECTED):
        kind = FailureKind.PAGE_ERROR
    return Diagnosis(kind=kind, page_messages=messages, nearest=nearest)
