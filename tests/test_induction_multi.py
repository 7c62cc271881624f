"""Induction from several demonstrations of one task, on the recorded fixtures (no browser)."""

from __future__ import annotations

import json
import time

import pytest
from conftest import REPO, Cli
from factories import T0

from desktop_app.core.documents import dump_document, load_trajectory, load_workflow
from desktop_app.core.errors import DocumentError
from desktop_app.core.induction.heuristic import induce
from desktop_app.core.induction.intent import bind_intent
from desktop_app.core.induction.multi import (
    MultiInduction,
    NotTheSameTaskError,
    induce_many,
    step_key,
)
from desktop_app.core.models import (
    ActionKind,
    CheckStep,
    ClickStep,
    Event,
    FillStep,
    Fingerprint,
    ItemScope,
    Locator,
    LocatorStrategy,
    Observation,
    ParameterType,
    SelectStep,
    Target,
    TextPresent,
    Trajectory,
    UrlMatches,
)
from desktop_app.core.models.common import new_id

DATA = REPO / "tests" / "data"
CONTACTS = ("create-contact", "create-contact-2", "create-contact-3")


def _load(name: str) -> Trajectory:
    return load_trajectory((DATA / f"{name}.trajectory.json").read_bytes())


def _contacts() -> MultiInduction:
    return induce_many([_load(n) for n in CONTACTS])


def test_values_that_differ_become_parameters_and_those_that_agree_constants() -> None:
    result = _contacts()
    wf = result.workflow
    assert [(p.name, p.type, p.default) for p in wf.parameters] == [
        ("password", ParameterType.SECRET, None),
        ("full_name", ParameterType.TEXT, "Jane Doe"),
        ("email", ParameterType.EMAIL, "jane@example.test"),
        ("company", ParameterType.CHOICE, "Globex"),
    ]
    company = wf.parameter("company")
    assert company is not None and company.choices == (
        "Acme",
        "Globex",
        "Initech",
        "Umbrella",
        "Hooli",
    )
    assert wf.parameter("username") is None
    fills = [s for s in wf.steps if isinstance(s, FillStep)]
    assert [f.value for f in fills] == ["demo", "{password}", "{full_name}", "{email}"]
    assert fills[0].title == "Fill 'Username' with demo"
    select = next(s for s in wf.steps if isinstance(s, SelectStep))
    assert select.value == "{company}"
    assert "'username' is the same in all 3 demonstrations: kept as the constant 'demo'" in (
        result.notes
    )
    assert "'password' is a secret: it stays a secret parameter" in result.notes
    assert (
        "'full_name' differs across the demonstrations ('Jane Doe', 'Ann Lee', 'Li Wei'): "
        "a parameter, default 'Jane Doe'"
    ) in result.notes
    save = wf.steps[-1]
    assert isinstance(save, ClickStep)
    assert TextPresent(text="Contact {full_name} created") in save.expectations
    assert wf.source_trajectories == tuple(_load(n).id for n in CONTACTS)
    assert "Induced from 3 demonstrations" in wf.description
    assert load_workflow(dump_document(wf)) == wf  # a valid document
    assert "demo-pass" not in dump_document(wf)


def test_a_step_in_two_of_three_is_optional_and_the_alignment_says_where_each_came_from() -> None:
    result = _contacts()
    wf, alignment = result.workflow, result.alignment
    assert len(wf.steps) == 10
    optional = [s for s in wf.steps if s.optional]
    assert len(optional) == 1 and isinstance(optional[0], CheckStep)
    assert optional[0].title == "Set 'Subscribe to newsletter' to true"
    assert (
        "step \"Set 'Subscribe to newsletter' to true\" appears in 2 of 3 demonstrations: "
        "kept, optional" in result.notes
    )
    assert alignment.trajectories == wf.source_trajectories
    assert [s.step_id for s in alignment.steps] == [s.id for s in wf.steps]
    assert [s.events for s in alignment.steps] == [
        *((i, i, i) for i in range(8)),  # open, sign in (3), new contact, name, email, company
        (8, None, 8),  # the newsletter: Ann Lee's demonstration did not check it
        (9, 8, 9),  # save
    ]
    assert [s.optional for s in alignment.steps] == [False] * 8 + [True, False]
    assert alignment.dropped == ()
    # source events refer to the first demonstration
    assert [s.source_events for s in wf.steps] == [(i,) for i in range(10)]


