"""Waiting for the app the way a person does.

A person does not type into a page still putting itself together, notices when a click did
nothing and tries once more when the page has caught up, and does not close the tab while the
app is still saving. Replay does the same, through the browser port:

* **ready before acting**: on a document not acted on yet (after a navigation, a reload, a
  form sent), the first action waits until the page is at rest: loaded, no request pending, no
  change for a short window, no timer it set to do something in a moment (handlers attached
  after ``load``) — bounded by the step's timeout and the run's patience;
* **an action the page ignored**: a step the page reacted to when recorded (its document
  changed, it sent a request, it navigated) must get a reaction again; when none comes, the
  page is given time to settle and the action is done once more; when that brings none either,
  the step fails instead of passing silently;
* **saved before closing**: after the last step the page must be at rest with nothing pending
  (no request, no debounced save waiting on a timer, no storage write open) before the success
  check looks and before the browser closes.

Every wait is timed into the step's record (``waited_ms``), so its cost is visible.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Final

from desktop_app.core.models.run import FailureKind
from desktop_app.core.models.workflow import Expectation
from desktop_app.core.replay.browser import BrowserPort, PageMark
from desktop_app.core.replay.heal_llm import describe_expectation
from desktop_app.core.replay.ladder import StepFailed, Tracker

__all__ = ["AppWaits"]

_POLL_S: Final = 0.05
#: How often a page is looked at while it comes to rest: a look costs the page a few
#: microseconds, and each poll's wait is added to the quiet window a wait must see.
_REST_POLL_S: Final = 0.02
#: The most loading the page again to see what the app kept may take.
_RELOAD_S: Final = 15.0


class AppWaits:
    """The waits of one run in one browser page.

    Args:
        browser: the page.
        ready_quiet_s: how long a new document must be quiet before its first action.
        save_quiet_s: how long the page must be quiet, nothing pending, at the end of a run.
        reaction_s: how long an action the page reacted to when recorded may take to get a
            reaction now.
        patience_s: the most a new document is waited for before acting anyway.
    """

    def __init__(
        self,
        browser: BrowserPort,
        *,
        ready_quiet_s: float,
        save_quiet_s: float,
        reaction_s: float,
        patience_s: float,
    ) -> None:
        self._browser = browser
        self._ready_quiet_s = ready_quiet_s
        self._save_quiet_s = save_quiet_s
        self._reaction_s = reaction_s
        self._patience_s = patience_s
        self._ready_document = -1

    async def at_rest(self, *, quiet_s: float, within_s: float, pending: bool = True) -> float:
        """Wait until the page is at rest (see :meth:`BrowserPort.settled`), at most
        *within_s*; the seconds waited."""
        started = time.monotonic()
        deadline = started + max(within_s, 0.0)
        while not await self._browser.settled(quiet_s=quiet_s, pending=pending):
            if time.monotonic() >= deadline:
                break
            await asyncio.sleep(_REST_POLL_S)
        return time.monotonic() - started

    async def ready(self, *, timeout_s: float) -> float:
        """Before acting: on a document not acted on yet, wait until it is at rest (at most
        the run's patience, never past *timeout_s*); the seconds waited."""
        document = await self._browser.documents()
        if document == self._ready_document:
            return 0.0
        waited = await self.at_rest(
            quiet_s=self._ready_quiet_s, within_s=min(self._patience_s, timeout_s)
        )
        self._ready_document = await self._browser.documents()
        return waited

    async def saved(self, *, within_s: float) -> float:
        """After the last step: wait until the page is at rest with nothing pending (at most
        *within_s*); the seconds waited."""
        return await self.at_rest(quiet_s=self._save_quiet_s, within_s=within_s)

    async def mark(self) -> PageMark:
        """Where the page stands before an action."""
        return await self._browser.mark()

    async def reaction(self, mark: PageMark, *, timeout_s: float) -> tuple[bool, float]:
        """Whether the page reacted since *mark* (waiting for it at most the reaction window,
        never past *timeout_s*), and the seconds waited."""
        started = time.monotonic()
        deadline = started + min(self._reaction_s, timeout_s)
        while True:
            if await self._browser.reacted(mark):
                return True, time.monotonic() - started
            if time.monotonic() >= deadline:
                return False, time.monotonic() - started
            await asyncio.sleep(_POLL_S)

    async def change(self, mark: PageMark, *, within_s: float) -> float:
        """Wait until the page changed since *mark* and came to rest again, at most
        *within_s* in all; the seconds waited."""
        started = time.monotonic()
        deadline = started + max(within_s, 0.0)
        while not await self._browser.reacted(mark):
            if time.monotonic() >= deadline:
                return time.monotonic() - started
            await asyncio.sleep(_POLL_S)
        await self.at_rest(quiet_s=self._ready_quiet_s, within_s=deadline - time.monotonic())
        return time.monotonic() - started

    async def reacted_to(
        self,
        mark: PageMark,
        redo: Callable[[], Awaitable[PageMark]],
        *,
        what: str,
        irreversible: bool,
        timeout_s: float,
        tracker: Tracker,
    ) -> str | None:
        """Make sure the page reacted to the action done since *mark* (described by *what*):
        when it did not, wait for it to catch up and *redo* the action once (it returns the
        mark taken just before it acted). Why the page still did not react, or None when it
        did; raises :class:`StepFailed` at once for an irreversible step (never done twice)."""
        seen, waited = await self.reaction(mark, timeout_s=timeout_s)
        tracker.waited_s += waited
        if seen:
            return None
        if irreversible:
            raise StepFailed(
                f"the page did not react to {what} as it did when recorded (nothing changed, "
                "no request, no other page); an irreversible step is never done twice",
                kind=FailureKind.NOT_AS_EXPECTED,
            )
        tracker.note(f"the page did not react to {what}; waited for it to settle, did it again")
        tracker.waited_s += await self.at_rest(
            quiet_s=self._ready_quiet_s, within_s=min(self._patience_s, timeout_s)
        )
        seen, waited = await self.reaction(await redo(), timeout_s=timeout_s)
        tracker.waited_s += waited
        if seen:
            return None
        return (
            f"the page did not react to {what}, twice, as it did when recorded (nothing "
            "changed, no request, no other page)"
        )

    async def kept(
        self, checks: Sequence[Expectation], holds: Callable[[Expectation], Awaitable[bool]]
    ) -> str | None:
        """After a run whose page kept data in the browser's storage: load the page again, as
        a person would to see that the app kept the task's result, and check *checks* there
        (the success check's parts that name the run's values). Why the result was not seen
        again, or None when it was (or when nothing can be checked: no such part, or a page
        that came from a form sent, which a reload would send again)."""
        if not checks or not await self._browser.kept_in_browser():
            return None
        answer = await self._browser.reload(timeout_s=_RELOAD_S)
        if answer == "asked to stay":
            return "the page asked to stay when it was loaded again: it has changes not saved"
        if answer != "reloaded":
            return None
        await self.ready(timeout_s=_RELOAD_S)
        for check in checks:
            if not await holds(check):
                return (
                    f"after the page was loaded again, expected {describe_expectation(check)}; "
                    "it was not there: the app may not have kept the task's result"
                )
        return None
