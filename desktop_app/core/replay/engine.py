"""The replay engine: run a workflow version step by step, healing drift up the ladder.

For every step: find the element (rung 1 the recorded locators in rank order; 2 fingerprint
matching; 3 a remembered repair; 4 the LLM; 5 a person), act, then check the step's
expectations. An expectation that fails after acting is drift too: the engine goes back up the
ladder for another element, except for an irreversible step, which is never done twice. Every
step's rung, time, LLM use and (on a heal or a failure) screenshot goes into the run record,
which is saved after each step so a killed run leaves what it did.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from desktop_app.core.errors import ProceduraError
from desktop_app.core.llm import LLMError, LLMUsage, StructuredLLM
from desktop_app.core.models.common import utcnow
from desktop_app.core.models.run import (
    Resolution,
    Run,
    RunStatus,
    RunStep,
    RunTrigger,
    StepStatus,
)
from desktop_app.core.models.target import Locator, Target
from desktop_app.core.models.workflow import (
    AgentStep,
    AssertStep,
    CallStep,
    CheckStep,
    ClickStep,
    DesktopClickStep,
    DesktopTypeStep,
    Expectation,
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
    WorkflowVersion,
)
from desktop_app.core.ports import MediaStore, RunStore
from desktop_app.core.replay.browser import (
    ActionFailed,
    BrowserPort,
    Handle,
    NavigationRefused,
    PageAction,
)
from desktop_app.core.replay.fingerprint import best_match, score, text_similarity
from desktop_app.core.replay.heal_llm import HealRequest, ask_llm, describe_expectation, known_refs
from desktop_app.core.replay.memory import ExperienceMemory
from desktop_app.core.replay.parameters import BoundParameters, bind_parameters
from desktop_app.core.replay.person import Choice, Person, Question
from desktop_app.core.replay.render import domain_allowed, render_step, render_text

__all__ = ["ReplayEvent", "ReplayOptions", "ReplayOutcome", "Replayer", "StepRepair"]

#: A fingerprint score below this means a recorded locator now finds something else.
PLAUSIBLE: Final = 0.45
_POLL_S: Final = 0.1
_MAX_OVERLAYS: Final = 3
_MAX_CALL_DEPTH: Final = 5
_UNSAFE_WORDS: Final = re.compile(
    r"\b(delete|remove|erase|destroy|pay|buy|purchase|order|submit|send|sign ?out|log ?out|"
    r"transfer|confirm|unsubscribe|cancel)\b",
    re.IGNORECASE,
)
_FIELD_ROLES: Final = frozenset({"textbox", "searchbox", "combobox", "spinbutton"})
_SELECT_ROLES: Final = frozenset({"combobox", "listbox"})
_CHECK_ROLES: Final = frozenset({"checkbox", "radio", "switch", "menuitemcheckbox"})
_HEALED: Final = frozenset(
    {Resolution.FINGERPRINT, Resolution.EXPERIENCE, Resolution.LLM, Resolution.PERSON}
)


@dataclass(frozen=True, slots=True)
class ReplayOptions:
    """How a run may behave.

    Args:
        assume_yes: irreversible steps found by healing need no confirmation (``--yes``).
        use_llm: whether rung 4 may be used (``--no-llm`` turns it off).
        max_llm_calls_per_step: the most LLM calls one step may make.
        patience_s: how long the recorded locators are waited for before healing starts
            (longer while the page shows it is loading; never past the step's timeout).
        trigger: what started the run, for the record.
        screenshots: keep a screenshot of every healed or failed step.
    """

    assume_yes: bool = False
    use_llm: bool = True
    max_llm_calls_per_step: int = 3
    patience_s: float = 3.0
    trigger: RunTrigger = RunTrigger.CLI
    screenshots: bool = True


@dataclass(frozen=True, slots=True)
class StepRepair:
    """What a healed step taught: the element's new locators, where and how it was found."""

    workflow_id: str
    workflow_version: int
    step_id: str
    step_title: str
    step_kind: str
    resolution: Resolution
    target: Target
    used: Locator
    failed: tuple[Locator, ...]
    page_url: str
    reason: str


@dataclass(frozen=True, slots=True)
class ReplayEvent:
    """Progress for a front end: a step started (``step`` None) or finished."""

    index: int
    title: str
    step: RunStep | None = None
    note: str = ""


@dataclass
class ReplayOutcome:
    """A finished run and the repairs it made."""

    run: Run
    repairs: list[StepRepair] = field(default_factory=list)


class _StepFailed(ProceduraError):
    pass


class _StepSkipped(ProceduraError):
    pass


class _RunAborted(ProceduraError):
    pass


@dataclass(slots=True)
class _Found:
    handle: Handle
    resolution: Resolution
    locator: Locator | None
    detail: str = ""


@dataclass(slots=True)
class _Tracker:
    """What one step used and noticed, for its run record."""

    usage: LLMUsage = field(default_factory=LLMUsage)
    notes: list[str] = field(default_factory=list)
    found: _Found | None = None
    llm_calls_here: int = 0

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def spend(self, usage: LLMUsage) -> None:
        self.usage = self.usage + usage


@dataclass(slots=True)
class _Attempt:
    """One climb of the ladder for a step: what to find, and what did not work."""

    bound: Step
    target: Target
    context: _Context
    tracker: _Tracker
    excluded: set[str]
    problem: str


@dataclass(slots=True)
class _Context:
    version: WorkflowVersion
    params: BoundParameters
    prefix: str
    depth: int
    history: list[str] = field(default_factory=list)


class Replayer:
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
        on_event: Callable[[ReplayEvent], None] | None = None,
    ) -> None:
        self._browser = browser
        self._runs = runs
        self._media = media
        self._memory = memory
        self._llm = llm
        self._person = person
        self._load = load
        self._options = options or ReplayOptions()
        self._on_event = on_event
        self._steps: list[RunStep] = []
        self._repairs: list[StepRepair] = []
        self._run: Run | None = None
        self._secrets: tuple[str, ...] = ()

    # ── the run ─────────────────────────────────────────────────────────────────────────────

    async def run(self, version: WorkflowVersion, params: BoundParameters) -> ReplayOutcome:
        """Run *version* with *params*; the run record is saved as it goes.

        A cancelled run (Ctrl+C, the GUI's Stop) is saved as interrupted and the cancellation
        goes on; any other failure ends the run as failed, never as an exception.
        """
        workflow = version.workflow
        self._secrets = params.secret_values()
        self._run = Run(
            workflow_id=workflow.id,
            workflow_version=workflow.version,
            trigger=self._options.trigger,
            parameters=params.masked(),
            secret_parameters=tuple(sorted(params.secrets)),
        )
        self._runs.save_run(self._run)
        context = _Context(version=version, params=params, prefix="", depth=0)
        status, error = RunStatus.SUCCEEDED, None
        try:
            await self._run_steps(context)
        except _RunAborted as exc:
            status, error = RunStatus.ABORTED, str(exc)
        except _StepFailed as exc:
            status, error = RunStatus.FAILED, str(exc)
        except (asyncio.CancelledError, KeyboardInterrupt):
            self._finish(RunStatus.INTERRUPTED, "the run was stopped before it finished")
            raise
        except ProceduraError as exc:
            status, error = RunStatus.FAILED, str(exc)
        run = self._finish(status, error)
        return ReplayOutcome(run=run, repairs=list(self._repairs))

    def _finish(self, status: RunStatus, error: str | None) -> Run:
        assert self._run is not None
        self._run = self._run.model_copy(
            update={
                "status": status,
                "error": error,
                "finished_at": utcnow(),
                "steps": tuple(self._steps),
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

    async def _run_steps(self, context: _Context) -> None:
        steps = context.version.workflow.steps
        for step in steps:
            index = len(self._steps)
            title = self._public_title(step, context.params)
            self._emit(ReplayEvent(index=index, title=title))
            record = await self._run_one(index, step, context, title)
            record = self._record(record)
            self._emit(ReplayEvent(index=record.index, title=title, step=record))
            context.history.append(f"{title} ({record.status.value})")
            if record.status is StepStatus.FAILED and not step.optional:
                raise _StepFailed(f"step {index + 1} '{title}' failed: {record.error}")

    def _public_title(self, step: Step, params: BoundParameters) -> str:
        shown = {k: v for k, v in params.values.items() if k not in params.secrets}
        return render_text(step.title, shown)

    async def _run_one(self, index: int, step: Step, context: _Context, title: str) -> RunStep:
        started, clock = utcnow(), time.monotonic()
        tracker = _Tracker()
        status, error = StepStatus.SUCCEEDED, None
        try:
            bound = render_step(step, context.params.values)
            await self._dispatch(bound, step, context, tracker)
        except _StepSkipped as exc:
            status, error = StepStatus.SKIPPED, str(exc) or None
        except (_StepFailed, ActionFailed, NavigationRefused) as exc:
            status, error = StepStatus.FAILED, str(exc)
        screenshot = None
        healed = tracker.found is not None and tracker.found.resolution in _HEALED
        if self._options.screenshots and (healed or status is StepStatus.FAILED):
            screenshot = await self._screenshot()
        found = tracker.found
        return RunStep(
            index=index,
            step_id=context.prefix + step.id,
            title=title,
            status=status,
            resolution=found.resolution if found else Resolution.NOT_NEEDED,
            locator=found.locator if found else None,
            started_at=started,
            duration_ms=(time.monotonic() - clock) * 1000,
            llm_calls=tracker.usage.calls,
            prompt_tokens=tracker.usage.prompt_tokens,
            completion_tokens=tracker.usage.completion_tokens,
            screenshot=screenshot,
            error=error,
            detail="; ".join(n for n in (found.detail if found else "", *tracker.notes) if n)
            or None,
        )

    async def _screenshot(self) -> str | None:
        try:
            return self._media.put(await self._browser.screenshot(), "png")
        except (ActionFailed, OSError):
            return None

    # ── step kinds ─────────────────────────────────────────────────────────────────────────

    async def _dispatch(
        self, bound: Step, original: Step, context: _Context, tracker: _Tracker
    ) -> None:
        domains = context.version.workflow.domains
        match bound:
            case GotoStep(url=url):
                if not domain_allowed(url, domains):
                    raise _StepFailed(
                        f"refused to open {url}: outside the workflow's domains "
                        f"({', '.join(domains) or 'none'})"
                    )
                await self._browser.goto(url, timeout_s=bound.timeout_s)
                await self._expect(bound, tracker)
            case WaitForStep(condition=condition) | AssertStep(condition=condition):
                if not await self._browser.expectation_holds(condition, timeout_s=bound.timeout_s):
                    raise _StepFailed(f"expected {describe_expectation(condition)}; it did not")
            case ExtractStep():
                await self._extract(bound, original, context, tracker)
            case CallStep():
                await self._call(bound, context)
            case AgentStep():
                raise _StepFailed(
                    "agent steps are not replayed yet; replace it with recorded steps"
                )
            case DesktopClickStep() | DesktopTypeStep() | HotkeyStep():
                raise _StepFailed("desktop steps need the desktop backend, which is not installed")
            case PressStep(target=None) | ScrollStep(target=None):
                await self._browser.perform(
                    None, _action(bound, context), timeout_s=bound.timeout_s
                )
                await self._expect(bound, tracker)
            case _:
                await self._act_with_healing(bound, original, context, tracker)

    async def _expect(self, bound: Step, tracker: _Tracker) -> None:
        for expectation in bound.expectations:
            if not await self._browser.expectation_holds(expectation, timeout_s=bound.timeout_s):
                raise _StepFailed(f"expected {describe_expectation(expectation)}; it did not")

    async def _extract(
        self, bound: ExtractStep, original: Step, context: _Context, tracker: _Tracker
    ) -> None:
        found = await self._resolve(bound, context, tracker, excluded=set(), problem="")
        tracker.found = found
        text = await self._browser.read(found.handle, bound.attribute)
        if bound.pattern is not None:
            match = re.search(bound.pattern, text)
            if match is None:
                raise _StepFailed(f"{text[:80]!r} does not match the pattern {bound.pattern!r}")
            text = match.group(1) if match.groups() else match.group(0)
        context.params = context.params.with_variable(bound.variable, text.strip())
        tracker.note(f"{bound.variable} = {text.strip()[:80]!r}")

    async def _call(self, bound: CallStep, context: _Context) -> None:
        if self._load is None:
            raise _StepFailed("this run cannot load other workflows")
        if context.depth >= _MAX_CALL_DEPTH:
            raise _StepFailed(f"calls are nested more than {_MAX_CALL_DEPTH} deep")
        callee = self._load(bound.workflow_id, bound.version)
        secret_names = {p.name for p in callee.workflow.parameters if p.type.value == "secret"}
        given = {k: v for k, v in bound.arguments.items() if k not in secret_names}
        secrets = {k: v for k, v in bound.arguments.items() if k in secret_names}
        params = bind_parameters(callee.workflow, given, secrets=secrets)
        inner = _Context(
            version=callee,
            params=params,
            prefix=f"{context.prefix}{bound.id}/",
            depth=context.depth + 1,
            history=context.history,
        )
        self._secrets = tuple(dict.fromkeys((*self._secrets, *params.secret_values())))
        await self._run_steps(inner)

    # ── acting on an element ───────────────────────────────────────────────────────────────

    async def _act_with_healing(
        self, bound: Step, original: Step, context: _Context, tracker: _Tracker
    ) -> None:
        excluded: set[str] = set()
        problem = ""
        action = _action(bound, context)
        for _attempt in range(3):
            found = await self._resolve(bound, context, tracker, excluded, problem)
            tracker.found = found
            await self._confirm_if_needed(bound, found, tracker)
            repair = None
            if found.resolution is not Resolution.DIRECT:
                repair = await self._repair(original, context, found)  # before acting: it may go
            await self._perform(found.handle, action, bound.timeout_s, tracker)
            failed = await self._first_failed_expectation(bound)
            if failed is None:
                if repair is not None:
                    self._repairs.append(repair)
                return
            what = describe_expectation(failed)
            if bound.irreversible:
                raise _StepFailed(
                    f"expected {what} after acting on {found.handle.describe()}; it did not, "
                    "and an irreversible step is never tried twice"
                )
            excluded.add(await self._identity(found.handle))
            problem = f"acting on {found.handle.describe()} did not lead to: {what}"
            tracker.note(problem)
        raise _StepFailed(f"no element led to what the step expects ({problem})")

    async def _first_failed_expectation(self, bound: Step) -> Expectation | None:
        for expectation in bound.expectations:
            if not await self._browser.expectation_holds(expectation, timeout_s=bound.timeout_s):
                return expectation
        return None

    async def _perform(
        self, handle: Handle, action: PageAction, timeout_s: float, tracker: _Tracker
    ) -> None:
        for _ in range(_MAX_OVERLAYS + 1):
            if (
                action.kind == "click"
                and not await self._browser.receives_pointer(handle)
                and await self._clear_overlay(tracker)
            ):
                continue
            try:
                await self._browser.perform(handle, action, timeout_s=timeout_s)
                return
            except ActionFailed as exc:
                if not (exc.blocked and await self._clear_overlay(tracker)):
                    raise
        raise _StepFailed("something keeps covering the page after clearing it three times")

    async def _clear_overlay(self, tracker: _Tracker) -> bool:
        overlay = await self._browser.blocking_overlay()
        if overlay is None:
            return False
        if _UNSAFE_WORDS.search(overlay.dismiss_label) or _UNSAFE_WORDS.search(overlay.title):
            tracker.note(f"{overlay.description} may commit to something; not cleared")
            return False
        await self._browser.perform(overlay.dismiss, PageAction(kind="click"), timeout_s=5)
        tracker.note(f"cleared {overlay.description} with '{overlay.dismiss_label}'")
        return True

    async def _confirm_if_needed(self, bound: Step, found: _Found, tracker: _Tracker) -> None:
        if not bound.irreversible or found.resolution in (Resolution.DIRECT, Resolution.ALTERNATE):
            return
        if self._options.assume_yes:
            tracker.note("irreversible step confirmed in advance (--yes)")
            return
        element = found.handle.describe()
        if self._person is None:
            raise _StepFailed(
                f"irreversible step found its element by {found.resolution.value} ({element}); "
                "it needs a confirmation: run interactively or with --yes"
            )
        answer = await self._person.ask(
            Question(
                kind="confirm",
                step_title=bound.title,
                message=(
                    f"This step cannot be undone, and its element was found by "
                    f"{found.resolution.value}, not by its recorded locator. Go ahead?"
                ),
                element=element,
            )
        )
        if answer.action == "abort":
            raise _RunAborted("aborted by the person asked to confirm")
        if answer.action != "confirm":
            raise _StepFailed("the irreversible step was not confirmed")
        tracker.note("irreversible step confirmed by a person")

    # ── the ladder ─────────────────────────────────────────────────────────────────────────

    async def _resolve(
        self,
        bound: Step,
        context: _Context,
        tracker: _Tracker,
        excluded: set[str],
        problem: str,
    ) -> _Found:
        """Up the ladder until a rung finds the element; *excluded* ones just failed to work."""
        target = bound.target_or_none
        assert target is not None
        attempt = _Attempt(bound, target, context, tracker, excluded, problem)
        if not excluded:
            found = await self._rung_locators(bound, target, tracker)
            if found is not None:
                return found
        for rung in (
            self._rung_fingerprint,
            self._rung_experience,
            self._rung_llm,
            self._rung_person,
        ):
            found = await rung(attempt)
            if found is not None:
                return found
        tried = ", ".join(loc.describe() for loc in target.locators[:3])
        raise _StepFailed(
            f"could not find the element (tried {tried}"
            + (f"; {'; '.join(tracker.notes)}" if tracker.notes else "")
            + ")"
        )

    async def _rung_locators(self, bound: Step, target: Target, tracker: _Tracker) -> _Found | None:
        start = time.monotonic()
        patient_until = start + min(self._options.patience_s, bound.timeout_s)
        hard_until = start + bound.timeout_s
        rejected: set[int] = set()
        overlays = 0
        while True:
            for rank, locator in enumerate(target.locators):
                if rank in rejected:
                    continue
                handle = Handle(locator=locator)
                probe = await self._browser.probe(handle)
                if not probe.usable:
                    continue
                if rank == 0:
                    return _Found(handle, Resolution.DIRECT, locator)
                better = await self._better_ranked(target, rank, rejected)
                if better is not None:
                    return better
                if await self._plausible(target, handle):
                    return _Found(
                        handle, Resolution.ALTERNATE, locator, f"recorded locator #{rank + 1}"
                    )
                rejected.add(rank)
                tracker.note(f"{locator.describe()} now finds a different element; not used")
            now = time.monotonic()
            if overlays < _MAX_OVERLAYS and await self._clear_overlay(tracker):
                overlays += 1
                continue
            if now >= hard_until or (now >= patient_until and not await self._browser.busy()):
                tracker.note(f"no recorded locator matched after {now - start:.1f} s")
                return None
            await asyncio.sleep(_POLL_S)

    async def _better_ranked(self, target: Target, rank: int, rejected: set[int]) -> _Found | None:
        """A locator ranked above *rank* that works now (the page may have just finished)."""
        for higher, locator in enumerate(target.locators[:rank]):
            if (
                higher in rejected
                or not (await self._browser.probe(Handle(locator=locator))).usable
            ):
                continue
            if higher == 0:
                return _Found(Handle(locator=locator), Resolution.DIRECT, locator)
            if await self._plausible(target, Handle(locator=locator)):
                return _Found(
                    Handle(locator=locator),
                    Resolution.ALTERNATE,
                    locator,
                    f"recorded locator #{higher + 1}",
                )
        return None

    async def _plausible(self, target: Target, handle: Handle) -> bool:
        if target.fingerprint is None:
            return True
        described = await self._browser.describe(handle)
        if described is None or described.fingerprint is None:
            return False
        return score(target.fingerprint, described.fingerprint).score >= PLAUSIBLE

    async def _identity(self, handle: Handle) -> str:
        described = await self._browser.describe(handle)
        if described is not None:
            css = [loc.value for loc in described.locators if loc.strategy.value == "css"]
            if css:
                return css[0]
        return handle.describe()

    async def _rung_fingerprint(self, attempt: _Attempt) -> _Found | None:
        target, tracker, excluded = attempt.target, attempt.tracker, attempt.excluded
        if target.fingerprint is None:
            return None
        candidates = await self._browser.candidates()
        if not candidates:
            return None
        match = best_match(target.fingerprint, [c.fingerprint for c in candidates])
        if match.index is None:
            tracker.note(f"fingerprint: {match.reason}")
            return None
        chosen = candidates[match.index]
        if await self._identity(chosen.handle) in excluded:
            tracker.note("fingerprint: the best match is the element that just failed")
            return None
        return _Found(
            chosen.handle,
            Resolution.FINGERPRINT,
            None,
            f"fingerprint {match.score:.2f} (runner-up {match.runner_up:.2f})",
        )

    async def _rung_experience(self, attempt: _Attempt) -> _Found | None:
        bound, target, context = attempt.bound, attempt.target, attempt.context
        excluded = attempt.excluded
        if self._memory is None:
            return None
        url = await self._browser.url()
        query = f"{bound.title} | {bound.kind} | {url}"
        workflow_id = context.version.workflow.id
        for experience in await asyncio.to_thread(
            self._memory.recall, workflow_id, bound.id, query
        ):
            handle = Handle(locator=_rendered(experience.repaired_locator, context.params))
            if not (await self._browser.probe(handle)).usable:
                continue
            if not await self._plausible(target, handle):
                continue
            if await self._identity(handle) in excluded:
                continue
            return _Found(
                handle,
                Resolution.EXPERIENCE,
                experience.repaired_locator,
                f"remembered repair from run of {experience.created_at:%Y-%m-%d}",
            )
        return None

    async def _rung_llm(self, attempt: _Attempt) -> _Found | None:
        bound, target, context = attempt.bound, attempt.target, attempt.context
        tracker, excluded, problem = attempt.tracker, attempt.excluded, attempt.problem
        if self._llm is None or not self._options.use_llm:
            return None
        workflow = context.version.workflow
        domains = workflow.domains
        while tracker.llm_calls_here < self._options.max_llm_calls_per_step:
            snapshot = await self._browser.snapshot()
            request = HealRequest(
                procedure=_procedure(workflow),
                step_number=len(self._steps) + 1,
                step_count=len(workflow.steps),
                step_title=self._public_title(bound, context.params),
                action=_action_words(bound, context.params),
                recorded=target.fingerprint,
                expectations=bound.expectations,
                history=tuple(context.history),
                url=await self._browser.url(),
                problem=problem,
            )
            tracker.llm_calls_here += 1
            try:
                answer, usage, shown = await ask_llm(
                    self._llm, request, snapshot, secrets=self._secrets
                )
            except LLMError as exc:
                tracker.spend(exc.usage)
                tracker.note(f"LLM: {exc}")
                return None
            tracker.spend(usage)
            if answer.action == "not_found" or answer.ref is None:
                tracker.note(f"LLM found nothing: {answer.reason[:120]}")
                return None
            if answer.ref not in known_refs(shown):
                tracker.note(f"LLM named {answer.ref}, which the page does not have")
                continue
            handle = await self._browser.ref_handle(answer.ref)
            described = await self._browser.describe(handle)
            fp = described.fingerprint if described is not None else None
            href = await self._href(handle)
            if href and not domain_allowed(await self._absolute(href), domains):
                tracker.note(f"LLM chose a link outside the workflow's domains ({href}); refused")
                return None
            if answer.action == "dismiss":
                label = (fp.name or fp.text or "") if fp is not None else ""
                if _UNSAFE_WORDS.search(label):
                    tracker.note(f"LLM asked to dismiss with '{label}'; refused")
                    return None
                await self._browser.perform(handle, PageAction(kind="click"), timeout_s=5)
                tracker.note(f"LLM cleared an overlay with '{label}'")
                continue
            if not (await self._browser.probe(handle)).usable:
                tracker.note(f"LLM chose {answer.ref}, which cannot be used")
                continue
            if not _compatible(bound, described):
                tracker.note(f"LLM chose {answer.ref}, which cannot take this step's action")
                continue
            if await self._identity(handle) in excluded:
                tracker.note("LLM chose the element that just failed")
                return None
            return _Found(handle, Resolution.LLM, None, f"LLM: {answer.reason[:160]}")
        tracker.note(f"LLM calls for this step used up ({self._options.max_llm_calls_per_step})")
        return None

    async def _href(self, handle: Handle) -> str:
        try:
            return await self._browser.read(handle, "href")
        except ActionFailed:
            return ""

    async def _absolute(self, href: str) -> str:
        from urllib.parse import urljoin

        return urljoin(await self._browser.url(), href)

    async def _rung_person(self, attempt: _Attempt) -> _Found | None:
        bound, target, problem = attempt.bound, attempt.target, attempt.problem
        if self._person is None:
            return None
        choices = await self._likely_choices(bound, target)
        answer = await self._person.ask(
            Question(
                kind="locate",
                step_title=bound.title,
                message=problem or "The step's element was not found on the page. Which is it?",
                choices=tuple(choices),
            )
        )
        if answer.action == "abort":
            raise _RunAborted("aborted by the person asked to find the element")
        if answer.action == "skip":
            raise _StepSkipped("skipped by the person asked to find the element")
        if answer.action != "pick" or answer.handle is None:
            return None
        return _Found(answer.handle, Resolution.PERSON, None, "pointed out by a person")

    async def _likely_choices(self, bound: Step, target: Target) -> list[Choice]:
        """The page's elements most like the recorded one (or most like the step's title)."""
        candidates = await self._browser.candidates()
        if target.fingerprint is None:
            scored = [(text_similarity(bound.title, _label(c.fingerprint)), c) for c in candidates]
        else:
            scored = [(score(target.fingerprint, c.fingerprint).score, c) for c in candidates]
        scored.sort(key=lambda item: -item[0])
        return [
            Choice(label=_label(c.fingerprint), handle=c.handle, score=s) for s, c in scored[:8]
        ]

    # ── learning ───────────────────────────────────────────────────────────────────────────

    async def _repair(self, original: Step, context: _Context, found: _Found) -> StepRepair | None:
        """What the step would learn if acting on *found* works (described before acting)."""
        described = await self._browser.describe(found.handle)
        target = original.target_or_none
        if described is None or target is None:
            return None
        return StepRepair(
            workflow_id=context.version.workflow.id,
            workflow_version=context.version.workflow.version,
            step_id=original.id,
            step_title=original.title,
            step_kind=original.kind,
            resolution=found.resolution,
            target=described,
            used=found.locator or described.locators[0],
            failed=tuple(loc for loc in target.locators if loc != found.locator),
            page_url=await self._browser.url(),
            reason=found.detail,
        )


def _procedure(workflow: Workflow) -> str:
    return workflow.name + (f" — {workflow.description}" if workflow.description else "")


def _rendered(locator: Locator, params: BoundParameters) -> Locator:
    update: dict[str, str | None] = {"value": render_text(locator.value, params.values)}
    if locator.name is not None:
        update["name"] = render_text(locator.name, params.values)
    return locator.model_copy(update=update)


def _label(fp: object) -> str:
    from desktop_app.core.models.target import Fingerprint

    assert isinstance(fp, Fingerprint)
    kind = fp.role or fp.tag or "element"
    name = fp.name or fp.text or fp.attributes.get("name") or fp.attributes.get("placeholder") or ""
    return f"{kind} '{name[:60]}'" if name else kind


def _action(bound: Step, context: _Context) -> PageAction:
    secret = any(f"{{{name}}}" in getattr(bound, "value", "") for name in context.params.secrets)
    match bound:
        case ClickStep():
            return PageAction(
                kind="click",
                button=bound.button,
                click_count=bound.click_count,
                modifiers=bound.modifiers,
            )
        case FillStep(value=value):
            return PageAction(kind="fill", value=value, secret=secret or bound.target.is_sensitive)
        case SelectStep(value=value):
            return PageAction(kind="select", value=value)
        case CheckStep(checked=checked):
            return PageAction(kind="check", checked=checked is True)
        case PressStep(key=key):
            return PageAction(kind="press", key=key)
        case ScrollStep(dx=dx, dy=dy):
            return PageAction(kind="scroll", dx=dx, dy=dy)
    raise _StepFailed(f"a {bound.kind} step has no browser action")


def _action_words(bound: Step, params: BoundParameters) -> str:
    match bound:
        case FillStep(value=value):
            shown = "a secret value" if value in params.secret_values() else repr(value[:60])
            return f"type {shown} into a field"
        case SelectStep(value=value):
            return f"choose {value!r} in a select"
        case CheckStep(checked=checked):
            return "check a checkbox" if checked is True else "uncheck a checkbox"
        case PressStep(key=key):
            return f"press {key} on an element"
        case ExtractStep():
            return "read a value from an element"
        case _:
            return "click an element"


def _compatible(bound: Step, described: Target | None) -> bool:
    if described is None or described.fingerprint is None:
        return False
    fp = described.fingerprint
    role = fp.role or ""
    tag = fp.tag or ""
    if isinstance(bound, FillStep):
        return role in _FIELD_ROLES or tag in ("input", "textarea")
    if isinstance(bound, SelectStep):
        return role in _SELECT_ROLES or tag == "select"
    if isinstance(bound, CheckStep):
        return role in _CHECK_ROLES
    return True
