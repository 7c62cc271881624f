"""What a version changes: steps added, removed, moved and changed; locators (and the item they
look inside); parameters; the success check."""

from __future__ import annotations

import json

from factories import full_workflow, target

from desktop_app.core.diff import describe_step, diff_workflows, render_text
from desktop_app.core.models import (
    BoundingBox,
    ClickStep,
    ElementHidden,
    FillStep,
    ForEachStep,
    GotoStep,
    IfStep,
    ItemContext,
    ItemScope,
    Locator,
    LocatorStrategy,
    PageItems,
    Parameter,
    ParameterType,
    Target,
    TextPresent,
    UrlMatches,
    ValueCompare,
    Workflow,
    walk,
)


def _steps() -> tuple[GotoStep | FillStep | ClickStep, ...]:
    return (
        GotoStep(id="open", title="Open the form", url="https://crm.example.test/new"),
        FillStep(id="name", title="Fill 'Name' with {name}", target=target("Name"), value="{name}"),
        FillStep(id="mail", title="Fill 'Email'", target=target("Email"), value="a@b.test"),
        FillStep(id="city", title="Fill 'City'", target=target("City"), value="Oslo"),
        ClickStep(id="save", title="Click 'Save'", target=target("Save"), irreversible=True),
    )


def _workflow(**update: object) -> Workflow:
    base = Workflow(
        id="wf",
        version=1,
        name="Create a contact",
        description="Adds a contact.",
        domains=("crm.example.test",),
        parameters=(Parameter(name="name", description="Who"),),
        intent_template="Create a contact for {name}",
        steps=_steps(),
    )
    return Workflow.model_validate({**base.model_dump(), "version": 2, **update})


def _with_step(workflow: Workflow, index: int, **update: object) -> Workflow:
    steps = list(workflow.steps)
    steps[index] = steps[index].model_copy(update=update)
    return workflow.model_copy(update={"steps": tuple(steps)})


def test_identical_versions_have_no_changes() -> None:
    diff = diff_workflows(_workflow(version=1), _workflow())
    assert diff.is_empty
    assert diff.summary() == "no changes"
    assert [s.status for s in diff.steps] == ["unchanged"] * 5
    assert "steps:" not in render_text(diff)


def test_an_inserted_step_is_added_and_moves_nothing() -> None:
    old = _workflow(version=1)
    steps = list(old.steps)
    steps.insert(2, FillStep(id="phone", title="Fill 'Phone'", target=target("Phone"), value="1"))
    diff = diff_workflows(old, _workflow(steps=steps))

    assert [(s.status, s.step_id) for s in diff.changed_steps] == [("added", "phone")]
    assert not any(s.moved for s in diff.steps)
    assert diff.changed_steps[0].new_index == 2
    assert diff.summary() == "1 step added"
    assert "  + 3. Fill 'Phone'  (fill)" in render_text(diff)


def test_a_removed_step_shows_where_it_was_and_moves_nothing() -> None:
    old = _workflow(version=1)
    diff = diff_workflows(old, _workflow(steps=[s for s in old.steps if s.id != "mail"]))

    assert [(s.status, s.step_id, s.old_index) for s in diff.changed_steps] == [
        ("removed", "mail", 2)
    ]
    assert not any(s.moved for s in diff.steps)
    # Shown right after the step that preceded it.
    assert [s.step_id for s in diff.steps] == ["open", "name", "mail", "city", "save"]
    assert '      fill label=Email with "a@b.test"' in render_text(diff)


def test_only_the_step_that_really_moved_is_moved() -> None:
    old = _workflow(version=1)
    steps = list(old.steps)
    steps.insert(3, steps.pop(1))  # name goes after mail and city
    diff = diff_workflows(old, _workflow(steps=steps))

    moved = [s for s in diff.steps if s.moved]
    assert [(s.step_id, s.old_index, s.new_index) for s in moved] == [("name", 1, 3)]
    assert diff.counts() == {"added": 0, "removed": 0, "changed": 0, "moved": 1}
    lines = render_text(diff)
    assert "  ↕ 4. Fill 'Name' with {name}  (fill)" in lines
    assert "      moved from position 2 to 4" in lines


