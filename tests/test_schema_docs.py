"""The published JSON Schemas match the models, and really validate the documents."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import jsonschema
import pytest
from conftest import EXAMPLES, REPO
from factories import full_trajectory, full_workflow

from desktop_app.core.schema import DOCUMENTS

_spec = importlib.util.spec_from_file_location(
    "generate_schemas", REPO / "scripts" / "generate_schemas.py"
)
assert _spec is not None and _spec.loader is not None
generate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(generate)


@pytest.mark.parametrize("document", sorted(DOCUMENTS))
def test_schema_file_is_current(document: str) -> None:
    path = REPO / "docs" / "schema" / f"{document}.schema.json"
    assert path.exists(), "run: python scripts/generate_schemas.py"
    assert path.read_text() == generate.render(document), (
        f"{path.name} is out of date with the models; run: python scripts/generate_schemas.py"
    )


def _validator(document: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((REPO / "docs" / "schema" / f"{document}.schema.json").read_text())
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize(
    ("document", "path"),
    [
        ("workflow", EXAMPLES / "create-contact.workflow.json"),
        ("trajectory", EXAMPLES / "create-contact.trajectory.json"),
    ],
)
def test_examples_validate_against_the_published_schema(document: str, path: Path) -> None:
    _validator(document).validate(json.loads(path.read_text()))


def test_built_documents_validate_and_a_wrong_one_does_not() -> None:
    _validator("workflow").validate(json.loads(full_workflow().model_dump_json()))
    _validator("trajectory").validate(json.loads(full_trajectory().model_dump_json()))
    bad = json.loads(full_workflow().model_dump_json())
    bad["steps"][0]["kind"] = "teleport"
    assert not _validator("workflow").is_valid(bad)
