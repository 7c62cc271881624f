"""Read models the services return: summaries for lists and hits for search."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Final

from pydantic import AwareDatetime

from desktop_app.core.models.common import FrozenModel
from desktop_app.core.models.run import RunStatus
from desktop_app.core.models.trajectory import TrajectoryKind
from desktop_app.core.models.workflow import (
    Parameter,
    ParameterType,
    Workflow,
    WorkflowStatus,
    walk,
)
from desktop_app.core.redaction import scrub_stated_secrets

__all__ = [
    "IndexReport",
    "IndexedEntries",
    "IndexedWorkflow",
    "ReviewItem",
    "RunQuery",
    "RunSort",
    "RunStats",
    "SearchHit",
    "TrajectorySummary",
    "WordMatches",
    "WorkflowMatch",
    "WorkflowSummary",
]

_PLACEHOLDER: Final = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


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
    failing_version: int | None = None
    """The version whose newest finished runs (the last 3 of the workflow) all failed, if any."""

    @property
    def success_rate(self) -> float | None:
        """Succeeded over finished runs (None before any run finished); runs done, unverified
        count as finished, not as succeeded."""
        return self.succeeded / self.finished if self.finished else None


class ReviewItem(FrozenModel):
    """A version waiting for review (status in review: a submitted draft or a repair a replay
    proposed), with what the review queue lists about it."""

    workflow_id: str
    version: int
    name: str
    """The version's own name."""
    created_by: str
    created_at: AwareDatetime
    change_note: str = ""
    submitted_by: str | None = None
    """Who put it in review (None: it was created in review)."""
    submitted_at: AwareDatetime | None = None


class RunSort(StrEnum):
    """What a page of the run history is ordered by."""

    WORKFLOW = "workflow"
    VERSION = "version"
    STATUS = "status"
    TRIGGER = "trigger"
    STARTED = "started"
    DURATION = "duration"
    HEALED = "healed"
    LLM_CALLS = "llm_calls"


class RunQuery(FrozenModel):
    """Which runs a page of the history holds: a filter and an order (ties: newest first)."""

    workflow_id: str | None = None
    status: RunStatus | None = None
    sort: RunSort = RunSort.STARTED
    descending: bool = True


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
    """What the search index holds for one workflow: its text and filterable metadata.

    The embedding index embeds :meth:`embedding_text` (what the workflow does: its name and
    description); the word index holds all of :meth:`text` (that, and what it asks for and
    how). Every text here has passed :func:`scrub_stated_secrets`, and a secret parameter
    contributes its name and description only: the index never holds a secret.
    """

    id: str
    version: int
    status: WorkflowStatus
    name: str
    description: str
    domains: tuple[str, ...]
    parameter_names: tuple[str, ...]
    step_titles: tuple[str, ...]
    intent_template: str = ""
    #: One phrase per parameter: its name in words, its description, choices and default.
    parameter_texts: tuple[str, ...] = ()

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
            step_titles=tuple(scrub_stated_secrets(s.title) for s in walk(workflow.steps)),
            intent_template=scrub_stated_secrets(workflow.intent_template or ""),
            parameter_texts=tuple(_parameter_text(p) for p in workflow.parameters),
        )

    def embedding_text(self) -> str:
        """The text that gets embedded: the name, then the description.

        Only what the workflow does: the inputs and steps of :meth:`text` are mostly the pages
        and fields it shares with every other workflow on the same records, and in a vector of
        a small embedding model they drown the verb that tells them apart.
        """
        return "\n".join(p for p in (self.name, self.description) if p)

    def text(self) -> str:
        """The text the word index holds: name first, then what it does, what it asks for and how
        (placeholders and parameter names in words: ``{full_name}`` is "full name")."""
        inputs = self.parameter_texts or tuple(_in_words(n) for n in self.parameter_names)
        parts = [self.name, self.description, _in_words(self.intent_template)]
        if inputs:
            parts.append("Inputs: " + "; ".join(inputs))
        if self.step_titles:
            parts.append("Steps: " + "; ".join(_in_words(t) for t in self.step_titles))
        if self.domains:
            parts.append("Sites: " + ", ".join(self.domains))
        return "\n".join(p for p in parts if p)


def _in_words(text: str) -> str:
    """*text* with each ``{placeholder}`` and snake_case name written as words."""
    return _PLACEHOLDER.sub(lambda m: m.group(1), text).replace("_", " ")


def _parameter_text(parameter: Parameter) -> str:
    """A parameter as words: name, description, choices and default (a secret: name and
    description only, and never a value)."""
    parts = [_in_words(parameter.name)]
    description = scrub_stated_secrets(parameter.description).strip()
    if description:
        parts.append(f"({description})")
    if parameter.type is not ParameterType.SECRET:
        if parameter.choices:
            parts.append("one of " + ", ".join(scrub_stated_secrets(c) for c in parameter.choices))
        default = parameter.default
        example = "" if default is None or isinstance(default, bool) else str(default)
        if example.strip():
            parts.append("e.g. " + scrub_stated_secrets(example))
    return " ".join(parts)


class SearchHit(FrozenModel):
    """An index hit: which item and how well it matches: from the embedding index, how similar
    (1 is identical, 0 unrelated); from the word index, its BM25 relevance (higher is better,
    unbounded)."""

    id: str
    score: float


class WordMatches(FrozenModel):
    """The workflows that hold every word of a query the word index knows (holds anywhere),
    best first (BM25), and whether it knows every word of the query (None of them known: no
    hits, and not complete)."""

    hits: tuple[SearchHit, ...]
    complete: bool


class WorkflowMatch(FrozenModel):
    """A search result: the workflow and the similarity of its meaning to the query (1 is
    identical, 0 unrelated; 0 too when only its words matched, the embedding index not
    ranking it among its best)."""

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
