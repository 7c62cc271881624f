"""How a workflow's steps changed: matched by id or likeness, moved or not, field by field."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

from desktop_app.core.describe import describe_expectation
from desktop_app.core.diff.fields import _list_changes
from desktop_app.core.diff.targets import _diff_locators, _fingerprint_summary, _locator_key
from desktop_app.core.diff.views import FieldChange, StepChange
from desktop_app.core.diff.words import _show, _similarity
from desktop_app.core.models.workflow import Step
from desktop_app.core.step_kinds import describe_step, kind_spec

__all__ = [
    "MATCH_THRESHOLD",
]

#: How similar (0–1) two steps with different ids must be to count as the same step.
MATCH_THRESHOLD: Final = 0.6

#: Step fields that are not compared one by one (the id matches steps; the rest have their own
#: comparisons, or are bookkeeping a reviewer does not need; a block's steps are steps of
#: their own in the diff).
_STEP_SPECIAL: Final = frozenset(
    {"id", "kind", "target", "expectations", "source_events", "steps", "otherwise"}
)

#: The fields every step has, in words (each kind's own fields are named by its spec).
_BASE_NOUNS: Final = {
    "timeout_s": "timeout",
}


def _noun(step: Step, name: str) -> str:
    """Field *name* of *step* in words, as a diff line names it."""
    for spec_field in kind_spec(step.kind).fields:
        if spec_field.name == name:
            return spec_field.in_words
    return _BASE_NOUNS.get(name, name.replace("_", " "))


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
        label = _noun(new if name in type(new).model_fields else old, name)
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
