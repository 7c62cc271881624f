"""``procedura worker``: a Celery worker of the team's fleet, running rows in headless Chromium.

Each worker process runs one row at a time (``--concurrency`` processes per machine); it opens
the team's stores and a browser once, and keeps them for every row (:class:`RowRunner`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from desktop_app.fleet.queue import QUEUE, ROW_TASK, make_app
from desktop_app.settings import Settings

if TYPE_CHECKING:
    from celery import Celery

    from desktop_app.fleet.rows import RowRunner

__all__ = ["fleet_app", "run_worker"]

log = logging.getLogger(__name__)


def fleet_app(settings: Settings) -> Celery:
    """The fleet's application with its row task, for a worker (see :func:`run_worker`)."""
    from celery.signals import worker_process_shutdown

    app = make_app(settings)
    held: dict[str, RowRunner] = {}

    def runner() -> RowRunner:
        if "runner" not in held:
            from desktop_app.fleet.rows import RowRunner

            held["runner"] = RowRunner(settings)
        return held["runner"]

    @worker_process_shutdown.connect(weak=False)  # type: ignore[untyped-decorator]
    def _close(**_: Any) -> None:
        found = held.pop("runner", None)
        if found is not None:
            found.close()

    @app.task(name=ROW_TASK, bind=True, max_retries=None)  # type: ignore[untyped-decorator]
    def run_row(task: Any, job_id: str, row: int) -> str:
        from desktop_app.adapters.sql.fleet_store import ClaimOutcome

        outcome = runner().run(job_id, row)
        if outcome is ClaimOutcome.BUSY:  # another worker holds it: look again after its lease
            raise task.retry(countdown=settings.fleet_lease_s)
        return str(outcome.value)

    return app


def run_worker(
    settings: Settings, *, concurrency: int = 1, name: str | None = None, schedules: bool = False
) -> None:
    """Run a worker until it is stopped (Ctrl+C, SIGTERM: the row under way finishes first).
    With *schedules*, it runs the team's scheduler too (:mod:`desktop_app.fleet.beat`).

    Raises:
        StoreError: no queue is set up, or the team's database cannot be opened.
    """
    app = fleet_app(settings)
    argv = [
        "worker",
        f"--queues={QUEUE}",
        f"--concurrency={concurrency}",
        "--pool=prefork",
        "--loglevel=INFO",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]
    if name is not None:
        argv.append(f"--hostname={name}")
    if schedules:
        from desktop_app.fleet.beat import SCHEDULER, use_schedules

        use_schedules(app, settings)
        argv += ["--beat", f"--scheduler={SCHEDULER}"]
    app.worker_main(argv)