def test_changed_fields_read_before_and_after() -> None:
    old = _workflow(version=1)
    new = _with_step(old, 2, value="c@d.test", timeout_s=30.0, optional=True)
    new = _with_step(new, 0, expectations=(TextPresent(text="New contact"),))
    diff = diff_workflows(old, new.model_copy(update={"version": 2}))

    changed = {s.step_id: s for s in diff.changed_steps}
    assert set(changed) == {"open", "mail"}
    assert {(f.label, f.before, f.after) for f in changed["mail"].fields} == {
        ("value", '"a@b.test"', '"c@d.test"'),
        ("timeout", "10 s", "30 s"),
        ("optional", "no", "yes"),
    }
    lines = render_text(diff)
    assert '      value: "a@b.test" → "c@d.test"' in lines
    assert "      + expectation: page shows “New contact”" in lines


def test_a_renamed_title_is_a_change_of_the_same_step() -> None:
    old = _workflow(version=1)
    diff = diff_workflows(old, _with_step(_workflow(), 4, title="Click 'Save contact'"))

    [step] = diff.changed_steps
    assert (step.status, step.step_id, step.old_title, step.title) == (
        "changed",
        "save",
        "Click 'Save'",
        "Click 'Save contact'",
    )
    assert "      title: \"Click 'Save'\" → \"Click 'Save contact'\"" in render_text(diff)


def test_steps_with_new_ids_are_matched_by_kind_and_title() -> None:
    old = _workflow(version=1)
    steps = [s.model_copy(update={"id": f"new-{s.id}"}) for s in old.steps]
    steps[2] = steps[2].model_copy(update={"title": "Fill 'E-mail'"})
    diff = diff_workflows(old, _workflow(steps=steps))

    assert all(s.matched_by == "similarity" for s in diff.steps)
    assert not [s for s in diff.steps if s.status in ("added", "removed") or s.moved]
    [renamed] = diff.changed_steps
    assert (renamed.old_step_id, renamed.step_id) == ("mail", "new-mail")


def test_locator_changes_added_removed_changed_and_reranked() -> None:
    old = _workflow(version=1)
    recorded = old.steps[1].target_or_none
    assert recorded is not None  # label=Name, css=#name
    new_first = Locator(strategy=LocatorStrategy.ROLE, value="textbox", name="Full name")

    # A repair puts the working locator first: the recorded ones only shift down.
    inserted = Target(locators=(new_first, *recorded.locators), fingerprint=recorded.fingerprint)
    [step] = diff_workflows(old, _with_step(old, 1, target=inserted)).changed_steps
    assert [(c.change, c.after, c.new_rank) for c in step.locators] == [
        ("added", 'role=textbox[name="Full name"]', 1)
    ]

    # Swapped, one changed in place, and one removed.
    swapped = Target(
        locators=(
            Locator(strategy=LocatorStrategy.CSS, value="#full-name"),
            recorded.locators[0],
        ),
        fingerprint=recorded.fingerprint,
    )
    [step] = diff_workflows(old, _with_step(old, 1, target=swapped)).changed_steps
    assert {(c.change, c.before, c.after, c.old_rank, c.new_rank) for c in step.locators} == {
        ("changed", "css=#name", "css=#full-name", 2, 1),
        ("moved", "label=Name", "label=Name", 1, 2),
    }
    only_label = Target(locators=(recorded.locators[0],), fingerprint=recorded.fingerprint)
    [step] = diff_workflows(old, _with_step(old, 1, target=only_label)).changed_steps
    assert [(c.change, c.before, c.old_rank) for c in step.locators] == [
        ("removed", "css=#name", 2)
    ]
    assert "      - locator #2: css=#name" in render_text(
        diff_workflows(old, _with_step(old, 1, target=only_label))
    )


def test_a_fingerprint_change_reads_as_one_line() -> None:
    old = _workflow(version=1)
    recorded = old.steps[2].target_or_none
    assert recorded is not None and recorded.fingerprint is not None
    fingerprint = recorded.fingerprint.model_copy(
        update={
            "name": "Work email",
            "attributes": {"id": "work-email", "class": "field"},
            "bbox": BoundingBox(x=10, y=60, width=200, height=30),
        }
    )
    moved_field = recorded.model_copy(update={"fingerprint": fingerprint})
    [step] = diff_workflows(old, _with_step(old, 2, target=moved_field)).changed_steps
    assert step.fingerprint == (
        'name "Email" → "Work email"; id "email" → "work-email"; '
        "attributes class changed; box moved"
    )
    assert not step.locators and not step.fields

    gone = recorded.model_copy(update={"fingerprint": None})
    [step] = diff_workflows(old, _with_step(old, 2, target=gone)).changed_steps
    assert step.fingerprint is not None and step.fingerprint.startswith("removed")
    assert diff_workflows(old, _with_step(old, 2, target=recorded)).is_empty


