"""Agent steps: an open-ended instruction ("pick the cheapest result") done by the LLM.

The model answers one action at a time on an element ref of a pruned ARIA snapshot (the page
quoted as data, secrets masked). Every action is checked before it is done: the ref must be on
the page it was shown; only click, fill, select, check, uncheck and press act (``wait`` looks
again at a page still putting itself together, a few times); links stay within
the workflow's domains; an activation (a click, Enter or Space on an element or on the page's
focused one, choosing an option) that commits to something (delete, pay, submit…) needs a
person's confirmation or ``--yes``. The step ends when the model says it is done (its output
goes into the step's variable), after ``max_actions`` actions, or when the run's LLM budget is
spent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from desktop_app.core.items import pins_record
from desktop_app.core.llm import LLMError, StructuredLLM, assert_no_secrets
from desktop_app.core.models.run import MASK, TakenAction
from desktop_app.core.models.target import Target
from desktop_app.core.models.workflow import AgentStep, Workflow
from desktop_app.core.redaction import mask_secrets, redact_snapshot
from desktop_app.core.replay.browser import BrowserPort, PageAction
from desktop_app.core.replay.heal_llm import known_refs, prune_snapshot
from desktop_app.core.replay.ladder import (
    Ladder,
    ReplayOptions,
    RunAborted,
    StepFailed,
    Tracker,
)
from desktop_app.core.replay.learning import swapped, templated_locator
from desktop_app.core.replay.naming import element_words
from desktop_app.core.replay.person import Person, Question
from desktop_app.core.replay.safety import (
    ACTIVATING_KEYS,
    commits,
    focused_commits,
    label_of,
    sets_off,
)
from desktop_app.core.replay.waiting import AppWaits
from desktop_app.core.templating import templated

__all__ = ["AgentAction", "AgentContext", "run_agent_step"]

#: How many times the agent may ask to look again at a page still putting itself together.
AGENT_WAITS: Final = 3
#: The most one such wait lasts: until the page changes, then comes to rest.
AGENT_WAIT_S: Final = 5.0

_KEYS = frozenset({"Enter", "Tab", "Escape", "ArrowDown", "ArrowUp", "PageDown", "PageUp", "Space"})


class AgentAction(BaseModel):
    """One action the model asks for."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["click", "fill", "select", "check", "uncheck", "press", "wait", "done", "fail"]
    ref: str | None = Field(default=None, pattern=r"^[a-z0-9]{1,20}$")
    value: str = Field(default="", max_length=500)
    key: str = Field(default="", max_length=20)
    output: str = Field(default="", max_length=1000)
    reason: str = Field(default="", max_length=500)


@dataclass(frozen=True, slots=True)
class AgentContext:
    """What the agent step is told and may use."""

    workflow: Workflow
    step: AgentStep
    secrets: tuple[str, ...]
    values: Mapping[str, str] = field(default_factory=dict)
    """The run's values by name, secrets included: what the agent types is recorded with them
    put back as placeholders."""


def _system() -> str:
    return resources.files(__package__).joinpath("prompts", "agent.txt").read_text("utf-8")


def _user(context: AgentContext, done: list[str], url: str, page: str) -> str:
    taken = "\n".join(f"  {n}. {a}" for n, a in enumerate(done, 1)) or "  (none yet)"
    return "\n".join(
        [
            f"Procedure: {context.workflow.name}",
            f"Instruction: {context.step.instruction}",
            f"Actions taken so far:\n{taken}",
            f"Current page address: {url}",
            "<page>",
            page,
            "</page>",
        ]
    )


async def run_agent_step(
    context: AgentContext,
    *,
    browser: BrowserPort,
    ladder: Ladder,
    llm: StructuredLLM | None,
    person: Person | None,
    options: ReplayOptions,
    tracker: Tracker,
    waits: AppWaits,
) -> str:
    """Carry out the agent step; return its output (empty when it reports none).

    When the model asks to wait (the page does not show what the step needs yet), the page is
    given up to :data:`AGENT_WAIT_S` to change and come to rest, and shown again; at most
    :data:`AGENT_WAITS` times. A wait is not an action.

    Raises:
        StepFailed: no LLM, the model gave up, an action was refused, or it did not finish.
        RunAborted: a person asked to confirm stopped the run.
    """
    if llm is None or not options.use_llm:
        raise StepFailed("an agent step needs an LLM (none is configured, or --no-llm)")
    done: list[str] = []
    waited = 0
    while len(done) < context.step.max_actions:
        mark = await waits.mark()
        snapshot = prune_snapshot(redact_snapshot(await browser.snapshot(), context.secrets))
        user = _user(context, done, await browser.url(), snapshot)
        assert_no_secrets(user, context.secrets)
        try:
            answer, usage = await asyncio.to_thread(
                llm.complete, system=_system(), user=user, output=AgentAction, max_tokens=300
            )
        except LLMError as exc:
            tracker.spend(exc.usage)
            raise StepFailed(f"the agent step stopped: {exc}") from None
        tracker.spend(usage)
        if answer.action == "done":
            tracker.note(f"agent: {'; '.join(done) or 'no action'}; done: {answer.reason[:120]}")
            return answer.output
        if answer.action == "fail":
            raise StepFailed(f"the agent could not do it: {answer.reason[:200]}")
        if answer.action == "wait":
            if waited == AGENT_WAITS:
                raise StepFailed(
                    f"the agent waited {AGENT_WAITS} times for the page to show what the step "
                    f"needs, and it still does not: {answer.reason[:120]}"
                )
            waited += 1
            tracker.waited_s += await waits.change(
                mark, within_s=min(AGENT_WAIT_S, context.step.timeout_s)
            )
            continue
        done.append(
            await _act(answer, snapshot, context, browser, ladder, person, options, tracker)
        )
    raise StepFailed(
        f"the agent did not finish in {context.step.max_actions} actions ({'; '.join(done)})"
    )


