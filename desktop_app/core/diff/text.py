"""A diff as plain text, for the command line."""

from __future__ import annotations

from typing import Final

from desktop_app.core.diff.views import FieldChange, LocatorChange, StepChange, WorkflowDiff

__all__ = [
    "render_text",
    "step_heading",
]

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
    """``3. Fill 'Email' with {email}  (fill)``, numbered in the version it belongs to; a step
    inside a block says which: ``4.1. Click 'Remind'  (click) in 'For each invoice'``."""
    index = change.new_index if change.new_index is not None else change.old_index
    label = change.old_number if change.status == "removed" else change.number
    number = f"{label or (index or 0) + 1}."
    if change.status == "removed":
        number = f"(was {number[:-1]})"
    where = f" {change.where}" if change.where else ""
    return f"{number} {change.title}  ({change.kind}){where}"


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
        if step.moved and step.old_where is not None:
            lines.append(f"      moved: was {step.old_number}, {step.old_where}")
        elif step.moved:
            assert step.old_index is not None and step.new_index is not None
            lines.append(f"      moved from position {step.old_index + 1} to {step.new_index + 1}")
        if step.old_step_id is not None:
            lines.append(f"      matched by likeness to step {step.old_step_id} (its id changed)")
        lines += [f"      {_field_line(change)}" for change in step.fields]
        lines += [f"      {_locator_line(change)}" for change in step.locators]
        if step.fingerprint:
            lines.append(f"      fingerprint: {step.fingerprint}")
    return lines
