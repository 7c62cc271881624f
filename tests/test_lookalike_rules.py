"""The rules that keep look-alikes apart, without a browser: which locators go by position or pin
a record, how an element in a repeated item is found, how a fingerprint tells rows and options
apart, and what a recorder's payload becomes."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from desktop_app.adapters.browser.targets import target_from_payload
from desktop_app.core.items import item_locator, pins_record, with_item_locator
from desktop_app.core.models.target import (
    Fingerprint,
    ItemContext,
    ItemScope,
    Locator,
    LocatorStrategy,
    Target,
)
from desktop_app.core.replay.fingerprint import best_match, score
from desktop_app.core.replay.learning import templated_locator

CSS = LocatorStrategy.CSS
XPATH = LocatorStrategy.XPATH
ROLE = LocatorStrategy.ROLE


@pytest.mark.parametrize(
    ("locator", "positional"),
    [
        (Locator(strategy=XPATH, value="/html/body/table/tbody/tr[1]/td[1]/input[1]"), True),
        (Locator(strategy=XPATH, value='//*[@id="save"]'), False),
        (Locator(strategy=CSS, value="#list tr:nth-of-type(2) > td > input"), True),
        (Locator(strategy=CSS, value="li:first-child a"), True),
        (Locator(strategy=CSS, value='input[name="_selected_action"]'), False),
        (Locator(strategy=ROLE, value="link", name="Edit", nth=1, nth_of=2), True),
        (Locator(strategy=ROLE, value="link", name="Edit"), False),
    ],
)
def test_a_locator_that_goes_by_position_is_known(locator: Locator, positional: bool) -> None:
    assert locator.positional is positional


@pytest.mark.parametrize(
    ("value", "pins"),
    [
        ('input[type="checkbox"][name="_selected_action"][value="11"]', True),
        ("#contact-11", True),
        ('a[href="/admin/crm/contact/11/change/"]', True),
        ('input[type="radio"][name="status"][value="customer"]', False),
        ('input[name="address2"]', False),
        ("#search", False),
    ],
)
def test_a_repair_never_keeps_a_locator_pinned_on_a_record(value: str, pins: bool) -> None:
    assert pins_record(Locator(strategy=CSS, value=value)) is pins
    assert pins_record(Locator(strategy=XPATH, value="//tr[2]/td[1]/input")) is True


def test_nth_of_goes_with_an_nth_below_it_and_item_scopes_not_with_xpath() -> None:
    with pytest.raises(ValidationError, match="nth_of goes with an nth below it"):
        Locator(strategy=ROLE, value="link", name="Edit", nth_of=2)
    with pytest.raises(ValidationError, match="nth_of goes with an nth below it"):
        Locator(strategy=ROLE, value="link", name="Edit", nth=2, nth_of=2)
    scope = ItemScope(css="tr", text="Maria Garcia")
    with pytest.raises(ValidationError, match="cannot look inside an item"):
        Locator(strategy=XPATH, value="//input", within=scope)
    inside = Locator(strategy=ROLE, value="checkbox", within=scope)
    assert inside.describe() == 'tr with "Maria Garcia" >> role=checkbox'


def _row_box(*texts: str, inner: bool = True) -> Fingerprint:
    return Fingerprint(
        tag="input",
        role="checkbox",
        attributes={"type": "checkbox", "name": "_selected_action"},
        item=ItemContext(
            css="tr",
            texts=texts,
            inner=Locator(strategy=ROLE, value="checkbox") if inner else None,
        ),
    )


def test_an_element_in_a_row_is_found_through_the_row_that_shows_its_text() -> None:
    fp = _row_box("Maria Garcia", "maria@example.test", "Customer")
    target = Target(
        locators=(
            Locator(strategy=CSS, value='input[name="_selected_action"]'),
            Locator(strategy=XPATH, value="//tr[1]/td[1]/input[1]"),
        ),
        fingerprint=fp,
    )
    found = with_item_locator(target)
    assert [loc.describe() for loc in found.locators] == [
        'tr with "Maria Garcia" >> role=checkbox',  # nothing names the box itself: first
        'css=input[name="_selected_action"]',
        "xpath=//tr[1]/td[1]/input[1]",
    ]
    by_email = with_item_locator(found, "maria@example.test")
    assert sum(loc.within is not None for loc in by_email.locators) == 1  # replaced, not added
    named = Target(locators=(Locator(strategy=ROLE, value="link", name="Edit"),), fingerprint=fp)
    assert with_item_locator(named).locators[0].describe() == 'role=link[name="Edit"]'
    assert with_item_locator(named, first=True).locators[0].within is not None
    assert item_locator(_row_box("Maria Garcia", inner=False)) is None  # a candidate's: no inner


def test_a_repair_puts_the_runs_value_back_as_its_parameter_in_the_row() -> None:
    seen = Locator(strategy=ROLE, value="checkbox", within=ItemScope(css="tr", text="Li Wei"))
    assert templated_locator(seen, {"full_name": "Li Wei"}).within == ItemScope(
        css="tr", text="{full_name}"
    )


def test_the_row_that_shows_the_recorded_name_leads_its_look_alike_by_a_margin() -> None:
    recorded = _row_box("Maria Garcia", "Customer")
    right = _row_box("Maria Garcia", "Customer", inner=False)
    look_alike = _row_box("Maria Garcia-Lopez", "Lead", inner=False)
    match = best_match(recorded, [look_alike, right])
    assert match.index == 1, match.reason
    twins = best_match(recorded, [right, right])
    assert twins.index is None and twins.reason is not None and "ambiguous" in twins.reason


def test_options_of_one_group_are_told_apart_by_their_own_value() -> None:
    def option(value: str, label: str) -> Fingerprint:
        return Fingerprint(
            tag="input",
            role="radio",
            name=label,
            attributes={"type": "radio", "name": "status", "option-value": value},
        )

    recorded = option("customer", "Customer")
    relabeled = option("customer", "Client")  # the label changed, the option did not
    other = option("lead", "Prospect")
    assert score(recorded, other).score < 0.45  # the group's name no longer carries it
    assert best_match(recorded, [other, relabeled]).index == 1


def test_a_payload_from_the_recorder_keeps_the_row_and_never_a_record_key() -> None:
    payload = {
        "locators": [{"strategy": "css", "value": 'input[name="_selected_action"]'}],
        "fingerprint": {
            "tag": "input",
            "role": "checkbox",
            "attributes": {"type": "checkbox", "value": "11", "option-value": "on"},
            "item": {
                "css": "tr",
                "texts": ["Maria Garcia", "Customer"],
                "inner": {"strategy": "role", "value": "checkbox"},
            },
        },
    }
    target = target_from_payload(payload)
    assert target is not None and target.fingerprint is not None
    assert "value" not in target.fingerprint.attributes  # a field's value is never kept
    assert target.locators[0].describe() == 'tr with "Maria Garcia" >> role=checkbox'
    broken = {**payload, "fingerprint": {**payload["fingerprint"], "item": {"texts": 3}}}
    kept = target_from_payload(broken)
    assert kept is not None and kept.fingerprint is not None and kept.fingerprint.item is None


def test_an_item_inside_another_is_templated_and_described_whole() -> None:
    line = ItemScope(css="fieldset.line", text="Li Wei")
    wrapper = ItemScope(css="div.field", text="Description", outer=line)
    seen = Locator(strategy=ROLE, value="textbox", within=wrapper)
    assert seen.describe() == (
        'fieldset.line with "Li Wei" >> div.field with "Description" >> role=textbox'
    )
    kept = templated_locator(seen, {"full_name": "Li Wei"}).within
    assert kept is not None and kept.texts == ("{full_name}", "Description")
    assert seen.texts == ("textbox", "Li Wei", "Description")
    assert seen.with_texts(str.upper).describe() == (
        'fieldset.line with "LI WEI" >> div.field with "DESCRIPTION" >> role=TEXTBOX'
    )
    assert [s.outer for s in wrapper.scopes] == [None, None]
    with pytest.raises(ValidationError, match="no outer item of its own"):
        ItemScope(css="td", text="x", outer=wrapper)
    # A recorded element's inner locator that looks inside its own item there keeps it.
    fp = Fingerprint(
        tag="input",
        item=ItemContext(
            css="fieldset.line",
            texts=("Item 2",),
            inner=Locator(
                strategy=ROLE, value="textbox", within=ItemScope(css="div.field", text="Total")
            ),
        ),
    )
    found = item_locator(fp)
    assert found is not None and found.within is not None
    assert found.within.texts == ("Item 2", "Total")
