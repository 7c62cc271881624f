"""Online induction: runs that went well propose what a person would otherwise have to record.

Three proposals, each a new version (or draft) an analyst reviews; nothing runs differently
until it is approved:

- **An agent step done the same way.** When an agent step of a version took the same actions
  (same elements, same values as templates) in each of the version's last *k* runs that got to
  the end, its actions become recorded steps in a proposed version: the next run needs no LLM
  for it. An agent step whose output goes into a variable stays (its reading is the model's).
- **Parameters the runs tell more about.** A text parameter given *k* different values, each a
  number, an ISO date or an email address that the type would leave exactly as typed, is
  proposed with that type (its values are then checked before the run starts).
- **A request no workflow did.** A run by intent that matched no workflow, done by the agent
  from a start page, is proposed as a new draft: its actions as recorded steps, each value the
  sentence gave a parameter, and the sentence, with those values as slots, its intent template.

The proposals are built here, in the core; :func:`propose` saves one for review unless a version
with the same steps and parameters exists already (an analyst who turned it down is not asked
again).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from pydantic import ValidationError

from desktop_app.core.induction.intent import make_intent_template
from desktop_app.core.induction.naming import label_of, snake_case, unique_name
from desktop_app.core.library import WorkflowLibrary
from desktop_app.core.models.common import JsonScalar
from desktop_app.core.models.run import Run, RunStatus, RunStep, RunTrigger, StepStatus, TakenAction
from desktop_app.core.models.target import Target
from desktop_app.core.models.workflow import (
    AgentStep,
    CheckStep,
    ClickStep,
    FillStep,
    Parameter,
    ParameterType,
    PressStep,
    SelectStep,
    Step,
    Workflow,
    WorkflowVersion,
)
from desktop_app.core.replay.learning import as_recorded, templated_locator
from desktop_app.core.replay.parameters import renders_as_typed

__all__ = [
    "ONLINE_ACTOR",
    "SAME_WAY_RUNS",
    "Proposal",
    "agent_draft",
    "proposal",
    "propose",
    "steps_of",
]

#: Who proposes what online induction learns (the review queue shows it).
ONLINE_ACTOR: Final = "procedura-online"
#: How many runs in a row must have done an agent step the same way (the setting's default).
SAME_WAY_RUNS: Final = 3
_TYPES: Final = (ParameterType.NUMBER, ParameterType.DATE, ParameterType.EMAIL)
_DONE: Final = frozenset({RunStatus.SUCCEEDED, RunStatus.UNVERIFIED})


@dataclass(frozen=True, slots=True)
class Proposal:
    """A proposed workflow and the change note that says why."""

    workflow: Workflow
    note: str


# ── actions as steps ─────────────────────────────────────────────────────────────────────────


def steps_of(actions: Sequence[TakenAction], agent: AgentStep | None = None) -> list[Step] | None:
    """*actions* as the recorded steps that do them again, or None if one cannot be (an action
    on an element the page described by nothing that finds it again).

    An action that committed to something (a person confirmed it) is marked irreversible; the
    agent step's expectations, timeout and dialog answer go to the last step.
    """
    steps: list[Step] = []
    for taken in actions:
        step = _step_of(taken)
        if step is None:
            return None
        steps.append(step)
    if steps and agent is not None:
        steps[-1] = steps[-1].model_copy(
            update={
                "expectations": agent.expectations,
                "timeout_s": agent.timeout_s,
                "dialog": agent.dialog,
            }
        )
    return steps


def _step_of(taken: TakenAction) -> Step | None:
    target = taken.target
    named = label_of(target)
    label = f"'{named}'" if named else (taken.label or "the element")
    marks = taken.commits
    if taken.action == "press":
        title = f"Press {taken.key}" + (f" on {label}" if target is not None else "")
        return PressStep(title=title, target=target, key=taken.key, irreversible=marks)
    if target is None:
        return None
    match taken.action:
        case "click":
            return ClickStep(title=f"Click {label}", target=target, irreversible=marks)
        case "fill":
            return FillStep(title=f"Fill {label}", target=target, value=taken.value)
        case "select":
            return SelectStep(
                title=f"Choose {taken.value} in {label}",
                target=target,
                value=taken.value,
                irreversible=marks,
            )
        case "check" | "uncheck":
            checked = taken.action == "check"
            title = f"{'Tick' if checked else 'Untick'} {label}"
            return CheckStep(title=title, target=target, checked=checked)
    return None


# ── an agent step done the same way ─────────────────────────────────────────────────────────


def _finished(history: Sequence[Run], version: int) -> list[Run]:
    """The runs of *version* that got to the end, newest first (verification runs stop early)."""
    return [
        r
        for r in history
        if r.workflow_version == version
        and r.status in _DONE
        and r.trigger is not RunTrigger.VERIFY
    ]


def _record(run: Run, step_id: str) -> RunStep | None:
    return next((s for s in run.steps if s.step_id == step_id), None)


def _same(a: TakenAction, b: TakenAction) -> bool:
    """Whether two actions did the same: same verb, value (as a template) and key, on an
    element that some locator of each finds alike."""
    if (a.action, a.value, a.key) != (b.action, b.value, b.key):
        return False
    if a.target is None or b.target is None:
        return a.target is None and b.target is None
    return bool(_described(a.target) & _described(b.target))


def _described(target: Target) -> set[str]:
    return {loc.describe() for loc in target.locators}


def _agreed(spans: Sequence[tuple[TakenAction, ...]]) -> tuple[TakenAction, ...] | None:
    """The newest of *spans* with its targets' shared locators first, if all did the same."""
    newest = spans[0]
    if not newest:
        return None
    for other in spans[1:]:
        if len(other) != len(newest) or not all(map(_same, newest, other)):
            return None
    agreed = []
    for n, taken in enumerate(newest):
        if taken.target is None:
            agreed.append(taken)
            continue
        shared = set.intersection(*(_described(t) for s in spans if (t := s[n].target)))
        first = [loc for loc in taken.target.locators if loc.describe() in shared]
        rest = [loc for loc in taken.target.locators if loc.describe() not in shared]
        target = taken.target.model_copy(update={"locators": (*first, *rest)})
        agreed.append(taken.model_copy(update={"target": target}))
    return tuple(agreed)


