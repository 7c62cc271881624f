"""What a run needs before it starts: the version, what to prefill, how its status reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from desktop_app.core.models.workflow import ParameterType, WorkflowStatus, WorkflowVersion
from desktop_app.ops.run import version_to_run
from desktop_app.ui.backend import Backend

__all__ = ["STATUS_WORDS", "RunSetup", "load_setup"]

#: How a version's status reads in the run dialog and the run window.
STATUS_WORDS: Final[dict[WorkflowStatus, str]] = {
    WorkflowStatus.DRAFT: "a draft",
    WorkflowStatus.IN_REVIEW: "in review",
    WorkflowStatus.APPROVED: "approved",
    WorkflowStatus.ARCHIVED: "archived",
}


@dataclass(frozen=True, slots=True)
class RunSetup:
    """What the parameter dialog needs, loaded off the GUI thread."""

    version: WorkflowVersion
    last_values: dict[str, str] = field(default_factory=dict)
    stored_secrets: dict[str, str] = field(default_factory=dict)
    llm_configured: bool = False
    explicit: bool = False
    verify: bool = False
    """A verification: the recorded values, and a stop before the first irreversible step."""

    @property
    def unapproved(self) -> bool:
        """Whether the version runs without having been approved."""
        return self.version.status is not WorkflowStatus.APPROVED


def load_setup(
    backend: Backend, workflow_id: str, version: int | None, *, verify: bool = False
) -> RunSetup:
    """The version to run and what to prefill (blocking: call it on the store thread).

    Raises:
        TransitionError: *version* is None and no version is approved, or it is archived.
        NotFoundError: no such workflow or version.
    """
    loaded = version_to_run(backend.workflows, workflow_id, version=version)
    workflow = loaded.workflow
    stored = {}
    for param in workflow.parameters:
        if param.type is ParameterType.SECRET:
            secret = backend.stored_secret(workflow.id, param.name)
            if secret:
                stored[param.name] = secret
    return RunSetup(
        version=loaded,
        last_values={} if verify else backend.last_values(workflow.id),
        stored_secrets=stored,
        llm_configured=backend.llm_configured(),
        explicit=version is not None,
        verify=verify,
    )
