"""The fleet's Celery application: where rows go, and how they are delivered.

Delivery is at least once: a row's message is acknowledged when its run ended (late ack); a
worker process lost mid-row has its message delivered again (``reject_on_worker_lost``), and a
whole machine lost has it restored by Redis after :attr:`Settings.fleet_redeliver_s`
(the visibility timeout). Each worker takes one message at a time (prefetch 1), so a row never
waits behind a long one on a busy worker while another is idle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from desktop_app.core.errors import StoreError
from desktop_app.settings import Settings

if TYPE_CHECKING:
    from celery import Celery

__all__ = ["QUEUE", "ROW_TASK", "enqueue", "make_app", "queue_url"]

#: The queue the rows go to, and the task that runs one.
QUEUE: Final = "procedura.rows"
ROW_TASK: Final = "procedura.run_row"


def queue_url(settings: Settings) -> str:
    """The broker's URL, with the password from the environment or the keyring.

    Raises:
        StoreError: no queue is set (not a fleet).
    """
    if settings.team_queue is None:
        raise StoreError(
            "no runner fleet is set up: set team_queue (redis://host:6379/0) in team mode"
        )
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(settings.team_queue)
    if parts.scheme not in ("redis", "rediss"):
        raise StoreError(f"setting team_queue: not a Redis URL: {settings.team_queue}")
    if parts.password:
        raise StoreError(
            "setting team_queue holds a password: keep it in PROCEDURA_TEAM_QUEUE_PASSWORD "
            "or the OS keyring"
        )
    import os

    password = os.environ.get("PROCEDURA_TEAM_QUEUE_PASSWORD")
    if password is None:
        from desktop_app.adapters.secrets import get_team_secret

        password = get_team_secret("queue", settings.team_queue)
    if not password:
        return settings.team_queue
    from urllib.parse import quote

    host = parts.netloc.rsplit("@", 1)[-1]
    user = quote(parts.username or "", safe="")
    netloc = f"{user}:{quote(password, safe='')}@{host}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def make_app(settings: Settings) -> Celery:
    """The Celery application of the team's fleet (no connection is made until used)."""
    from celery import Celery

    app = Celery("procedura", broker=queue_url(settings), set_as_current=False)
    transport: dict[str, Any] = {
        "visibility_timeout": settings.fleet_redeliver_s,
        # Look for lost workers' messages on every poll with nothing to do (not 1 in 10).
        "unacked_restore_throttle": 1,
    }
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_ignore_result=True,
        task_serializer="json",
        accept_content=["json"],
        task_default_queue=QUEUE,
        worker_prefetch_multiplier=1,
        worker_hijack_root_logger=False,
        worker_send_task_events=False,
        broker_transport_options=transport,
        broker_connection_retry_on_startup=True,
        enable_utc=True,
        timezone="UTC",
    )
    return app


def enqueue(app: Celery, job_id: str, rows: list[int], *, countdown: float | None = None) -> None:
    """Hand rows of a job to the fleet."""
    with app.producer_or_acquire() as producer:
        for row in rows:
            app.send_task(
                ROW_TASK, args=(job_id, row), queue=QUEUE, producer=producer, countdown=countdown
            )
