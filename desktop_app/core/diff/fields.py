"""How a workflow's own fields changed: name, description, intent, domains and success check."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from desktop_app.core.describe import describe_expectation
from desktop_app.core.diff.views import FieldChange
from desktop_app.core.models.workflow import Expectation, Workflow
from desktop_app.core.step_kinds.spec import quote

__all__: list[str] = []


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
                    before=quote(before, 2000) if before else None,
                    after=quote(after, 2000) if after else None,
                )
            )
    before_intent = old.intent_template if old is not None else None
    if before_intent != new.intent_template:
        changes.append(
            FieldChange(
                field="intent_template",
                label="intent template",
                before=quote(before_intent) if before_intent else None,
                after=quote(new.intent_template) if new.intent_template else None,
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
