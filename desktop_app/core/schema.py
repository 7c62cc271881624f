"""JSON Schemas of the persisted documents, generated from the models (see docs/schema/)."""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel

from desktop_app.core.models.common import SCHEMA_VERSION, WORKFLOW_SCHEMA_VERSION
from desktop_app.core.models.experience import Experience
from desktop_app.core.models.run import Run
from desktop_app.core.models.trajectory import Trajectory
from desktop_app.core.models.workflow import Workflow

__all__ = ["DOCUMENTS", "json_schema"]

#: Every document type with a published schema.
DOCUMENTS: Final[dict[str, type[BaseModel]]] = {
    "workflow": Workflow,
    "trajectory": Trajectory,
    "run": Run,
    "experience": Experience,
}


def json_schema(document: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of *document* (a key of :data:`DOCUMENTS`)."""
    model = DOCUMENTS[document]
    schema = model.model_json_schema(mode="validation")
    version = WORKFLOW_SCHEMA_VERSION if document == "workflow" else SCHEMA_VERSION
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://procedura.dev/schema/v{version}/{document}.schema.json",
        **schema,
    }
