"""Editing a workflow in the step editor: pure operations that return a new workflow, and checks.

The workflow's steps, parameters and fields, and its success check (what shows the task was done,
checked after the last step: "Done when" in the editor) are all edited here.

A step is addressed by its top-level index or, inside blocks (steps that hold steps), by a
:data:`~.paths.StepPath` such as ``(3, "otherwise", 0)``; steps move into and out of blocks.

Every operation takes a :class:`~desktop_app.core.models.workflow.Workflow` and returns a new one;
nothing changes in place, so an undo stack can keep whole snapshots. A draft may be incomplete
while someone edits it (a step with an empty title, a click without a locator, a placeholder of a
parameter not added yet): the operations allow that, :func:`validate` lists every such problem
where it is, and :func:`finalize` gives a workflow to save only once no error is left.

One module per family of edits: :mod:`.steps`, :mod:`.parameters` and :mod:`.workflow` (its own
fields and its success check); :mod:`.paths` says where a step is, :mod:`.reading` answers what
the editor shows about a draft, :mod:`.validation` checks it (:mod:`.block_checks`: what a block
still needs), and :mod:`.common` holds what they share.

Errors::

    ProceduraError
    └── EditError    an edit that cannot be made: no such step or parameter, a name already
                     taken or not usable in a {placeholder}, a value of the wrong type
"""

from desktop_app.core.editing.common import INSERTABLE_KINDS, TARGETED_KINDS, EditError
from desktop_app.core.editing.parameters import (
    add_parameter,
    delete_parameter,
    follow_rename,
    new_parameter_name,
    parse_default,
    placeholder_spans,
    rename_parameter,
    rename_placeholder,
    retype_parameter,
    update_parameter,
)
from desktop_app.core.editing.paths import (
    StepPath,
    Where,
    as_path,
    is_inside,
    list_at,
    parent_of,
    path_label,
    slot_after_removal,
    step_at,
    step_paths,
)
from desktop_app.core.editing.reading import known_names, parameter_uses, start_url, step_summary
from desktop_app.core.editing.steps import (
    blank_step,
    delete_step,
    duplicate_step,
    insert_step,
    move_into,
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
    "StepPath",
    "Where",
    "add_parameter",
    "add_success_check",
    "as_path",
    "blank_step",
    "delete_parameter",
    "delete_step",
    "duplicate_step",
    "errors",
    "finalize",
    "follow_rename",
    "insert_step",
    "is_inside",
    "known_names",
    "list_at",
    "move_into",
    "move_step",
    "new_parameter_name",
    "parameter_uses",
    "parent_of",
    "parse_default",
    "path_label",
    "placeholder_spans",
    "remove_success_check",
    "rename_parameter",
    "rename_placeholder",
    "replace_success_check",
    "retype_parameter",
    "set_locators",
    "set_success",
    "slot_after_removal",
    "start_url",
    "step_at",
    "step_paths",
    "step_summary",
    "update_parameter",
    "update_step",
    "update_workflow",
    "validate",
]
