"""Binding a run's parameters: what a user typing --param values, or filling a form, sees."""

from __future__ import annotations

import pytest

from desktop_app.core.errors import ProceduraError
from desktop_app.core.models import MASK, Parameter, ParameterType, Run, Workflow
from desktop_app.core.replay.parameters import (
    BoundParameters,
    ParameterError,
    bind_parameters,
    missing_secrets,
    parse_assignments,
)


def contact_workflow(*extra: Parameter) -> Workflow:
    """A workflow asking for a name, an email, a company, a password and *extra*."""
    return Workflow(
        name="Create a contact",
        parameters=(
            Parameter(name="full_name", description="What to enter in 'Full name'"),
            Parameter(name="email", type=ParameterType.EMAIL),
            Parameter(name="company", required=False),
            Parameter(name="password", type=ParameterType.SECRET),
            *extra,
        ),
    )


def one(param: Parameter, raw: str | None) -> tuple[str, object]:
    """The rendered and typed value *raw* gets for a workflow with only *param*."""
    bound = bind_parameters(
        Workflow(name="One", parameters=(param,)), {} if raw is None else {param.name: raw}
    )
    return bound.values[param.name], bound.typed[param.name]


GOOD = {"full_name": "Ann Lee", "email": "ann@example.test"}
PASSWORD = {"password": "hunter2"}


def test_values_are_bound_in_order_with_optional_ones_empty() -> None:
    bound = bind_parameters(contact_workflow(), GOOD, secrets=PASSWORD)

    assert dict(bound.values) == {
        "full_name": "Ann Lee",
        "email": "ann@example.test",
        "company": "",
        "password": "hunter2",
    }
    assert list(bound.typed) == ["full_name", "email", "company", "password"]
    assert bound.secrets == {"password"}


def test_text_is_kept_exactly() -> None:
    assert one(Parameter(name="note"), "  two  spaces ") == ("  two  spaces ", "  two  spaces ")


# ── errors name the parameter ───────────────────────────────────────────────────────────────


def test_unknown_name_suggests_the_close_one_and_lists_the_rest() -> None:
    with pytest.raises(ParameterError) as caught:
        bind_parameters(contact_workflow(), {**GOOD, "fulname": "Ann"}, secrets=PASSWORD)

    assert str(caught.value) == (
        "unknown parameter 'fulname'; did you mean 'full_name'? "
        "parameters: full_name, email, company"
    )
    assert caught.value.name == "fulname"


def test_unknown_name_without_a_close_one_still_lists_the_parameters() -> None:
    with pytest.raises(ParameterError, match=r"^unknown parameter 'xyz'; parameters: full_name"):
        bind_parameters(contact_workflow(), {**GOOD, "xyz": "1"}, secrets=PASSWORD)


def test_missing_required_says_how_to_give_it() -> None:
    with pytest.raises(ParameterError) as caught:
        bind_parameters(contact_workflow(), {"email": "ann@example.test"}, secrets=PASSWORD)

    assert str(caught.value) == (
        "missing parameter 'full_name' (What to enter in 'Full name'); "
        "give it with --param full_name=VALUE"
    )
    assert caught.value.name == "full_name"


@pytest.mark.parametrize("blank", ["", "   "])
def test_a_blank_required_value_is_missing(blank: str) -> None:
    with pytest.raises(ParameterError, match=r"^missing parameter 'full_name'"):
        bind_parameters(contact_workflow(), {**GOOD, "full_name": blank}, secrets=PASSWORD)


def test_a_value_error_comes_before_a_missing_secret() -> None:
    with pytest.raises(
        ParameterError, match=r"^parameter 'email': 'bob@' is not an email address$"
    ):
        bind_parameters(contact_workflow(), {**GOOD, "email": "bob@"})


def test_parameter_error_is_a_procedura_error() -> None:
    assert issubclass(ParameterError, ProceduraError)


# ── defaults ────────────────────────────────────────────────────────────────────────────────


def test_defaults_are_used_when_not_given_or_blank() -> None:
    seats = Parameter(name="seats", type=ParameterType.NUMBER, default=3)
    agree = Parameter(name="agree", type=ParameterType.BOOL, default=True)
    rate = Parameter(name="rate", type=ParameterType.NUMBER, default=2.5)

    assert one(seats, None) == ("3", 3)
    assert one(seats, " ") == ("3", 3)
    assert one(agree, None) == ("true", True)
    assert one(rate, None) == ("2.5", 2.5)
    assert one(Parameter(name="note", default="hi"), None) == ("hi", "hi")


def test_a_given_value_overrides_the_default() -> None:
    assert one(Parameter(name="seats", type=ParameterType.NUMBER, default=3), "7") == ("7", 7)


def test_a_bad_default_is_blamed_on_the_workflow() -> None:
    start = Parameter(name="start", type=ParameterType.DATE, default="tomorrow")

    with pytest.raises(ParameterError, match=r"^parameter 'start': the workflow's default 'tomorr"):
        one(start, None)


