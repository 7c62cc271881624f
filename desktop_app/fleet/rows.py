"""What a fleet worker does with a row: claim it, run it, and say how it went.

One :class:`RowRunner` per worker process holds the team's services, one headless browser
(one page, wiped between rows: :mod:`desktop_app.adapters.browser.kept`) and one event loop,
for every row the process runs.

The guarantees (see :mod:`desktop_app.core.models.fleet`):

* A row is run by the worker that claimed it, while its lease lasts; the lease is renewed a
  third of the way through, and a worker that lost it stops before its next step.
* Before an irreversible step acts, the worker notes it in the row, and the note is committed;
  a worker whose row was taken by another meanwhile (its lease ran out) cannot note, and stops.
  A row taken again after its worker vanished is run again from the start only when there is no
  note: everything before an irreversible step is safe to do twice; the step itself never is.
* Only approved versions run; a cancelled job stops before the next step of a running row.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Final

from desktop_app.adapters.browser.kept import KeptBrowser
from desktop_app.adapters.sql.fleet_store import Claim, ClaimOutcome, SqlFleetStore
from desktop_app.app import Services, open_services, replay
from desktop_app.core.errors import ProceduraError
from desktop_app.core.models.fleet import FleetJob, FleetRow, JobKind, RowState
from desktop_app.core.models.run import RunStatus, RunTrigger
from desktop_app.core.models.workflow import ParameterType, WorkflowStatus
from desktop_app.core.replay.ladder import RunAborted
from desktop_app.core.replay.parameters import bind_parameters
from desktop_app.ops.run import replay_options
from desktop_app.settings import Settings

__all__ = ["RowRunner", "worker_name"]

log = logging.getLogger(__name__)

_TRIGGERS: Final = {
    JobKind.BATCH: RunTrigger.BATCH,
    JobKind.INTENT: RunTrigger.INTENT,
    JobKind.SCHEDULE: RunTrigger.SCHEDULE,
}
_ROW_STATES: Final = {
    RunStatus.SUCCEEDED: RowState.SUCCEEDED,
    RunStatus.UNVERIFIED: RowState.UNVERIFIED,
}


def worker_name(suffix: str = "") -> str:
    """This worker's name in rows it runs: host, process, and *suffix*."""
    import os

    return f"{socket.gethostname()}:{os.getpid()}{suffix}"


class _Stop(RunAborted):
    """The job was cancelled, or the row is no longer this worker's."""


class RowRunner:
    """Runs rows for one worker process (open it once, use it for every row, close it)."""

    def __init__(self, settings: Settings, *, name: str | None = None) -> None:
        self._settings = settings
        self.name = name or worker_name()
        self._opened: AbstractContextManager[Services] = open_services(settings, write=True)
        self.services = self._opened.__enter__()
        self.fleet = SqlFleetStore(self.services.engine)
        self._loop = asyncio.Runner()
        withheld = [
            s.get_secret_value()
            for s in (settings.team_password, settings.team_index_token)
            if s is not None
        ]
        self._browser = KeptBrowser(configured=settings.browser, withheld=withheld)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._loop.run(self._browser.close())
        self._loop.close()
        self._opened.__exit__(None, None, None)

    def run(self, job_id: str, row: int) -> ClaimOutcome:
        """Claim a row and, when it is this worker's, run it to the end (blocking)."""
        lease = self._settings.fleet_lease_s
        claim = self.fleet.claim(job_id, row, self.name, lease)
        if claim.outcome is not ClaimOutcome.RUN:
            return claim.outcome
        try:
            state, run_id, error = self._loop.run(self._run(claim))
        except BaseException as exc:
            # The row's state says what happened; the message goes back to the queue only
            # when this process is dying (KeyboardInterrupt, SystemExit).
            self.fleet.finish(
                job_id, row, self.name, RowState.FAILED, error=f"the worker failed: {exc}"
            )
            raise
        self.fleet.finish(job_id, row, self.name, state, run_id=run_id, error=error)
        return ClaimOutcome.RUN

    async def _run(self, claim: Claim) -> tuple[RowState, str | None, str | None]:
        assert claim.row is not None and claim.job is not None
        job, row = claim.job, claim.row
        services = self.services
        try:
            version = await asyncio.to_thread(services.workflows.get, job.workflow_id, job.version)
            if version.status is not WorkflowStatus.APPROVED:
                return (
                    RowState.FAILED,
                    None,
                    (
                        f"version {job.version} of {version.workflow.name!r} is "
                        f"{version.status.value.replace('_', ' ')}, not approved: the fleet runs "
                        "approved versions only"
                    ),
                )
            params = bind_parameters(
                version.workflow, _given(row), secrets=_secrets(job, version.workflow)
            )
        except ProceduraError as exc:
            return RowState.FAILED, None, str(exc)
        options = replay_options(
            self._settings, trigger=_TRIGGERS[job.kind], confirm=not job.assume_yes
        )
        stop = asyncio.Event()
        with self._heartbeat(job, row, stop):

            async def before_step(run_id: str, title: str, irreversible: bool) -> None:
                if stop.is_set():
                    raise _Stop("the fleet job was cancelled before this step")
                if irreversible and not await asyncio.to_thread(
                    self.fleet.note_irreversible, job.id, row.row, self.name, title, run_id
                ):
                    stop.set()
                    raise _Stop(
                        "this worker's hold on the row ran out and another worker has it: "
                        "stopped before the irreversible step"
                    )

            result = await replay(
                services,
                version,
                params,
                options=options,
                headless=True,
                before_step=before_step,
                browser_factory=self._browser.run_context,
            )
        run = result.run
        if run.status is RunStatus.ABORTED and stop.is_set():
            return RowState.CANCELLED, run.id, run.error
        return _ROW_STATES.get(run.status, RowState.FAILED), run.id, run.error

    @contextlib.contextmanager
    def _heartbeat(self, job: FleetJob, row: FleetRow, stop: asyncio.Event) -> Iterator[None]:
        """Renew the lease a third of the way through, on the loop, while the row runs."""
        lease = self._settings.fleet_lease_s

        async def beat() -> None:
            while True:
                await asyncio.sleep(lease / 3)
                try:
                    ended = await asyncio.to_thread(
                        self.fleet.renew, job.id, row.row, self.name, lease
                    )
                except Exception as exc:  # the database is away: try again next beat
                    log.warning("could not renew the lease of row %s: %s", row.row, exc)
                    continue
                if ended:
                    stop.set()

        task = asyncio.get_running_loop().create_task(beat())
        try:
            yield
        finally:
            task.cancel()


def _given(row: FleetRow) -> dict[str, str]:
    return {name: str(value) for name, value in row.values.items() if value is not None}


def _secrets(job: FleetJob, workflow: object) -> dict[str, str]:
    """The workflow's secret values from this worker's keyring (never from the job)."""
    from desktop_app.adapters.secrets import get_parameter_secret
    from desktop_app.core.models.workflow import Workflow

    assert isinstance(workflow, Workflow)
    found: dict[str, str] = {}
    for param in workflow.parameters:
        if param.type is ParameterType.SECRET:
            value = get_parameter_secret(job.workflow_id, param.name)
            if value is not None:
                found[param.name] = value
    return found
