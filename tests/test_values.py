"""One rule for a value as the text a person types (desktop_app/core/values.py): what the run
form shows as a default, the run record shows, "run again" starts from, and binding reads back."""

from __future__ import annotations

import pytest

from desktop_app.core.models.common import JsonScalar
from desktop_app.core.models.workflow import Parameter, ParameterType, Workflow
from desktop_app.core.replay.parameters import bind_parameters
from desktop_app.core.values import value_text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, ""),
        (True, "true"),
        (False, "false"),
        (3, "3"),
        (2.5, "2.5"),
        (1e-07, "0.0000001"),
        (1e20, "100000000000000000000"),
        ("Acme", "Acme"),
    ],
)
def test_a_value_is_the_text_a_person_would_type(value: JsonScalar, text: str) -> None:
    assert value_text(value) == text


def test_a_default_shown_as_text_binds_back_to_the_same_value() -> None:
    workflow = Workflow(
        name="Amounts",
        parameters=(
            Parameter(name="amount", type=ParameterType.NUMBER, default=1e-07),
            Parameter(name="urgent", type=ParameterType.BOOL, default=True),
        ),
        steps=(),
    )
    shown = {p.name: value_text(p.default) for p in workflow.parameters}
    bound = bind_parameters(workflow, shown)
    assert dict(bound.typed) == {"amount": 1e-07, "urgent": True}
