"""What a workflow version changes: a readable diff of two versions, for review.

:func:`diff_workflows` compares two versions' content. Steps are matched by id (falling back to
the similarity of kind, title and target where ids differ); a step counts as *moved* only when it
left the longest run of matched steps that kept their order, so inserting or removing a step
moves nothing. Each matched step lists its field-level changes, the changes to its target's
locators (added, removed, changed, re-ranked) and one line summing up how the recorded
fingerprint changed. Parameters are matched by name; a parameter that disappeared while one of the
same type appeared in the same places is reported as renamed. The workflow's success check (what
shows the task was done) is compared check by check, in words, with its other fields.

The result is plain data (frozen models: ``model_dump(mode="json")`` gives JSON) that the review
screen renders, and :func:`render_text` turns it into lines for the command line.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, Literal

from pydantic import BaseModel

from desktop_app.core.describe import describe_expectation, describe_locator
from desktop_app.core.models.common import FrozenModel
from desktop_app.core.models.target import Fingerprint, ItemContext, Locator, Target
from desktop_app.core.models.workflow import (
    AgentStep,
    AssertStep,
    CallStep,
    CheckStep,
    ClickStep,
    DesktopClickStep,
    DesktopTypeStep,
    ElementHidden,
    ElementVisible,
    Expectation,
    ExtractStep,
    FillStep,
    GotoStep,
    HotkeyStep,
    ImageVisible,
    Parameter,
    PressStep,
    ScrollStep,
    SelectStep,
    Step,
    TextPresent,
    TitleMatches,
    UrlMatches,
    WaitForStep,
    WindowTitleMatches,
    Workflow,
    WorkflowStatus,
    WorkflowVersion,
)
from desktop_app.core.templating import placeholders

__all__ = [
    "FieldChange",
    "LocatorChange",
    "ParameterChange",
    "StepChange",
    "WorkflowDiff",
    "base_for",
    "describe_step",
    "diff_workflows",
    "render_text",
    "step_heading",
]

#: How similar (0–1) two steps with different ids must be to count as the same step.
MATCH_THRESHOLD: Final = 0.6

#: Step fields that are not compared one by one (the id matches steps; the rest have their own
#: comparisons, or are bookkeeping a reviewer does not need).
_STEP_SPECIAL: Final = frozenset({"id", "kind", "target", "expectations", "source_events"})

_LABELS: Final = {
    "title": "title",
    "value": "value",
    "url": "URL",
    "key": "key",
    "timeout_s": "timeout",
    "irreversible": "irreversible",
    "optional": "optional",
    "screenshot": "screenshot",
    "button": "button",
    "click_count": "clicks",
    "modifiers": "modifiers",
    "checked": "checked",
    "dx": "scroll x",
    "dy": "scroll y",
    "condition": "condition",
    "variable": "variable",
    "attribute": "attribute",
    "pattern": "pattern",
    "workflow_id": "called workflow",
    "version": "called version",
    "arguments": "arguments",
    "instruction": "instruction",
    "max_actions": "max actions",
    "output_variable": "output variable",
    "window_title": "window title",
    "app": "application",
    "point": "point",
    "text": "text",
    "keys": "keys",
    "kind": "kind",
}


# ── the diff, as data ───────────────────────────────────────────────────────────────────────


class FieldChange(FrozenModel):
    """One field that differs, rendered for people.

    ``before`` is None when the item was added (a domain, an expectation), ``after`` is None
    when it was removed.
    """

    field: str
    label: str
    before: str | None
    after: str | None


class LocatorChange(FrozenModel):
    """A change to a target's ranked locators. Ranks start at 1 (the one tried first)."""

    change: Literal["added", "removed", "changed", "moved"]
    before: str | None = None
    after: str | None = None
    old_rank: int | None = None
    new_rank: int | None = None


class ParameterChange(FrozenModel):
    """A parameter added, removed, renamed or changed."""

    change: Literal["added", "removed", "renamed", "changed"]
    name: str
    old_name: str | None = None
    summary: str
    fields: tuple[FieldChange, ...] = ()