def test_the_intent_template_binds_every_demonstration() -> None:
    result = _contacts()
    template = result.workflow.intent_template
    assert template == "Create a contact for {full_name} at {company}"
    assert result.alignment.intent_binds == (True, True, True)
    for name in CONTACTS:
        bound = bind_intent(template, _load(name).intent)
        assert bound is not None and set(bound) == {"full_name", "company"}
    assert result.workflow.name == "Create a contact"


def test_a_step_in_fewer_than_half_is_dropped() -> None:
    # Ann Lee's demonstration as the spine: the newsletter step, not on it, comes from the
    # other two and is kept (2 of 3); with a second demonstration without it, 1 of 3: dropped.
    ann = _load("create-contact-2")
    result = induce_many([ann, _load("create-contact"), _load("create-contact-3")])
    check = next(s for s in result.alignment.steps if s.title.startswith("Set 'Subscribe"))
    assert (check.events, check.optional) == ((None, 8, 8), True)
    assert result.workflow.steps[8].source_events == ()  # not in the first demonstration

    twin = ann.model_copy(update={"id": new_id(), "intent": "Create a contact for Bo Ek at Acme"})
    result = induce_many([ann, twin, _load("create-contact")])
    assert not any(isinstance(s, CheckStep) for s in result.workflow.steps)
    assert [(d.title, d.events, d.step_id) for d in result.alignment.dropped] == [
        ("Set 'Subscribe to newsletter' to true", (None, None, 8), None)
    ]
    assert (
        "step \"Set 'Subscribe to newsletter' to true\" appears in 1 of 3 demonstrations: "
        "dropped" in result.notes
    )
    # the twin's intent binds the template but does not say what it entered
    assert result.alignment.intent_binds == (True, True, True)
    assert any("binds the template but gives full_name='Bo Ek'" in n for n in result.notes)


def test_identical_values_leave_no_parameter_but_the_secret() -> None:
    jane = _load("create-contact")
    again = jane.model_copy(update={"id": new_id()})
    result = induce_many([jane, again])
    wf = result.workflow
    assert [(p.name, p.type) for p in wf.parameters] == [("password", ParameterType.SECRET)]
    assert "'company' is the same in both demonstrations: kept as the constant 'Globex'" in (
        result.notes
    )
    # every use of a value made constant becomes the literal, in locators and expectations too
    save = wf.steps[-1]
    assert TextPresent(text="Contact Jane Doe created") in save.expectations
    assert wf.success == (
        TextPresent(text="Jane Doe"),
        UrlMatches(pattern="http://127.0.0.1:8765/contacts/*"),
    )
    select = next(s for s in wf.steps if isinstance(s, SelectStep))
    assert (select.value, select.title) == ("Globex", "Select Globex in 'Company'")
    assert wf.intent_template is None  # nothing left to fill in
    assert not any(s.optional for s in wf.steps)
    assert load_workflow(dump_document(wf)) == wf


def test_a_constant_is_escaped_and_replaces_recurring_uses_in_locators() -> None:
    maria = _load("open-contact")
    result = induce_many([maria, maria.model_copy(update={"id": new_id()})])
    wf = result.workflow
    assert [p.name for p in wf.parameters] == ["password"]
    link = wf.steps[-1]
    assert isinstance(link, ClickStep) and link.title == "Click 'Maria Garcia'"
    role = next(loc for loc in link.target.locators if loc.strategy is LocatorStrategy.ROLE)
    assert role.name == "Maria Garcia"


def test_a_different_task_is_refused() -> None:
    demos = [_load("create-contact"), _load("create-contact-2"), _load("filter-orders")]
    with pytest.raises(NotTheSameTaskError) as caught:
        induce_many(demos)
    message = str(caught.value)
    assert message.startswith(
        "these recordings do not look like the same task: only 4 of 10 steps line up"
    )
    assert demos[2].id[:8] in message and "\n" not in message
    assert isinstance(caught.value, DocumentError)  # the command line exits 2 with one line


