"""Whether the task happened: a run whose steps all went checks the workflow's success check
once the app has saved and the page has settled, and that it is kept when the page is loaded
again (a mixin of the replay engine)."""

from __future__ import annotations

import asyncio
import time
from typing import Final

from desktop_app.core.models.common import utcnow
from desktop_app.core.models.run import (
    FailureKind,
    Resolution,
    RunStatus,
    RunStep,
    StepStatus,
)
from desktop_app.core.models.workflow import ElementHidden, Expectation
from desktop_app.core.redaction import mask_secrets
from desktop_app.core.replay.browser import BrowserPort
from desktop_app.core.replay.context import Context, ReplayEvent
from desktop_app.core.replay.desktop_kinds import is_desktop_expectation
from desktop_app.core.replay.diagnosis import Diagnosis, diagnose
from desktop_app.core.replay.heal_llm import describe_expectation
from desktop_app.core.replay.ladder import ReplayOptions, StepFailed
from desktop_app.core.replay.render import render_expectation
from desktop_app.core.replay.waiting import AppWaits

__all__ = ["NO_SUCCESS_CHECK", "SETTLE_AFTER_FAILURE_S", "SUCCESS_TITLE", "SuccessChecks"]

#: The most a success check waits for the page to settle before it looks.
_SETTLE_S: Final = 5.0
#: The most a run that failed or was aborted waits for the app to finish what its steps began.
SETTLE_AFTER_FAILURE_S: Final = 2.0
#: How long a page must be quiet before a success check of things shown only (no "hidden"
#: check) looks. Such a check is fooled only by something shown and then taken back (an
#: optimistic update undone when the server says no): that follows an answer, and no request
#: may be pending, so the page's reaction to the last answer is all that is waited for.
#: Something that must be gone waits for the page's full quiet instead.
_SHOWN_QUIET_S: Final = 0.2
#: How long the success check may take to hold, once the page settled.
_SUCCESS_TIMEOUT_S: Final = 10.0
#: How long the success check's parts may take to hold on the page loaded again.
_KEPT_TIMEOUT_S: Final = 5.0
#: The title of the run record's last step, the workflow's success check.
SUCCESS_TITLE: Final = "Check that the task was done"
#: Why a run whose steps all went, of a workflow without a success check, is "done, unverified".
NO_SUCCESS_CHECK: Final = "the workflow has no success check to show the task was done"


class SuccessChecks:
    """The replay engine's checks that the task was done."""

    _browser: BrowserPort
    _waits: AppWaits
    _options: ReplayOptions
    _steps: list[RunStep]
    _secrets: tuple[str, ...]
    _closing_s: float

    def _record(self, step: RunStep) -> RunStep:
        raise NotImplementedError

    def _emit(self, event: ReplayEvent) -> None:
        raise NotImplementedError

    async def _holds(self, expectation: Expectation, *, timeout_s: float) -> bool:
        raise NotImplementedError

    async def _screenshot(self, *, desktop: bool = False) -> str | None:
        raise NotImplementedError

    async def _verify(self, context: Context) -> tuple[RunStatus, str | None]:
        """How a run whose steps all went ends: succeeded only when the workflow's success
        check holds and no step was skipped (raises :class:`StepFailed` when it does not hold)."""
        skipped = sum(1 for s in self._steps if s.status is StepStatus.SKIPPED)
        workflow = context.version.workflow
        # Nothing is looked at, and the browser is not closed, while the app is still saving.
        self._closing_s = await self._waits.saved(within_s=_SETTLE_S)
        reasons = []
        if workflow.success:
            await self._check_success(context)
            values = context.params.values
            lost = await self._waits.kept(
                [
                    rendered
                    for e in workflow.success
                    if (rendered := render_expectation(e, values)) != e
                    and not is_desktop_expectation(e)
                ],
                lambda e: self._holds(e, timeout_s=_KEPT_TIMEOUT_S),
            )
            if lost is not None:
                reasons.append(mask_secrets(lost, self._secrets))
        if skipped:
            reasons.append(f"{skipped} step(s) skipped")
        if not workflow.success:
            reasons.append(NO_SUCCESS_CHECK)
        if reasons:
            return RunStatus.UNVERIFIED, "; ".join(reasons)
        return RunStatus.SUCCEEDED, None

    async def _check_success(self, context: Context) -> None:
        """Check the workflow's success check once the page has settled, as a last step of the
        run record (raises :class:`StepFailed` when it does not hold)."""
        workflow = context.version.workflow
        index = len(self._steps)
        self._emit(ReplayEvent(index=index, title=SUCCESS_TITLE))
        started, clock = utcnow(), time.monotonic()
        settle_until = clock + _SETTLE_S
        shown_only = not any(isinstance(e, ElementHidden) for e in workflow.success)
        quiet_s = _SHOWN_QUIET_S if shown_only else None
        while not await self._browser.settled(quiet_s=quiet_s) and time.monotonic() < settle_until:
            await asyncio.sleep(0.05)
        failed = None
        deadline = time.monotonic() + _SUCCESS_TIMEOUT_S
        for expectation in workflow.success:
            rendered = render_expectation(expectation, context.params.values)
            left = max(deadline - time.monotonic(), 0.0)
            if not await self._holds(rendered, timeout_s=left):
                failed = describe_expectation(rendered)
                break
        shown = "; ".join(
            describe_expectation(render_expectation(e, context.params.values))
            for e in workflow.success
        )
        why = Diagnosis(kind=None)
        if failed:
            why = await diagnose(self._browser, FailureKind.NOT_AS_EXPECTED, None, self._secrets)
        screenshot = None
        if self._options.screenshots and (failed or self._options.screenshot_every_step):
            desktop = all(is_desktop_expectation(e) for e in workflow.success)
            screenshot = await self._screenshot(desktop=desktop)
        record = self._record(
            RunStep(
                index=index,
                step_id=context.prefix + "success",
                title=SUCCESS_TITLE,
                status=StepStatus.FAILED if failed else StepStatus.SUCCEEDED,
                resolution=Resolution.NOT_NEEDED,
                started_at=started,
                duration_ms=(time.monotonic() - clock) * 1000,
                screenshot=screenshot,
                error=f"expected {failed}; it did not" if failed else None,
                detail=mask_secrets(f"checked: {shown}", self._secrets),
                failure=why.kind,
                page_messages=why.page_messages,
            )
        )
        self._emit(ReplayEvent(index=record.index, title=SUCCESS_TITLE, step=record))
        if failed:
            raise StepFailed(f"the task's success check did not hold: expected {failed}")
