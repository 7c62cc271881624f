"""A batch sent to the team's runner fleet from the batch dialog: real PostgreSQL and Redis; the
job is checked in the team's database and its rows in the queue."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fleet_support import RedisServer, order_workflow
from gui_support import Gui, open_gui, top_level, until
from postgres_server import PostgresServer, make_team

from desktop_app.adapters.sql.fleet_store import SqlFleetStore
from desktop_app.core.models.fleet import RowState
from desktop_app.ui.batch_window import BatchDialog, open_batch
from desktop_app.ui.fleet_page import FleetPage

pytestmark = pytest.mark.slow


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    server = RedisServer()
    yield server
    server.stop()


@pytest.fixture
def fleet_gui(
    qapp: Any, postgres: PostgresServer, redis: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Gui]:
    """amy's window (an approver), her team with a fleet."""
    database = make_team(postgres, {"amy": "approver"})
    monkeypatch.setenv(
        "PROCEDURA_TEAM_DATABASE", f"postgresql://amy@127.0.0.1:{postgres.port}/{database}"
    )
    monkeypatch.setenv("PROCEDURA_TEAM_PASSWORD", "amy-pw")
    monkeypatch.setenv("PROCEDURA_TEAM_QUEUE", redis.url())
    with open_gui(qapp) as opened:
        yield opened


def test_a_checked_batch_goes_to_the_fleet_and_the_fleet_screen_shows_it(
    fleet_gui: Gui, redis: RedisServer, tmp_path: Path
) -> None:
    gui = fleet_gui
    services = gui.services
    workflow = order_workflow("http://127.0.0.1:9")

    def approve() -> str:
        saved = services.workflows.save(workflow, actor="amy").version
        return services.workflows.approve(
            workflow.id, actor="amy", version=saved.version
        ).workflow_id

    workflow_id = gui.call(approve)
    people = tmp_path / "orders.csv"
    people.write_text("customer\nAnn\nBob\nCyd\n", encoding="utf-8")
    open_batch(gui.window, workflow_id, people)
    gui.run(until(lambda: len(top_level(BatchDialog)) == 1, what="the batch dialog"))
    dialog: BatchDialog = top_level(BatchDialog)[0]
    gui.run(until(lambda: dialog.plan is not None and not dialog.planning, what="the check"))
    button = dialog.fleet_button
    assert button is not None and button.isEnabled(), button.toolTip() if button else ""

    button.click()
    store = SqlFleetStore(services.engine)
    gui.run(until(lambda: bool(store.jobs()), what="the job stored"))
    job = store.jobs()[0]
    assert (job.workflow_id, job.total) == (workflow_id, 3)
    assert [r.values for r in store.rows(job.id)] == [
        {"customer": "Ann"}, {"customer": "Bob"}, {"customer": "Cyd"}
    ]  # fmt: skip
    assert set(job.counts) == {RowState.QUEUED}
    stack = gui.window._stack
    gui.run(until(lambda: isinstance(stack.currentWidget(), FleetPage), what="the Fleet screen"))
    from celery import Celery

    queued = Celery(broker=redis.url()).connection_for_write().default_channel.client
    assert queued.llen("procedura.rows") == 3  # the three rows wait for a worker
