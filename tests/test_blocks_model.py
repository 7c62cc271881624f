"""Workflow documents with blocks (schema version 2): what they accept, what they refuse with
the place and the reason, and version 1 documents read as version 2."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import EXAMPLES

from desktop_app.core.documents import load_workflow
from desktop_app.core.errors import DocumentError
from desktop_app.core.models.workflow import (
    ForEachStep,
    GotoStep,
    IfStep,
    ListItems,
    TextPresent,
    ValueCompare,
    Workflow,
    map_steps,
    walk,
)
from desktop_app.core.replay.conditions import as_number, compare


def _doc(steps: list[dict[str, Any]], **extra: Any) -> str:
    return json.dumps(
        {
            "schema_version": 2,
            "document": "workflow",
            "name": "Blocks",
            "parameters": [{"name": "names", "type": "list"}, {"name": "pin", "type": "secret"}],
            "steps": steps,
            **extra,
        }
    )


def _loop(*inner: dict[str, Any], item: str = "name", over: str = "{names}") -> dict[str, Any]:
    return {
        "kind": "for_each",
        "title": "Each name",
        "item": item,
        "over": {"kind": "list", "value": over},
        "steps": list(inner),
    }


def _goto(url: str, step_id: str | None = None) -> dict[str, Any]:
    step = {"kind": "goto", "title": "Open", "url": url}
    return step | ({"id": step_id} if step_id else {})


def _error(text: str) -> str:
    with pytest.raises(DocumentError) as info:
        load_workflow(text, source="wf.json")
    return str(info.value)


def test_a_version_1_workflow_reads_as_version_2_unchanged() -> None:
    raw = json.loads((EXAMPLES / "create-contact.workflow.json").read_text())
    raw["schema_version"] = 1
    workflow = load_workflow(json.dumps(raw))
    assert workflow.schema_version == 2
    assert workflow.model_dump(mode="json", exclude={"schema_version"}) == {
        k: v for k, v in Workflow.model_validate(raw).model_dump(mode="json").items()
        if k != "schema_version"
    }  # fmt: skip


def test_nested_blocks_round_trip_and_walk_in_order() -> None:
    text = _doc(
        [
            _loop(
                {
                    "kind": "if",
                    "title": "If it is Ann",
                    "condition": {"kind": "value", "value": "{name}", "op": "equals", "to": "Ann"},
                    "steps": [_goto("https://a.test/{name}", "inner")],
                    "otherwise": [_goto("https://a.test/other", "other")],
                }
            )
        ]
    )
    workflow = load_workflow(text)
    assert [s.kind for s in walk(workflow.steps)] == ["for_each", "if", "goto", "goto"]
    assert Workflow.model_validate_json(workflow.model_dump_json()) == workflow
    renamed = map_steps(
        workflow.steps,
        lambda step, in_loop: step.model_copy(update={"title": f"{step.title} ({in_loop})"}),
    )
    assert [s.title for s in walk(renamed) if isinstance(s, GotoStep)] == [
        "Open (True)",
        "Open (True)",
    ]


def test_a_loop_item_is_known_inside_the_loop_only() -> None:
    assert "steps[1].url: {name} is not a parameter" in _error(
        _doc([_loop(_goto("https://a.test/{name}")), _goto("https://a.test/{name}")])
    )


def test_a_loop_item_may_not_hide_a_parameter() -> None:
    assert "steps[0].item: {names} is already a parameter" in _error(
        _doc([_loop(_goto("https://a.test/"), item="names")])
    )


def test_a_loop_never_goes_over_a_secret() -> None:
    assert "a loop cannot go over a secret" in _error(
        _doc([_loop(_goto("https://a.test/"), over="{pin}")])
    )


def test_step_ids_are_unique_through_blocks() -> None:
    assert "steps[1].steps[0].id: step id 'x' is used twice" in _error(
        _doc([_goto("https://a.test/", "x"), _loop(_goto("https://a.test/", "x"))])
    )


def test_blocks_nest_at_most_six_deep() -> None:
    step: dict[str, Any] = _goto("https://a.test/")
    for depth in range(7):
        step = _loop(step, item=f"n{depth}")
    assert "blocks nest more than 6 deep" in _error(_doc([step]))


def test_an_if_that_does_nothing_either_way_is_refused() -> None:
    empty = {"kind": "if", "title": "If", "condition": {"kind": "text", "text": "x"}}
    assert "an if does something when it holds or not" in _error(_doc([empty]))


def test_a_variable_a_branch_extracts_is_known_after_the_block() -> None:
    extract = {
        "kind": "extract",
        "title": "Read",
        "variable": "total",
        "target": {"locators": [{"strategy": "css", "value": "#total"}]},
    }
    workflow = load_workflow(
        _doc(
            [
                {"kind": "if", "title": "If", "condition": {"kind": "text", "text": "Total"},
                 "steps": [extract]},
                _goto("https://a.test/{total}"),
            ]
        )
    )  # fmt: skip
    assert isinstance(workflow.steps[0], IfStep)


def test_a_newer_workflow_schema_is_refused_with_the_version_this_reads() -> None:
    raw = json.loads(_doc([_goto("https://a.test/")]))
    raw["schema_version"] = 3
    assert "newer than this Procedura understands (2)" in _error(json.dumps(raw))


def test_blocks_built_in_code_validate_like_documents() -> None:
    with pytest.raises(ValueError, match="is not a parameter"):
        Workflow(
            name="W",
            steps=(
                ForEachStep(title="Each", over=ListItems(value="{missing}"),
                            steps=(GotoStep(title="Open", url="https://a.test/"),)),
            ),
        )  # fmt: skip
    assert IfStep(title="If", condition=TextPresent(text="x"), steps=(GotoStep(
        title="Open", url="https://a.test/"),)).timeout_s == 1.0  # fmt: skip


@pytest.mark.parametrize(
    ("value", "op", "to", "holds"),
    [
        ("Unpaid ", "equals", "unpaid", True),
        ("1,250.00", "greater", "1000", True),
        ("$ 99.50", "less", "100", True),
        ("n/a", "greater", "0", False),
        ("1 of 2", "greater", "0", False),
        ("10", "equals", "10.0", True),
        ("INV-10", "equals", "INV-10.0", False),
        ("Ann Lee", "contains", "lee", True),
        ("Ann Lee", "not_contains", "Bob", True),
        ("  ", "empty", "", True),
        ("x", "not_empty", "", True),
        ("INV-007", "matches", r"^INV-\d{3}$", True),
    ],
)
def test_a_value_comparison_reads_text_and_numbers_as_a_person_would(
    value: str, op: str, to: str, holds: bool
) -> None:
    assert compare(ValueCompare(value=value, op=op, to=to)) is holds  # type: ignore[arg-type]


def test_a_number_is_read_only_when_there_is_exactly_one() -> None:
    assert as_number("Total: 1,234.5 EUR") == 1234.5
    assert as_number("2 of 3") is None
    assert as_number("none") is None
