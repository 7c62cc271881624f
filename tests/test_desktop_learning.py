"""What a healed desktop click teaches (the repair a version proposes, the experience kept) and
which remembered repairs a later run may use, over the real stores. The whole loop under Xvfb
is in test_desktop_replay.py."""

from __future__ import annotations

from replay_support import approve, services

from desktop_app.core.diff import diff_workflows, render_text
from desktop_app.core.models.common import BoundingBox, Point
from desktop_app.core.models.experience import Experience
from desktop_app.core.models.run import Resolution
from desktop_app.core.models.target import Fingerprint, Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import DesktopClickStep, Workflow
from desktop_app.core.replay.desktop_learning import Spot, cut_box, remembered, repair_of_click
from desktop_app.core.replay.learning import repaired_workflow
from desktop_app.core.replay.memory import ExperienceMemory
from desktop_app.core.replay.parameters import bind_parameters

WINDOW = BoundingBox(x=300, y=200, width=400, height=300)
ANCHOR = Locator(strategy=LocatorStrategy.IMAGE_ANCHOR, value="media/recorded.png")
BUTTON = Locator(strategy=LocatorStrategy.ACCESSIBLE, value="push button", name="Save")


def _save_click() -> DesktopClickStep:
    """A click on Save at (100, 50) in its window: the anchor (80 x 20) at (60, 40), the
    button's box (90, 42, 30, 16)."""
    return DesktopClickStep(
        title="Click Save",
        window_title="Contact form",
        point=Point(x=100, y=50),
        target=Target(
            locators=(ANCHOR, BUTTON),
            fingerprint=Fingerprint(
                bbox=BoundingBox(x=60, y=40, width=80, height=20),
                attributes={"button": "left", "element_box": "90,42,30,16"},
            ),
        ),
    )


def test_a_click_found_elsewhere_proposes_its_new_spot_and_anchor_and_drops_the_old_one() -> None:
    step = _save_click()
    workflow = Workflow(name="Save a contact", steps=(step,))
    # Found at twice the size, 200 px right and 100 px down of where it was in the window.
    spot = Spot(Point(x=300 + 300, y=200 + 150), Resolution.FINGERPRINT, "found", scale=2.0)
    cut = cut_box(spot.point, Point(x=40, y=10), BoundingBox(x=60, y=40, width=80, height=20),
                  2.0, WINDOW)  # fmt: skip
    assert cut == BoundingBox(x=520, y=330, width=160, height=40)
    repair = repair_of_click(
        workflow, step, spot, window=WINDOW, window_title="Contact form",
        anchor_ref="media/fresh.png", cut=cut,
    )  # fmt: skip
    assert repair is not None and repair.failed == (ANCHOR, BUTTON)
    proposed = repaired_workflow(workflow, [repair], bind_parameters(workflow, {}))
    assert proposed is not None
    (new,) = proposed.steps
    assert isinstance(new, DesktopClickStep) and new.target is not None
    assert new.point == Point(x=300, y=150)
    # The fresh anchor first, the element's accessible locator kept, the stale image gone.
    assert [loc.value for loc in new.target.locators] == ["media/fresh.png", "push button"]
    fingerprint = new.target.fingerprint
    assert fingerprint is not None
    assert fingerprint.bbox == BoundingBox(x=220, y=130, width=160, height=40)
    # The button's box moved and grew with the click: rung 0 clicks the same place in it.
    assert fingerprint.attributes["element_box"] == "280,134,60,32"
    # Review shows what moved.
    shown = "\n".join(render_text(diff_workflows(workflow, proposed)))
    assert "point: x=100, y=50 → x=300, y=150" in shown, shown
    assert "image_anchor=media/recorded.png → image_anchor=media/fresh.png" in shown, shown
    assert "box moved and resized" in shown, shown


def test_an_anchor_cut_past_the_window_is_clipped_and_a_sliver_is_none() -> None:
    anchor = BoundingBox(x=0, y=0, width=80, height=20)
    clipped = cut_box(Point(x=305, y=210), Point(x=40, y=10), anchor, 1.0, WINDOW)
    assert clipped == BoundingBox(x=300, y=200, width=45, height=20)
    assert cut_box(Point(x=302, y=210), Point(x=78, y=10), anchor, 1.0, WINDOW) is None


def test_only_the_steps_own_repairs_for_the_same_drift_are_remembered_for_it() -> None:
    step = _save_click()
    with services() as sv:
        version = approve(sv, Workflow(name="Save a contact", steps=(step,)))
        workflow = version.workflow
        memory = ExperienceMemory(sv.experiences, None)
        fresh = Locator(strategy=LocatorStrategy.IMAGE_ANCHOR, value="media/fresh.png")

        def kept(**update: object) -> Experience:
            fields: dict[str, object] = {
                "workflow_id": workflow.id,
                "workflow_version": 1,
                "step_id": step.id,
                "step_title": step.title,
                "step_kind": step.kind,
                "page_title": "Contact form",
                "failed_locators": (ANCHOR, BUTTON),
                "repaired_locator": fresh,
                "fingerprint": Fingerprint(bbox=BoundingBox(x=260, y=190, width=80, height=20)),
                "point": Point(x=300, y=200),
                "resolution": Resolution.FINGERPRINT,
            }
            experience = Experience.model_validate({**fields, **update})
            memory.remember(experience)
            return experience

        by_image = kept()
        by_model = kept(resolution=Resolution.LLM, proven=False)
        kept(failed_locators=(ANCHOR,))  # found when the step had other locators
        kept(point=None)  # no spot to click
        kept(repaired_locator=Locator(strategy=LocatorStrategy.CSS, value="#save"))  # a page's

        unattended = remembered(memory, workflow, step, could_ask=False)
        assert [e.id for e in unattended] == [by_image.id]  # the model's pick is unproven
        attended = remembered(memory, workflow, step, could_ask=True)
        assert {e.id for e in attended} == {by_image.id, by_model.id}


def test_an_image_anchors_media_ref_is_never_taken_for_text() -> None:
    anchor = Locator(strategy=LocatorStrategy.IMAGE_ANCHOR, value="media/ab12.png")
    assert anchor.texts == ()
    assert anchor.with_texts(lambda text: text.replace("ab", "{name}")) == anchor
