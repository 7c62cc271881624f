"""Inducing a draft: one LLM policy and one way for the command line and the windows
(desktop_app/ops/induce.py), over a real library."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from fakes.openai_server import FakeOpenAIServer

from desktop_app.app import Services, make_structured_llm, open_services
from desktop_app.core.induction.cancel import InductionCancelled
from desktop_app.core.induction.multi import NotTheSameTaskError
from desktop_app.core.llm import LLMUnavailable, StructuredLLM
from desktop_app.core.models.trajectory import TrajectoryKind
from desktop_app.ops.changes import Origin
from desktop_app.ops.induce import LlmUse, choose_llm, induce
from desktop_app.ops.record import delete_recording, keep_recording
from desktop_app.settings import load_settings

DATA = REPO / "tests" / "data"
_BY: dict[str, Any] = {"actor": "ann", "origin": Origin.WINDOW}


@pytest.fixture
def services(home: Path) -> Iterator[Services]:
    with open_services(load_settings(), write=True) as opened:
        yield opened


def _none() -> StructuredLLM | None:
    return None


def _never() -> StructuredLLM | None:
    raise AssertionError("the LLM was looked for while it was not to be used")


def test_the_llm_is_used_when_configured_needed_when_asked_for_and_never_when_refused() -> None:
    assert choose_llm(LlmUse.OFF, _never) is None
    assert choose_llm(LlmUse.AUTO, _none) is None
    with pytest.raises(LLMUnavailable, match="set OPENAI_API_KEY or PROCEDURA_LLM_BASE_URL"):
        choose_llm(LlmUse.ON, _none)


def test_several_recordings_of_one_task_make_one_draft_with_what_varies(
    services: Services,
) -> None:
    ids = [
        services.trajectories.import_json(
            (DATA / f"{name}.trajectory.json").read_text(encoding="utf-8")
        ).id
        for name in ("create-contact", "create-contact-2", "create-contact-3")
    ]
    induced = induce(
        services.trajectories, services.workflows, ids, actor="ann", origin=Origin.WINDOW
    )
    workflow = induced.saved.version.workflow
    assert induced.summary == (
        f"induced 'Create a contact' as {workflow.id[:8]} version 1 (draft): 4 parameters, 10 steps"
    )
    assert induced.alignment is not None and len(induced.recordings) == 3
    assert induced.changes.workflows == {workflow.id}
    assert induced.changes.origin is Origin.WINDOW
    assert services.workflows.get(workflow.id).created_by == "ann"


def test_an_empty_recording_is_not_kept_and_a_deleted_one_says_which(
    services: Services,
) -> None:
    text = (DATA / "open-contact.trajectory.json").read_text(encoding="utf-8")
    recording = services.trajectories.import_json(text)
    kept = keep_recording(services.trajectories, recording, origin=Origin.CLI)
    assert kept.trajectory == recording
    empty = services.trajectories.import_json(
        recording.model_copy(update={"id": "0" * 32, "events": ()}).model_dump_json()
    )
    gone = keep_recording(services.trajectories, empty, origin=Origin.WINDOW)
    assert gone.trajectory is None
    assert gone.changes.recordings == {empty.id}
    assert [s.id for s in services.trajectories.list()] == [recording.id]
    removed = delete_recording(
        services.trajectories, recording.id[:8], confirmed=True, origin=Origin.CLI
    )
    assert removed.summary == f"deleted the recording “{recording.intent}” ({recording.id[:8]})"
    assert services.trajectories.list() == []


def test_recordings_of_different_kinds_or_sites_are_refused_and_nothing_is_saved(
    services: Services,
) -> None:
    text = (DATA / "create-contact.trajectory.json").read_text(encoding="utf-8")
    web = services.trajectories.import_json(text)
    elsewhere = services.trajectories.import_json(
        web.model_copy(
            update={
                "id": "e" * 32,
                "start_url": "https://crm.example.com/login",
                "events": tuple(
                    e.model_copy(
                        update={"before": e.before.model_copy(update={"url": None})}
                        if e.before
                        else {}
                    )
                    for e in web.events
                ),
            }
        ).model_dump_json()
    )
    desktop = services.trajectories.import_json(
        web.model_copy(
            update={"id": "d" * 32, "kind": TrajectoryKind.DESKTOP, "start_url": None}
        ).model_dump_json()
    )
    with pytest.raises(NotTheSameTaskError, match=r"\(web\) and d{8} \(desktop\) cannot be"):
        induce(services.trajectories, services.workflows, [web.id, desktop.id], **_BY)
    with pytest.raises(NotTheSameTaskError, match=r"\(127.0.0.1\) and e{8} \(crm.example.com\)"):
        induce(services.trajectories, services.workflows, [web.id, elsewhere.id], **_BY)
    assert services.workflows.count()[0] == 0


def test_a_cancelled_induction_saves_nothing_even_while_the_llm_is_thinking(
    llm: FakeOpenAIServer, services: Services
) -> None:
    text = (DATA / "create-contact.trajectory.json").read_text(encoding="utf-8")
    recording = services.trajectories.import_json(text)
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(InductionCancelled, match="no draft was saved"):
        induce(services.trajectories, services.workflows, [recording.id], cancel=cancel, **_BY)
    assert llm.requests == []  # stopped before it asked

    gate = llm.hold("/v1/chat/completions")
    cancel = threading.Event()
    model = choose_llm(LlmUse.ON, lambda: make_structured_llm(services.settings))
    try:
        with ThreadPoolExecutor(1) as pool:
            job = pool.submit(
                induce,
                services.trajectories,
                services.workflows,
                [recording.id],
                llm=model,
                cancel=cancel,
                **_BY,
            )
            deadline = time.monotonic() + 30
            while not llm.requests_to("/v1/chat/completions"):  # the LLM has been asked
                assert time.monotonic() < deadline, "the LLM was never asked"
                time.sleep(0.02)
            cancel.set()
            with pytest.raises(InductionCancelled):
                job.result(timeout=10)  # at once, not when the LLM answers
    finally:
        gate.set()
    assert services.workflows.count()[0] == 0
    assert [s.id for s in services.trajectories.list()] == [recording.id]
