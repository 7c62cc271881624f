"""What a workflow version changes: a readable diff of two versions, for review.

:func:`diff_workflows` compares two versions' content. Steps are matched by id (falling back to
the similarity of kind, title and target where ids differ); a step counts as *moved* only when it
left the longest run of matched steps that kept their order, so inserting or removing a step
moves nothing. Steps inside blocks are steps of the diff too, each saying which block holds it
("in 'For each invoice'") and numbered under it (``4.2``); one moved into or out of a block is
the same step, moved (:mod:`.tree`). Each matched step lists its field-level changes, the
changes to its target's locators (added, removed, changed, re-ranked) and one line summing up
how the recorded fingerprint changed. Parameters are matched by name; a parameter that
disappeared while one of the same type appeared in the same places is reported as renamed. The
workflow's success check (what shows the task was done) is compared check by check, in words,
with its other fields.

The result is plain data (frozen models: ``model_dump(mode="json")`` gives JSON) that the review
screen renders, and :func:`render_text` turns it into lines for the command line.

The computing is done per part, in :mod:`.fields` (the workflow's own fields), :mod:`.parameters`,
:mod:`.steps` and :mod:`.targets` (locators, fingerprints), brought together by :mod:`.compare`;
:mod:`.views` holds the data, :mod:`.words` the wording and :mod:`.text` the plain-text rendering.
"""

from desktop_app.core.diff.compare import base_for, diff_workflows
from desktop_app.core.diff.text import render_text, step_heading
from desktop_app.core.diff.views import (
    FieldChange,
    LocatorChange,
    ParameterChange,
    StepChange,
    WorkflowDiff,
)
from desktop_app.core.step_kinds import describe_step

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
