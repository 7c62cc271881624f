"""What the editor reads off a draft: names a placeholder can use, their uses, where it starts,
and a step's summary (from :mod:`desktop_app.core.step_kinds`)."""

from __future__ import annotations

from desktop_app.core.editing.common import _extracted, _loop_names, _template_strings
from desktop_app.core.models.workflow import GotoStep, Workflow, walk
from desktop_app.core.step_kinds import step_summary
from desktop_app.core.templating import placeholders, render
from desktop_app.core.values import value_text

__all__ = [
    "known_names",
    "parameter_uses",
    "start_url",
    "step_summary",
]


def known_names(workflow: Workflow) -> list[str]:
    """The names a ``{placeholder}`` can use: parameters, then variables steps store, then
    what loops put their items in (each known only inside its loop: :func:`validate` says
    so where one is used outside)."""
    names = [p.name for p in workflow.parameters]
    names += [n for n in _extracted(workflow) if n not in names]
    return names + [n for n in _loop_names(workflow) if n not in names]


def parameter_uses(workflow: Workflow, name: str) -> int:
    """How many step fields, success checks (and the intent template) use ``{name}``."""
    count = 0
    for item in (*walk(workflow.steps), *workflow.success):
        for _, text in _template_strings(item.model_dump(mode="json")):
            count += name in placeholders(text)
    intent = workflow.intent_template or ""
    return count + (name in placeholders(intent))


def start_url(workflow: Workflow) -> str | None:
    """Where the workflow starts: its first ``goto`` step's URL, with defaults filled in.

    None when there is no such step, or its URL needs a value that has no default.
    """
    for step in workflow.steps:
        if isinstance(step, GotoStep) and step.url:
            values = {p.name: value_text(p.default) for p in workflow.parameters if p.default}
            try:
                return render(step.url, values)
            except KeyError:
                return None
    return None