def test_parameters_added_removed_renamed_and_changed() -> None:
    old = _workflow(
        version=1,
        parameters=[
            Parameter(name="name", description="Who"),
            Parameter(name="city", default="Oslo"),
            Parameter(name="tier", type=ParameterType.CHOICE, choices=("a", "b")),
        ],
    )
    steps = list(old.steps)
    steps[3] = steps[3].model_copy(update={"value": "{city}"})
    old = old.model_copy(update={"steps": tuple(steps)})

    steps[1] = steps[1].model_copy(update={"value": "{full_name}", "title": "Fill 'Name'"})
    new = _workflow(
        parameters=[
            Parameter(name="full_name", description="Who"),
            Parameter(name="city", default="Bergen", required=False),
            Parameter(name="email", type=ParameterType.EMAIL),
        ],
        intent_template="Create a contact for {full_name}",
        steps=steps,
    )
    diff = diff_workflows(old, new)
    by_name = {p.name: p for p in diff.parameters}
    assert {(p.change, p.name, p.old_name) for p in diff.parameters} == {
        ("renamed", "full_name", "name"),
        ("changed", "city", None),
        ("added", "email", None),
        ("removed", "tier", None),
    }
    assert {(f.label, f.before, f.after) for f in by_name["city"].fields} == {
        ("default", '"Oslo"', '"Bergen"'),
        ("required", "yes", "no"),
    }
    lines = render_text(diff)
    assert "  ~ name renamed to full_name" in lines
    assert "  + email (email)" in lines
    assert "  - tier (choice, one of a, b)" in lines
    assert (
        'intent template: "Create a contact for {name}" → "Create a contact for {full_name}"'
        in (" ".join(lines))
    )
    # The step that used {name} shows its value changed.
    name_step = next(s for s in diff.changed_steps if s.step_id == "name")
    assert ("value", '"{name}"', '"{full_name}"') in {
        (f.label, f.before, f.after) for f in name_step.fields
    }


def test_workflow_fields_name_description_and_domains() -> None:
    diff = diff_workflows(
        _workflow(version=1),
        _workflow(
            name="Add a contact", description="", domains=("crm.example.test", "sso.example.test")
        ),
    )
    assert {(f.label, f.before, f.after) for f in diff.fields} == {
        ("name", '"Create a contact"', '"Add a contact"'),
        ("description", '"Adds a contact."', None),
        ("domain", None, "sso.example.test"),
    }
    assert diff.summary() == "name, description, domain changed"


def test_a_first_version_is_all_new_and_every_step_kind_reads() -> None:
    workflow = full_workflow()
    diff = diff_workflows(None, workflow)
    assert diff.old_version is None
    assert {s.status for s in diff.steps} == {"added"}
    every = list(walk(workflow.steps))  # the steps inside blocks are steps of the diff too
    assert diff.summary() == f"first version: {len(every)} steps, 8 parameters"
    assert [s.step_id for s in diff.steps] == [step.id for step in every]
    descriptions = [describe_step(step) for step in workflow.steps]
    assert descriptions[0] == "open https://app.example.test/signup?plan={plan}"
    assert 'select "{plan}" in label=Plan' in descriptions
    assert all(descriptions)
    assert render_text(diff)[0] == "Everything: nothing → version 1"
    # Structured data for the GUI and --json.
    data = diff.model_dump(mode="json")
    assert json.loads(json.dumps(data))["steps"][0]["summary"] == descriptions[0]


def test_a_workflow_compared_with_itself_changes_nothing() -> None:
    workflow = full_workflow()
    assert diff_workflows(workflow, workflow).is_empty


