"""The LLM inducer: the model names, describes and titles; the recording decides everything else.

One structured-output call. The model sees the intent, the heuristic draft's parameters and a
compact list of the recorded events (secrets are placeholders and are checked to be absent), and
answers which events to keep, how to title them, what to call the parameters and which observed
confirmation each step should expect. Its answer is checked against the recording: it may only
refer to events and parameters that exist and only expect text the page really showed. Anything
else — an invalid answer after the client's repair round-trip, a refusal, a timeout — falls back
to the heuristic result, and the caller is told why.

Blocks (a loop, an ``if``) come from the draft and stay as they are: the model titles the
steps inside them but cannot add, remove or reshape one.

The success check is the draft's (``Workflow.success``, from what the end of the recording
showed), its parameters renamed as the model named them: the model proposes none of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib import resources
from string import Template
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from desktop_app.core.induction.heuristic import Induction, introduced_parameters
from desktop_app.core.induction.naming import label_of
from desktop_app.core.llm import LLMError, LLMUsage, StructuredLLM, assert_no_secrets
from desktop_app.core.models.common import Identifier
from desktop_app.core.models.trajectory import Event, Trajectory
from desktop_app.core.models.workflow import (
    ForEachStep,
    Step,
    TextPresent,
    Workflow,
    branches,
    walk,
)

__all__ = [
    "InductionPlan",
    "LLMInduction",
    "ParameterPlan",
    "StepPlan",
    "induce_with_llm",
    "prompt_templates",
]

_MAX_EVENT_TEXT: Final = 160
_PLACEHOLDER = re.compile(r"(?<!\{)\{([a-z_][a-z0-9_]*)\}(?!\})")


class ParameterPlan(BaseModel):
    """The model's name and description for the draft parameter entered at *event*."""

    model_config = ConfigDict(extra="forbid")

    event: int = Field(ge=0)
    name: Identifier
    description: str = Field(max_length=300)


class StepPlan(BaseModel):
    """The model's view of one recorded event."""

    model_config = ConfigDict(extra="forbid")

    event: int = Field(ge=0)
    keep: bool = True
    title: str = Field(min_length=1, max_length=200)
    expect_text: str | None = Field(default=None, max_length=300)


class InductionPlan(BaseModel):
    """The structured answer the LLM inducer asks for."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=120)
    description: str = Field(max_length=1000)
    parameters: list[ParameterPlan]
    steps: list[StepPlan]
    intent_template: str | None = None


@dataclass
class LLMInduction:
    """The result: the workflow, notes for the reviewer, whether the LLM's answer was used."""

    workflow: Workflow
    used_llm: bool
    usage: LLMUsage
    notes: list[str] = field(default_factory=list)


def prompt_templates() -> tuple[Template, Template]:
    """The system and user prompt templates shipped next to this module."""
    folder = resources.files(__package__).joinpath("prompts")
    system = folder.joinpath("induce_system.txt").read_text(encoding="utf-8")
    user = folder.joinpath("induce_user.txt").read_text(encoding="utf-8")
    return Template(system), Template(user)


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_EVENT_TEXT else text[: _MAX_EVENT_TEXT - 1] + "…"


def _loops_of(steps: tuple[Step, ...], inside: str | None = None) -> dict[str, str]:
    """Step id → the title of the loop the step is done in, for steps inside a loop."""
    found: dict[str, str] = {}
    for step in steps:
        if inside is not None:
            found[step.id] = inside
        for _name, body in branches(step):
            loop = step.title if isinstance(step, ForEachStep) else inside
            found.update(_loops_of(body, loop))
    return found


def _event_lines(trajectory: Trajectory, draft: Workflow) -> list[str]:
    """One line per recorded event the draft has a step for: what, where, with which value
    (and the loop it is done in, once for each item)."""
    by_event = {e: s for s in walk(draft.steps) for e in s.source_events}
    loops = _loops_of(draft.steps)
    lines = []
    for index, event in enumerate(trajectory.events):
        step = by_event.get(index)
        if step is None:
            continue
        value = getattr(step, "value", None) if step.kind in {"fill", "select"} else None
        parts = [f"[{index}] {event.action.value}"]
        label = label_of(event.target)
        if label:
            parts.append(f"on '{_clip(label)}'")
        if event.url and step.kind == "goto":
            parts.append(f"url {event.url}")
        if isinstance(value, str):
            parts.append(f"value {value}")
        if event.key:
            parts.append(f"key {event.key}")
        after = event.after
        if after is not None:
            if after.title:
                parts.append(f"then page '{_clip(after.title)}'")
            messages = _messages(event)
            if messages:
                parts.append("showing " + "; ".join(f"'{_clip(m)}'" for m in messages[:2]))
        if step.id in loops:
            parts.append(f"(done for each item: {_clip(loops[step.id])})")
        lines.append(" ".join(parts))
    return lines


_MESSAGE = re.compile(r'^\s*- (?:status|alert|heading)\b[^:\n]*:\s*"?(.+?)"?\s*$', re.MULTILINE)


def _messages(event: Event) -> list[str]:
    """The messages and headings the event made appear (what the page reported; in older
    recordings, the status, alert and heading lines of the ARIA snapshot after it)."""
    if event.effects is not None:
        shown = [t for t in event.effects.texts_added if t.role in {"status", "alert", "heading"}]
        return [t.text for t in sorted(shown, key=lambda t: t.role == "heading")]
    return _MESSAGE.findall(event.after.aria_snapshot or "") if event.after else []