def _run_values(workflow: Workflow, run: Run) -> dict[str, str]:
    secret = {p.name for p in workflow.parameters if p.type is ParameterType.SECRET}
    return {
        k: _text(v) for k, v in run.parameters.items() if k not in secret and v not in (None, "")
    }


def _text(value: JsonScalar) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _recorded_fingerprints(
    workflow: Workflow, actions: tuple[TakenAction, ...], values: Mapping[str, str]
) -> tuple[TakenAction, ...]:
    """*actions* with each fingerprint seen as if with the parameters' defaults (as recorded
    steps keep theirs)."""
    out = []
    for taken in actions:
        target = taken.target
        if target is not None and target.fingerprint is not None:
            fingerprint = as_recorded(workflow, target.fingerprint, dict(values))
            target = target.model_copy(update={"fingerprint": fingerprint})
        out.append(taken.model_copy(update={"target": target}))
    return tuple(out)


def _agent_spans(
    workflow: Workflow, runs: Sequence[Run], k: int
) -> tuple[dict[str, list[Step]], list[str]]:
    """The agent steps the last *k* of *runs* did the same way, as the steps that replace
    them; and the change note's words for each."""
    replaced: dict[str, list[Step]] = {}
    said: list[str] = []
    if len(runs) < k:
        return replaced, said
    recent = runs[:k]
    for step in workflow.steps:
        if not isinstance(step, AgentStep) or step.output_variable is not None:
            continue
        records = [_record(r, step.id) for r in recent]
        if any(r is None or r.status is not StepStatus.SUCCEEDED for r in records):
            continue
        agreed = _agreed([r.actions for r in records if r is not None])
        if agreed is None:
            continue
        agreed = _recorded_fingerprints(workflow, agreed, _run_values(workflow, recent[0]))
        steps = steps_of(agreed, step)
        if not steps:
            continue
        replaced[step.id] = steps
        ids = ", ".join(r.id[:8] for r in recent)
        said.append(
            f"the agent step '{step.title}' did the same {len(steps)} action(s) in runs {ids}: "
            "proposed as recorded steps"
        )
    return replaced, said


# ── parameters the runs tell more about ──────────────────────────────────────────────────────


def _refined(
    workflow: Workflow, runs: Sequence[Run], k: int
) -> tuple[tuple[Parameter, ...], list[str]]:
    params = []
    said = []
    recent = runs[:k]
    for param in workflow.parameters:
        values = [r.parameters.get(param.name) for r in recent]
        texts = [v for v in values if isinstance(v, str) and v]
        if param.type is not ParameterType.TEXT or len(recent) < k or len(texts) < k:
            params.append(param)
            continue
        kind = _type_of(texts, param.default)
        if kind is None or len(set(texts)) < 2:
            params.append(param)
            continue
        default: JsonScalar = param.default
        if isinstance(default, str) and kind is ParameterType.NUMBER:
            default = float(default) if "." in default else int(default)
        params.append(param.model_copy(update={"type": kind, "default": default}))
        shown = ", ".join(repr(t) for t in dict.fromkeys(texts))
        said.append(f"'{param.name}' is {_A[kind]}: runs gave {shown}")
    return tuple(params), said


_A: Final = {
    ParameterType.NUMBER: "a number",
    ParameterType.DATE: "a date",
    ParameterType.EMAIL: "an email address",
}


def _type_of(texts: Sequence[str], default: JsonScalar) -> ParameterType | None:
    """The one type every text (and a text default) has and keeps exactly as written."""
    given = [*texts, *([default] if isinstance(default, str) and default else [])]
    for kind in _TYPES:
        if all(renders_as_typed(kind, t) for t in given):
            return kind
    return None


# ── the version proposed ─────────────────────────────────────────────────────────────────────


