"""Read models the services return: summaries for lists and hits for search."""

from __future__ import annotations

from pydantic import AwareDatetime

from desktop_app.core.models.common import FrozenModel
from desktop_app.core.models.trajectory import TrajectoryKind
from desktop_app.core.models.workflow import Workflow, WorkflowStatus
from desktop_app.core.redaction import scrub_stated_secrets

__all__ = [
    "IndexReport",
    "IndexedEntries",
    "IndexedWorkflow",
    "RunStats",
    "SearchHit",
    "TrajectorySummary",
    "WorkflowMatch",
    "WorkflowSummary",
]


class WorkflowSummary(FrozenModel):
    """A workflow as a library list shows it.

    ``status`` is the workflow's effective status: ``archived`` when every version is archived,
    else ``approved`` when some version is approved (that version runs), else the latest
    version's status.
    """

    id: str
    name: str
    description: str
    domains: tuple[str, ...]
    parameters: tuple[str, ...]
    status: WorkflowStatus
    latest_version: int
    latest_status: WorkflowStatus
    approved_version: int | None
    pinned: bool = False
    created_at: AwareDatetime
    updated_at: AwareDatetime


class RunStats(FrozenModel):
    """How a workflow's runs went: how many, how many succeeded, and when it last ran.

    A run done, unverified (every step ran, nothing showed the task was done) is finished but not
    a success: it counts in ``finished`` and ``unverified``, never in ``succeeded``.
    """

    workflow_id: str
    runs: int
    finished: int
    succeeded: int
    unverified: int = 0
    last_run_at: AwareDatetime | None = None

    @property
    def success_rate(self) -> float | None:
        """Succeeded over finished runs (None before any run finished); runs done, unverified
        count as finished, not as succeeded."""
        return self.succeeded / self.finished if self.finished else None


class TrajectorySummary(FrozenModel):
    """A recording as a list shows it."""

    id: str
    intent: str
    kind: TrajectoryKind
    start: str | None
    started_at: AwareDatetime
    ended_at: AwareDatetime | None
    event_count: int
    raw_event_count: int = 0
    incomplete: bool = False


class IndexedWorkflow(FrozenModel):
    """What the semantic index holds for one workflow: its text and filterable metadata."""

    id: str
    version: int
    status: WorkflowStatus
    name: str
    description: str
    domains: tuple[str, ...]
    parameter_names: tuple[str, ...]
    step_titles: tuple[str, ...]

    @classmethod
    def of(cls, workflow: Workflow, status: WorkflowStatus) -> IndexedWorkflow:
        """The index entry for *workflow* whose effective status is *status* (a secret its
        texts state is masked: the index never holds one)."""
        return cls(
            id=workflow.id,
            version=workflow.version,
            status=status,
            name=scrub_stated_secrets(workflow.name),
            description=scrub_stated_secrets(workflow.description),
            domains=workflow.domains,
            parameter_names=tuple(p.name for p in workflow.parameters),
            step_titles=tuple(scrub_stated_secrets(s.title) for s in workflow.steps),
        )

    def text(self) -> str:
        """The text that gets embedded: name first, then what it does and how."""
        parts = [self.name, self.description]
        if self.parameter_names:
            parts.append("Inputs: " + ", ".join(n.replace("_", " ") for n in self.parameter_names))
        if self.step_titles:
            parts.append("Steps: " + "; ".join(self.step_titles))
        return "\n".join(p for p in parts if p)


class SearchHit(FrozenModel):
    """An index hit: which item and how similar (1 is identical, 0 unrelated)."""

    id: str
    score: float


class WorkflowMatch(FrozenModel):
    """A semantic search result: the workflow and its similarity to the query."""

    workflow: WorkflowSummary
    score: float


class IndexedEntries(FrozenModel):
    """What the search index holds: each workflow's indexed version and status, and the ids
    of the experiences indexed."""

    workflows: dict[str, tuple[int, WorkflowStatus]]
    experiences: frozenset[str]


class IndexReport(FrozenModel):
    """How the search index differed from the stores (ids), and whether it was put right."""

    missing: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()
    missing_experiences: tuple[str, ...] = ()
    extra_experiences: tuple[str, ...] = ()
    fixed: bool = False

    @property
    def consistent(self) -> bool:
        """Whether the index held exactly what the stores hold."""
        return not (
            self.missing
            or self.stale
            or self.extra
            or self.missing_experiences
            or self.extra_experiences
        )
