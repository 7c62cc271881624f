"""Editing a workflow in the step editor: pure operations that return a new workflow, and checks.

The workflow's steps, parameters and fields, and its success check (what shows the task was done,
checked after the last step: "Done when" in the editor) are all edited here.

Every operation takes a :class:`~desktop_app.core.models.workflow.Workflow` and returns a new one;
nothing changes in place, so an undo stack can keep whole snapshots. A draft may be incomplete
while someone edits it (a step with an empty title, a click without a locator, a placeholder of a
parameter not added yet): the operations allow that, :func:`validate` lists every such problem
where it is, and :func:`finalize` gives a workflow to save only once no error is left.

One module per family of edits: :mod:`.steps`, :mod:`.parameters` and :mod:`.workflow` (its own
fields and its success check); :mod:`.reading` answers what the editor shows about a draft,
:mod:`.validation` checks it, and :mod:`.common` holds what they share.

Errors::

    ProceduraError
    └── EditError    an edit that cannot be made: no such step or parameter, a name already
                     taken or not usable in a {placeholder}, a value of the wrong type
"""

from desktop_app.core.editing.common import INSERTABLE_KINDS, TARGETED_KINDS, EditError
from desktop_app.core.editing.parameters import (
    add_parameter,
    delete_parameter,
    new_parameter_name,
    parse_default,
    placeholder_spans,
    rename_parameter,
    rename_placeholder,
    retype_parameter,
    update_parameter,
)
from desktop_app.core.editing.reading import known_names, parameter_uses, start_url, step_summary
from desktop_app.core.editing.steps import (
    blank_step,
    delete_step,
    duplicate_step,
    insert_step,
    move_step,
    set_locators,
    update_step,
)
from desktop_app.core.editing.validation import Issue, Severity, errors, finalize, validate
from desktop_app.core.editing.workflow import (
    add_success_check,
    remove_success_check,
    replace_success_check,
    set_success,
    update_workflow,
)

__all__ = [
    "INSERTABLE_KINDS",
    "TARGETED_KINDS",
    "EditError",
    "Issue",
    "Severity",
    "add_parameter",
    "add_success_check",
    "blank_step",
    "delete_parameter",
    "delete_step",
    "duplicate_step",
    "errors",
    "finalize",
    "insert_step",
    "known_names",
    "move_step",
    "new_parameter_name",
    "parameter_uses",
    "parse_default",
    "placeholder_spans",
    "remove_success_check",
    "rename_parameter",
    "rename_placeholder",
    "replace_success_check",
    "retype_parameter",
    "set_locators",
    "set_success",
    "start_url",
    "step_summary",
    "update_parameter",
    "update_step",
    "update_workflow",
    "validate",
]
