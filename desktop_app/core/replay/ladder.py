"""The healing ladder: find a step's element on the page, from cheapest evidence to dearest.

1. the recorded locators in rank order (unique, visible, enabled), waiting while the page is
   still loading or changing; the first locator is taken as it finds, any other (and a
   positional one, even first) only when its element is the page's best match for the recorded
   fingerprint, clearly ahead of every look-alike;
2. fingerprint matching over the page's candidates, above a threshold and clearly ahead;
3. a repair remembered from an earlier run;
4. the LLM, which picks one element in a pruned ARIA snapshot, never a value;
5. a person.

Overlays in the way are cleared when their controls commit to nothing. Every rung may refuse:
acting on the wrong element is worse than asking. No rung ever decides between look-alikes by
their position: equal candidates go to a person, or the step fails saying so.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urljoin

from desktop_app.core.errors import ProceduraError
from desktop_app.core.llm import LLMError, LLMUsage, StructuredLLM
from desktop_app.core.models.experience import Experience
from desktop_app.core.models.run import FailureKind, Resolution, RunTrigger, TakenAction
from desktop_app.core.models.target import Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import (
    CheckStep,
    ClickStep,
    ExtractStep,
    FillStep,
    PressStep,
    SelectStep,
    Step,
    Workflow,
)
from desktop_app.core.replay.browser import ActionFailed, BrowserPort, Handle, PageAction
from desktop_app.core.replay.fingerprint import (
    DEFAULT_MARGIN,
    best_match,
    score,
)
from desktop_app.core.replay.heal_llm import HealRequest, ask_llm, known_refs
from desktop_app.core.replay.memory import ExperienceMemory
from desktop_app.core.replay.naming import PLAUSIBLE, element_words, likely_choices
from desktop_app.core.replay.parameters import BoundParameters
from desktop_app.core.replay.person import Person, Question
from desktop_app.core.replay.render import domain_allowed, fingerprint_for_run, render_text
from desktop_app.core.replay.safety import (
    COMMIT_WORDS,
    commits,
    label_of,
    sets_off,
    step_commits,
    takes_secret,
)
from desktop_app.core.urls import page_shape

__all__ = [
    "MAX_OVERLAYS",
    "PLAUSIBLE",
    "Attempt",
    "Found",
    "Ladder",
    "PersonDecision",
    "ReplayOptions",
    "RunAborted",
    "StepFailed",
    "StepSkipped",
    "Tracker",
    "label_of",
    "public_title",
]

#: Words of a rung's note that say it saw several elements that could be the step's.
_AMBIGUITY: Final = ("look-alike", "ambiguous:")
#: Locators only the desktop resolves: a remembered repair holding one is not a page's.
_DESKTOP_ONLY: Final = frozenset({LocatorStrategy.IMAGE_ANCHOR, LocatorStrategy.ACCESSIBLE})
_POLL_S: Final = 0.1
_OVERLAY_GONE_S: Final = 3.0
#: How many overlays one step may clear.
MAX_OVERLAYS: Final = 3
_FIELD_ROLES: Final = frozenset({"textbox", "searchbox", "combobox", "spinbutton"})
_SELECT_ROLES: Final = frozenset({"combobox", "listbox"})
_CHECK_ROLES: Final = frozenset({"checkbox", "radio", "switch", "menuitemcheckbox"})


@dataclass(frozen=True, slots=True)
class ReplayOptions:
    """How a run may behave.

    Args:
        assume_yes: irreversible steps found by healing need no confirmation (``--yes``).
        use_llm: whether rung 4 may be used (``--no-llm`` turns it off).
        max_llm_calls_per_step: the most LLM calls one step may make.
        patience_s: the most the recorded locators are waited for before healing starts,
            unless the page settles sooner (nothing loading, nothing changing) or still shows
            it is loading (never past the step's timeout).
        trigger: what started the run, for the record.
        screenshots: keep a screenshot of every healed or failed step.
        screenshot_every_step: with *screenshots*, keep one of every step (the GUI shows them
            as the run goes and in its history).
        vision: the LLM sees images (a vision-capable model): desktop steps may show it a
            screenshot to find where to click (setting ``llm_vision``).
        ready_quiet_s: how long a page just loaded must be quiet before its first action.
        save_quiet_s: how long the page must be quiet, with nothing pending (no request, no
            debounced save), after the last step before the run looks at the outcome and the
            browser closes.
        reaction_s: how long a step the page reacted to when recorded may take to get a
            reaction (a change, a request, a navigation) before it is done once more.
        stop_before_irreversible: end the run, done, unverified, before its first
            irreversible step (a verification: ``workflows verify``).
        time_limit_s: the longest the run may take (None: no limit); past it, it fails
            before its next step (a round of a loop included).
    """

    assume_yes: bool = False
    use_llm: bool = True
    max_llm_calls_per_step: int = 3
    patience_s: float = 3.0
    trigger: RunTrigger = RunTrigger.CLI
    screenshots: bool = True
    screenshot_every_step: bool = False
    vision: bool = False
    ready_quiet_s: float = 0.1
    save_quiet_s: float = 0.2
    reaction_s: float = 1.5
    stop_before_irreversible: bool = False
    time_limit_s: float | None = None


class StepFailed(ProceduraError):
    """The step could not be done (the message says why, for the run record; *kind*, where
    the raiser knows it, says what went wrong, for the person fixing it)."""

    def __init__(self, message: str, *, kind: FailureKind | None = None) -> None:
        super().__init__(message)
        self.kind = kind


class PersonDecision(Exception):
    """A person's answer that ends the step or the run where it was asked: not an error
    (outside :class:`ProceduraError`), raised to unwind to the engine, which records it."""


class StepSkipped(PersonDecision):
    """A person said to skip the step."""


class RunAborted(PersonDecision):
    """A person said to stop the run."""


@dataclass(slots=True)
class Found:
    """The element a rung found, how, and (for the run record) by what evidence."""

    handle: Handle
    resolution: Resolution
    locator: Locator | None
    detail: str = ""
    experience_id: str | None = None


@dataclass(slots=True)
class Tracker:
    """What one step used and noticed, for its run record."""

    usage: LLMUsage = field(default_factory=LLMUsage)
    notes: list[str] = field(default_factory=list)
    found: Found | None = None
    llm_calls_here: int = 0
    waited_s: float = 0.0
    actions: list[TakenAction] = field(default_factory=list)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def spend(self, usage: LLMUsage) -> None:
        self.usage = self.usage + usage


@dataclass(slots=True)
class Attempt:
    """One climb of the ladder for a step: what to find, and what did not work."""

    bound: Step
    target: Target
    tracker: Tracker
    workflow: Workflow
    params: BoundParameters
    secrets: tuple[str, ...]
    step_number: int
    history: tuple[str, ...] = ()
    excluded: set[str] = field(default_factory=set)
    problem: str = ""
    secret: bool = False


class Ladder:
    """The rungs over one page, with what each may use.

    Args:
        browser: the page.
        memory: remembered repairs (rung 3), or None.
        llm: the LLM (rung 4), or None.
        person: who answers (rung 5), or None.
        options: what the run may do.
    """

    def __init__(
        self,
        browser: BrowserPort,
        *,
        memory: ExperienceMemory | None,
        llm: StructuredLLM | None,
        person: Person | None,
        options: ReplayOptions,
    ) -> None:
        self._browser = browser
        self._memory = memory
        self._llm = llm
        self._person = person
        self._options = options

    async def clear_overlay(self, tracker: Tracker) -> bool:
        """Clear an overlay in the way, if one is there and clearing it commits to nothing."""
        overlay = await self._browser.blocking_overlay()
        if overlay is None:
            return False
        if COMMIT_WORDS.search(overlay.dismiss_label) or COMMIT_WORDS.search(overlay.title):
            tracker.note(f"{overlay.description} may commit to something; not cleared")
            return False
        await self._browser.perform(overlay.dismiss, PageAction(kind="click"), timeout_s=5)
        tracker.note(f"cleared {overlay.description} with '{overlay.dismiss_label}'")
        # Let it go before acting (an overlay may fade out, or its page reload).
        deadline = time.monotonic() + _OVERLAY_GONE_S
        while time.monotonic() < deadline:
            still = await self._browser.blocking_overlay()
            if still is None or still.title != overlay.title:
                break
            await asyncio.sleep(_POLL_S)
        return True

    async def resolve(self, attempt: Attempt) -> Found:
        """Up the ladder until a rung finds the element (*attempt.excluded* just failed).

        Raises:
            StepFailed: no rung found it (the message says what each tried).
            StepSkipped: the person asked said to skip the step.
            RunAborted: the person asked said to stop the run.
        """
        bound, target, tracker = attempt.bound, attempt.target, attempt.tracker
        started = time.monotonic()
        if not attempt.excluded:
            # A quick look first: if the recorded locators fail now and this step has been
            # repaired before, the remembered repair saves waiting for them.
            found = await self._vetted(
                attempt, await self._rung_locators(bound, target, tracker, patience_s=0)
            )
            if found is None:
                found = await self._rung_experience(attempt, similar=False)
            if found is None:
                found = await self._vetted(
                    attempt, await self._rung_locators(bound, target, tracker)
                )
            if found is not None:
                return found
        found = await self._vetted(attempt, await self._rung_fingerprint(attempt))
        if found is None:
            found = await self._rung_experience(attempt)
        if found is not None:
            return found
        # The page settled without the element and nothing else found it: before asking the
        # LLM or a person, give a late element (drawn by a timer) the rest of the patience.
        left = min(self._options.patience_s, bound.timeout_s) - (time.monotonic() - started)
        if not attempt.excluded and left > _POLL_S:
            found = await self._vetted(
                attempt,
                await self._rung_locators(
                    bound, target, tracker, patience_s=left, until_settled=False
                ),
            )
            if found is None:
                found = await self._vetted(attempt, await self._rung_fingerprint(attempt))
            if found is not None:
                return found
        for rung in (self._rung_llm, self._rung_person):
            found = await rung(attempt)
            if found is not None:
                return found
        tried = ", ".join(loc.describe() for loc in target.locators[:3])
        torn = any(word in note for note in tracker.notes for word in _AMBIGUITY)
        raise StepFailed(
            f"could not find the element (tried {tried}"
            + (f"; {'; '.join(tracker.notes)}" if tracker.notes else "")
            + ")",
            kind=FailureKind.AMBIGUOUS if torn else FailureKind.ELEMENT_MISSING,
        )

    async def _vetted(self, attempt: Attempt, found: Found | None) -> Found | None:
        """*found*, unless it may not be acted on for this step (see :meth:`refusal`)."""
        if found is None or found.resolution in (Resolution.DIRECT, Resolution.PERSON):
            return found
        described = await self._browser.describe(found.handle)
        refused = self.refusal(attempt, found.resolution, described)
        if refused is None:
            return found
        attempt.tracker.note(f"{found.resolution.value}: {refused}; refused")
        return None

    def refusal(
        self, attempt: Attempt, resolution: Resolution, described: Target | None
    ) -> str | None:
        """Why an element found by *resolution* (anything but the first recorded locator or a
        person) may not take this step, or None: it commits to something the step does not,
        or it would be given a secret it is not the field for."""
        bound = attempt.bound
        fp = described.fingerprint if described is not None else None
        if isinstance(bound, SelectStep):
            commit = commits(None, option=bound.value)  # what is chosen, not the list's name
        else:
            commit = isinstance(bound, ClickStep | PressStep) and sets_off(fp) and commits(fp)
        if commit and not step_commits(bound):
            shown = label_of(fp) if fp is not None else "the element"
            return f"{shown} commits to something this step does not"
        judged = resolution in (Resolution.EXPERIENCE, Resolution.LLM)
        if attempt.secret and judged and not takes_secret(described):
            return "a secret goes only into the recorded field or a field made for secrets"
        return None

    async def _rung_locators(
        self,
        bound: Step,
        target: Target,
        tracker: Tracker,
        *,
        patience_s: float | None = None,
        until_settled: bool = True,
    ) -> Found | None:
        """Rung 1: the recorded locators, polled while the page may still be coming.

        Healing starts as soon as the page has settled with no locator working (nothing
        loading, nothing changing for a moment), after *patience_s* at most unless the page
        shows it is still loading, and at the step's timeout at the latest.
        """
        start = time.monotonic()
        patience = self._options.patience_s if patience_s is None else patience_s
        patient_until = start + min(patience, bound.timeout_s)
        hard_until = start + bound.timeout_s
        rejected: set[int] = set()
        overlays = 0
        while True:
            for rank, locator in enumerate(target.locators):
                if rank in rejected:
                    continue
                handle = Handle(locator=locator)
                if not (await self._browser.probe(handle)).usable:
                    continue
                better = await self._better_ranked(target, rank, rejected, tracker)
                if better is not None:
                    return better
                if await self._acceptable(target, rank, handle, tracker):
                    return _found_by_locator(handle, rank)
                rejected.add(rank)
            now = time.monotonic()
            if overlays < MAX_OVERLAYS and await self.clear_overlay(tracker):
                overlays += 1
                continue
            if patience == 0:
                return None
            # Settled with no locator working: an element drawn since the probes would have
            # changed the document, and the page would not be settled.
            settled = until_settled and await self._browser.settled()
            if (
                now >= hard_until
                or settled
                or (now >= patient_until and not await self._browser.busy())
            ):
                tracker.note(f"no recorded locator matched after {now - start:.1f} s")
                return None
            await asyncio.sleep(_POLL_S)

    async def _better_ranked(
        self, target: Target, rank: int, rejected: set[int], tracker: Tracker
    ) -> Found | None:
        """A locator ranked above *rank* that works now (the page may have just finished)."""
        for higher, locator in enumerate(target.locators[:rank]):
            handle = Handle(locator=locator)
            if higher in rejected or not (await self._browser.probe(handle)).usable:
                continue
            if await self._acceptable(target, higher, handle, tracker):
                return _found_by_locator(handle, higher)
            rejected.add(higher)
        return None

    async def _acceptable(
        self, target: Target, rank: int, handle: Handle, tracker: Tracker
    ) -> bool:
        """Whether the one element a recorded locator finds may be acted on.

        The first locator's element is, unless that locator tells elements apart by position;
        any other's only when it is the page's best match for the recorded fingerprint, clearly
        ahead of every look-alike (a fallback that finds one row of two equal ones, or another
        option of the same group, is refused).
        """
        locator = target.locators[rank]
        if rank == 0 and not locator.positional:
            return True
        if locator.nth is not None and locator.nth_of is not None:
            # The nth of as many look-alikes as when recorded: its place still tells it.
            siblings = Handle(locator=locator.model_copy(update={"nth": None, "nth_of": None}))
            if (await self._browser.probe(siblings)).count != locator.nth_of:
                tracker.note(
                    f"{locator.describe()} was recorded among {locator.nth_of} look-alikes, "
                    "the page has another number; not used"
                )
                return False
            if target.fingerprint is None:
                return True
            return await self._looks_like(target, handle, tracker, what=locator.describe())
        if target.fingerprint is None:
            if locator.positional:
                tracker.note(
                    f"{locator.describe()} goes by position; not used without a fingerprint"
                )
                return False
            return True
        return await self.stands_out(target, handle, tracker, what=locator.describe())

    async def _looks_like(
        self, target: Target, handle: Handle, tracker: Tracker, *, what: str
    ) -> bool:
        """Whether *handle*'s element still looks like the recorded one."""
        assert target.fingerprint is not None
        described = await self._browser.describe(handle)
        if described is None or described.fingerprint is None:
            return False
        own = score(target.fingerprint, described.fingerprint).score
        if own < PLAUSIBLE:
            tracker.note(f"{what} now finds a different element ({own:.2f} alike); not used")
            return False
        return True

    async def stands_out(
        self,
        target: Target,
        handle: Handle,
        tracker: Tracker,
        *,
        what: str,
        margin: float = DEFAULT_MARGIN,
    ) -> bool:
        """Whether *handle*'s element looks like the recorded one and no other element on the
        page looks nearly as much like it (within *margin*)."""
        assert target.fingerprint is not None
        described = await self._browser.describe(handle)
        if described is None or described.fingerprint is None:
            return False
        own = score(target.fingerprint, described.fingerprint).score
        if own < PLAUSIBLE:
            tracker.note(f"{what} now finds a different element ({own:.2f} alike); not used")
            return False
        me = _css_of(described)
        runner_up = 0.0
        for candidate in await self._browser.candidates():
            if me is not None and candidate.handle.selector == me:
                continue
            runner_up = max(runner_up, score(target.fingerprint, candidate.fingerprint).score)
        if own - runner_up < margin:
            tracker.note(
                f"{what} finds one of several look-alikes ({own:.2f} alike, another "
                f"{runner_up:.2f}); not used"
            )
            return False
        return True

    async def identity(self, handle: Handle) -> str:
        """A stable name of the element *handle* finds (its unique CSS selector)."""
        described = await self._browser.describe(handle)
        css = _css_of(described) if described is not None else None
        return css if css is not None else handle.describe()

    async def _rung_fingerprint(self, attempt: Attempt) -> Found | None:
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
        if await self.identity(chosen.handle) in excluded:
            tracker.note("fingerprint: the best match is the element that just failed")
            return None
        return Found(
            chosen.handle,
            Resolution.FINGERPRINT,
            None,
            f"fingerprint {match.score:.2f} (runner-up {match.runner_up:.2f})",
        )

    async def _rung_experience(self, attempt: Attempt, *, similar: bool = True) -> Found | None:
        """Rung 3: a repair remembered for this step (and, if *similar*, for look-alikes).

        A repair is used for the drift it was found for. Where this step's recorded locators
        fail now as they failed then, on the same page of the app (:meth:`_same_drift`), its
        element must be the one the repair acted on, standing out from any look-alike (the
        LLM's or a person's pick need not look like the recording: that is why they were
        asked). Anywhere else (another step's repair, a drift of another kind) its element must
        stand out as the recorded fingerprint's best match. Either way it must be of the kind
        the step acts on and pass :meth:`refusal` (no commitment the step does not make, no
        secret into a field not made for one). One the LLM found is unproven until a run it
        helped succeeded; unproven, it is used only where this run could have asked the LLM or
        a person itself. One that kept failing, or whose page changed back, is not recalled.
        """
        bound, target, excluded = attempt.bound, attempt.target, attempt.excluded
        if self._memory is None:
            return None
        workflow_id = attempt.workflow.id
        if similar:
            url = await self._browser.url()
            query = f"{bound.title} | {bound.kind} | {url}"
            found = await asyncio.to_thread(self._memory.recall, workflow_id, bound.id, query)
        else:
            found = await asyncio.to_thread(self._memory.own, workflow_id, bound.id)
        could_ask = self._person is not None or (self._llm is not None and self._options.use_llm)
        for experience in found:
            if experience.repaired_locator.strategy in _DESKTOP_ONLY:
                continue  # a desktop click's repair (.desktop_learning), not a page's
            if not experience.trusted and not could_ask:
                attempt.tracker.note(
                    "a remembered repair the LLM found is not used before a run proved it"
                )
                continue
            handle = Handle(locator=_rendered(experience.repaired_locator, attempt.params))
            probe = await self._browser.probe(handle)
            if not probe.usable:
                if probe.count > 1:
                    attempt.tracker.note(
                        f"a remembered repair's locator finds {probe.count} elements; not used"
                    )
                continue
            if await self._same_drift(attempt, experience):
                assert experience.fingerprint is not None
                picture = Target(
                    locators=(experience.repaired_locator,), fingerprint=experience.fingerprint
                )
                fingerprint = fingerprint_for_run(picture, attempt.workflow, attempt.params.values)
                picture = picture.model_copy(update={"fingerprint": fingerprint})
                # A repair that looks inside the one item showing a text (the row of
                # "{full_name}") tells that item from its look-alikes by the text: it need only
                # be the best match, not clearly ahead of the other rows' equal buttons.
                scoped = experience.repaired_locator.within is not None
                if not await self.stands_out(
                    picture,
                    handle,
                    attempt.tracker,
                    what="a remembered repair",
                    margin=0.0 if scoped else DEFAULT_MARGIN,
                ):
                    continue
            elif target.fingerprint is not None and not await self.stands_out(
                target, handle, attempt.tracker, what="a remembered repair"
            ):
                continue
            described = await self._browser.describe(handle)
            if not _compatible(bound, described):
                attempt.tracker.note("a remembered repair finds an element of another kind")
                continue
            refused = self.refusal(attempt, Resolution.EXPERIENCE, described)
            if refused is not None:
                attempt.tracker.note(f"a remembered repair: {refused}; refused")
                continue
            if await self.identity(handle) in excluded:
                continue
            return Found(
                handle,
                Resolution.EXPERIENCE,
                experience.repaired_locator,
                f"remembered repair from run of {experience.created_at:%Y-%m-%d}",
                experience_id=experience.id,
            )
        return None

    async def _same_drift(self, attempt: Attempt, experience: Experience) -> bool:
        """Whether *experience* was found for the drift this step meets now: it is this step's
        own, the step's recorded locators are the ones that failed then (all of them fail now,
        or the ladder would not be here), and the page is the same page of the app."""
        if experience.fingerprint is None or experience.page_url is None:
            return False
        if (experience.workflow_id, experience.step_id) != (attempt.workflow.id, attempt.bound.id):
            return False
        recorded = next((s for s in attempt.workflow.steps if s.id == attempt.bound.id), None)
        target = recorded.target_or_none if recorded is not None else None
        if target is None or set(experience.failed_locators) != set(target.locators):
            return False
        return page_shape(experience.page_url) == page_shape(await self._browser.url())

    async def _rung_llm(self, attempt: Attempt) -> Found | None:
        bound, target, tracker = attempt.bound, attempt.target, attempt.tracker
        excluded, problem = attempt.excluded, attempt.problem
        if self._llm is None or not self._options.use_llm:
            return None
        workflow = attempt.workflow
        domains = workflow.domains
        while tracker.llm_calls_here < self._options.max_llm_calls_per_step:
            snapshot = await self._browser.snapshot()
            request = HealRequest(
                procedure=_procedure(workflow),
                step_number=attempt.step_number,
                step_count=len(workflow.steps),
                step_title=public_title(bound, attempt.params),
                action=_action_words(bound, attempt.params),
                recorded=target.fingerprint,
                expectations=bound.expectations,
                history=attempt.history,
                url=await self._browser.url(),
                problem=problem,
            )
            tracker.llm_calls_here += 1
            try:
                answer, usage, shown = await ask_llm(
                    self._llm, request, snapshot, secrets=attempt.secrets
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
            away = await self.leads_away(handle, domains)
            if away is not None:
                tracker.note(f"LLM chose a link outside the workflow's domains ({away}); refused")
                return None
            if answer.action == "dismiss":
                label = (fp.name or fp.text or "") if fp is not None else ""
                if commits(fp):
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
            refused = self.refusal(attempt, Resolution.LLM, described)
            if refused is not None:  # a model that obeys the page: not asked again
                tracker.note(f"LLM chose {answer.ref}: {refused}; refused")
                return None
            if await self.identity(handle) in excluded:
                tracker.note("LLM chose the element that just failed")
                return None
            return Found(handle, Resolution.LLM, None, f"LLM: {answer.reason[:160]}")
        tracker.note(f"LLM calls for this step used up ({self._options.max_llm_calls_per_step})")
        return None

    async def leads_away(self, handle: Handle, domains: tuple[str, ...]) -> str | None:
        """The address the element links to, if that is outside *domains* (else None)."""
        try:
            href = await self._browser.read(handle, "href")
        except ActionFailed:
            return None
        if href and not domain_allowed(urljoin(await self._browser.url(), href), domains):
            return href
        return None

    async def _rung_person(self, attempt: Attempt) -> Found | None:
        bound, target, problem = attempt.bound, attempt.target, attempt.problem
        if self._person is None:
            return None
        title = public_title(bound, attempt.params)
        choices, suggested = likely_choices(await self._browser.candidates(), target, title)
        fp = target.fingerprint
        answer = await self._person.ask(
            Question(
                kind="locate",
                step_title=title,
                message=problem or "The step's element was not found on the page. Which is it?",
                element=element_words(fp, fallback=title),
                choices=choices,
                suggested=suggested,
                picture=bound.screenshot,
                box=fp.bbox if fp is not None else None,
            )
        )
        if answer.action == "abort":
            raise RunAborted("aborted by the person asked to find the element")
        if answer.action == "skip":
            raise StepSkipped("skipped by the person asked to find the element")
        if answer.action != "pick" or answer.handle is None:
            return None
        return Found(answer.handle, Resolution.PERSON, None, "pointed out by a person")


def _found_by_locator(handle: Handle, rank: int) -> Found:
    assert handle.locator is not None
    if rank == 0:
        return Found(handle, Resolution.DIRECT, handle.locator)
    return Found(handle, Resolution.ALTERNATE, handle.locator, f"recorded locator #{rank + 1}")


def _css_of(described: Target) -> str | None:
    """The unique CSS selector among an element's described locators (not one inside an item)."""
    return next(
        (
            loc.value
            for loc in described.locators
            if loc.strategy.value == "css" and loc.within is None
        ),
        None,
    )


def _procedure(workflow: Workflow) -> str:
    return workflow.name + (f" — {workflow.description}" if workflow.description else "")


def _rendered(locator: Locator, params: BoundParameters) -> Locator:
    """*locator* (a remembered repair's) with this run's values: its value, its name, and the
    text of the item it looks inside (the row showing "{full_name}")."""
    return locator.with_texts(lambda text: render_text(text, params.values))


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


def public_title(step: Step, params: BoundParameters) -> str:
    """The step's title with its non-secret values filled in (secrets stay placeholders)."""
    shown = {k: v for k, v in params.values.items() if k not in params.secrets}
    return render_text(step.title, shown)
