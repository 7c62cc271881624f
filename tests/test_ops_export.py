"""Which version an export writes (desktop_app/ops/export.py), over a real library: the
approved one, else the latest said to be unapproved; any version when asked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import EXAMPLES

from desktop_app.app import Services, open_services
from desktop_app.core.models.workflow import Workflow, WorkflowStatus
from desktop_app.ops.export import version_to_export
from desktop_app.settings import load_settings

DOCUMENT = EXAMPLES / "create-contact.workflow.json"


@pytest.fixture
def services(home: Path) -> Iterator[Services]:
    with open_services(load_settings(), write=True) as opened:
        yield opened


def test_an_export_takes_the_approved_version_not_a_newer_repair(services: Services) -> None:
    workflow = Workflow.model_validate_json(DOCUMENT.read_text(encoding="utf-8"))
    library = services.workflows
    library.save(workflow, actor="tester")
    only_draft = version_to_export(library, workflow.id)
    assert only_draft.version.version == 1 and not only_draft.is_approved
    assert only_draft.wrote("a.py") == (
        'Wrote "Create a contact" v1 (draft: v1 is not approved, and no version of it is) to a.py'
    )

    library.approve(workflow.id, actor="tester", version=1)
    repair = workflow.model_copy(update={"description": "A repair nobody reviewed"})
    library.save(repair, actor="replay", change_note="repaired by a run", parent_version=1)
    library.submit(workflow.id, actor="replay", version=2)
    assert library.get(workflow.id).version == 2  # the latest is the unreviewed repair

    chosen = version_to_export(library, workflow.id[:8])
    assert chosen.version.version == 1 and chosen.is_approved
    assert chosen.wrote("out.json") == 'Wrote "Create a contact" v1 (approved) to out.json'
    asked = version_to_export(library, "Create a contact", 2)  # --version still picks any
    assert asked.version.status is WorkflowStatus.IN_REVIEW
    assert asked.words == '"Create a contact" v2 (in review: v2 is not approved; v1 is)'
