"""Learning from repairs: a proposed new version for review, and an experience per repair.

A run never changes the version it ran. What healed goes into a new version saved ``in_review``
(the element's working locators first, the recorded ones after, the fresh fingerprint), which an
analyst approves or not; and each repair found by fingerprint, the LLM or a person is remembered,
so the next run meeting the same drift takes it from memory without asking anyone. Only runs
that got to the end teach new repairs; a repair the LLM found is remembered as unproven until a
run it helped succeeded (unproven, it is used only where the LLM or a person could be asked
anyway). Every run scores the repairs it used (did the step hold?) and retires those of steps
its recorded locators found again; one that keeps failing, or is retired, is not used again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from desktop_app.core.items import pins_record
from desktop_app.core.library import WorkflowLibrary
from desktop_app.core.models.experience import Experience
from desktop_app.core.models.run import Resolution, Run, RunStatus
from desktop_app.core.models.target import Fingerprint, Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import Step, Workflow, WorkflowVersion, map_steps, walk
from desktop_app.core.replay.evidence import LocatorEvidence, evidence_of
from desktop_app.core.replay.evidence import ranked as by_evidence
from desktop_app.core.replay.lessons import Lessons, StepRepair
from desktop_app.core.replay.memory import ExperienceMemory
from desktop_app.core.replay.parameters import BoundParameters
from desktop_app.core.templating import placeholders, templated

__all__ = [
    "REPLAY_ACTOR",
    "Learned",
    "as_recorded",
    "learn",
    "repaired_workflow",
    "swapped",
    "templated_locator",
]

#: Who proposes the versions replay learns (the review queue marks them as repairs).
REPLAY_ACTOR: Final = "procedura-replay"

_MAX_LOCATORS: Final = 8
_REMEMBERED: Final = frozenset({Resolution.FINGERPRINT, Resolution.LLM, Resolution.PERSON})


@dataclass(frozen=True, slots=True)
class Learned:
    """What a run taught: the proposed version (if any) and how many experiences were stored.

    ``induced``: the proposal comes from online induction (:mod:`.online`), not a repair.
    """

    proposed: WorkflowVersion | None
    experiences: int
    induced: bool = False


def templated_locator(locator: Locator, values: dict[str, str]) -> Locator:
    """*locator* with each of *values* (name → value) put back as its ``{name}`` placeholder."""
    return locator.with_texts(lambda text: templated(text, values))


def _step_values(step: Step, params: BoundParameters) -> dict[str, str]:
    names = set()
    for text in _strings(step.model_dump(mode="json")):
        names.update(placeholders(text))
    return {n: params.values[n] for n in names if n in params.values and n not in params.secrets}


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _new_target(
    workflow: Workflow,
    step: Step,
    repair: StepRepair,
    params: BoundParameters,
    evidence: LocatorEvidence,
) -> Target | None:
    old = step.target_or_none
    if old is None:
        return None
    values = _step_values(step, params)
    # Never a locator that finds the element by a record's key or its position: right for this
    # run's row, wrong for the next one's.
    fresh = [
        templated_locator(loc, values) for loc in repair.target.locators if not pins_record(loc)
    ]
    kept = old.locators
    if any(loc.strategy is LocatorStrategy.IMAGE_ANCHOR for loc in fresh):
        # A desktop click looks for its first image anchor only: the one that no longer
        # matched goes (the fresh crop shows the same element).
        kept = tuple(loc for loc in kept if loc.strategy is not LocatorStrategy.IMAGE_ANCHOR)
    ranked: list[Locator] = []
    seen: set[str] = set()
    for locator in (*fresh, *kept):
        key = locator.describe()
        if key not in seen:
            seen.add(key)
            ranked.append(locator)
    # The locator that found it now first; the others by how they did across runs.
    ranked = ranked[:1] + by_evidence(ranked[1:], evidence)
    fingerprint = as_recorded(workflow, repair.target.fingerprint, values)
    return Target(
        locators=tuple(ranked[:_MAX_LOCATORS]),
        fingerprint=fingerprint or old.fingerprint,
    )


def as_recorded(
    workflow: Workflow, fingerprint: Fingerprint | None, values: dict[str, str]
) -> Fingerprint | None:
    """*fingerprint*, seen with this run's *values*, as if seen with the recorded ones (the
    parameters' defaults), as :func:`~desktop_app.core.replay.render.fingerprint_for_run`
    expects."""
    if fingerprint is None or not values:
        return fingerprint
    defaults = {n: _default(workflow, n) for n in values}
    recorded = {v: d for n, v in values.items() if (d := defaults[n]) is not None}
    return swapped(fingerprint, recorded)


def _default(workflow: Workflow, name: str) -> str | None:
    param = workflow.parameter(name)
    if param is None or param.default in (None, ""):
        return None
    return str(param.default)


def swapped(fp: Fingerprint, swaps: dict[str, str]) -> Fingerprint:
    def swap(text: str | None) -> str | None:
        if text is None:
            return None
        for old, new in sorted(swaps.items(), key=lambda kv: -len(kv[0])):
            if len(old) >= 2:
                text = text.replace(old, new)
        return text

    item = fp.item
    if item is not None:
        item = item.model_copy(update={"texts": tuple(swap(t) or "" for t in item.texts)})
    return fp.model_copy(
        update={
            "name": swap(fp.name),
            "text": swap(fp.text),
            "attributes": {k: swap(v) or "" for k, v in fp.attributes.items()},
            "nearby_text": tuple(swap(t) or "" for t in fp.nearby_text),
            "item": item,
        }
    )


def repaired_workflow(
    workflow: Workflow,
    repairs: Sequence[StepRepair],
    params: BoundParameters,
    history: Sequence[Run] = (),
) -> Workflow | None:
    """*workflow* with each repaired step's target updated, or None if nothing changes: the
    locator that found the element first, then the others by how they did in *history* (the
    workflow's runs; :mod:`.evidence`)."""
    by_step = {r.step_id: r for r in repairs if r.workflow_id == workflow.id}
    if not by_step:
        return None
    changed = False

    def repaired(step: Step, in_loop: bool) -> Step:
        nonlocal changed
        repair = by_step.get(step.id)
        if repair is None or in_loop:
            return step  # a round's element is that round's: never proposed for all of them
        evidence = evidence_of(step, workflow.version, history)
        target = _new_target(workflow, step, repair, params, evidence)
        if target is None:
            return step
        update: dict[str, object] = {"target": target}
        if repair.point is not None and hasattr(step, "point"):
            update["point"] = repair.point  # a desktop click: where it clicked in its window
        if all(getattr(step, name) == value for name, value in update.items()):
            return step
        changed = True
        return step.model_copy(update=update)

    steps = map_steps(workflow.steps, repaired)
    if not changed:
        return None
    return Workflow.model_validate(
        workflow.model_copy(update={"steps": steps}).model_dump(mode="json")
    )


def _change_note(
    run_id: str, repairs: Sequence[StepRepair], workflow: Workflow, history: Sequence[Run]
) -> str:
    healed = "; ".join(
        f"'{r.step_title}' by {r.resolution.value}" + (f" ({r.reason})" if r.reason else "")
        for r in repairs
    )
    note = f"Repair proposed by run {run_id[:8]}: {healed}"
    if any(r.resolution is Resolution.LLM for r in repairs):
        note += ". Found by the LLM: check each such element before approving"
    steps = {s.id: s for s in walk(workflow.steps)}
    said = [
        words
        for r in repairs
        if (step := steps.get(r.step_id)) is not None
        and (words := evidence_of(step, workflow.version, history).words(r.step_title))
    ]
    if said:
        note += ". Locators: " + "; ".join(said)
    return note


def learn(
    *,
    library: WorkflowLibrary,
    memory: ExperienceMemory | None,
    version: WorkflowVersion,
    run_id: str,
    lessons: Lessons,
    params: BoundParameters,
    actor: str,
    status: RunStatus,
    history: Sequence[Run] = (),
) -> Learned:
    """Propose a repaired version for review, remember each repair, and score those used.

    Whatever the run's end, each remembered repair it used is scored by whether its step then
    held, and the repairs of steps found again by their first recorded locator are retired (the
    page changed back). The proposal is a new version, submitted for review; the version that
    ran is untouched. A proposal identical to the latest version creates nothing. A run that
    did not get to the end (*status* failed, aborted, interrupted) teaches nothing more: a
    repair it made may be what went wrong. A run that succeeded proves the remembered repairs
    after which its steps held.
    """
    if memory is not None:
        memory.note_uses(lessons.uses, proven=status is RunStatus.SUCCEEDED)
        for workflow_id in dict.fromkeys(w for w, _ in lessons.as_recorded):
            memory.retire(workflow_id, (s for w, s in lessons.as_recorded if w == workflow_id))
    if status not in (RunStatus.SUCCEEDED, RunStatus.UNVERIFIED):
        return Learned(proposed=None, experiences=0)
    repairs = lessons.repairs
    own = [r for r in repairs if r.workflow_id == version.workflow.id]
    proposed = None
    workflow = repaired_workflow(version.workflow, own, params, history)
    if workflow is not None:
        note = _change_note(run_id, own, version.workflow, history)
        saved = library.save(
            workflow, actor=actor, change_note=note, parent_version=version.version
        )
        proposed = saved.version
        if saved.created:
            proposed = library.submit(
                workflow.id, actor=actor, version=saved.version.version, comment=note
            )
    stored = 0
    if memory is not None:
        for repair in repairs:
            if repair.resolution not in _REMEMBERED:
                continue
            step = next((s for s in version.workflow.steps if s.id == repair.step_id), None)
            values = _step_values(step, params) if step is not None else {}
            kept = [loc for loc in repair.target.locators if not pins_record(loc)]
            if not kept:
                continue  # nothing that finds the element again without pinning this record
            locator = templated_locator(kept[0], values)
            memory.remember(
                Experience(
                    workflow_id=repair.workflow_id,
                    workflow_version=repair.workflow_version,
                    step_id=repair.step_id,
                    step_title=repair.step_title,
                    step_kind=repair.step_kind,
                    page_url=repair.page_url or None,
                    page_title=repair.page_title,
                    failed_locators=repair.failed,
                    repaired_locator=locator,
                    fingerprint=as_recorded(version.workflow, repair.target.fingerprint, values),
                    point=repair.point,
                    resolution=repair.resolution,
                    reason=repair.reason,
                    proven=False if repair.resolution is Resolution.LLM else None,
                )
            )
            stored += 1
    return Learned(proposed=proposed, experiences=stored)
