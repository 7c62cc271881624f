"""Editing operations on a workflow (the step editor's core) and the problems it reports inline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from factories import full_workflow

from desktop_app.core import editing
from desktop_app.core.documents import dump_document, load_trajectory, load_workflow
from desktop_app.core.editing import EditError
from desktop_app.core.induction.heuristic import induce
from desktop_app.core.models.target import ItemScope, Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import (
    ClickStep,
    ElementVisible,
    ExtractStep,
    FillStep,
    GotoStep,
    Parameter,
    ParameterType,
    TextPresent,
    UrlMatches,
    Workflow,
)
from desktop_app.core.templating import placeholders

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def contact() -> Workflow:
    """The workflow induced from the create-contact recording (10 steps, 6 parameters)."""
    text = (DATA / "create-contact.trajectory.json").read_text(encoding="utf-8")
    return induce(load_trajectory(text, source="create-contact")).workflow


def titles(workflow: Workflow) -> list[str]:
    return [step.title for step in workflow.steps]


def problems(workflow: Workflow) -> list[str]:
    return [str(issue) for issue in editing.validate(workflow)]


# ── steps ───────────────────────────────────────────────────────────────────────────────────


def test_the_recorded_workflow_has_no_problems(contact: Workflow) -> None:
    assert editing.validate(contact) == []


def test_insert_delete_duplicate_and_move_return_new_workflows(contact: Workflow) -> None:
    before = titles(contact)
    inserted = editing.insert_step(contact, 1, editing.blank_step("press"))
    assert titles(inserted) == [before[0], "Press Enter", *before[1:]]
    assert titles(contact) == before  # the original is untouched

    duplicated = editing.duplicate_step(contact, 3)
    assert titles(duplicated) == [*before[:4], before[3], *before[4:]]
    assert duplicated.steps[3].id != duplicated.steps[4].id
    assert duplicated.steps[4].model_dump(exclude={"id"}) == contact.steps[3].model_dump(
        exclude={"id"}
    )

    moved = editing.move_step(contact, 9, 0)
    assert titles(moved) == [before[9], *before[:9]]
    assert titles(editing.move_step(moved, 0, 9)) == before

    deleted = editing.delete_step(contact, 0)
    assert titles(deleted) == before[1:]


def test_a_step_inserted_twice_gets_a_new_id(contact: Workflow) -> None:
    again = editing.insert_step(contact, 0, contact.steps[5])
    assert len({step.id for step in again.steps}) == len(again.steps)


def test_out_of_range_steps_are_refused_with_a_readable_message(contact: Workflow) -> None:
    with pytest.raises(EditError, match="there is no step 11"):
        editing.delete_step(contact, 10)
    with pytest.raises(EditError, match="position 11"):
        editing.move_step(contact, 0, 10)


def test_update_step_checks_values_as_the_model_does(contact: Workflow) -> None:
    edited = editing.update_step(
        contact, 3, title="Sign in", timeout_s=2.5, irreversible=True, optional=True
    )
    step = edited.steps[3]
    assert (step.title, step.timeout_s, step.irreversible, step.optional) == (
        "Sign in",
        2.5,
        True,
        True,
    )
    with pytest.raises(EditError, match="timeout_s: input should be greater than 0"):
        editing.update_step(contact, 3, timeout_s=0)
    with pytest.raises(EditError, match="has no field 'value'"):
        editing.update_step(contact, 3, value="x")
    with pytest.raises(EditError, match="true, false or one"):
        editing.update_step(contact, 8, checked="maybe")
    with pytest.raises(EditError, match="kind and id cannot be changed"):
        editing.update_step(contact, 3, kind="fill")


def test_an_empty_title_is_allowed_while_editing_but_blocks_saving(contact: Workflow) -> None:
    draft = editing.update_step(contact, 1, title="")
    assert draft.steps[1].title == ""
    [issue] = editing.validate(draft)
    assert (issue.severity, issue.step, issue.field) == ("error", 1, "title")
    assert issue.where == "Step 2 · title"
    with pytest.raises(EditError, match="cannot save yet: Step 2 · title: the step has no title"):
        editing.finalize(draft)


def test_locators_can_be_reordered_emptied_and_given_back(contact: Workflow) -> None:
    locators = contact.steps[1].target_or_none.locators  # type: ignore[union-attr]
    reordered = editing.set_locators(contact, 1, tuple(reversed(locators)))
    target = reordered.steps[1].target_or_none
    assert target is not None and target.locators == tuple(reversed(locators))
    assert target.fingerprint == contact.steps[1].target_or_none.fingerprint  # type: ignore[union-attr]

    emptied = editing.set_locators(contact, 1, ())
    [issue] = editing.validate(emptied)
    assert (issue.step, issue.field) == (1, "target")
    assert "no locator" in issue.message
    back = editing.set_locators(emptied, 1, locators[:1])
    assert editing.validate(back) == []

    pressed = editing.insert_step(contact, 0, editing.blank_step("press"))
    pressed = editing.set_locators(pressed, 0, ())
    assert pressed.steps[0].target_or_none is None
    with pytest.raises(EditError, match="does not act on an element"):
        editing.set_locators(contact, 0, locators)


def test_blank_steps_say_what_they_still_need() -> None:
    workflow = Workflow(name="New")
    for kind in editing.INSERTABLE_KINDS:
        workflow = editing.insert_step(workflow, len(workflow.steps), editing.blank_step(kind))
    found = {(issue.step, issue.field): issue.message for issue in editing.validate(workflow)}
    kinds = [step.kind for step in workflow.steps]
    assert found[(kinds.index("goto"), "url")] == "say which address to open"
    for kind in editing.TARGETED_KINDS:
        assert "no locator" in found[(kinds.index(kind), "target")]
    assert found[(kinds.index("wait_for"), "condition.text")] == "say which text to look for"
    assert found[(kinds.index("agent"), "instruction")] == "say what the assistant should do"
    assert (kinds.index("press"), "key") not in found
    with pytest.raises(EditError, match="record it instead"):
        editing.blank_step("call")


# ── parameters ──────────────────────────────────────────────────────────────────────────────


def test_rename_rewrites_every_placeholder_and_nothing_else() -> None:
    workflow = full_workflow()
    workflow = editing.update_step(workflow, 1, title="Fill 'Email' with {user} ({{user}})")
    workflow = editing.set_locators(
        workflow, 1, (Locator(strategy=LocatorStrategy.CSS, value="input[name='{user}']"),)
    )
    renamed = editing.rename_parameter(workflow, "user", "login_email")

    assert renamed.parameter("user") is None
    assert renamed.parameter("login_email") is not None
    assert renamed.intent_template == "Sign {login_email} up for the {plan} plan"
    step = renamed.steps[1]
    assert isinstance(step, FillStep)
    assert step.title == "Fill 'Email' with {login_email} ({{user}})"
    assert step.value == "{login_email}"
    assert step.target.locators[0].value == "input[name='{login_email}']"
    call = renamed.steps[11]
    assert call.arguments == {"email": "{login_email}"}  # type: ignore[union-attr]
    text = dump_document(renamed)
    assert "user" not in placeholders(text)
    # Recorded data is not a template: the fingerprint still says what was recorded.
    assert renamed.steps[2].target_or_none == workflow.steps[2].target_or_none
    assert load_workflow(text).parameter("login_email") is not None


def test_text_that_mentions_a_renamed_parameter_follows_it(contact: Workflow, home: Path) -> None:
    from desktop_app.app import open_services
    from desktop_app.settings import load_settings

    assert "Asks for: username, password, full name, email" in contact.description
    wf = editing.update_step(contact, 4, title="Click 'New contact' to type the full name")
    renamed = editing.rename_parameter(wf, "full_name", "contact_name")
    assert "Asks for: username, password, contact name, email" in renamed.description
    assert "full name" not in renamed.description.lower()
    assert renamed.steps[4].title == "Click 'New contact' to type the contact name"
    # What the page showed stays as recorded: the field is still labelled 'Full name'.
    assert renamed.steps[5].title == "Fill 'Full name' with {contact_name}"
    assert renamed.intent_template == "Create a contact for {contact_name} at {company}"
    assert editing.follow_rename("Full_name first", "full_name", "contact_name") == (
        "Contact_name first"
    )
    with open_services(load_settings(), write=True) as sv:  # as saved and read back
        sv.workflows.save(renamed, actor="tester")
        stored = sv.workflows.get(renamed.id).workflow
    assert stored.description == renamed.description
    assert stored.steps[4].title == renamed.steps[4].title


def test_rename_refuses_names_taken_or_unusable(contact: Workflow) -> None:
    with pytest.raises(EditError, match="already a parameter called 'email'"):
        editing.rename_parameter(contact, "full_name", "email")
    with pytest.raises(EditError, match="cannot be a parameter name"):
        editing.rename_parameter(contact, "full_name", "Full name")
    with pytest.raises(EditError, match="there is no parameter 'nobody'"):
        editing.rename_parameter(contact, "nobody", "x")
    extracting = editing.insert_step(
        contact, 10, editing.blank_step("extract").model_copy(update={"variable": "contact_id"})
    )
    with pytest.raises(EditError, match="step 11 stores a variable called 'contact_id'"):
        editing.rename_parameter(extracting, "full_name", "contact_id")


def test_parameters_are_added_retyped_updated_and_deleted(contact: Workflow) -> None:
    name = editing.new_parameter_name(contact, "email")
    assert name == "email_2"
    added = editing.add_parameter(contact, Parameter(name=name, description="CC"))
    assert [p.name for p in added.parameters][-1] == "email_2"
    assert "no step uses {email_2}" in problems(added)[0]

    secret = editing.retype_parameter(contact, "full_name", ParameterType.SECRET)
    assert secret.parameter("full_name").default is None  # type: ignore[union-attr]
    choice = editing.retype_parameter(contact, "full_name", ParameterType.CHOICE)
    assert choice.parameter("full_name").choices == ("Jane Doe",)  # type: ignore[union-attr]
    with pytest.raises(EditError, match="at least one choice"):
        editing.retype_parameter(secret, "full_name", ParameterType.CHOICE)

    updated = editing.update_parameter(contact, "company", default="Acme", description="Who")
    company = updated.parameter("company")
    assert company is not None and (company.default, company.description) == ("Acme", "Who")
    with pytest.raises(EditError, match="not one of the choices"):
        editing.update_parameter(contact, "company", default="Nobody Inc")
    with pytest.raises(EditError, match="secret parameter cannot have a default"):
        editing.update_parameter(contact, "password", default="hunter2")

    without = editing.delete_parameter(contact, "email")
    assert [(i.severity, i.step, i.field) for i in editing.validate(without)] == [
        ("warning", 6, "title"),
        ("error", 6, "value"),
    ]


def test_defaults_typed_as_text_become_values_of_the_type() -> None:
    assert editing.parse_default(ParameterType.NUMBER, "3") == 3
    assert editing.parse_default(ParameterType.NUMBER, "2.5") == 2.5
    assert editing.parse_default(ParameterType.BOOL, "Yes") is True
    assert editing.parse_default(ParameterType.TEXT, "  ") is None
    with pytest.raises(EditError, match="'three' is not a number"):
        editing.parse_default(ParameterType.NUMBER, "three")
    with pytest.raises(EditError, match="a secret has no default"):
        editing.parse_default(ParameterType.SECRET, "x")
    with pytest.raises(EditError, match="not one of the choices"):
        editing.parse_default(ParameterType.CHOICE, "c", ("a", "b"))


# ── validation ──────────────────────────────────────────────────────────────────────────────


def test_unknown_and_later_placeholders_are_errors_where_they_are(contact: Workflow) -> None:
    draft = editing.update_step(contact, 5, value="{fullname}")
    draft = editing.insert_step(
        draft,
        10,
        ExtractStep(title="Read the id", target=contact.steps[5].target_or_none, variable="cid"),  # type: ignore[arg-type]
    )
    draft = editing.update_step(draft, 6, value="{email} {cid}")
    found = {(i.step, i.field, i.severity): i.message for i in editing.validate(draft)}
    assert found[(5, "value", "error")].startswith("{fullname} is not a parameter")
    assert found[(6, "value", "error")] == "{cid} is stored only later, by step 11"
    assert "cid" in editing.known_names(draft)


def test_secrets_stay_out_of_constants_and_visible_places(contact: Workflow) -> None:
    constant = editing.update_step(contact, 2, value="hunter2")
    assert problems(constant) == [
        "Parameter password: no step uses {password}; use it in a value or remove it",
        "Step 3 · value: a password field is filled with a constant; use a secret parameter",
    ]
    not_secret = editing.update_step(contact, 2, value="{username}")
    assert any("{username}, which is not a secret" in p for p in problems(not_secret))
    in_url = editing.update_step(contact, 0, url="http://127.0.0.1:8765/login?pw={password}")
    [issue] = editing.validate(in_url)
    assert (issue.severity, issue.step, issue.field) == ("warning", 0, "url")
    in_intent = editing.update_workflow(contact, intent_template="Sign in with {password}")
    assert any("cannot be in the intent" in p for p in problems(in_intent))


def test_a_tick_box_bound_to_a_non_boolean_parameter_is_an_error(contact: Workflow) -> None:
    draft = editing.update_step(contact, 8, checked="{company}")
    assert "Step 9 · checked: {company} is not a true/false parameter" in problems(draft)


def test_finalize_gives_a_document_the_loader_accepts(contact: Workflow) -> None:
    draft = editing.rename_parameter(contact, "full_name", "name")
    draft = editing.update_step(draft, 9, title="Save the contact", irreversible=True)
    draft = editing.insert_step(
        draft,
        10,
        GotoStep(title="Back to the list", url="http://127.0.0.1:8765/contacts"),
    )
    final = editing.finalize(draft)
    again = load_workflow(dump_document(final))
    assert again == final
    assert json.loads(dump_document(final))["steps"][9]["irreversible"] is True


def test_summaries_start_url_and_uses_read_the_draft(contact: Workflow) -> None:
    assert editing.start_url(contact) == "http://127.0.0.1:8765/login"
    assert editing.step_summary(contact.steps[1]) == 'role=textbox[name="Username"]  ← {username}'
    # the intent, the value, the saved message, and the success checks using it
    in_success = sum("{full_name}" in check.model_dump_json() for check in contact.success)
    assert editing.parameter_uses(contact, "full_name") == 3 + in_success
    assert editing.parameter_uses(editing.set_success(contact, ()), "full_name") == 3
    waiting = editing.update_step(
        editing.insert_step(contact, 0, editing.blank_step("wait_for")),
        0,
        condition=TextPresent(text="Contacts"),
    )
    assert editing.step_summary(waiting.steps[0]) == "page shows “Contacts”"
    assert isinstance(editing.blank_step("click"), ClickStep)


def test_every_kind_of_step_can_be_edited() -> None:
    workflow = full_workflow()
    for row, step in enumerate(workflow.steps):
        edited = editing.update_step(workflow, row, title=f"Step {row}", timeout_s=5)
        assert edited.steps[row].title == f"Step {row}"
        assert edited.steps[row].model_dump(exclude={"title", "timeout_s"}) == step.model_dump(
            exclude={"title", "timeout_s"}
        )
    hotkey = editing.update_step(workflow, 15, keys=("ctrl", "shift", "s"))
    assert hotkey.steps[15].keys == ("ctrl", "shift", "s")  # type: ignore[union-attr]


# ── the success check ("done when") ─────────────────────────────────────────────────────────


def test_the_success_check_is_set_added_replaced_and_removed(contact: Workflow) -> None:
    empty = editing.set_success(contact, ())
    assert empty.success == ()
    saved = TextPresent(text="Contact {full_name} created")
    listed = UrlMatches(pattern="http://127.0.0.1:8765/contacts/*")
    one = editing.add_success_check(empty, saved)
    two = editing.add_success_check(one, listed, 0)
    assert two.success == (listed, saved) and one.success == (saved,) and empty.success == ()
    renamed = editing.replace_success_check(two, 1, TextPresent(text="Saved {full_name}"))
    assert renamed.success == (listed, TextPresent(text="Saved {full_name}"))
    assert editing.remove_success_check(renamed, 0).success == (
        TextPresent(text="Saved {full_name}"),
    )
    with pytest.raises(EditError, match="there is no check 3 in the success check"):
        editing.remove_success_check(two, 2)
    with pytest.raises(EditError, match="the workflow has no success check yet"):
        editing.replace_success_check(empty, 0, saved)
    with pytest.raises(EditError, match="cannot add a check at position 5"):
        editing.add_success_check(empty, saved, 4)
    final = editing.finalize(two)
    assert load_workflow(dump_document(final)).success == (listed, saved)


def test_success_check_placeholders_are_checked_like_the_steps(contact: Workflow) -> None:
    draft = editing.set_success(contact, (TextPresent(text="Order {order_no} saved"),))
    [issue] = editing.validate(draft)
    assert (issue.severity, issue.step, issue.field) == ("error", None, "success[0].text")
    assert issue.is_success and issue.success_index == 0
    assert str(issue) == (
        "Done when · check 1: {order_no} is not a parameter nor a variable a step stores; "
        "add the parameter or fix the name"
    )
    with pytest.raises(EditError, match=r"cannot save yet: Done when · check 1: \{order_no\}"):
        editing.finalize(draft)

    # a variable any step stores has its value by the time the check runs, even the last step
    reading = editing.insert_step(
        draft,
        len(draft.steps),
        ExtractStep(
            title="Read the order number",
            target=contact.steps[5].target_or_none,  # type: ignore[arg-type]
            variable="order_no",
        ),
    )
    assert editing.validate(reading) == []
    assert editing.finalize(reading).success == (TextPresent(text="Order {order_no} saved"),)

    secret = editing.set_success(contact, (TextPresent(text="Welcome {password}"),))
    assert "Done when · check 1: the secret {password} is used in the success check" in (
        " ".join(problems(secret))
    )
    no_locator = ElementVisible.model_construct(
        target=Target.model_construct(locators=(), fingerprint=None)
    )
    assert problems(editing.set_success(contact, (no_locator,))) == [
        "Done when · check 1: the check has no locator for its element"
    ]


def test_a_parameter_used_only_by_the_success_check_is_used_and_renamed_there(
    contact: Workflow,
) -> None:
    draft = editing.add_parameter(contact, Parameter(name="order_no"))
    assert any("no step uses {order_no}" in p for p in problems(draft))
    draft = editing.set_success(draft, (TextPresent(text="Order {order_no} saved"),))
    assert not any("{order_no}" in p for p in problems(draft))
    assert editing.parameter_uses(draft, "order_no") == 1
    renamed = editing.rename_parameter(draft, "order_no", "order_number")
    assert renamed.success == (TextPresent(text="Order {order_number} saved"),)
    assert editing.validate(renamed) == []


def test_a_locator_inside_a_row_reads_in_words_on_its_card(contact: Workflow) -> None:
    in_row = Locator(
        strategy=LocatorStrategy.ROLE,
        value="checkbox",
        within=ItemScope(css="tr", text="{full_name}"),
    )
    draft = editing.set_locators(contact, 8, (in_row,))
    assert editing.step_summary(draft.steps[8]) == (
        "in the row showing “{full_name}”: checkbox  = {subscribe_to_newsletter}"
    )
    assert (
        editing.parameter_uses(draft, "full_name")
        == editing.parameter_uses(contact, "full_name") + 1
    )
    unknown = editing.set_locators(
        contact, 8, (in_row.model_copy(update={"within": ItemScope(css="tr", text="{who}")}),)
    )
    assert any(
        p.startswith("Step 9 · target.locators[0].within.text: {who} is not a parameter")
        for p in problems(unknown)
    )