async def _act(
    answer: AgentAction,
    snapshot: str,
    context: AgentContext,
    browser: BrowserPort,
    ladder: Ladder,
    person: Person | None,
    options: ReplayOptions,
    tracker: Tracker,
) -> str:
    """Check and do one action (noted in *tracker*); a short description of it.

    Every activation is checked, whatever the verb: a click, Enter or Space on an element or
    on the page (then on the element that has the focus), or choosing an option, that would
    commit to something needs a person's confirmation or ``--yes``.
    """
    if answer.action == "press" and answer.ref is None:
        if answer.key not in _KEYS:
            raise StepFailed(f"the agent asked to press {answer.key!r}, which is not allowed")
        focused = await focused_commits(browser, answer.key)
        if focused is not None:
            await _confirm(context, f"press {answer.key} on {focused}", person, options)
        await browser.perform(None, PageAction(kind="press", key=answer.key), timeout_s=5)
        tracker.actions.append(
            TakenAction(action="press", key=answer.key, commits=focused is not None)
        )
        return f"pressed {answer.key}"
    if answer.ref is None or answer.ref not in known_refs(snapshot):
        raise StepFailed(f"the agent named {answer.ref!r}, which the page does not have")
    handle = await browser.ref_handle(answer.ref)
    described = await browser.describe(handle)
    fp = described.fingerprint if described is not None else None
    label = label_of(fp) if fp is not None else answer.ref
    away = await ladder.leads_away(handle, context.workflow.domains)
    if away is not None:
        raise StepFailed(f"the agent chose a link outside the workflow's domains ({away})")
    if answer.action == "select":
        commit = commits(None, option=answer.value)
    else:
        commit = _activates(answer) and sets_off(fp) and commits(fp)
    if commit:
        verb = {"click": "click", "press": f"press {answer.key} on", "select": "choose"}
        named = element_words(fp) or "an element the page does not describe"
        shown = f"{answer.value!r} in {named}" if answer.action == "select" else named
        await _confirm(
            context,
            f"{verb[answer.action]} {shown}",
            person,
            options,
            element=named,
            locator=handle.describe(),
        )
    action = _page_action(answer)
    await browser.perform(handle, action, timeout_s=context.step.timeout_s)
    tracker.actions.append(_taken(answer, context, described, label, commits=commit))
    shown = f" {answer.value!r}" if answer.action in ("fill", "select") else ""
    return f"{answer.action}{shown} on {label}"


def _taken(
    answer: AgentAction,
    context: AgentContext,
    described: Target | None,
    label: str,
    *,
    commits: bool,
) -> TakenAction:
    """*answer*, done, as a recorded step would do it again: the run's values put back as
    placeholders, only locators that find the element without pinning this record."""
    target = None
    if described is not None:
        kept = tuple(
            templated_locator(loc, dict(context.values))
            for loc in described.locators
            if not pins_record(loc)
        )
        fingerprint = described.fingerprint
        if fingerprint is not None and context.secrets:
            fingerprint = swapped(fingerprint, dict.fromkeys(context.secrets, MASK))
        if kept:
            target = Target(locators=kept, fingerprint=fingerprint)
    return TakenAction.model_validate(
        {
            "action": answer.action,
            "target": target,
            "value": templated(answer.value, context.values),
            "key": answer.key,
            "label": mask_secrets(label, context.secrets),
            "commits": commits,
        }
    )


def _activates(answer: AgentAction) -> bool:
    """Whether the action sets off what its element does (not typing, not ticking)."""
    if answer.action == "press":
        return answer.key in ACTIVATING_KEYS
    return answer.action == "click"


def _page_action(answer: AgentAction) -> PageAction:
    match answer.action:
        case "click":
            return PageAction(kind="click")
        case "fill":
            return PageAction(kind="fill", value=answer.value)
        case "select":
            return PageAction(kind="select", value=answer.value)
        case "check" | "uncheck":
            return PageAction(kind="check", checked=answer.action == "check")
        case "press":
            if answer.key not in _KEYS:
                raise StepFailed(f"the agent asked to press {answer.key!r}, which is not allowed")
            return PageAction(kind="press", key=answer.key)
    raise StepFailed(f"the agent asked for {answer.action!r}, which is not an action")


async def _confirm(
    context: AgentContext,
    what: str,
    person: Person | None,
    options: ReplayOptions,
    *,
    element: str | None = None,
    locator: str | None = None,
) -> None:
    """Have a person (or ``--yes``) allow the agent to *what* ("click button 'Delete'")."""
    if options.assume_yes:
        return
    if person is None:
        raise StepFailed(
            f"the agent wants to {what}, which may commit to something; "
            "run interactively or with --yes to allow it"
        )
    answer = await person.ask(
        Question(
            kind="confirm",
            step_title=context.step.title,
            message=f"The agent wants to {what}. Go ahead?",
            element=element,
            locator=locator,
        )
    )
    if answer.action == "abort":
        raise RunAborted("aborted by the person asked to confirm the agent's action")
    if answer.action != "confirm":
        raise StepFailed(f"the agent's wish to {what} was not confirmed")