def _observed_texts(trajectory: Trajectory, index: int) -> str:
    event = trajectory.events[index]
    texts = [t.text for t in event.effects.texts_added] if event.effects is not None else []
    after = event.after
    if after is not None:
        texts += [t for t in (after.title, after.aria_snapshot) if t]
    return "\n".join(texts)


class _Rejected(Exception):
    """The model's answer does not fit the recording."""


def _apply(plan: InductionPlan, draft: Workflow, trajectory: Trajectory) -> Workflow:
    """The draft with the plan's names, titles and expectations, or :class:`_Rejected`.

    Blocks stay as the draft has them: the plan titles the steps inside them (and may expect
    a message of a step in a branch, never of one done for each item of a loop, which showed
    the first item's), and never leaves one of them out.
    """
    every = list(walk(draft.steps))
    step_by_event = {e: s for s in every for e in s.source_events}
    param_by_event = {  # the value a step enters, else the label it acts on
        event: names[0]
        for position, names in introduced_parameters(every).items()
        for event in every[position].source_events
    }
    loops = _loops_of(draft.steps)

    renames: dict[str, str] = {}
    descriptions: dict[str, str] = {}
    for p in plan.parameters:
        old = param_by_event.get(p.event)
        if old is None:
            raise _Rejected(
                f"parameter {p.name!r} refers to event {p.event}, which enters no value"
            )
        renames[old] = p.name
        descriptions[p.name] = p.description
    if len(set(renames.values())) != len(renames):
        raise _Rejected("two parameters were given the same name")

    planned = {s.event: s for s in plan.steps}
    for event in planned:
        if event not in step_by_event:
            raise _Rejected(f"step plan refers to event {event}, which has no step")

    def planned_steps(draft_steps: tuple[Step, ...], top: bool) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for step in draft_steps:
            dumped = step.model_dump(mode="json")
            for name, body in branches(step):
                dumped[name] = planned_steps(body, top=False)
            plan_step = planned.get(step.source_events[0]) if step.source_events else None
            if plan_step is not None:
                if top and not plan_step.keep and not step.irreversible:
                    continue
                dumped["title"] = plan_step.title
                expect = plan_step.expect_text
                if expect and step.id not in loops:
                    if expect not in _observed_texts(trajectory, plan_step.event):
                        raise _Rejected(f"event {plan_step.event} never showed {expect!r}")
                    text_exp = TextPresent(text=expect).model_dump(mode="json")
                    if text_exp not in dumped["expectations"]:
                        dumped["expectations"] = [text_exp, *dumped["expectations"]]
            out.append(dumped)
        return out

    steps = planned_steps(draft.steps, top=True)
    data = draft.model_dump(mode="json")
    data.update(
        name=plan.name,
        description=plan.description,
        steps=steps,
        intent_template=plan.intent_template or draft.intent_template,
    )
    for param in data["parameters"]:
        new = renames.get(param["name"], param["name"])
        param["description"] = descriptions.get(new, param["description"])
    data = _renamed(data, renames)
    try:
        return Workflow.model_validate(data)
    except ValueError as exc:
        raise _Rejected(str(exc).splitlines()[-1].strip()) from None


def _renamed(value: Any, renames: dict[str, str]) -> Any:
    """*value* (JSON data) with every ``{old}`` placeholder and parameter name renamed."""
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: "{" + renames.get(m.group(1), m.group(1)) + "}", value)
    if isinstance(value, list):
        return [_renamed(v, renames) for v in value]
    if isinstance(value, dict):
        out = {k: _renamed(v, renames) for k, v in value.items() if k != "fingerprint"}
        if "fingerprint" in value:
            out["fingerprint"] = value["fingerprint"]  # recorded data, not a template
        if set(value) >= {"name", "type", "required"} and value["name"] in renames:
            out["name"] = renames[value["name"]]  # a parameter definition
        return out
    return value


def induce_with_llm(
    trajectory: Trajectory,
    draft: Induction,
    llm: StructuredLLM,
    *,
    secrets: tuple[str, ...] = (),
) -> LLMInduction:
    """Improve the heuristic *draft* with one structured LLM call; on any failure, keep it."""
    system_template, user_template = prompt_templates()
    workflow = draft.workflow
    parameters = (
        "\n".join(f"- {{{p.name}}} ({p.type.value}): {p.description}" for p in workflow.parameters)
        or "(none)"
    )
    user = user_template.substitute(
        intent=trajectory.intent or "(not stated)",
        parameters=parameters,
        events="\n".join(_event_lines(trajectory, workflow)),
    )
    system = system_template.substitute()
    assert_no_secrets(system + user, secrets)
    try:
        plan, usage = llm.complete(system=system, user=user, output=InductionPlan)
    except LLMError as exc:
        return LLMInduction(
            workflow,
            used_llm=False,
            usage=exc.usage or LLMUsage(0, 0, 0),
            notes=[*draft.notes, f"the LLM could not be used ({exc}); this is the offline result"],
        )
    try:
        improved = _apply(plan, workflow, trajectory)
    except _Rejected as exc:
        return LLMInduction(
            workflow,
            used_llm=False,
            usage=usage,
            notes=[
                *draft.notes,
                f"the LLM's answer did not fit the recording ({exc}); this is the offline result",
            ],
        )
    return LLMInduction(improved, used_llm=True, usage=usage, notes=list(draft.notes))