def test_one_demonstration_gives_what_the_single_inducer_gives() -> None:
    jane = _load("create-contact")
    one, single = induce_many([jane]), induce(jane)
    assert one.workflow.parameters == single.workflow.parameters
    strip = [s.model_copy(update={"id": "x"}) for s in one.workflow.steps]
    assert strip == [s.model_copy(update={"id": "x"}) for s in single.workflow.steps]
    assert one.workflow.intent_template == single.workflow.intent_template
    assert one.workflow.success == single.workflow.success
    assert one.notes == ()
    assert [s.events for s in one.alignment.steps] == [(i,) for i in range(10)]


def test_bad_input() -> None:
    jane = _load("create-contact")
    with pytest.raises(DocumentError, match="is given twice"):
        induce_many([jane, jane])
    with pytest.raises(ValueError):
        induce_many([])


def test_step_keys_ignore_values_but_not_elements() -> None:
    steps = [induce(_load(n)).workflow.steps for n in CONTACTS]
    assert [step_key(s) for s in steps[0]] == [step_key(s) for s in steps[2]]
    assert step_key(steps[0][5]) == 'fill | role=textbox[name="Full name"]'
    assert step_key(steps[0][4]) == "click | test_id=new-contact"  # test_id first
    assert step_key(steps[0][0]) == "goto | http://127.0.0.1:8765/login"
    expense = induce(_load("expense-report")).workflow.steps
    descriptions = [step_key(s) for s in expense if s.title.startswith("Fill 'Description'")]
    assert len(descriptions) == 2 and len(set(descriptions)) == 2  # nth tells the two items apart
    maria = induce(_load("open-contact")).workflow.steps[-1]
    assert step_key(maria) == 'click | role=link[name="{}"]'


def test_it_is_fast() -> None:
    demos = [_load(n) for n in CONTACTS]
    started = time.perf_counter()
    induce_many(demos)
    assert time.perf_counter() - started < 1.0


def test_induce_command_with_several_recordings(procedura: Cli) -> None:
    ids = []
    for name in CONTACTS:
        path = DATA / f"{name}.trajectory.json"
        ids.append(json.loads(path.read_text())["id"][:8])
        assert procedura("trajectories", "import", str(path)).exit_code == 0
    result = procedura("induce", *ids)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("induced 'Create a contact' as ")
    assert lines[0].endswith(" version 1 (draft): 4 parameters, 10 steps")
    table = lines[lines.index("") + 2 :]
    header = table[0].split()
    assert header == ["#", "step", *ids]
    assert table[1].split() == ["1", "Open", "Sign", "in", "—", "Acme", "CRM", "0", "0", "0"]
    newsletter = next(line for line in table if "newsletter" in line)
    assert newsletter.split()[-4:] == ["8", "-", "8", "optional"]
    save = next(line for line in table if "'Save'" in line)
    assert save.split()[-3:] == ["9", "8", "9"]
    assert lines[-1].startswith("review it with: procedura workflows show ")
    assert "note: 'username' is the same in all 3 demonstrations" in result.stderr
    history = json.loads(procedura("workflows", "show", "Create a contact", "--json").stdout)
    assert history["versions"][0]["change_note"] == f"induced from trajectories {', '.join(ids)}"
    shown = procedura("workflows", "show", "Create a contact").stdout
    assert "Set 'Subscribe to newsletter' to true  (check) [optional]" in shown


def test_induce_command_refuses_a_different_task(procedura: Cli) -> None:
    ids = []
    for name in ("create-contact", "filter-orders"):
        path = DATA / f"{name}.trajectory.json"
        ids.append(json.loads(path.read_text())["id"][:8])
        assert procedura("trajectories", "import", str(path)).exit_code == 0
    result = procedura("induce", *ids)
    assert result.exit_code == 2
    assert result.stderr == (
        "error: these recordings do not look like the same task: only 4 of 10 steps line up "
        f"(recording {ids[1]} against {ids[0]})\n"
    )
    assert json.loads(procedura("workflows", "list", "--json").stdout) == []


# ── the success check ──────────────────────────────────────────────────────────────────────


NO_SUCCESS = (
    "no success check could be induced: runs will end 'done, unverified' until one is added "
    "in the editor"
)


def test_the_success_check_is_what_every_demonstration_ended_showing() -> None:
    assert _contacts().workflow.success == (
        TextPresent(text="{full_name}"),
        UrlMatches(pattern="http://127.0.0.1:8765/contacts/*"),
    )