def test_optional_values_without_default_are_empty() -> None:
    assert one(Parameter(name="note", required=False), None) == ("", "")
    assert one(Parameter(name="n", type=ParameterType.NUMBER, required=False), None) == ("", None)


# ── types ───────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("raw", "value", "typed"),
    [
        ("12", "12", 12),
        (" -3 ", "-3", -3),
        ("+007", "7", 7),
        ("12.50", "12.5", 12.5),
        ("12.0", "12.0", 12.0),
        (".5", "0.5", 0.5),
    ],
)
def test_numbers_are_normalised(raw: str, value: str, typed: float) -> None:
    result = one(Parameter(name="amount", type=ParameterType.NUMBER), raw)

    assert result == (value, typed)
    assert type(result[1]) is type(typed)


@pytest.mark.parametrize("raw", ["1,234.5", "1,5", "nan", "inf", "1e3", "twelve", ".", "1_000"])
def test_numbers_are_plain_decimals_only(raw: str) -> None:
    with pytest.raises(ParameterError, match=r"^parameter 'amount': .* is not a number; .*1234\.5"):
        one(Parameter(name="amount", type=ParameterType.NUMBER), raw)


def test_dates_are_iso() -> None:
    assert one(Parameter(name="start", type=ParameterType.DATE), " 2026-11-30") == (
        "2026-11-30",
        "2026-11-30",
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("30.11.2026", "'30.11.2026' is not an ISO date; write it as YYYY-MM-DD: 2026-11-30"),
        ("1.2.2026", "'1.2.2026' is not an ISO date; write it as YYYY-MM-DD: 2026-02-01"),
        ("11/30/2026", "'11/30/2026' is not a date; write it as YYYY-MM-DD, e.g. 2026-11-30"),
        ("2026-02-30", "'2026-02-30' is not a date in the calendar"),
        ("20261130", "'20261130' is not a date; write it as YYYY-MM-DD, e.g. 2026-11-30"),
    ],
)
def test_other_date_spellings_are_refused_helpfully(raw: str, message: str) -> None:
    with pytest.raises(ParameterError) as caught:
        one(Parameter(name="start", type=ParameterType.DATE), raw)

    assert str(caught.value) == f"parameter 'start': {message}"


@pytest.mark.parametrize("raw", ["bob@", "bob", "bob@example", "bo b@example.test", "a@@b.test"])
def test_email_addresses_are_checked(raw: str) -> None:
    with pytest.raises(ParameterError, match=r"^parameter 'email': .* is not an email address$"):
        one(Parameter(name="email", type=ParameterType.EMAIL), raw)


def test_email_loses_surrounding_spaces() -> None:
    email = Parameter(name="email", type=ParameterType.EMAIL)

    assert one(email, " Ann.Lee+crm@mail.example.test ")[0] == "Ann.Lee+crm@mail.example.test"


PLAN = Parameter(name="plan", type=ParameterType.CHOICE, choices=("Free", "Pro", "Enterprise"))


@pytest.mark.parametrize("raw", ["pro", " PRO ", "Pro", "pRo"])
def test_choices_ignore_case_and_spaces_and_give_the_canonical_spelling(raw: str) -> None:
    assert one(PLAN, raw) == ("Pro", "Pro")


def test_a_wrong_choice_lists_the_choices() -> None:
    with pytest.raises(
        ParameterError,
        match=r"^parameter 'plan': 'gold' is not one of the choices: Free, Pro, Enterprise$",
    ):
        one(PLAN, "gold")

    with pytest.raises(ParameterError) as caught:
        one(PLAN, "prp")

    assert str(caught.value) == (
        "parameter 'plan': 'prp' is not one of the choices: Free, Pro, Enterprise; "
        "did you mean 'Pro'?"
    )


def test_an_exact_choice_wins_and_only_a_true_tie_is_refused() -> None:
    size = Parameter(name="size", type=ParameterType.CHOICE, choices=("m", "M"))
    tie = Parameter(name="size", type=ParameterType.CHOICE, choices=("Ab", "aB"))

    assert one(size, "M") == ("M", "M")
    assert one(size, " m ") == ("m", "m")
    with pytest.raises(ParameterError, match=r"^parameter 'size': 'ab' matches more than one"):
        one(tie, "ab")


@pytest.mark.parametrize(
    ("raw", "value", "typed"),
    [
        *[(s, "true", True) for s in ("true", "TRUE", "yes", "Yes", "on", "1", " on ")],
        *[(s, "false", False) for s in ("false", "False", "no", "NO", "off", "0")],
    ],
)
def test_bool_spellings(raw: str, value: str, typed: bool) -> None:
    assert one(Parameter(name="agree", type=ParameterType.BOOL), raw) == (value, typed)


def test_an_unknown_bool_spelling_lists_the_accepted_ones() -> None:
    with pytest.raises(ParameterError) as caught:
        one(Parameter(name="agree", type=ParameterType.BOOL), "maybe")

    assert str(caught.value) == (
        "parameter 'agree': 'maybe' is not true or false; use true/false, yes/no, on/off or 1/0"
    )


