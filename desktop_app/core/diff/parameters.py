"""How a workflow's parameters changed: added, removed, changed, and renames recognised."""

from __future__ import annotations

from collections.abc import Iterable

from desktop_app.core.diff.views import FieldChange, ParameterChange
from desktop_app.core.diff.words import _show, _similarity
from desktop_app.core.models.workflow import Parameter, Workflow
from desktop_app.core.templating import placeholders

__all__: list[str] = []


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
