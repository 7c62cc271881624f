"""Workflows that call workflows: how deep calls may nest, and the tree of what a run may
open (its start page and domains come from it), for the engine and for whoever prepares a run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Final

from desktop_app.core.errors import ProceduraError
from desktop_app.core.models.workflow import CallStep, Workflow, WorkflowVersion, walk
from desktop_app.core.replay.render import recorded_origin

__all__ = ["MAX_CALL_DEPTH", "Load", "call_tree", "domains_of", "origin_of"]

#: How deep ``call`` steps may nest: a workflow, and five levels of workflows it calls.
MAX_CALL_DEPTH: Final = 5

#: The version a ``call`` step runs: ``load(workflow_id, version_or_None)``.
Load = Callable[[str, int | None], WorkflowVersion]


def call_tree(workflow: Workflow, load: Load) -> Iterator[Workflow]:
    """*workflow*, then each workflow it calls, depth first in step order, as deep as a run
    may go. A callee that cannot be loaded is left out (the run says so at that step)."""
    yield from _tree(workflow, load, 0)


def _tree(workflow: Workflow, load: Load, depth: int) -> Iterator[Workflow]:
    yield workflow
    if depth >= MAX_CALL_DEPTH:
        return
    for step in walk(workflow.steps):
        if isinstance(step, CallStep):
            try:
                callee = load(step.workflow_id, step.version).workflow
            except ProceduraError:
                continue
            yield from _tree(callee, load, depth + 1)


def origin_of(workflow: Workflow, load: Load) -> str | None:
    """Where a run of *workflow* starts: its first page's origin, or (if it opens none itself)
    the first a workflow it calls opens."""
    return next((o for w in call_tree(workflow, load) if (o := recorded_origin(w))), None)


def domains_of(workflow: Workflow, load: Load) -> tuple[str, ...]:
    """The domains a run of *workflow* may go to: its own and those of what it calls."""
    return tuple(dict.fromkeys(d for w in call_tree(workflow, load) for d in w.domains))