class StepChange(FrozenModel):
    """One step of either version and what happened to it.

    Indexes are 0-based positions in the old and the new version (None where the step is not
    in that version). ``moved`` is true only for a real change of order, not for a step that
    shifted because another was inserted or removed before it.
    """

    status: Literal["added", "removed", "changed", "unchanged"]
    moved: bool = False
    old_index: int | None = None
    new_index: int | None = None
    step_id: str
    old_step_id: str | None = None
    matched_by: Literal["id", "similarity"] | None = None
    kind: str
    title: str
    old_title: str | None = None
    summary: str
    fields: tuple[FieldChange, ...] = ()
    locators: tuple[LocatorChange, ...] = ()
    fingerprint: str | None = None

    @property
    def noteworthy(self) -> bool:
        """Whether a reviewer needs to see this step (anything but unchanged and in place)."""
        return self.status != "unchanged" or self.moved


class WorkflowDiff(FrozenModel):
    """Everything one version changes compared with another (or with nothing, for a first one)."""

    workflow_id: str
    name: str
    old_version: int | None
    new_version: int
    fields: tuple[FieldChange, ...] = ()
    parameters: tuple[ParameterChange, ...] = ()
    steps: tuple[StepChange, ...] = ()

    @property
    def is_empty(self) -> bool:
        """Whether the two versions have the same content."""
        return not self.fields and not self.parameters and not self.changed_steps

    @property
    def changed_steps(self) -> tuple[StepChange, ...]:
        """The steps a reviewer needs to see, in display order."""
        return tuple(s for s in self.steps if s.noteworthy)

    def counts(self) -> dict[str, int]:
        """How many steps were added, removed, changed and moved."""
        counts = {"added": 0, "removed": 0, "changed": 0, "moved": 0}
        for step in self.steps:
            if step.status != "unchanged":
                counts[step.status] += 1
            if step.moved:
                counts["moved"] += 1
        return counts

    def summary(self) -> str:
        """One line: ``3 steps changed, 1 added; 1 parameter renamed``."""
        parts: list[str] = []
        steps = [(what, n) for what, n in self.counts().items() if n]
        if steps:
            parts.append(_counted("step", steps))
        if self.parameters:
            by_change: dict[str, int] = {}
            for p in self.parameters:
                by_change[p.change] = by_change.get(p.change, 0) + 1
            parts.append(_counted("parameter", list(by_change.items())))
        if self.fields:
            labels = list(dict.fromkeys(f.label for f in self.fields))
            parts.append(", ".join(labels) + " changed")
        if self.old_version is None:
            return (
                f"first version: {len(self.steps)} step{'' if len(self.steps) == 1 else 's'}, "
                f"{len(self.parameters)} parameter{'' if len(self.parameters) == 1 else 's'}"
            )
        return "; ".join(parts) if parts else "no changes"


def _counted(noun: str, items: Sequence[tuple[str, int]]) -> str:
    """``2 steps changed, 1 added``: the noun goes with the first count."""
    (first, n), *rest = items
    head = f"{n} {noun}{'' if n == 1 else 's'} {first}"
    return ", ".join([head, *(f"{m} {what}" for what, m in rest)])


# ── describing things in words ──────────────────────────────────────────────────────────────


def _quote(text: str, limit: int = 120) -> str:
    text = text.replace("\n", "⏎")
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f'"{text}"'


def _primary(target: Target | None) -> str:
    return describe_locator(target.locators[0]) if target is not None else "the page"


