"""On apps nobody here wrote: recorded with ``procedura record web --attach`` as a person does
it, replayed with new values where a search shows two look-alike rows, judged by the app's own
data. The whole corpus runs in ``make bench-realapps`` (bench/real_apps.py); this is its smoke:
one server-rendered app with a sign-in and a confirmation page, one client-side app.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import REPO
from realapps.corpus import APPS

from desktop_app.core.models.run import RunStatus

sys.path.insert(0, str(REPO / "bench"))
import real_apps

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(("app_name", "variant_index", "task_name"), real_apps.SMOKE)
def test_a_recorded_task_replays_right_on_look_alikes_judged_by_the_apps_data(
    app_name: str, variant_index: int, task_name: str, home: Path
) -> None:
    app = next(a for a in APPS if a.name == app_name)
    variant = app.variants[variant_index]
    task = next(t for t in app.tasks if t.name == task_name)
    report = real_apps.Report()
    real_apps.run_task(
        app,
        variant,
        task,
        real_apps.MACHINE,
        replays=task.replays[-1:],  # the look-alike case
        other_variants=(),
        report=report,
    )
    assert not report.failures, report.failures
    (replayed,) = report.replays
    assert replayed.verdict == "right", (replayed.status, replayed.error)
    assert replayed.status is RunStatus.SUCCEEDED, replayed.error