def proposal(version: WorkflowVersion, history: Sequence[Run], k: int) -> Proposal | None:
    """What the last *k* finished runs of *version* (in *history*, newest first) propose, or
    None when they propose nothing."""
    workflow = version.workflow
    runs = _finished(history, version.version)
    if len(runs) < k:
        return None
    replaced, said = _agent_spans(workflow, runs, k)
    parameters, about_values = _refined(workflow, runs, k)
    if not replaced and parameters == workflow.parameters:
        return None
    steps: list[Step] = []
    for step in workflow.steps:
        steps.extend(replaced.get(step.id, [step]))
    proposed = _valid(workflow, {"steps": tuple(steps), "parameters": parameters})
    if proposed is None:
        return None
    note = "Online induction: " + "; ".join([*said, *about_values])
    return Proposal(proposed, note)


def _valid(workflow: Workflow, update: dict[str, object]) -> Workflow | None:
    """*workflow* changed by *update*, checked whole; None when that is not a valid workflow
    (a value the agent typed read as a placeholder nothing defines there, say): nothing is
    proposed then, and the run that taught it is not spoiled."""
    try:
        return Workflow.model_validate(workflow.model_copy(update=update).model_dump(mode="json"))
    except ValidationError:
        return None


def _same_content(a: Workflow, b: Workflow) -> bool:
    """Whether *a* and *b* do the same: steps alike but for their ids and the fingerprints
    (which hold what the page showed around the element then), the same parameters."""
    return _content(a) == _content(b)


def _content(workflow: Workflow) -> object:
    steps = []
    for step in workflow.steps:
        dumped = step.model_dump(mode="json", exclude={"id"})
        if isinstance(dumped.get("target"), dict):
            dumped["target"].pop("fingerprint", None)
        steps.append(dumped)
    return steps, workflow.model_dump(mode="json", include={"parameters", "intent_template"})


def propose(
    library: WorkflowLibrary, version: WorkflowVersion, history: Sequence[Run], k: int
) -> WorkflowVersion | None:
    """Save what *history* proposes for *version* and submit it for review; None when it
    proposes nothing, or the same as a version the workflow has (or had) already."""
    found = proposal(version, history, k)
    if found is None:
        return None
    versions = library.versions_by_id(version.workflow_id)
    if any(_same_content(v.workflow, found.workflow) for v in versions):
        return None
    saved = library.save(
        found.workflow, actor=ONLINE_ACTOR, change_note=found.note, parent_version=version.version
    )
    if not saved.created:
        return None
    return library.submit(
        version.workflow_id, actor=ONLINE_ACTOR, version=saved.version.version, comment=found.note
    )


# ── a request no workflow did ────────────────────────────────────────────────────────────────


def agent_draft(workflow: Workflow, run: Run, intent: str) -> Proposal | None:
    """The workflow the agent's run of *workflow* (a start page and one agent step doing
    *intent*) shows, or None when the run did not finish or an action cannot be recorded.

    Each value the agent typed or chose that the sentence gives (as whole words) becomes a
    parameter named after its field, with that value as its example default; the sentence with
    those values as slots is the intent template.
    """
    if run.status not in _DONE:
        return None
    steps: list[Step] = []
    for step in workflow.steps:
        if not isinstance(step, AgentStep):
            steps.append(step)
            continue
        record = _record(run, step.id)
        if record is None or record.status is not StepStatus.SUCCEEDED or not record.actions:
            return None
        made = steps_of(record.actions, step)
        if made is None:
            return None
        steps.extend(made)
    values: dict[str, str] = {}
    parameters: list[Parameter] = []
    for n, step in enumerate(steps):
        if not isinstance(step, FillStep | SelectStep) or not _in_sentence(step.value, intent):
            continue
        name = next((k for k, v in values.items() if v == step.value), None)
        if name is None:
            label = label_of(step.target) or step.title.split(" ", 1)[-1]
            name = unique_name(snake_case(label), [p.name for p in parameters])
            values[name] = step.value
            parameters.append(Parameter(name=name, default=step.value))
        steps[n] = step.model_copy(update={"value": "{" + name + "}"})
    steps = [_with_slots(s, values) for s in steps]
    template = make_intent_template(intent, values)
    draft = _valid(
        workflow,
        {"steps": tuple(steps), "parameters": tuple(parameters), "intent_template": template},
    )
    if draft is None:
        return None
    note = (
        f"Online induction: the agent did '{intent}' in run {run.id[:8]} with "
        f"{len(steps) - 1} action(s), proposed as recorded steps"
        + (f" with parameters {', '.join(values)}" if values else "")
        + ". Check each step before approving"
    )
    return Proposal(draft, note)


def _in_sentence(value: str, sentence: str) -> bool:
    value = value.strip()
    return len(value) >= 2 and re.search(rf"(?<!\w){re.escape(value)}(?!\w)", sentence) is not None


def _with_slots(step: Step, values: Mapping[str, str]) -> Step:
    """*step* with a locator that names a value found by its slot (a row holding the value)."""
    target = step.target_or_none
    if target is None or not values:
        return step
    locators = tuple(templated_locator(loc, dict(values)) for loc in target.locators)
    slotted = Target(locators=locators, fingerprint=target.fingerprint)
    return step.model_copy(update={"target": slotted})
