"""A request by intent that no workflow does: the agent does it from a start page, and its run
proposes a new workflow (online induction, :mod:`desktop_app.core.replay.online`).

:func:`agent_workflow` saves what the agent is given as a draft: a start page, and one agent step
whose instruction is the request. :func:`propose_from_agent` turns the run that finished it into
the draft's next version, submitted for review: the agent's actions as recorded steps, the values
the request gave as parameters, the request with those values as slots as its intent template.
A run that failed proposes nothing; the first draft stays, with its run, to be looked at or
deleted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

from desktop_app.core.errors import ProceduraError
from desktop_app.core.models.workflow import AgentStep, GotoStep, Workflow
from desktop_app.core.replay.online import ONLINE_ACTOR, agent_draft
from desktop_app.ops.changes import Changes, Origin

if TYPE_CHECKING:
    from desktop_app.core.library import WorkflowLibrary
    from desktop_app.core.models.run import Run
    from desktop_app.core.models.workflow import WorkflowVersion

__all__ = ["AGENT_ACTIONS", "Proposed", "agent_workflow", "propose_from_agent"]

#: At most this many actions for the agent doing a request no workflow does.
AGENT_ACTIONS: Final = 20
_NAME: Final = 80


@dataclass(frozen=True, slots=True)
class Proposed:
    """The version a run proposed (None: it proposed nothing), and what changed."""

    version: WorkflowVersion | None
    changes: Changes


def agent_workflow(
    workflows: WorkflowLibrary, intent: str, start_url: str, *, actor: str, origin: Origin
) -> tuple[WorkflowVersion, Changes]:
    """Save, as a draft, the agent doing *intent* from *start_url* (blocking).

    Raises:
        ProceduraError: *start_url* is not an http(s) address, or *intent* is empty.
    """
    parts = urlsplit(start_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ProceduraError(f"the start page must be an http(s) address, not {start_url!r}")
    request = " ".join(intent.split())
    if not request:
        raise ProceduraError("say what to do: the request is empty")
    name = request if len(request) <= _NAME else request[: _NAME - 1] + "…"
    workflow = Workflow(
        name=name,
        description=f"Asked for by intent and done by the agent from {start_url}: {request}",
        domains=(parts.hostname,),
        steps=(
            GotoStep(title="Open the start page", url=start_url),
            AgentStep(title="Do what was asked", instruction=request, max_actions=AGENT_ACTIONS),
        ),
    )
    saved = workflows.save(
        workflow, actor=actor, change_note=f"No workflow did {request!r}: the agent tries it"
    )
    return saved.version, Changes.of(origin, workflows=[workflow.id])


def propose_from_agent(
    workflows: WorkflowLibrary, version: WorkflowVersion, run: Run, intent: str, *, origin: Origin
) -> Proposed:
    """Propose what the agent's *run* of *version* did as the workflow's next version, in
    review (blocking); nothing when the run did not finish or an action cannot be recorded."""
    found = agent_draft(version.workflow, run, " ".join(intent.split()))
    if found is None:
        return Proposed(None, Changes.of(origin))
    saved = workflows.save(
        found.workflow,
        actor=ONLINE_ACTOR,
        change_note=found.note,
        parent_version=version.version,
    )
    proposed = workflows.submit(
        version.workflow_id, actor=ONLINE_ACTOR, version=saved.version.version, comment=found.note
    )
    return Proposed(proposed, Changes.of(origin, workflows=[version.workflow_id]))
