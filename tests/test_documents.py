"""Loading documents: every bad input gives one line naming the file, JSON path and problem."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import EXAMPLES
from factories import full_trajectory, full_workflow

from desktop_app.core.documents import (
    MAX_WORKFLOW_BYTES,
    dump_document,
    load_trajectory,
    load_workflow,
)
from desktop_app.core.errors import DocumentError


def _example() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EXAMPLES / "create-contact.workflow.json").read_text())
    return data


def _error(data: Any, *, loader: Any = load_workflow) -> str:
    text = data if isinstance(data, str | bytes) else json.dumps(data)
    with pytest.raises(DocumentError) as info:
        loader(text, source="wf.json")
    message = str(info.value)
    assert "\n" not in message
    return message


def test_examples_load() -> None:
    wf = load_workflow((EXAMPLES / "create-contact.workflow.json").read_bytes())
    assert wf.name == "Create a contact"
    tr = load_trajectory((EXAMPLES / "create-contact.trajectory.json").read_bytes())
    assert tr.events[2].is_secret


def test_dump_and_load_are_inverse() -> None:
    wf = full_workflow()
    assert load_workflow(dump_document(wf)) == wf
    tr = full_trajectory()
    assert load_trajectory(dump_document(tr)) == tr


def test_malformed_json_names_line_and_column() -> None:
    assert _error('{"name": "x",\n "steps": [}') == (
        "wf.json: not valid JSON: Expecting value (line 2, column 12)"
    )


def test_not_an_object() -> None:
    assert _error("[1, 2]") == "wf.json: expected a JSON object (a workflow), got an array"


def test_not_utf8() -> None:
    assert "not UTF-8" in _error(b'{"name": "\xff"}')


def test_missing_and_newer_schema_version() -> None:
    data = _example()
    del data["schema_version"]
    assert _error(data).startswith("wf.json at schema_version: missing schema_version")
    data["schema_version"] = 3
    assert "newer than this Procedura understands (2); upgrade Procedura" in _error(data)
    data["schema_version"] = "1"
    assert "whole number" in _error(data)


def test_wrong_document_type() -> None:
    trajectory = json.loads((EXAMPLES / "create-contact.trajectory.json").read_text())
    assert (
        _error(trajectory) == "wf.json at document: this is a trajectory document, not a workflow"
    )


def test_unknown_step_kind() -> None:
    data = _example()
    data["steps"][3]["kind"] = "clik"
    message = _error(data)
    assert message.startswith("wf.json at steps[3].kind: unknown step kind 'clik'; expected one of")
    assert "'click'" in message


def test_unknown_expectation_kind() -> None:
    data = _example()
    data["steps"][0]["expectations"][0]["kind"] = "page"
    assert "at steps[0].expectations[0].kind: unknown expectation kind 'page'" in _error(data)


def test_unknown_parameter_reference() -> None:
    data = _example()
    data["steps"][2]["value"] = "{e_mail}"
    assert _error(data) == (
        "wf.json at steps[2].value: {e_mail} is not a parameter of this workflow nor a "
        "variable an earlier step extracts"
    )


def test_nested_field_errors_carry_their_path() -> None:
    data = _example()
    data["steps"][4]["target"]["locators"][1]["strategy"] = "testid"
    message = _error(data)
    assert message.startswith("wf.json at steps[4].target.locators[1].strategy: Input should be")
    assert "more problem" not in message


def test_misspelt_and_missing_fields() -> None:
    data = _example()
    data["steps"][1]["titel"] = data["steps"][1].pop("title")
    message = _error(data)
    assert "steps[1].title: required field is missing" in message
    assert "(and 1 more problem)" in message


def test_oversized_file_is_refused_before_parsing() -> None:
    big = "x" * (MAX_WORKFLOW_BYTES + 1)
    assert "larger than the 5 MB a workflow may be" in _error(big)


def test_secret_default_and_plain_password() -> None:
    data = _example()
    data["parameters"].append({"name": "pw", "type": "secret", "default": "hunter2"})
    assert _error(data).startswith(
        "wf.json at parameters[3]: a secret parameter cannot have a default"
    )
    trajectory = json.loads((EXAMPLES / "create-contact.trajectory.json").read_text())
    trajectory["events"][2]["value"] = "hunter2"
    message = _error(trajectory, loader=load_trajectory)
    assert message.startswith(
        "wf.json at events[2]: a password field's value is stored in plain text"
    )
    assert "hunter2" not in message


@pytest.mark.parametrize("load", [load_workflow, load_trajectory])
def test_a_document_nested_too_deep_or_with_a_huge_number_is_one_line_not_a_crash(
    load: Any,
) -> None:
    for text, said in [
        ('{"steps": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deep"),
        ('{"schema_version": ' + "1" * 5_000 + "}", "a number with more digits"),
    ]:
        with pytest.raises(DocumentError) as info:
            load(text, source="x.json")
        assert str(info.value).startswith("x.json: not a document: ")
        assert said in str(info.value) and "\n" not in str(info.value)
