"""Locators that learn which of them works: a step's locators ranked by how they did across the
runs of its version (run records built from the real models), and said in words."""

from __future__ import annotations

from desktop_app.core.models.common import utcnow
from desktop_app.core.models.run import Resolution, Run, RunStatus, RunStep, StepStatus
from desktop_app.core.models.target import Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import ClickStep
from desktop_app.core.replay.evidence import evidence_of, ranked

BY_ID = Locator(strategy=LocatorStrategy.CSS, value="#save")
BY_CLASS = Locator(strategy=LocatorStrategy.CSS, value=".btn-save")
BY_NAME = Locator(strategy=LocatorStrategy.ROLE, value="button", name="Save {kind}")
STEP = ClickStep(title="Click 'Save'", target=Target(locators=(BY_ID, BY_CLASS, BY_NAME)))


def _run(resolution: Resolution, locator: Locator | None, *, version: int = 1) -> Run:
    return Run(
        workflow_id="w",
        workflow_version=version,
        status=RunStatus.SUCCEEDED,
        parameters={"kind": "contact"},
        steps=(
            RunStep(
                index=0,
                step_id=STEP.id,
                title=STEP.title,
                status=StepStatus.SUCCEEDED,
                resolution=resolution,
                locator=locator,
                started_at=utcnow(),
                duration_ms=5,
            ),
        ),
    )


def test_the_locator_that_keeps_finding_it_rises_and_the_ones_that_keep_failing_sink() -> None:
    rendered = BY_NAME.model_copy(update={"name": "Save contact"})  # as the runs used it
    runs = [
        _run(Resolution.ALTERNATE, rendered),
        _run(Resolution.ALTERNATE, rendered),
        _run(Resolution.FINGERPRINT, None),
        _run(Resolution.DIRECT, BY_ID, version=2),  # another version: not counted
    ]
    evidence = evidence_of(STEP, 1, runs)
    assert evidence.runs == 3
    assert evidence.found[BY_NAME.describe()] == 2
    assert evidence.failed[BY_ID.describe()] == 3 and evidence.failed[BY_CLASS.describe()] == 3
    assert ranked([BY_ID, BY_CLASS, BY_NAME], evidence) == [BY_NAME, BY_ID, BY_CLASS]
    words = evidence.words(STEP.title)
    assert words is not None and words.startswith("'Click 'Save'' over 3 run(s): ")
    assert 'role=button[name="Save {kind}"] found it in 2' in words


def test_without_runs_the_order_is_kept_and_nothing_is_said() -> None:
    evidence = evidence_of(STEP, 1, [])
    assert ranked([BY_CLASS, BY_ID], evidence) == [BY_CLASS, BY_ID]
    assert evidence.words(STEP.title) is None