def _heading_gone(trajectory: Trajectory) -> Trajectory:
    """*trajectory* as if the new contact's heading had gone before the page settled."""
    *events, last = trajectory.events
    assert last.effects is not None
    added = tuple(
        t.model_copy(update={"gone": t.role == "heading"}) for t in last.effects.texts_added
    )
    last = last.model_copy(
        update={"effects": last.effects.model_copy(update={"texts_added": added})}
    )
    return trajectory.model_copy(update={"id": new_id(), "events": (*events, last)})


def test_a_check_not_every_demonstration_ended_showing_is_left_out_and_said() -> None:
    result = induce_many([_load("create-contact"), _heading_gone(_load("create-contact-2"))])
    # One ended on the new heading, the other on the message: they agree only on where they
    # led, which alone shows nothing of a record made: no success check, and said so.
    assert result.workflow.success == ()
    assert (
        "not every demonstration ended showing text '{full_name}'; that success check is left out"
    ) in result.notes
    assert NO_SUCCESS in result.notes
    save = result.workflow.steps[-1]  # the step itself saw the message in both
    assert TextPresent(text="Contact {full_name} created") in save.expectations


def test_no_success_check_is_said_once() -> None:
    result = induce_many([_open_tab("Reports"), _open_tab("Invoices")])
    assert result.workflow.success == ()
    assert [n for n in result.notes if "success check" in n] == [NO_SUCCESS]


def _open_tab(label: str) -> Trajectory:
    tabs = '- tablist "Sections":\n  - tab "Overview"\n  - tab "Reports"\n  - tab "Invoices"'
    before = Observation(url="http://x.test/app", aria_snapshot=tabs)
    tab = Target(
        locators=(Locator(strategy=LocatorStrategy.ROLE, value="tab", name=label),),
        fingerprint=Fingerprint(role="tab", name=label),
    )
    click = Event(action=ActionKind.CLICK, at=T0, target=tab, before=before, after=before)
    return Trajectory(intent=f"Open the {label} tab", started_at=T0, events=(click,))


def test_a_label_the_intents_name_is_a_parameter_when_it_differs_and_a_constant_when_not() -> None:
    result = induce_many([_open_tab("Reports"), _open_tab("Invoices")])
    wf = result.workflow
    assert [(p.name, p.type, p.default) for p in wf.parameters] == [
        ("tab", ParameterType.CHOICE, "Reports")
    ]
    assert wf.steps[0].title == "Click '{tab}'"
    assert wf.intent_template == "Open the {tab} tab"
    assert result.alignment.intent_binds == (True, True)

    same = induce_many([_open_tab("Reports"), _open_tab("Reports")]).workflow
    assert same.parameters == () and same.steps[0].title == "Click 'Reports'"
    role = same.steps[0].target_or_none
    assert role is not None and role.locators[0].name == "Reports"


def _delete_row(name: str) -> Trajectory:
    scope = ItemScope(css="tr", text=name)
    box = Target(
        locators=(
            Locator(
                strategy=LocatorStrategy.CSS, value='input[name="_selected_action"]', within=scope
            ),
        ),
        fingerprint=Fingerprint(tag="input", role="checkbox", name="Select this object"),
    )
    tick = Event(action=ActionKind.CHECK, at=T0, target=box)
    return Trajectory(intent=f"Delete the contact {name}", started_at=T0, events=(tick,))


def test_a_row_named_by_the_intents_and_a_box_ticked_in_it_are_two_parameters_of_one_step() -> None:
    result = induce_many([_delete_row("Wilhelmina Strand"), _delete_row("Jonas Becker")])
    wf = result.workflow
    assert [(p.name, p.default) for p in wf.parameters] == [("contact", "Wilhelmina Strand")]
    assert (
        "'select_this_object' is the same in both demonstrations: kept as the constant 'true'"
    ) in result.notes
    tick = wf.steps[0]
    assert isinstance(tick, CheckStep) and tick.checked is True
    assert tick.target.locators[0].within == ItemScope(css="tr", text="{contact}")
    assert wf.intent_template == "Delete the contact {contact}"
    assert load_workflow(dump_document(wf)) == wf