def describe_step(step: Step) -> str:
    """What *step* does, in one line: ``fill label=Email with "{email}"``."""
    match step:
        case GotoStep():
            return f"open {step.url}"
        case ClickStep():
            how = "double-click" if step.click_count == 2 else "click"
            if step.button != "left":
                how = f"{step.button}-{how}"
            mods = "+".join(step.modifiers)
            return f"{how} {_primary(step.target)}" + (f" with {mods}" if mods else "")
        case FillStep():
            return f"fill {_primary(step.target)} with {_quote(step.value)}"
        case SelectStep():
            return f"select {_quote(step.value)} in {_primary(step.target)}"
        case CheckStep():
            if isinstance(step.checked, str):
                return f"set {_primary(step.target)} to {step.checked}"
            return f"{'check' if step.checked else 'uncheck'} {_primary(step.target)}"
        case PressStep():
            where = f" on {_primary(step.target)}" if step.target is not None else ""
            return f"press {step.key}{where}"
        case ScrollStep():
            where = f" in {_primary(step.target)}" if step.target is not None else ""
            return f"scroll by ({_number(step.dx)}, {_number(step.dy)}){where}"
        case WaitForStep():
            return f"wait until {describe_expectation(step.condition)}"
        case AssertStep():
            return f"make sure {describe_expectation(step.condition)}"
        case ExtractStep():
            return f"read {_primary(step.target)} into {{{step.variable}}}"
        case CallStep():
            version = f" v{step.version}" if step.version is not None else ""
            args = ", ".join(f"{k}={v}" for k, v in step.arguments.items())
            return f"run workflow {step.workflow_id[:8]}{version}" + (
                f" with {args}" if args else ""
            )
        case AgentStep():
            return f"let the agent {_quote(step.instruction, 80)}"
        case DesktopClickStep():
            where = f" in {_quote(step.window_title)}" if step.window_title else ""
            at = f" at ({_number(step.point.x)}, {_number(step.point.y)})" if step.point else ""
            return f"click{where}{at}"
        case DesktopTypeStep():
            where = f" in {_quote(step.window_title)}" if step.window_title else ""
            return f"type {_quote(step.text)}{where}"
        case HotkeyStep():
            return f"press {'+'.join(step.keys)}"
    raise AssertionError(f"unknown step kind {step.kind}")  # pragma: no cover


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _show(name: str, value: Any) -> str:
    """A field value in words."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if name == "timeout_s" and isinstance(value, int | float):
        return f"{_number(value)} s"
    if name == "screenshot":
        return "recorded"
    if isinstance(value, int | float):
        return _number(value)
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, UrlMatches | TitleMatches | TextPresent | WindowTitleMatches):
        return describe_expectation(value)
    if isinstance(value, ElementVisible | ElementHidden | ImageVisible):
        return describe_expectation(value)
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "none"
    if isinstance(value, tuple | list):
        return ", ".join(str(v) for v in value) or "none"
    if isinstance(value, BaseModel):
        return ", ".join(f"{k}={_show(k, v)}" for k, v in value.model_dump().items())
    return str(value)


def _similarity(a: str, b: str) -> float:
    if a == b:
        return 1.0
    return difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio()


# ── workflow-level fields ───────────────────────────────────────────────────────────────────


def _workflow_fields(old: Workflow | None, new: Workflow) -> list[FieldChange]:
    changes: list[FieldChange] = []
    for name, label in (("name", "name"), ("description", "description")):
        before = getattr(old, name) if old is not None else ""
        after = getattr(new, name)
        if before != after:
            changes.append(
                FieldChange(
                    field=name,
                    label=label,
                    before=_quote(before, 2000) if before else None,
                    after=_quote(after, 2000) if after else None,
                )
            )
    before_intent = old.intent_template if old is not None else None
    if before_intent != new.intent_template:
        changes.append(
            FieldChange(
                field="intent_template",
                label="intent template",
                before=_quote(before_intent) if before_intent else None,
                after=_quote(new.intent_template) if new.intent_template else None,
            )
        )
    old_domains = old.domains if old is not None else ()
    changes += _list_changes("domains", "domain", old_domains, new.domains, str)
    changes += _success_changes(old.success if old is not None else (), new.success)
    old_sources = old.source_trajectories if old is not None else ()
    if len(old_sources) != len(new.source_trajectories) and old is not None:
        changes.append(
            FieldChange(
                field="source_trajectories",
                label="recordings it was learned from",
                before=str(len(old_sources)),
                after=str(len(new.source_trajectories)),
            )
        )
    return changes


def _success_changes(
    before: Sequence[Expectation], after: Sequence[Expectation]
) -> list[FieldChange]:
    """How the success check changed: checks removed, added, and (a removed and an added one
    of the same kind, in order) changed."""
    changes = _list_changes("success", "success check", before, after, describe_expectation)
    kinds = {describe_expectation(e): e.kind for e in (*before, *after)}
    removed = [c for c in changes if c.after is None]
    added = [c for c in changes if c.before is None]
    paired: list[FieldChange] = []
    for gone in removed:
        came = next(
            (c for c in added if kinds[c.after or ""] == kinds[gone.before or ""]),
            None,
        )
        if came is None:
            paired.append(gone)
            continue
        added.remove(came)
        paired.append(gone.model_copy(update={"after": came.after}))
    return paired + added


def _list_changes(
    field: str,
    label: str,
    before: Sequence[Any],
    after: Sequence[Any],
    show: Callable[[Any], str],
) -> list[FieldChange]:
    """Items of a list that were removed or added (compared by how they read)."""
    old_texts = [show(item) for item in before]
    new_texts = [show(item) for item in after]
    changes = [
        FieldChange(field=field, label=label, before=text, after=None)
        for text in old_texts
        if text not in new_texts
    ]
    changes += [
        FieldChange(field=field, label=label, before=None, after=text)
        for text in new_texts
        if text not in old_texts
    ]
    return changes


# ── parameters ──────────────────────────────────────────────────────────────────────────────


def _describe_parameter(p: Parameter) -> str:
    bits = [p.type.value]
    if not p.required:
        bits.append("optional")
    if p.default is not None:
        bits.append(f"default {_show('default', p.default)}")
    if p.choices:
        bits.append("one of " + ", ".join(p.choices))
    text = f"{p.name} ({', '.join(bits)})"
    return f"{text}: {p.description}" if p.description else text


def _parameter_fields(old: Parameter, new: Parameter) -> list[FieldChange]:
    changes = []
    for name in ("type", "default", "description", "required", "choices"):
        before, after = getattr(old, name), getattr(new, name)
        if before != after:
            changes.append(
                FieldChange(
                    field=name,
                    label=name,
                    before=_show(name, getattr(before, "value", before)),
                    after=_show(name, getattr(after, "value", after)),
                )
            )
    return changes


def _uses(workflow: Workflow) -> dict[str, frozenset[int]]:
    """For each placeholder name, the positions of the steps whose fields use it."""
    found: dict[str, set[int]] = {}
    for i, step in enumerate(workflow.steps):
        for text in _strings(step.model_dump(mode="json", exclude={"id", "title"})):
            for name in placeholders(text):
                found.setdefault(name, set()).add(i)
    return {name: frozenset(at) for name, at in found.items()}


def _strings(value: object) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _diff_parameters(
    old: Workflow | None, new: Workflow, step_pairs: dict[int, int]
) -> list[ParameterChange]:
    old_params = {p.name: p for p in (old.parameters if old is not None else ())}
    new_params = {p.name: p for p in new.parameters}
    removed = [p for name, p in old_params.items() if name not in new_params]
    added = [p for name, p in new_params.items() if name not in old_params]

    # A rename: a parameter gone and one of the same type arrived, used by the same steps (or
    # described alike, or with the same default).
    renames: dict[str, Parameter] = {}
    if old is not None and removed and added:
        old_uses, new_uses = _uses(old), _uses(new)
        candidates: list[tuple[float, str, str]] = []
        for gone in removed:
            for came in added:
                if gone.type != came.type:
                    continue
                where_old = {step_pairs.get(i, -1 - i) for i in old_uses.get(gone.name, ())}
                where_new = set(new_uses.get(came.name, ()))
                score = 0.0
                if where_old and where_old == where_new:
                    score += 1.0
                if gone.description and _similarity(gone.description, came.description) > 0.8:
                    score += 0.6
                if gone.default is not None and gone.default == came.default:
                    score += 0.4
                score += 0.2 * _similarity(gone.name, came.name)
                if score >= 0.6:
                    candidates.append((score, gone.name, came.name))
        taken: set[str] = set()
        for _, gone_name, came_name in sorted(candidates, reverse=True):
            if gone_name in renames or came_name in taken:
                continue
            renames[gone_name] = new_params[came_name]
            taken.add(came_name)

    changes: list[ParameterChange] = []
    renamed_to = {p.name: gone for gone, p in renames.items()}
    for p in new.parameters:
        if p.name in old_params:
            fields = _parameter_fields(old_params[p.name], p)
            if fields:
                changes.append(
                    ParameterChange(
                        change="changed",
                        name=p.name,
                        summary=_describe_parameter(p),
                        fields=tuple(fields),
                    )
                )
        elif p.name in renamed_to:
            gone_name = renamed_to[p.name]
            changes.append(
                ParameterChange(
                    change="renamed",
                    name=p.name,
                    old_name=gone_name,
                    summary=_describe_parameter(p),
                    fields=tuple(_parameter_fields(old_params[gone_name], p)),
                )
            )
        else:
            changes.append(
                ParameterChange(change="added", name=p.name, summary=_describe_parameter(p))
            )
    for p in removed:
        if p.name not in renames:
            changes.append(
                ParameterChange(change="removed", name=p.name, summary=_describe_parameter(p))
            )
    return changes


# ── steps ───────────────────────────────────────────────────────────────────────────────────


def _locator_key(
    locator: Locator,
) -> tuple[str, str, str | None, bool, int | None, tuple[str, str] | None]:
    scope = locator.within
    within = (scope.css, scope.text) if scope is not None else None
    return (locator.strategy.value, locator.value, locator.name, locator.exact, locator.nth, within)


def _describe_locator(locator: Locator) -> str:
    text = describe_locator(locator)
    return text if locator.exact else f"{text} (inexact)"


def _step_similarity(old: Step, new: Step) -> float:
    """How alike two steps with different ids are (0–1); steps of another kind are not alike."""
    if old.kind != new.kind:
        return 0.0
    score = 0.6 * _similarity(old.title, new.title)
    old_target, new_target = old.target_or_none, new.target_or_none
    if old_target is not None and new_target is not None:
        old_keys = {_locator_key(loc) for loc in old_target.locators}
        if any(_locator_key(loc) in old_keys for loc in new_target.locators):
            score += 0.4
        elif (
            old_target.fingerprint is not None
            and new_target.fingerprint is not None
            and old_target.fingerprint.name
            and old_target.fingerprint.name == new_target.fingerprint.name
        ):
            score += 0.3
    elif describe_step(old) == describe_step(new):
        score += 0.4
    return score


def _match_steps(old: Sequence[Step], new: Sequence[Step]) -> dict[int, tuple[int, str]]:
    """Old position → (new position, how matched): by id, then by similarity."""
    new_by_id = {step.id: j for j, step in enumerate(new)}
    pairs: dict[int, tuple[int, str]] = {}
    for i, step in enumerate(old):
        if step.id in new_by_id:
            pairs[i] = (new_by_id[step.id], "id")
    taken = {j for j, _ in pairs.values()}
    loose_old = [i for i in range(len(old)) if i not in pairs]
    loose_new = [j for j in range(len(new)) if j not in taken]
    candidates: list[tuple[float, int, int]] = []
    for i in loose_old:
        for j in loose_new:
            score = _step_similarity(old[i], new[j])
            if score >= MATCH_THRESHOLD:
                # Nearer positions win ties.
                candidates.append((score - 0.001 * abs(i - j), i, j))
    for _, i, j in sorted(candidates, key=lambda c: (-c[0], c[1], c[2])):
        if i in pairs or j in taken:
            continue
        pairs[i] = (j, "similarity")
        taken.add(j)
    return pairs


def _kept_order(pairs: Sequence[tuple[int, int]]) -> set[int]:
    """Which of the matched (old, new) positions kept their order; the rest really moved.

    *pairs* are sorted by new position. The kept ones are a longest run whose old positions
    increase too; among runs of that length, the one with the most items at an unchanged
    position wins, so a step taken out and put elsewhere is what reads as moved.
    """
    n = len(pairs)
    if n > _EXACT_ORDER_LIMIT:
        return _longest_increasing([i for i, _ in pairs])
    best: list[tuple[int, int]] = []
    previous: list[int] = []
    for k, (i, j) in enumerate(pairs):
        score, back = (1, int(i == j)), -1
        for m in range(k):
            if pairs[m][0] < i:
                length, same = best[m]
                candidate = (length + 1, same + int(i == j))
                if candidate > score:
                    score, back = candidate, m
        best.append(score)
        previous.append(back)
    kept: set[int] = set()
    k = max(range(n), key=lambda m: best[m], default=-1)
    while k >= 0:
        kept.add(k)
        k = previous[k]
    return kept


#: Above this many matched items, order is kept by a plain longest increasing subsequence.
_EXACT_ORDER_LIMIT: Final = 400


def _longest_increasing(values: Sequence[int]) -> set[int]:
    """Positions (into *values*) of one longest strictly increasing subsequence."""
    if not values:
        return set()
    tails: list[int] = []  # position of the smallest tail of each length
    previous: list[int] = [-1] * len(values)
    for k, value in enumerate(values):
        lo, hi = 0, len(tails)
        while lo < hi:
            mid = (lo + hi) // 2
            if values[tails[mid]] < value:
                lo = mid + 1
            else:
                hi = mid
        previous[k] = tails[lo - 1] if lo > 0 else -1
        if lo == len(tails):
            tails.append(k)
        else:
            tails[lo] = k
    kept: set[int] = set()
    k = tails[-1]
    while k >= 0:
        kept.add(k)
        k = previous[k]
    return kept


def _moved(pairs: dict[int, tuple[int, str]]) -> set[int]:
    """Old positions of the matched steps that really moved (not in the longest kept order)."""
    by_new = sorted(((i, j) for i, (j, _) in pairs.items()), key=lambda pair: pair[1])
    kept = _kept_order(by_new)
    return {i for k, (i, _) in enumerate(by_new) if k not in kept}


def _diff_locators(old: Target | None, new: Target | None) -> list[LocatorChange]:
    old_locs = list(old.locators) if old is not None else []
    new_locs = list(new.locators) if new is not None else []
    old_keys = [_locator_key(loc) for loc in old_locs]
    new_keys = [_locator_key(loc) for loc in new_locs]
    removed = [i for i, key in enumerate(old_keys) if key not in new_keys]
    added = [j for j, key in enumerate(new_keys) if key not in old_keys]

    # A removed and an added locator of the same strategy read as one that changed.
    changed: list[tuple[int, int]] = []
    for i in list(removed):
        j = next((j for j in added if new_locs[j].strategy is old_locs[i].strategy), None)
        if j is not None:
            changed.append((i, j))
            removed.remove(i)
            added.remove(j)

    # Locators both versions have: when their order relative to each other (and to the changed
    # ones) changed, each one now tried at another rank is re-ranked; a mere shift from an
    # insertion or removal above it is not.
    common = [(old_keys.index(key), j) for j, key in enumerate(new_keys) if key in old_keys]
    matched = sorted([*common, *changed], key=lambda pair: pair[1])
    reordered = any(a[0] > b[0] for a, b in itertools.pairwise(matched))
    moved = [(i, j) for i, j in common if reordered and i != j]

    changes: list[LocatorChange] = []
    for j in added:
        changes.append(
            LocatorChange(change="added", after=_describe_locator(new_locs[j]), new_rank=j + 1)
        )
    for i, j in changed:
        changes.append(
            LocatorChange(
                change="changed",
                before=_describe_locator(old_locs[i]),
                after=_describe_locator(new_locs[j]),
                old_rank=i + 1,
                new_rank=j + 1,
            )
        )
    for i, j in moved:
        changes.append(
            LocatorChange(
                change="moved",
                before=_describe_locator(old_locs[i]),
                after=_describe_locator(new_locs[j]),
                old_rank=i + 1,
                new_rank=j + 1,
            )
        )
    changes.sort(key=lambda change: change.new_rank or 0)
    for i in removed:
        changes.append(
            LocatorChange(change="removed", before=_describe_locator(old_locs[i]), old_rank=i + 1)
        )
    return changes


def _short(text: str | None) -> str:
    return _quote(text, 40) if text else "none"


def _fingerprint_summary(old: Fingerprint | None, new: Fingerprint | None) -> str | None:
    """One line saying how the recorded element changed, or None if it did not."""
    if old == new:
        return None
    if old is None:
        return "recorded (the element can now be found by likeness)"
    if new is None:
        return "removed (the element can no longer be found by likeness)"
    parts: list[str] = []
    for name in ("tag", "role", "name", "text"):
        before, after = getattr(old, name), getattr(new, name)
        if before != after:
            parts.append(f"{name} {_short(before)} → {_short(after)}")
    attrs = sorted(set(old.attributes) | set(new.attributes))
    shown = [k for k in ("id", "type", "name") if k in attrs]
    others: list[str] = []
    for key in attrs:
        before_attr, after_attr = old.attributes.get(key), new.attributes.get(key)
        if before_attr == after_attr:
            continue
        if key in shown:
            parts.append(f"{key} {_short(before_attr)} → {_short(after_attr)}")
        else:
            others.append(key)
    if others:
        parts.append("attributes " + ", ".join(others) + " changed")
    if old.bbox != new.bbox:
        if old.bbox is None or new.bbox is None:
            parts.append("position " + ("recorded" if old.bbox is None else "dropped"))
        else:
            moved = (old.bbox.x, old.bbox.y) != (new.bbox.x, new.bbox.y)
            resized = (old.bbox.width, old.bbox.height) != (new.bbox.width, new.bbox.height)
            parts.append(
                "box " + " and ".join(w for w, f in (("moved", moved), ("resized", resized)) if f)
            )
    if old.nearby_text != new.nearby_text:
        parts.append("nearby text changed")
    if old.ancestors != new.ancestors:
        parts.append("ancestors changed")
    if old.item != new.item:
        parts.append(_item_change(old.item, new.item))
    return "; ".join(parts) if parts else "updated"


def _item_change(old: ItemContext | None, new: ItemContext | None) -> str:
    """How the repeated item (row, card) the element was recorded in changed, in words."""
    if new is None:
        return "no longer recorded in a repeated item"
    shows = f"showing {_short(new.texts[0])}" if new.texts else "showing no text"
    if old is None:
        return f"recorded in a repeated item ({new.css}, {shows})"
    if old.css != new.css:
        return f"item {old.css} → {new.css}"
    if old.texts != new.texts:
        return f"item texts changed (now {shows})"
    return "item's inner locator changed"


def _step_fields(old: Step, new: Step) -> list[FieldChange]:
    changes: list[FieldChange] = []
    if old.kind != new.kind:
        changes.append(FieldChange(field="kind", label="kind", before=old.kind, after=new.kind))
    names = list(dict.fromkeys([*type(old).model_fields, *type(new).model_fields]))
    for name in names:
        if name in _STEP_SPECIAL:
            continue
        before, after = getattr(old, name, None), getattr(new, name, None)
        if before == after:
            continue
        label = _LABELS.get(name, name.replace("_", " "))
        if name == "screenshot":
            changes.append(
                FieldChange(
                    field=name,
                    label=label,
                    before="recorded" if before else None,
                    after=("replaced" if before else "recorded") if after else None,
                )
            )
            continue
        changes.append(
            FieldChange(
                field=name, label=label, before=_show(name, before), after=_show(name, after)
            )
        )
    changes += _list_changes(
        "expectations", "expectation", old.expectations, new.expectations, describe_expectation
    )
    return changes


def _step_change(
    old: Step,
    new: Step,
    *,
    old_index: int,
    new_index: int,
    matched_by: Literal["id", "similarity"],
    moved: bool,
) -> StepChange:
    fields = _step_fields(old, new)
    old_target, new_target = old.target_or_none, new.target_or_none
    locators = _diff_locators(old_target, new_target)
    fingerprint = _fingerprint_summary(
        old_target.fingerprint if old_target is not None else None,
        new_target.fingerprint if new_target is not None else None,
    )
    changed = bool(fields or locators or fingerprint)
    return StepChange(
        status="changed" if changed else "unchanged",
        moved=moved,
        old_index=old_index,
        new_index=new_index,
        step_id=new.id,
        old_step_id=old.id if old.id != new.id else None,
        matched_by=matched_by,
        kind=new.kind,
        title=new.title,
        old_title=old.title if old.title != new.title else None,
        summary=describe_step(new),
        fields=tuple(fields),
        locators=tuple(locators),
        fingerprint=fingerprint,
    )


def _lone_step(step: Step, status: Literal["added", "removed"], index: int) -> StepChange:
    return StepChange(
        status=status,
        old_index=index if status == "removed" else None,
        new_index=index if status == "added" else None,
        step_id=step.id,
        kind=step.kind,
        title=step.title,
        summary=describe_step(step),
    )


def _diff_steps(
    old: Sequence[Step], new: Sequence[Step]
) -> tuple[list[StepChange], dict[int, int]]:
    pairs = _match_steps(old, new)
    moved = _moved(pairs)
    entries: list[tuple[tuple[int, int, int], StepChange]] = []
    new_to_old = {j: (i, how) for i, (j, how) in pairs.items()}
    for j, step in enumerate(new):
        if j in new_to_old:
            i, how = new_to_old[j]
            change = _step_change(
                old[i],
                step,
                old_index=i,
                new_index=j,
                matched_by="id" if how == "id" else "similarity",
                moved=i in moved,
            )
        else:
            change = _lone_step(step, "added", j)
        entries.append(((j, 0, 0), change))
    # A removed step shows right after the step that came before it in the old version.
    for i, step in enumerate(old):
        if i in pairs:
            continue
        anchor = -1
        for before in range(i - 1, -1, -1):
            if before in pairs and before not in moved:
                anchor = pairs[before][0]
                break
        entries.append(((anchor, 1, i), _lone_step(step, "removed", i)))
    entries.sort(key=lambda entry: entry[0])
    return [change for _, change in entries], {i: j for i, (j, _) in pairs.items()}


# ── the entry point ─────────────────────────────────────────────────────────────────────────


def diff_workflows(old: Workflow | None, new: Workflow) -> WorkflowDiff:
    """What *new* changes compared with *old* (None: *new* is a first version, all of it new)."""
    steps, step_pairs = _diff_steps(old.steps if old is not None else (), new.steps)
    return WorkflowDiff(
        workflow_id=new.id,
        name=new.name,
        old_version=old.version if old is not None else None,
        new_version=new.version,
        fields=tuple(_workflow_fields(old, new)),
        parameters=tuple(_diff_parameters(old, new, step_pairs)),
        steps=tuple(steps),
    )


# ── plain text ──────────────────────────────────────────────────────────────────────────────

_MARK: Final = {"added": "+", "removed": "-", "changed": "~", "unchanged": " "}


def _field_line(change: FieldChange) -> str:
    if change.before is None:
        return f"+ {change.label}: {change.after}"
    if change.after is None:
        return f"- {change.label}: {change.before}"
    return f"{change.label}: {change.before} → {change.after}"


def _locator_line(change: LocatorChange) -> str:
    if change.change == "added":
        return f"+ locator #{change.new_rank}: {change.after}"
    if change.change == "removed":
        return f"- locator #{change.old_rank}: {change.before}"
    if change.change == "changed":
        rank = (
            f"#{change.new_rank}"
            if change.old_rank == change.new_rank
            else f"#{change.old_rank} → #{change.new_rank}"
        )
        return f"~ locator {rank}: {change.before} → {change.after}"
    return f"↕ locator {change.after}: re-ranked #{change.old_rank} → #{change.new_rank}"


def step_heading(change: StepChange) -> str:
    """``3. Fill 'Email' with {email}  (fill)``, numbered in the version it belongs to."""
    index = change.new_index if change.new_index is not None else change.old_index
    number = f"{(index or 0) + 1}."
    if change.status == "removed":
        number = f"(was {number[:-1]})"
    return f"{number} {change.title}  ({change.kind})"


def render_text(diff: WorkflowDiff, *, unchanged: bool = False) -> list[str]:
    """*diff* as lines for a terminal; *unchanged* lists the steps that did not change too."""
    base = f"version {diff.old_version}" if diff.old_version is not None else "nothing"
    lines = [f"{diff.name}: {base} → version {diff.new_version}", diff.summary()]
    if diff.fields:
        lines += ["", "workflow:"]
        lines += [f"  {_field_line(change)}" for change in diff.fields]
    if diff.parameters:
        lines += ["", "parameters:"]
        for p in diff.parameters:
            if p.change == "added":
                lines.append(f"  + {p.summary}")
            elif p.change == "removed":
                lines.append(f"  - {p.summary}")
            elif p.change == "renamed":
                lines.append(f"  ~ {p.old_name} renamed to {p.name}")
            else:
                lines.append(f"  ~ {p.name}")
            lines += [f"      {_field_line(change)}" for change in p.fields]
    shown = diff.steps if unchanged else diff.changed_steps
    if shown:
        lines += ["", "steps:"]
    for step in shown:
        mark = "↕" if step.moved and step.status == "unchanged" else _MARK[step.status]
        lines.append(f"  {mark} {step_heading(step)}")
        if step.status in ("added", "removed"):
            lines.append(f"      {step.summary}")
            continue
        if step.moved:
            assert step.old_index is not None and step.new_index is not None
            lines.append(f"      moved from position {step.old_index + 1} to {step.new_index + 1}")
        if step.old_step_id is not None:
            lines.append(f"      matched by likeness to step {step.old_step_id} (its id changed)")
        lines += [f"      {_field_line(change)}" for change in step.fields]
        lines += [f"      {_locator_line(change)}" for change in step.locators]
        if step.fingerprint:
            lines.append(f"      fingerprint: {step.fingerprint}")
    return lines


# ── which versions to compare ───────────────────────────────────────────────────────────────


def base_for(compared: WorkflowVersion, versions: Sequence[WorkflowVersion]) -> int | None:
    """The version *compared* is best read against, by default.

    Its parent (the version it was made from: the one a repair's run replayed, or the latest one
    when it was saved), else the approved version, else the one before it; None for a first
    version with nothing before it.
    """
    numbers = {v.version for v in versions} - {compared.version}
    if compared.parent_version in numbers:
        return compared.parent_version
    approved = [
        v.version
        for v in versions
        if v.status is WorkflowStatus.APPROVED and v.version != compared.version
    ]
    if approved:
        return max(approved)
    earlier = [n for n in numbers if n < compared.version]
    return max(earlier) if earlier else None
