"""The library's verbs — pin, delete, import — one way for the command line and the Library
screen (desktop_app/ops/library.py), over a real library."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import EXAMPLES

from desktop_app.app import Services, open_services
from desktop_app.core.errors import ConfirmationRequired, DocumentError, NotFoundError
from desktop_app.core.exports.bundle import build_bundle
from desktop_app.core.models.workflow import Workflow
from desktop_app.ops.changes import Origin
from desktop_app.ops.library import (
    check_size,
    delete,
    import_incoming,
    incoming_bytes,
    incoming_file,
    pin,
    unresolved,
)
from desktop_app.settings import load_settings

DOCUMENT = EXAMPLES / "create-contact.workflow.json"


@pytest.fixture
def services(home: Path) -> Iterator[Services]:
    with open_services(load_settings(), write=True) as opened:
        yield opened


def _workflow() -> Workflow:
    return Workflow.model_validate_json(DOCUMENT.read_text(encoding="utf-8"))


def test_pin_says_so_and_delete_needs_a_confirmation(services: Services) -> None:
    workflow = _workflow()
    services.workflows.save(workflow, actor="ann")
    pinned = pin(services.workflows, workflow.id, True, origin=Origin.WINDOW)
    assert pinned.summary == "'Create a contact' is pinned"
    assert services.workflows.list()[0].pinned
    with pytest.raises(ConfirmationRequired, match="for good"):
        delete(services.workflows, workflow.id, confirmed=False, origin=Origin.CLI)
    assert services.workflows.get(workflow.id).version == 1  # nothing went
    gone = delete(services.workflows, workflow.id, confirmed=True, origin=Origin.CLI)
    assert gone.summary == "deleted 'Create a contact'"
    assert gone.changes.workflows == {workflow.id}
    with pytest.raises(NotFoundError):
        services.workflows.get(workflow.id)


def test_a_document_imported_twice_is_said_to_be_unchanged_the_second_time(
    services: Services,
) -> None:
    incoming = incoming_file(DOCUMENT)
    assert incoming.bundle is None
    assert unresolved(services.workflows, incoming, {}) == ()
    first = import_incoming(
        services.workflows, services.media, incoming, actor="ann", origin=Origin.WINDOW
    )
    workflow_id = _workflow().id
    assert first.workflow_id == workflow_id
    assert first.summary == f"imported 'Create a contact' as {workflow_id[:8]} version 1 (draft)"
    assert first.changes.workflows == {workflow_id}
    again = import_incoming(
        services.workflows, services.media, incoming, actor="ann", origin=Origin.WINDOW
    )
    assert again.workflow_id is None
    assert again.summary == "'Create a contact' is unchanged (version 1); nothing imported"
    assert again.changes.empty
    assert services.workflows.get(workflow_id).version == 1


def test_a_bundle_that_conflicts_is_imported_only_once_the_conflict_is_settled(
    services: Services,
) -> None:
    workflow = _workflow()
    saved = services.workflows.save(workflow, actor="ann")
    data = build_bundle(services.workflows, services.media, saved.version)
    services.workflows.save(
        workflow.model_copy(update={"description": "changed here since"}), actor="ann"
    )
    incoming = incoming_bytes(data, "contact.procedura")
    assert incoming.bundle is not None
    (conflict,) = unresolved(services.workflows, incoming, {})
    assert conflict.workflow_id == workflow.id
    assert unresolved(services.workflows, incoming, {workflow.id: "keep-both"}) == ()
    done = import_incoming(
        services.workflows,
        services.media,
        incoming,
        actor="bob",
        origin=Origin.WINDOW,
        choices={workflow.id: "keep-both"},
    )
    assert done.summary == "bundle contact.procedura: 'Create a contact'"
    assert done.workflow_id is not None and done.workflow_id != workflow.id
    assert done.changes.workflows == {done.workflow_id}
    assert "kept both: imported as" in done.details[0]
    assert services.workflows.get(done.workflow_id).version == 1


def test_a_file_too_large_to_import_is_refused_before_it_is_read(tmp_path: Path) -> None:
    huge = tmp_path / "huge.procedura"
    with huge.open("wb") as file:
        file.truncate(513 * 2**20)  # sparse: nothing is really written
    with pytest.raises(DocumentError, match="larger than the 512 MiB an import may be"):
        check_size(huge)
    with pytest.raises(DocumentError, match="larger than"):
        incoming_file(huge)
