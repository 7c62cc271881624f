"""The replay engine: run a workflow version step by step, healing drift up the ladder.

For every step: find the element (rung 1 the recorded locators in rank order; 2 fingerprint
matching; 3 a remembered repair; 4 the LLM; 5 a person), act, read back what a fill, select or
check left in the control, then check the step's expectations. An expectation that fails after
acting is drift too: the engine goes back up the ladder for another element, except for an
irreversible step, which is never done twice. An action that timed out on the element found
looks for it once more (the page may have replaced it).

A run **succeeds** only when, every step done, the workflow's success check holds on the
settled page. Without a success check, or with a step a person skipped, it ends "done,
unverified"; when the check does not hold, it failed. Every step's rung, time, LLM use and (on
a heal or a failure) screenshot goes into the run record, which is saved after each step so a
killed run leaves what it did.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Awaitable, Callable

from desktop_app.core.errors import ProceduraError
from desktop_app.core.llm import StructuredLLM
from desktop_app.core.models.common import utcnow
from desktop_app.core.models.run import (
    FailureKind,
    Resolution,
    Run,
    RunStatus,
    RunStep,
    StepStatus,
)
from desktop_app.core.models.target import Locator
from desktop_app.core.models.workflow import (
    AgentStep,
    AssertStep,
    CallStep,
    Condition,
    DesktopClickStep,
    DesktopTypeStep,
    Expectation,
    ExtractStep,
    ForEachStep,
    GotoStep,
    HotkeyStep,
    IfStep,
    PressStep,
    RepeatUntilStep,
    ScrollStep,
    Step,
    TryStep,
    WaitForStep,
    WorkflowVersion,
)
from desktop_app.core.ports import MediaStore, RunStore
from desktop_app.core.redaction import mask_secrets
from desktop_app.core.replay.actions import already_holds, mismatch, page_action
from desktop_app.core.replay.agent import AgentContext, run_agent_step
from desktop_app.core.replay.blocks import Blocks
from desktop_app.core.replay.browser import (
    ActionFailed,
    BrowserGone,
    BrowserPort,
    Handle,
    NavigationRefused,
    PageAction,
    PageMark,
)
from desktop_app.core.replay.calls import MAX_CALL_DEPTH
from desktop_app.core.replay.conditions import condition_holds
from desktop_app.core.replay.confirming import (
    STOPPED_BEFORE,
    StoppedBefore,
    check_dialogs,
    confirm_irreversible,
    unattended_refusal,
)
from desktop_app.core.replay.context import Context, ReplayEvent, ReplayOutcome
from desktop_app.core.replay.desktop import DesktopPort
from desktop_app.core.replay.desktop_kinds import is_desktop_expectation, is_desktop_step
from desktop_app.core.replay.desktop_steps import DesktopSteps
from desktop_app.core.replay.diagnosis import Diagnosis, diagnose
from desktop_app.core.replay.heal_llm import describe_expectation
from desktop_app.core.replay.ladder import (
    MAX_OVERLAYS,
    Attempt,
    Ladder,
    ReplayOptions,
    RunAborted,
    StepFailed,
    StepSkipped,
    Tracker,
    public_title,
)
from desktop_app.core.replay.lessons import Lessons, repair_of
from desktop_app.core.replay.memory import ExperienceMemory
from desktop_app.core.replay.parameters import BoundParameters, bind_parameters
from desktop_app.core.replay.person import Person
from desktop_app.core.replay.render import (
    domain_allowed,
    fingerprint_for_run,
    render_step,
)
from desktop_app.core.replay.rounds import learned_locator, with_learned
from desktop_app.core.replay.safety import focused_commits, step_commits
from desktop_app.core.replay.success import (
    NO_SUCCESS_CHECK,
    SETTLE_AFTER_FAILURE_S,
    SUCCESS_TITLE,
    SuccessChecks,
)
from desktop_app.core.replay.waiting import AppWaits

__all__ = [
    "NO_SUCCESS_CHECK",
    "SUCCESS_TITLE",
    "ReplayEvent",
    "ReplayOptions",
    "ReplayOutcome",
    "Replayer",
]


class Replayer(SuccessChecks):
    """Runs workflow versions in one browser page.

    Args:
        browser: the page to drive.
        runs: where the run record is saved (after every step).
        media: where screenshots go.
        memory: remembered repairs (rung 3), or None.
        llm: the LLM for rung 4 (its client carries the run's call and token budget), or None.
        person: who answers questions (rung 5, confirmations), or None (non-interactive).
        load: the version a ``call`` step runs: ``load(workflow_id, version_or_None)``.
        options: what the run may do.
        on_event: called with progress (from the engine's own task).
        desktop: the desktop, for desktop steps and expectations (None: they fail, saying so).
    """

    def __init__(
        self,
        *,
        browser: BrowserPort,
        runs: RunStore,
        media: MediaStore,
        memory: ExperienceMemory | None = None,
        llm: StructuredLLM | None = None,
        person: Person | None = None,
        load: Callable[[str, int | None], WorkflowVersion] | None = None,
        options: ReplayOptions | None = None,
        on_event: Callable[[ReplayEvent], object] | None = None,
        desktop: DesktopPort | None = None,
        before_step: Callable[[str, str, bool], Awaitable[None]] | None = None,
    ) -> None:
        """*before_step* is awaited before each step acts, with the run's id, the step's title
        and whether it is irreversible: the runner fleet notes there, durably, that an
        irreversible step of this run begins (so a worker that dies in it never has the row
        done again), and stops a cancelled job by raising :class:`RunAborted`."""
        self._browser = browser
        self._before_step = before_step
        self._runs = runs
        self._media = media
        self._person = person
        self._llm = llm
        self._load = load
        self._options = options or ReplayOptions()
        self._ladder = Ladder(browser, memory=memory, llm=llm, person=person, options=self._options)
        self._desktop = DesktopSteps(
            desktop, media, llm=llm, person=person, options=self._options, memory=memory
        )
        self._waits = AppWaits(
            browser,
            ready_quiet_s=self._options.ready_quiet_s,
            save_quiet_s=self._options.save_quiet_s,
            reaction_s=self._options.reaction_s,
            patience_s=self._options.patience_s,
        )
        self._closing_s = 0.0
        self._on_event = on_event
        self._steps: list[RunStep] = []
        self._lessons = Lessons()
        self._run: Run | None = None
        self._secrets: tuple[str, ...] = ()
        self._blocks = Blocks(self)
        self._began = time.monotonic()

    # ── the run ─────────────────────────────────────────────────────────────────────────────

    async def run(self, version: WorkflowVersion, params: BoundParameters) -> ReplayOutcome:
        """Run *version* with *params*; the run record is saved as it goes.

        A cancelled run (Ctrl+C, the GUI's Stop) is saved as interrupted and the cancellation
        goes on; any other failure ends the run as failed, never as an exception.
        """
        workflow = version.workflow
        self._secrets = params.secret_values()
        self._began = time.monotonic()
        self._run = Run(
            workflow_id=workflow.id,
            workflow_version=workflow.version,
            trigger=self._options.trigger,
            parameters=params.masked(),
            secret_parameters=tuple(sorted(params.secrets)),
        )
        self._runs.save_run(self._run)
        context = Context(version=version, params=params, prefix="", depth=0)
        status, error = RunStatus.SUCCEEDED, None
        try:
            await self.run_steps(workflow.steps, context)
            status, error = await self._verify(context)
        except RunAborted as exc:
            status, error = RunStatus.ABORTED, str(exc)
        except StoppedBefore as exc:
            status, error = RunStatus.UNVERIFIED, str(exc)
        except StepFailed as exc:
            status, error = RunStatus.FAILED, str(exc)
        except (asyncio.CancelledError, KeyboardInterrupt):
            self._finish(RunStatus.INTERRUPTED, "the run was stopped before it finished")
            raise
        except ProceduraError as exc:
            status, error = RunStatus.FAILED, str(exc)
        except Exception as exc:
            self._finish(RunStatus.FAILED, f"unexpected error: {type(exc).__name__}: {exc}")
            raise
        if status in (RunStatus.FAILED, RunStatus.ABORTED) and not self._closing_s:
            # What the steps done started (a debounced save) is let finish before the browser
            # closes: a run that stopped half-way leaves the app as those steps left it.
            with contextlib.suppress(BrowserGone):  # nothing to let finish there
                self._closing_s = await self._waits.saved(within_s=SETTLE_AFTER_FAILURE_S)
        run = self._finish(status, error)
        return ReplayOutcome(run=run, lessons=self._lessons)

    def _finish(self, status: RunStatus, error: str | None) -> Run:
        assert self._run is not None
        self._run = self._run.model_copy(
            update={
                "status": status,
                "error": error,
                "finished_at": utcnow(),
                "steps": tuple(self._steps),
                "closing_wait_ms": self._closing_s * 1000,
            }
        )
        self._runs.save_run(self._run)
        return self._run

    def _record(self, step: RunStep) -> RunStep:
        """Append *step* to the run record (numbered in order of completion: a call's own
        record follows its inner steps) and save the record."""
        assert self._run is not None
        step = step.model_copy(update={"index": len(self._steps)})
        self._steps.append(step)
        self._run = self._run.model_copy(update={"steps": tuple(self._steps)})
        self._runs.save_run(self._run)
        return step

    def _emit(self, event: ReplayEvent) -> None:
        if self._on_event is not None:
            self._on_event(event)

    def _check_time(self, index: int, title: str) -> None:
        limit = self._options.time_limit_s
        if limit is not None and time.monotonic() - self._began > limit:
            raise StepFailed(
                f"the run took longer than its time limit "
                f"({f'{limit / 60:g} min' if limit >= 60 else f'{limit:g} s'}); "
                f"stopped before step {index + 1} '{title}'",
                kind=FailureKind.REFUSED,
            )

    # ── what blocks need (BlockHost) ───────────────────────────────────────────────────────

    @property
    def browser(self) -> BrowserPort:
        return self._browser

    @property
    def secrets(self) -> tuple[str, ...]:
        return self._secrets

    def next_index(self) -> int:
        return len(self._steps)

    def record(self, step: RunStep) -> RunStep:
        return self._record(step)

    def emit(self, event: ReplayEvent) -> None:
        self._emit(event)

    async def ready(self, *, timeout_s: float) -> None:
        await self._waits.ready(timeout_s=timeout_s)

    async def holds(self, condition: Condition, context: Context, *, timeout_s: float) -> bool:
        return await condition_holds(
            condition,
            context.params.values,
            timeout_s=timeout_s,
            on_page=lambda e, t: self._holds(e, timeout_s=t),
        )

    async def run_steps(self, steps: tuple[Step, ...], context: Context) -> None:
        for step in steps:
            if isinstance(step, IfStep | ForEachStep | RepeatUntilStep | TryStep):
                self._check_time(len(self._steps), step.title)
                await self._blocks.run(step, context)
                continue
            index = len(self._steps)
            title = public_title(step, context.params)
            self._check_time(index, title)
            if step.irreversible and self._options.stop_before_irreversible:
                raise StoppedBefore(f"{STOPPED_BEFORE} {index + 1} '{title}' (irreversible)")
            if self._before_step is not None:
                assert self._run is not None
                await self._before_step(self._run.id, title, step.irreversible)
            self._emit(ReplayEvent(index=index, title=title, depth=context.level))
            record, aborted = await self._run_one(index, step, context, title)
            record = self._record(record)
            self._emit(ReplayEvent(index=record.index, title=title, step=record))
            if aborted is not None:
                raise aborted
            context.history.append(f"{title} ({record.status.value})")
            if record.status is StepStatus.FAILED and not step.optional:
                raise StepFailed(
                    f"step {index + 1} '{title}' failed: {record.error}", kind=record.failure
                )
            if record.status is StepStatus.SUCCEEDED and step.irreversible:
                context.shared.irreversible_done += 1

    async def _run_one(
        self, index: int, step: Step, context: Context, title: str
    ) -> tuple[RunStep, RunAborted | BrowserGone | None]:
        """Do one step; its record, and what ends the run, to raise once it is recorded."""
        started, clock = utcnow(), time.monotonic()
        tracker = Tracker()
        status, error = StepStatus.SUCCEEDED, None
        aborted: RunAborted | BrowserGone | None = None
        why = Diagnosis(kind=None)
        try:
            bound = render_step(step, context.params.values)
            await self._browser.answer_dialogs(bound.dialog)
            await self._dispatch(bound, step, context, tracker)
            await check_dialogs(self._browser, tracker, self._secrets)
        except (RunAborted, BrowserGone) as exc:
            status, error, aborted = StepStatus.FAILED, str(exc), exc
        except StepSkipped as exc:
            status, error = StepStatus.SKIPPED, str(exc) or None
        except (StepFailed, ActionFailed, NavigationRefused) as exc:
            status, error = StepStatus.FAILED, str(exc)
            kind = exc.kind if isinstance(exc, StepFailed) else None
            if isinstance(exc, NavigationRefused):
                kind = FailureKind.REFUSED
            why = Diagnosis(kind=kind)
            if not is_desktop_step(step):
                recorded = step.target_or_none
                fingerprint = recorded.fingerprint if recorded is not None else None
                why = await diagnose(self._browser, kind, fingerprint, self._secrets)
        screenshot = None
        healed = tracker.found is not None and tracker.found.resolution.is_heal
        if (
            not isinstance(aborted, BrowserGone)
            and self._options.screenshots
            and (healed or status is StepStatus.FAILED or self._options.screenshot_every_step)
        ):
            screenshot = await self._screenshot(desktop=is_desktop_step(step))
        found = tracker.found
        unresolved = None if step.target_or_none is not None else Resolution.NOT_NEEDED
        record = RunStep(
            index=index,
            step_id=context.prefix + step.id,
            title=title,
            status=status,
            resolution=found.resolution if found else unresolved,
            locator=found.locator if found else None,
            started_at=started,
            duration_ms=(time.monotonic() - clock) * 1000,
            waited_ms=tracker.waited_s * 1000,
            llm_calls=tracker.usage.calls,
            prompt_tokens=tracker.usage.prompt_tokens,
            completion_tokens=tracker.usage.completion_tokens,
            screenshot=screenshot,
            error=error,
            detail="; ".join(n for n in (found.detail if found else "", *tracker.notes) if n)
            or None,
            failure=why.kind,
            page_messages=why.page_messages,
            nearest=why.nearest,
            actions=tuple(tracker.actions),
            depth=context.level,
            iteration=context.iteration,
            branch=context.branch,
        )
        return record, aborted

    async def _screenshot(self, *, desktop: bool = False) -> str | None:
        if desktop:
            image = await self._desktop.screenshot()
            return self._media.put(image, "png") if image is not None else None
        try:
            return self._media.put(await self._browser.screenshot(), "png")
        except (ActionFailed, BrowserGone, OSError):
            return None

    # ── step kinds ─────────────────────────────────────────────────────────────────────────

    async def _dispatch(
        self, bound: Step, original: Step, context: Context, tracker: Tracker
    ) -> None:
        domains = context.version.workflow.domains
        match bound:
            case GotoStep(url=url):
                if not domain_allowed(url, domains):
                    raise StepFailed(
                        f"refused to open {url}: outside the workflow's domains "
                        f"({', '.join(domains) or 'none'})",
                        kind=FailureKind.REFUSED,
                    )
                await self._browser.goto(url, timeout_s=bound.timeout_s)
                await self._expect(bound, tracker)
            case WaitForStep(condition=condition) | AssertStep(condition=condition):
                assert isinstance(original, WaitForStep | AssertStep)
                if not await self.holds(original.condition, context, timeout_s=bound.timeout_s):
                    raise StepFailed(
                        f"expected {describe_expectation(condition)}; it did not",
                        kind=FailureKind.NOT_AS_EXPECTED,
                    )
            case ExtractStep():
                await self._extract(bound, original, context, tracker)
            case CallStep():
                await self._call(bound, context)
            case AgentStep():
                await self._agent(bound, context, tracker)
            case DesktopClickStep() | DesktopTypeStep() | HotkeyStep():
                if bound.irreversible and self._person is None and not self._options.assume_yes:
                    raise StepFailed(
                        unattended_refusal(public_title(original, context.params)),
                        kind=FailureKind.REFUSED,
                    )
                secret = any(
                    f"{{{name}}}" in getattr(original, "text", "")
                    for name in context.params.secrets
                )
                title = public_title(original, context.params)
                repair = await self._desktop.run(
                    bound,
                    tracker,
                    title=title,
                    secret=secret,
                    workflow=context.version.workflow,
                    original=original,
                )
                held = False
                try:
                    await self._expect(bound, tracker)
                    held = True
                finally:
                    if tracker.found is not None:  # a click or a field found: what it taught
                        where = (context.version.workflow.id, original.id)
                        kept = None if context.loop_values else repair
                        self._lessons.acted(tracker.found, where, held=held, repair=kept)
            case PressStep(target=None) | ScrollStep(target=None):
                tracker.waited_s += await self._waits.ready(timeout_s=bound.timeout_s)
                action = page_action(bound, context.params.secrets)
                if bound.irreversible and self._person is None and not self._options.assume_yes:
                    raise StepFailed(
                        unattended_refusal(f"pressing {action.key}"), kind=FailureKind.REFUSED
                    )
                if isinstance(bound, PressStep) and not step_commits(bound):
                    focused = await focused_commits(self._browser, bound.key)
                    if focused is not None:
                        raise StepFailed(
                            f"pressing {bound.key} would set off {focused}, which commits to "
                            "something this step does not; not pressed",
                            kind=FailureKind.REFUSED,
                        )

                async def press() -> PageMark:
                    mark = await self._waits.mark()
                    await self._browser.perform(None, action, timeout_s=bound.timeout_s)
                    return mark

                mark = await press()
                silent = None
                if bound.reacts:
                    silent = await self._waits.reacted_to(
                        mark,
                        press,
                        what=f"pressing {action.key}",
                        irreversible=bound.irreversible,
                        timeout_s=bound.timeout_s,
                        tracker=tracker,
                    )
                if silent is not None:
                    raise StepFailed(silent, kind=FailureKind.NOT_AS_EXPECTED)
                await self._expect(bound, tracker)
            case _:
                await self._act_with_healing(bound, original, context, tracker)

    async def _expect(self, bound: Step, tracker: Tracker) -> None:
        for expectation in bound.expectations:
            if not await self._holds(expectation, timeout_s=bound.timeout_s):
                raise StepFailed(
                    f"expected {describe_expectation(expectation)}; it did not",
                    kind=FailureKind.NOT_AS_EXPECTED,
                )

    async def _holds(self, expectation: Expectation, *, timeout_s: float) -> bool:
        if is_desktop_expectation(expectation):
            return await self._desktop.expectation_holds(expectation, timeout_s=timeout_s)
        return await self._browser.expectation_holds(expectation, timeout_s=timeout_s)

    async def _extract(
        self, bound: ExtractStep, original: Step, context: Context, tracker: Tracker
    ) -> None:
        found = await self._ladder.resolve(self._attempt(bound, original, context, tracker))
        tracker.found = found
        text = await self._browser.read(found.handle, bound.attribute)
        if bound.pattern is not None:
            match = re.search(bound.pattern, text)
            if match is None:
                raise StepFailed(f"{text[:80]!r} does not match the pattern {bound.pattern!r}")
            text = match.group(1) if match.groups() else match.group(0)
        context.params = context.params.with_variable(bound.variable, text.strip())
        tracker.note(f"{bound.variable} = {text.strip()[:80]!r}")

    async def _agent(self, bound: AgentStep, context: Context, tracker: Tracker) -> None:
        # The agent's first look is at a page at rest, as a person's would be (an app that
        # draws its list after load shows the agent an empty page otherwise).
        tracker.waited_s += await self._waits.ready(timeout_s=bound.timeout_s)
        output = await run_agent_step(
            AgentContext(context.version.workflow, bound, self._secrets, context.params.values),
            browser=self._browser,
            ladder=self._ladder,
            llm=self._llm,
            person=self._person,
            options=self._options,
            tracker=tracker,
            waits=self._waits,
        )
        if bound.output_variable is not None:
            context.params = context.params.with_variable(bound.output_variable, output)
        await self._expect(bound, tracker)

    async def _call(self, bound: CallStep, context: Context) -> None:
        if self._load is None:
            raise StepFailed("this run cannot load other workflows")
        if context.depth >= MAX_CALL_DEPTH:
            raise StepFailed(f"calls are nested more than {MAX_CALL_DEPTH} deep")
        callee = self._load(bound.workflow_id, bound.version)
        secret_names = {p.name for p in callee.workflow.parameters if p.type.value == "secret"}
        given = {k: v for k, v in bound.arguments.items() if k not in secret_names}
        secrets = {k: v for k, v in bound.arguments.items() if k in secret_names}
        params = bind_parameters(callee.workflow, given, secrets=secrets)
        inner = Context(
            version=callee,
            params=params,
            prefix=f"{context.prefix}{bound.id}/",
            depth=context.depth + 1,
            history=context.history,
            shared=context.shared,
            level=context.level + 1,
            iteration=context.iteration,
        )
        self._secrets = tuple(dict.fromkeys((*self._secrets, *params.secret_values())))
        await self.run_steps(callee.workflow.steps, inner)
        if callee.workflow.success:
            await self._check_success(inner)

    # ── acting on an element ───────────────────────────────────────────────────────────────

    async def _act_with_healing(
        self, bound: Step, original: Step, context: Context, tracker: Tracker
    ) -> None:
        excluded: set[str] = set()
        problem = ""
        action = page_action(bound, context.params.secrets, original)
        timed_out = False
        where = (context.version.workflow.id, original.id)
        tracker.waited_s += await self._waits.ready(timeout_s=bound.timeout_s)
        for _attempt in range(3):
            attempt = self._attempt(
                bound,
                original,
                context,
                tracker,
                excluded=excluded,
                problem=problem,
                secret=action.secret,
            )
            found = await self._ladder.resolve(attempt)
            tracker.found = found
            if context.confirmed is not None and original.id in context.confirmed:
                tracker.note("irreversible step: confirmed once for every round")
            elif (
                await confirm_irreversible(
                    bound,
                    found,
                    tracker,
                    person=self._person,
                    assume_yes=self._options.assume_yes,
                    title=public_title(bound, context.params),
                    browser=self._browser,
                )
                and context.confirmed is not None
            ):
                context.confirmed.add(original.id)
            repair = None
            if found.resolution is not Resolution.DIRECT:
                # Described before acting: the element may go.
                repair = await repair_of(self._browser, context.version.workflow, original, found)
            before = await self._browser.url()
            watch = bound.reacts and await self._can_react(found.handle, action)
            try:
                mark = await self._waits.mark() if watch else None
                await self._perform(found.handle, action, bound.timeout_s, tracker)
            except ActionFailed as exc:
                if timed_out or exc.blocked:
                    raise
                # Nothing was done: the element may have been replaced since it was found.
                timed_out = True
                tracker.note(f"{exc}; looking for the element again")
                continue
            await check_dialogs(
                self._browser, tracker, self._secrets
            )  # a question nobody answered fails it first
            silent = None
            if mark is not None:
                silent = await self._waits.reacted_to(
                    mark,
                    self._redo(found.handle, action, bound.timeout_s, tracker),
                    what=f"the {action.kind} on {found.handle.describe()}",
                    irreversible=bound.irreversible,
                    timeout_s=bound.timeout_s,
                    tracker=tracker,
                )

            if silent is not None:  # nothing happened: as if it led nowhere
                self._lessons.acted(found, where, held=False)
                excluded.add(await self._ladder.identity(found.handle))
                problem = silent
                tracker.note(problem)
                continue
            try:
                await self._read_back(found.handle, action, bound)
            except StepFailed:
                self._lessons.acted(found, where, held=False)
                raise
            failed = await self._first_failed_expectation(bound)
            # A round's element is that round's: what it taught serves the next rounds of this
            # run only (rounds.py), never the memory or a proposed version.
            kept = None if context.loop_values else repair
            self._lessons.acted(found, where, held=failed is None, repair=kept)
            if failed is None:
                if repair is not None and context.loop_values:
                    self._learn_for_rounds(original, repair.used, context)
                return
            what = describe_expectation(failed)
            if bound.irreversible:
                raise StepFailed(
                    f"expected {what} after acting on {found.handle.describe()}; it did not, "
                    "and an irreversible step is never tried twice",
                    kind=FailureKind.NOT_AS_EXPECTED,
                )
            if await self._browser.url() != before:
                raise StepFailed(
                    f"acting on {found.handle.describe()} led to {await self._browser.url()}, "
                    f"not to: {what}; another element is not tried on another page",
                    kind=FailureKind.NOT_AS_EXPECTED,
                )
            excluded.add(await self._ladder.identity(found.handle))
            problem = f"acting on {found.handle.describe()} did not lead to: {what}"
            tracker.note(problem)
        raise StepFailed(
            f"no element led to what the step expects ({problem})",
            kind=FailureKind.NOT_AS_EXPECTED,
        )

    async def _read_back(self, handle: Handle, action: PageAction, bound: Step) -> None:
        """Check that a fill, select or check left the control as asked (raises
        :class:`StepFailed` saying what it holds instead; a secret is never shown)."""
        if action.kind not in ("fill", "select", "check"):
            return
        try:
            state = await self._browser.field_state(handle)
        except ActionFailed:
            if action.kind == "fill":
                return  # the field went with the typing (a search box that submits on input)
            raise
        problem = mismatch(action, state)
        if problem is not None:
            raise StepFailed(
                mask_secrets(f"after the {action.kind}, {problem}", self._secrets),
                kind=FailureKind.VALUE_NOT_ACCEPTED,
            )

    async def _can_react(self, handle: Handle, action: PageAction) -> bool:
        """Whether the page has something to react to: not a select or check that the
        control already held (doing it changes nothing)."""
        if action.kind not in ("select", "check"):
            return True
        try:
            return not already_holds(action, await self._browser.field_state(handle))
        except ActionFailed:
            return True

    def _redo(
        self, handle: Handle, action: PageAction, timeout_s: float, tracker: Tracker
    ) -> Callable[[], Awaitable[PageMark]]:
        async def redo() -> PageMark:
            mark = await self._waits.mark()
            await self._perform(handle, action, timeout_s, tracker)
            return mark

        return redo

    async def _first_failed_expectation(self, bound: Step) -> Expectation | None:
        for expectation in bound.expectations:
            if not await self._holds(expectation, timeout_s=bound.timeout_s):
                return expectation
        return None

    async def _perform(
        self, handle: Handle, action: PageAction, timeout_s: float, tracker: Tracker
    ) -> None:
        escaped = False
        for _ in range(MAX_OVERLAYS + 1):
            if not await self._browser.receives_pointer(handle):
                if await self._ladder.clear_overlay(tracker):
                    continue
                if not escaped and await self._browser.covered_by_popup(handle):
                    # Not an overlay but a popup the last step left open (a date picker, a
                    # menu) over the element: Escape closes it, as a person would, and commits
                    # to nothing.
                    escaped = True
                    await self._browser.perform(
                        None, PageAction(kind="press", key="Escape"), timeout_s=5
                    )
                    tracker.note("pressed Escape: something the page had open covered the element")
                    continue
            try:
                await self._browser.perform(handle, action, timeout_s=timeout_s)
                return
            except ActionFailed as exc:
                if not (exc.blocked and await self._ladder.clear_overlay(tracker)):
                    raise
        raise StepFailed("something keeps covering the page after clearing it three times")

    def _learn_for_rounds(self, original: Step, used: Locator, context: Context) -> None:
        recorded = original.target_or_none
        if recorded is None:
            return
        learned = learned_locator(used, recorded, context.params.values, context.loop_values)
        if learned is not None:
            context.shared.learned[original.id] = learned

    def _attempt(
        self,
        bound: Step,
        original: Step,
        context: Context,
        tracker: Tracker,
        *,
        excluded: set[str] | None = None,
        problem: str = "",
        secret: bool = False,
    ) -> Attempt:
        target, recorded = bound.target_or_none, original.target_or_none
        assert target is not None and recorded is not None
        workflow = context.version.workflow
        fingerprint = fingerprint_for_run(recorded, workflow, context.params.values)
        return Attempt(
            bound=bound,
            target=with_learned(
                target.model_copy(update={"fingerprint": fingerprint}),
                context.shared.learned.get(original.id) if context.loop_values else None,
                context.params.values,
            ),
            tracker=tracker,
            workflow=context.version.workflow,
            params=context.params,
            secrets=self._secrets,
            step_number=len(self._steps) + 1,
            history=tuple(context.history),
            excluded=excluded if excluded is not None else set(),
            problem=problem,
            secret=secret,
        )

    # ── learning ───────────────────────────────────────────────────────────────────────────