def test_a_long_bad_value_is_shortened_in_the_message() -> None:
    with pytest.raises(ParameterError) as caught:
        one(Parameter(name="amount", type=ParameterType.NUMBER), "x" * 500)

    assert len(str(caught.value)) < 200


# ── secrets ─────────────────────────────────────────────────────────────────────────────────


def test_a_secret_given_as_a_plain_value_is_refused_without_showing_it() -> None:
    with pytest.raises(ParameterError) as caught:
        bind_parameters(contact_workflow(), {**GOOD, "password": "hunter2"})

    message = str(caught.value)
    assert message.startswith("parameter 'password' is a secret; it is not accepted")
    assert "--secret-env password=VAR" in message
    assert "hunter2" not in message


def test_a_missing_secret_says_where_secrets_come_from() -> None:
    with pytest.raises(ParameterError) as caught:
        bind_parameters(contact_workflow(), GOOD, secrets={"password": ""})

    assert str(caught.value).startswith("missing secret parameter 'password'; it is read from")


def test_a_secret_for_no_secret_parameter_is_refused() -> None:
    with pytest.raises(ParameterError, match=r"^unknown secret parameter 'pasword'; did you mean"):
        bind_parameters(contact_workflow(), GOOD, secrets={"pasword": "x"})


def test_secrets_are_kept_exactly_and_masked() -> None:
    workflow = contact_workflow()
    bound = bind_parameters(workflow, GOOD, secrets={"password": " pass word "})

    assert bound.values["password"] == " pass word "
    assert bound.secret_values() == (" pass word ",)
    masked = bound.masked()
    assert masked["password"] == MASK
    assert masked["full_name"] == "Ann Lee"
    # The masked values are what a run record accepts.
    Run(
        workflow_id=workflow.id,
        workflow_version=1,
        parameters=masked,
        secret_parameters=tuple(bound.secrets),
    )


def test_secret_values_skip_empty_ones_and_put_longer_first() -> None:
    workflow = contact_workflow(
        Parameter(name="token", type=ParameterType.SECRET),
        Parameter(name="pin", type=ParameterType.SECRET, required=False),
    )
    bound = bind_parameters(workflow, GOOD, secrets={"password": "abc", "token": "abcdef"})

    assert bound.secret_values() == ("abcdef", "abc")
    assert bound.values["pin"] == ""


def test_missing_secrets_are_those_without_a_value() -> None:
    workflow = contact_workflow(Parameter(name="token", type=ParameterType.SECRET))

    assert [p.name for p in missing_secrets(workflow, {})] == ["password", "token"]
    assert [p.name for p in missing_secrets(workflow, {"password": "x", "token": ""})] == ["token"]
    assert missing_secrets(workflow, {"password": "x", "token": "y"}) == []


# ── variables ───────────────────────────────────────────────────────────────────────────────


def test_with_variable_adds_without_changing_the_original() -> None:
    bound = bind_parameters(contact_workflow(), GOOD, secrets=PASSWORD)

    later = bound.with_variable("price", "42")

    assert later.values["price"] == "42" and later.typed["price"] == "42"
    assert "price" not in bound.values
    assert later.secrets == bound.secrets
    assert isinstance(later, BoundParameters)


def test_a_variable_named_like_a_secret_stays_masked() -> None:
    bound = bind_parameters(contact_workflow(), GOOD, secrets=PASSWORD)

    later = bound.with_variable("password", "s3cret")

    assert later.masked()["password"] == MASK
    assert later.secret_values() == ("s3cret",)


def test_bound_values_cannot_be_changed() -> None:
    bound = bind_parameters(contact_workflow(), GOOD, secrets=PASSWORD)

    with pytest.raises(TypeError):
        bound.values["email"] = "x"  # type: ignore[index]


# ── --param NAME=VALUE ──────────────────────────────────────────────────────────────────────


def test_assignments_split_at_the_first_equals_sign() -> None:
    assert parse_assignments(["full_name=Ann Lee", "query=a=b", "note=", " plan =pro"]) == {
        "full_name": "Ann Lee",
        "query": "a=b",
        "note": "",
        "plan": "pro",
    }


@pytest.mark.parametrize(
    ("items", "message"),
    [
        (["full_name"], "--param 'full_name' has no '='; write it as --param NAME=VALUE"),
        (["=Ann"], "a --param has no name before '='; write it as --param NAME=VALUE"),
        (["plan=free", "plan=pro"], "parameter 'plan' is given twice with --param"),
    ],
)
def test_bad_assignments(items: list[str], message: str) -> None:
    with pytest.raises(ParameterError) as caught:
        parse_assignments(items)

    assert str(caught.value) == message


def test_parsed_assignments_bind() -> None:
    given = parse_assignments(["full_name=Ann Lee", "email=ann@example.test", "company=Initech"])

    bound = bind_parameters(contact_workflow(), given, secrets=PASSWORD)

    assert bound.values["company"] == "Initech"
