"""Reading and writing persisted documents (workflows, trajectories) as JSON, with helpful errors.

Every problem becomes one :class:`~desktop_app.core.errors.DocumentError` naming the source, the
JSON path and what is wrong, e.g. ``contact.json at steps[3].kind: unknown step kind 'clik';
expected one of goto, click, …``.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final, TypeVar

from pydantic import BaseModel, ValidationError

from desktop_app.core.errors import DocumentError
from desktop_app.core.models.common import ID_PATTERN, SCHEMA_VERSION, DocumentPathError
from desktop_app.core.models.trajectory import Trajectory
from desktop_app.core.models.workflow import Workflow

__all__ = [
    "MAX_TRAJECTORY_BYTES",
    "MAX_WORKFLOW_BYTES",
    "dump_document",
    "load_trajectory",
    "load_workflow",
    "parse_document",
]

#: The largest workflow file accepted (workflows are small; this stops a wrong file early).
MAX_WORKFLOW_BYTES: Final = 5 * 1024 * 1024
#: The largest trajectory file accepted (ARIA snapshots make trajectories larger).
MAX_TRAJECTORY_BYTES: Final = 100 * 1024 * 1024

M = TypeVar("M", bound=BaseModel)


def dump_document(model: BaseModel) -> str:
    """*model* as pretty, stable JSON text (what export writes)."""
    return model.model_dump_json(indent=2) + "\n"


def load_workflow(data: bytes | str, *, source: str = "") -> Workflow:
    """Parse and validate a workflow document.

    Raises:
        DocumentError: the text is too large, not JSON, of another schema version or kind of
            document, or invalid; nothing is returned in part.
    """
    return parse_document(data, Workflow, "workflow", MAX_WORKFLOW_BYTES, source=source)


def load_trajectory(data: bytes | str, *, source: str = "") -> Trajectory:
    """Parse and validate a trajectory document (errors as for :func:`load_workflow`)."""
    return parse_document(data, Trajectory, "trajectory", MAX_TRAJECTORY_BYTES, source=source)


def parse_document(
    data: bytes | str, model: type[M], document: str, max_bytes: int, *, source: str = ""
) -> M:
    """Parse *data* as a *document* of type *model*. See :func:`load_workflow`."""
    size = len(data.encode() if isinstance(data, str) else data)
    if size > max_bytes:
        raise DocumentError(
            f"file is {size / 1e6:.1f} MB, "
            f"larger than the {max_bytes / 1e6:.0f} MB a {document} may be",
            source=source,
        )
    try:
        raw = json.loads(data)
    except UnicodeDecodeError:
        raise DocumentError("not UTF-8 text", source=source) from None
    except json.JSONDecodeError as exc:
        raise DocumentError(
            f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})", source=source
        ) from None
    except RecursionError:
        raise DocumentError(
            "not a document: arrays or objects nested too deep", source=source
        ) from None
    except ValueError:  # Python's own limit on digits (a number of thousands of them)
        raise DocumentError(
            "not a document: a number with more digits than any field takes", source=source
        ) from None
    if not isinstance(raw, dict):
        raise DocumentError(
            f"expected a JSON object (a {document}), got {_json_type(raw)}", source=source
        )
    kind = raw.get("document")
    if kind is not None and kind != document:
        raise DocumentError(
            f"this is a {kind} document, not a {document}", path="document", source=source
        )
    if "schema_version" not in raw:
        raise DocumentError(
            f"missing schema_version (this Procedura reads version {SCHEMA_VERSION})",
            path="schema_version",
            source=source,
        )
    version = raw["schema_version"]
    if not isinstance(version, int) or isinstance(version, bool):
        raise DocumentError(
            f"schema_version must be a whole number, got {version!r}",
            path="schema_version",
            source=source,
        )
    if version > SCHEMA_VERSION:
        raise DocumentError(
            f"schema_version {version} is newer than this Procedura understands "
            f"({SCHEMA_VERSION}); "
            "upgrade Procedura to read it",
            path="schema_version",
            source=source,
        )
    if version < 1:
        raise DocumentError(
            f"schema_version {version} does not exist", path="schema_version", source=source
        )
    try:
        parsed = model.model_validate(raw)
    except ValidationError as exc:
        raise _document_error(exc, raw, source) from None
    given = getattr(parsed, "id", None)
    if isinstance(given, str) and not re.fullmatch(ID_PATTERN, given):
        raise DocumentError(
            "an id is 1 to 64 letters, digits, '_', '.' or '-', beginning with a letter or "
            f"a digit; got {given[:64]!r}",
            path="id",
            source=source,
        )
    return parsed


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if value is None:
        return "null"
    return f"a {type(value).__name__}"


def _document_error(exc: ValidationError, raw: Any, source: str) -> DocumentError:
    """The first validation error of *exc*, as a one-line DocumentError with a JSON path."""
    first = exc.errors(include_url=False)[0]
    loc = list(first["loc"])
    path, node = _json_path(loc, raw)
    kind = first["type"]
    ctx = first.get("ctx") or {}
    error = ctx.get("error")
    if isinstance(error, DocumentPathError):
        nested = error.path
        if nested:
            path = f"{path}.{nested}" if path and not nested.startswith("[") else path + nested
        return DocumentError(error.message, path=path, source=source)
    message = first["msg"]
    if kind == "union_tag_invalid":
        tag = ctx.get("tag")
        expected = ctx.get("expected_tags", "")
        noun = "step kind" if path.startswith("steps[") and path.endswith("]") else "kind"
        if path.endswith("expectations]") or "expectations[" in path.rsplit(".", 1)[-1]:
            noun = "expectation kind"
        message = f"unknown {noun} {tag!r}; expected one of {expected}"
        path = f"{path}.kind" if path else "kind"
    elif kind == "union_tag_not_found":
        message = "missing 'kind'"
        path = f"{path}.kind" if path else "kind"
    elif kind == "extra_forbidden":
        message = "unknown field (check its spelling)"
    elif kind == "missing":
        message = "required field is missing"
    elif kind == "value_error" and message.startswith("Value error, "):
        message = message.removeprefix("Value error, ")
    elif kind == "literal_error" and isinstance(node, dict | list | str | int | float | bool):
        message = f"{message}, got {node!r}"
    first_loc = tuple(first["loc"])
    more = sum(
        1
        for other in exc.errors(include_url=False)[1:]
        if tuple(other["loc"]) != first_loc[: len(other["loc"])]
    )
    if more:
        message += f" (and {more} more problem{'s' if more > 1 else ''})"
    return DocumentError(message, path=path, source=source)


def _json_path(loc: list[int | str], raw: Any) -> tuple[str, Any]:
    """Render a pydantic error location as a JSON path, dropping discriminated-union tags."""
    path = ""
    node: Any = raw
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
            node = node[part] if isinstance(node, list) and -len(node) <= part < len(node) else None
            continue
        if isinstance(node, dict) and part not in node and node.get("kind") == part:
            continue  # the tag pydantic adds for a discriminated union member
        path = f"{path}.{part}" if path else part
        node = node.get(part) if isinstance(node, dict) else None
    return path, node