def test_the_command_line_prints_what_a_version_changes() -> None:
    from click.testing import CliRunner
    from replay_support import approved, services

    from desktop_app.cli.review import diff_command
    from desktop_app.settings import load_settings

    with services() as sv:
        v1 = approved(sv, "create-contact")
        steps = tuple(s for s in v1.workflow.steps if s.title != "Click 'New contact'")
        sv.workflows.save(v1.workflow.model_copy(update={"steps": steps}), actor="analyst")
    runner = CliRunner()
    obj = {"settings": load_settings}

    result = runner.invoke(diff_command, ["Create a contact"], obj=obj, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "version 2 is draft, by analyst"
    assert lines[1:3] == ["Create a contact: version 1 → version 2", "1 step removed"]
    assert "  - (was 5) Click 'New contact'  (click)" in lines

    as_json = runner.invoke(diff_command, ["Create a contact", "2", "1", "--json"], obj=obj)
    data = json.loads(as_json.output)
    assert (data["old_version"], data["new_version"]) == (2, 1)
    assert [s["status"] for s in data["steps"] if s["status"] != "unchanged"] == ["added"]


def test_success_check_changes_read_in_words() -> None:
    saved = TextPresent(text="Contact {name} created")
    at_list = UrlMatches(pattern="https://crm.example.test/contacts/*")
    old = _workflow(version=1, success=[saved.model_dump()])
    assert diff_workflows(old, _workflow(success=[saved.model_dump()])).is_empty

    new = _workflow(
        success=[
            TextPresent(text="Contact {name} saved").model_dump(),
            at_list.model_dump(),
            ElementHidden(target=target("Name")).model_dump(),
        ]
    )
    diff = diff_workflows(old, new)
    assert [(f.label, f.before, f.after) for f in diff.fields] == [
        (
            "success check",
            "page shows “Contact {name} created”",
            "page shows “Contact {name} saved”",
        ),
        ("success check", None, "URL matches https://crm.example.test/contacts/*"),
        ("success check", None, "label=Name is hidden"),
    ]
    assert diff.summary() == "success check changed"
    lines = render_text(diff)
    assert lines[2:] == [
        "",
        "workflow:",
        "  success check: page shows “Contact {name} created” → page shows “Contact {name} saved”",
        "  + success check: URL matches https://crm.example.test/contacts/*",
        "  + success check: label=Name is hidden",
    ]

    none_left = diff_workflows(old, _workflow(success=[]))
    assert [(f.before, f.after) for f in none_left.fields] == [
        ("page shows “Contact {name} created”", None)
    ]
    assert "  - success check: page shows “Contact {name} created”" in render_text(none_left)


def test_a_locator_looking_inside_another_item_is_a_change_in_words() -> None:
    in_row = Locator(
        strategy=LocatorStrategy.ROLE,
        value="checkbox",
        within=ItemScope(css="tr", text="{name}"),
    )
    old = _with_step(_workflow(version=1), 4, target=Target(locators=(in_row,)))
    elsewhere = in_row.model_copy(update={"within": ItemScope(css="tr", text="Maria Garcia")})
    new = _with_step(_workflow(), 4, target=Target(locators=(elsewhere,)))
    [step] = diff_workflows(old, new).changed_steps
    assert [(c.change, c.before, c.after) for c in step.locators] == [
        (
            "changed",
            "in the row showing “{name}”: checkbox",
            "in the row showing “Maria Garcia”: checkbox",
        )
    ]
    assert step.summary == "click in the row showing “Maria Garcia”: checkbox"

    anywhere = in_row.model_copy(update={"within": None})
    anywhere_step = _with_step(_workflow(), 4, target=Target(locators=(anywhere,)))
    [step] = diff_workflows(old, anywhere_step).changed_steps
    assert [(c.before, c.after) for c in step.locators] == [
        ("in the row showing “{name}”: checkbox", "role=checkbox")
    ]


def test_the_item_an_element_was_recorded_in_shows_in_the_fingerprint_line() -> None:
    old = _workflow(version=1)
    recorded = old.steps[2].target_or_none
    assert recorded is not None and recorded.fingerprint is not None
    item = ItemContext(css="tr", texts=("Maria Garcia", "maria@example.test"))
    in_row = recorded.model_copy(
        update={"fingerprint": recorded.fingerprint.model_copy(update={"item": item})}
    )
    [step] = diff_workflows(old, _with_step(old, 2, target=in_row)).changed_steps
    assert step.fingerprint == 'recorded in a repeated item (tr, showing "Maria Garcia")'


# ── blocks ──────────────────────────────────────────────────────────────────────────────────


def _loop_workflow(
    *inner: ClickStep | FillStep | IfStep, after: tuple[ClickStep, ...] = ()
) -> Workflow:
    return Workflow(
        id="wf",
        name="Remind",
        steps=(
            GotoStep(id="open", title="Open the invoices", url="https://crm.example.test/"),
            ForEachStep(
                id="loop",
                title="For each invoice",
                over=PageItems(css="tr", key="td.number"),
                item="invoice",
                steps=inner,
            ),
            *after,
        ),
    )


def _remind() -> ClickStep:
    return ClickStep(id="remind", title="Click 'Remind'", target=target("Remind"))


def _note() -> FillStep:
    return FillStep(id="note", title="Fill 'Note'", target=target("Note"), value="late")


def _save() -> ClickStep:
    return ClickStep(id="save", title="Click 'Save'", target=target("Save"))


def test_steps_inside_a_block_are_added_removed_and_changed_saying_where() -> None:
    old = _loop_workflow(_remind(), _note(), after=(_save(),))
    flag = ClickStep(id="flag", title="Click 'Flag'", target=target("Flag"))
    checked = IfStep(
        id="big",
        title="If it is big",
        condition=ValueCompare(value="{invoice}", op="contains", to="9"),
        steps=(flag,),
    )
    new = _loop_workflow(
        _remind().model_copy(update={"irreversible": True}), checked, after=(_save(),)
    )
    diff = diff_workflows(old, new)
    assert [
        (s.status, s.step_id, s.number or s.old_number, s.where) for s in diff.changed_steps
    ] == [
        ("changed", "remind", "2.1", "in 'For each invoice'"),
        ("removed", "note", "2.2", "in 'For each invoice'"),  # after the step it followed
        ("added", "big", "2.2", "in 'For each invoice'"),
        ("added", "flag", "2.2.1", "in 'If it is big'"),
    ]
    assert diff.summary() == "2 steps added, 1 removed, 1 changed"
    lines = render_text(diff)
    assert "  ~ 2.1. Click 'Remind'  (click) in 'For each invoice'" in lines
    assert "      irreversible: no → yes" in lines
    assert "  + 2.2.1. Click 'Flag'  (click) in 'If it is big'" in lines
    assert "  - (was 2.2) Fill 'Note'  (fill) in 'For each invoice'" in lines
    assert "      if {invoice} contains “9”: 1 step(s)" in lines
    # The loop itself did not change: its steps are compared one by one, not as a field.
    assert not any(s.step_id == "loop" for s in diff.changed_steps)


def test_a_step_moved_into_or_out_of_a_block_is_the_same_step_moved() -> None:
    old = _loop_workflow(_remind(), _note(), after=(_save(),))
    new = _loop_workflow(_remind(), _save(), after=(_note(),))
    diff = diff_workflows(old, new)
    moved = {s.step_id: s for s in diff.changed_steps}
    assert set(moved) == {"save", "note"}
    assert all(s.status == "unchanged" and s.moved for s in moved.values())
    assert (moved["save"].where, moved["save"].old_where) == ("in 'For each invoice'", "at the top")
    assert (moved["note"].where, moved["note"].old_where) == (None, "in 'For each invoice'")
    assert diff.summary() == "2 steps moved"
    lines = render_text(diff)
    assert "  ↕ 2.2. Click 'Save'  (click) in 'For each invoice'" in lines
    assert "      moved: was 3, at the top" in lines
    assert "  ↕ 3. Fill 'Note'  (fill)" in lines
    assert "      moved: was 2.2, in 'For each invoice'" in lines


def test_a_removed_block_lists_its_steps_under_it() -> None:
    old = _loop_workflow(_remind(), _note(), after=(_save(),))
    new = Workflow(id="wf", name="Remind", steps=(old.steps[0], _save()))
    diff = diff_workflows(old, new)
    assert [(s.status, s.step_id, s.old_number) for s in diff.changed_steps] == [
        ("removed", "loop", "2"),
        ("removed", "remind", "2.1"),
        ("removed", "note", "2.2"),
    ]
