"""Handing work to the fleet, and following it: submit, progress, cancel, resume."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from desktop_app.adapters.sql.fleet_store import SqlFleetStore
from desktop_app.app import Services
from desktop_app.core.errors import TransitionError
from desktop_app.core.models.common import JsonScalar
from desktop_app.core.models.fleet import FleetJob, JobKind
from desktop_app.core.models.workflow import ParameterType, WorkflowStatus, WorkflowVersion
from desktop_app.core.replay.parameters import bind_parameters
from desktop_app.fleet.queue import enqueue, make_app

__all__ = ["by_intent", "cancel_job", "resume_job", "submit_job"]


def submit_job(
    services: Services,
    version: WorkflowVersion,
    rows: Sequence[Mapping[str, str]],
    *,
    kind: JobKind = JobKind.BATCH,
    assume_yes: bool = False,
) -> FleetJob:
    """Check every row's values against *version* (nothing is queued while one is bad), store
    the job and hand its rows to the fleet.

    Raises:
        TransitionError: *version* is not approved (the fleet runs approved versions only).
        ParameterError: a row's values do not fit (the message names the row).
    """
    if version.status is not WorkflowStatus.APPROVED:
        raise TransitionError(
            f"version {version.version} of {version.workflow.name!r} is not approved: the fleet "
            "runs approved versions only"
        )
    secret = {p.name: "x" for p in version.workflow.parameters if p.type is ParameterType.SECRET}
    checked: list[dict[str, JsonScalar]] = []
    for number, values in enumerate(rows, start=1):
        try:
            bind_parameters(version.workflow, values, secrets=secret)
        except Exception as exc:
            raise type(exc)(f"row {number}: {exc}") from None
        checked.append(dict(values))
    job = FleetJob(
        kind=kind,
        workflow_id=version.workflow_id,
        version=version.version,
        name=version.workflow.name,
        created_by=services.settings.actor,
        assume_yes=assume_yes,
    )
    store = SqlFleetStore(services.engine)
    store.add_job(job, checked)
    enqueue(make_app(services.settings), job.id, list(range(1, len(checked) + 1)))
    return store.job(job.id)


def cancel_job(services: Services, job_id: str) -> int:
    """Stop a job: its queued rows now (how many), running rows before their next step."""
    return SqlFleetStore(services.engine).cancel(job_id)


def resume_job(services: Services, job_id: str) -> list[int]:
    """Queue again a job's cancelled rows and the failed ones that began no irreversible step."""
    rows = SqlFleetStore(services.engine).resume(job_id)
    if rows:
        enqueue(make_app(services.settings), job_id, rows)
    return rows


def by_intent(services: Services, intent: str) -> tuple[WorkflowVersion, dict[str, str], str]:
    """The approved version *intent* asks for, the values the sentence gives, and from where
    (the template or the LLM), decided here, before the fleet has it: a worker runs exactly
    what the person saw (blocking; an LLM call when the template does not fit).

    Raises:
        NotFoundError: no approved workflow does it clearly.
        UnboundIntentError: the sentence leaves a parameter of the template without a value.
    """
    import asyncio

    from desktop_app.app import make_structured_llm
    from desktop_app.core.replay.intent import bind_values, check_bound, find_workflow

    llm = make_structured_llm(services.settings)
    choice = asyncio.run(find_workflow(services.workflows, intent, llm))
    version = services.workflows.runnable(choice.workflow.id)
    binding = asyncio.run(bind_values(version.workflow, intent, llm))
    check_bound(version.workflow, binding.values)
    return version, dict(binding.values), binding.source
