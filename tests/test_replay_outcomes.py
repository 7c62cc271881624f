"""What a run reports is what the page did: a Save that does nothing is never "succeeded", a
field the page emptied fails its step, the browser's own questions are answered as the person
answered them (and one nobody answered is cancelled). Pages of our own; the judge is what the
server received.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from recording_support import record_demonstration
from replay_support import approve, run, services, serving

from desktop_app.core.induction.heuristic import induce
from desktop_app.core.models.run import RunStatus, StepStatus
from desktop_app.core.models.target import ItemScope, Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import (
    CheckStep,
    ClickStep,
    FillStep,
    GotoStep,
    Parameter,
    PressStep,
    TextPresent,
    Workflow,
)

pytestmark = pytest.mark.slow

_FORM = """<!doctype html><title>Note</title><h1>Note</h1>
<label>Note <input id=note></label> <button id=save>Save</button><p id=out role=status></p>
<script>
  const mode = new URLSearchParams(location.search).get("mode");
  const note = document.getElementById("note");
  if (mode === "reset") note.addEventListener("input", () => { note.value = ""; });
  // Reads the field after a key, as Knockout's valueUpdate: "afterkeydown" does.
  let typed = "";
  note.addEventListener("keydown", () => setTimeout(() => { typed = note.value; }, 0));
  document.getElementById("save").addEventListener("click", () => {
    if (mode === "dead") return;  // the button looks fine and does nothing
    if (mode === "keys") note.value = typed;  // what its model holds, shown back
    const out = document.getElementById("out");
    if (mode === "optimistic") {  // says it saved at once, and takes it back when refused
      fetch("/refused?" + encodeURIComponent(note.value)).then((r) => {
        if (!r.ok) out.textContent = "Could not save: the note is locked";
      });
    } else {
      fetch("/saved?" + encodeURIComponent(note.value));
    }
    out.textContent = "Saved " + note.value;
  });
</script>"""

_PICKER = """<!doctype html><title>Birthday</title><h1>Birthday</h1>
<div style="position: relative"><label>Birthday <input id=day></label>
<div id=picker hidden style="position: absolute; top: 24px; left: 0; width: 300px;
  height: 120px; background: #eee">1 2 3 4 5 6 7</div></div>
<p style="margin-top: 30px"><label><input type=checkbox id=vip> VIP</label></p>
<script>
  const picker = document.getElementById("picker");
  document.getElementById("day").addEventListener("focus", () => { picker.hidden = false; });
  addEventListener("keydown", (e) => { if (e.key === "Escape") picker.hidden = true; });
  document.getElementById("vip").addEventListener("change", (e) => {
    fetch("/vip?" + e.target.checked);
  });
</script>"""

_DELETE = """<!doctype html><title>Records</title><h1>Records</h1>
<button id=delete>Delete all</button><p id=out role=status></p>
<script>
  document.getElementById("delete").addEventListener("click", () => {
    if (!confirm("Are you sure you want to delete all records?")) return;
    fetch("/deleted");
    document.getElementById("out").textContent = "All records deleted";
  });
</script>"""

# A list whose row title follows its edit box as one types (Vue's live binding), saved on Enter.
_ROWS = """<!doctype html><title>Rows</title><h1>Rows</h1><ul>
<li><span>Buy oat milk</span> <input aria-label="Title" value="Buy oat milk"></li>
<li><span>Buy oat milk and eggs</span> <input aria-label="Title" value="Buy oat milk and eggs"></li>
</ul><p id=out role=status></p>
<script>
  // mode=short: the app keeps only the first 12 characters of a title.
  const short = new URLSearchParams(location.search).get("mode") === "short";
  for (const input of document.querySelectorAll("li input")) {
    const title = input.previousElementSibling;
    input.addEventListener("input", () => {
      if (short) input.value = input.value.slice(0, 12);
      title.textContent = input.value;
    });
    input.addEventListener("keydown", (e) => {
      if (e.key !== "Enter") return;
      fetch("/renamed?" + encodeURIComponent(input.value));
      document.getElementById("out").textContent = "Renamed to " + input.value;
    });
  }
</script>"""

HITS: list[str] = []


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        HITS.append(self.path)
        if self.path.startswith("/refused"):
            time.sleep(0.4)  # the server thinks a while before it says no
            self.send_response(409)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = _FORM
        if self.path.startswith("/records"):
            body = _DELETE
        elif self.path.startswith("/picker"):
            body = _PICKER
        elif self.path.startswith("/rows"):
            body = _ROWS
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    HITS.clear()
    with serving(_Handler) as url:
        yield url


def _by_role(role: str, name: str) -> Target:
    return Target(locators=(Locator(strategy=LocatorStrategy.ROLE, value=role, name=name),))


def _save_a_note(mode: str) -> Workflow:
    return Workflow(
        name="Save a note",
        domains=("127.0.0.1",),
        parameters=(Parameter(name="note", default="Buy stamps"),),
        steps=(
            GotoStep(title="Open the form", url=f"http://127.0.0.1:1/form?mode={mode}"),
            FillStep(title="Type the note", target=_by_role("textbox", "Note"), value="{note}"),
            ClickStep(title="Save", target=_by_role("button", "Save")),
        ),
        success=(TextPresent(text="Saved {note}"),),
    )


def test_a_run_succeeds_only_when_its_success_check_holds(site: str) -> None:
    with services() as sv:
        done = run(sv, approve(sv, _save_a_note("ok")), site, values={"note": "Call Ida"})
        dead = run(sv, approve(sv, _save_a_note("dead")), site, values={"note": "Call Ida"})
        unchecked = _save_a_note("dead").model_copy(update={"success": ()})
        unknown = run(sv, approve(sv, unchecked), site, values={"note": "Call Ida"})
    assert done.run.status is RunStatus.SUCCEEDED, done.run.error
    assert done.run.steps[-1].title == "Check that the task was done"
    assert "/saved?Call%20Ida" in HITS
    # Every step "worked" and nothing happened: never succeeded.
    assert dead.run.status is RunStatus.FAILED
    assert "success check did not hold" in (dead.run.error or "")
    assert dead.run.steps[-1].status is StepStatus.FAILED
    assert unknown.run.status is RunStatus.UNVERIFIED
    assert HITS.count("/saved?Call%20Ida") == 1


def test_a_save_the_page_takes_back_is_never_succeeded(site: str) -> None:
    """The page shows "Saved …" at once and takes it back when the server refuses: the
    success check looks only once the answer came and the page reacted to it."""
    with services() as sv:
        result = run(sv, approve(sv, _save_a_note("optimistic")), site, values={"note": "X1"})
    assert "/refused?X1" in HITS
    assert result.run.status is RunStatus.FAILED
    assert "success check did not hold" in (result.run.error or "")


def test_a_page_that_reads_a_field_on_its_keys_gets_what_was_typed(site: str) -> None:
    with services() as sv:
        result = run(sv, approve(sv, _save_a_note("keys")), site, values={"note": "Call Ida"})
    assert result.run.status is RunStatus.SUCCEEDED, result.run.error
    assert "/saved?Call%20Ida" in HITS


def _rename_a_row(mode: str = "") -> Workflow:
    scoped = Locator(
        strategy=LocatorStrategy.ROLE,
        value="textbox",
        name="Title",
        within=ItemScope(css="li", text="{title}"),
    )
    box = Target(locators=(scoped,))
    return Workflow(
        name="Rename a row",
        domains=("127.0.0.1",),
        parameters=(Parameter(name="title"), Parameter(name="new_title")),
        steps=(
            GotoStep(title="Open the list", url=f"http://127.0.0.1:1/rows?mode={mode}"),
            FillStep(title="Type the new title", target=box, value="{new_title}"),
            PressStep(title="Press Enter", key="Enter"),
        ),
        success=(TextPresent(text="Renamed to {new_title}"),),
    )


def test_a_field_whose_row_follows_what_is_typed_gets_all_of_it(site: str) -> None:
    """The edit box is found by its row's title, which changes as the new title is typed:
    the last key still goes to that box, and the whole new title is saved."""
    with services() as sv:
        values = {"title": "Buy oat milk", "new_title": "Buy soy yoghurt"}
        result = run(sv, approve(sv, _rename_a_row()), site, values=values)
    assert result.run.status is RunStatus.SUCCEEDED, result.run.error
    assert HITS[-1] == "/renamed?Buy%20soy%20yoghurt"


def test_a_field_whose_row_follows_it_is_read_back_where_it_was_typed(site: str) -> None:
    """The box cut the new title short while its row's title followed it, so the box's
    locator no longer finds it: what it holds is still read back, from the box typed into,
    and the run stops before Enter saves a title nobody asked for."""
    with services() as sv:
        values = {"title": "Buy oat milk", "new_title": "Buy soy yoghurt"}
        result = run(sv, approve(sv, _rename_a_row("short")), site, values=values)
    assert result.run.status is RunStatus.FAILED
    fill = result.run.steps[1]
    assert fill.error == "after the fill, the field holds 'Buy soy yogh', not 'Buy soy yoghurt'"
    assert not [hit for hit in HITS if hit.startswith("/renamed")]


def test_a_field_the_page_emptied_fails_its_step(site: str) -> None:
    with services() as sv:
        result = run(sv, approve(sv, _save_a_note("reset")), site, values={"note": "Call Ida"})
    assert result.run.status is RunStatus.FAILED
    fill = result.run.steps[1]
    assert fill.status is StepStatus.FAILED
    assert fill.error == "after the fill, the field holds '', not 'Call Ida'"
    assert not any(hit.startswith("/saved") for hit in HITS)


async def _delete_all(do: Any) -> None:
    page = do.page
    page.once("dialog", lambda dialog: dialog.accept())
    await do.click(page.get_by_role("button", name="Delete all"))
    await page.get_by_text("All records deleted").wait_for()


def test_a_question_the_browser_asks_is_answered_as_the_person_did(site: str) -> None:
    from demonstrations import MACHINE, Scenario

    scenario = Scenario("delete", "own", "", "Delete all records", _delete_all)
    with services() as sv:
        trajectory = _record(sv, f"{site}/records", scenario, MACHINE)
        workflow = induce(trajectory).workflow
        click = next(s for s in workflow.steps if isinstance(s, ClickStep))
        assert click.dialog == "accept"
        assert click.irreversible, "OK to 'Are you sure you want to delete…' cannot be undone"
        assert "then OK to 'Are you sure you want to delete all records?'" in click.title
        HITS.clear()
        approved_version = approve(sv, workflow)
        unattended = run(sv, approved_version, site)  # nobody there, no --yes: not deleted
        assert unattended.run.status is RunStatus.FAILED
        assert "only with --yes" in (unattended.run.error or "")
        assert "/deleted" not in HITS
        result = run(sv, approved_version, site, assume_yes=True)
        assert result.run.status is RunStatus.SUCCEEDED, result.run.error
        assert "/deleted" in HITS
        assert "answered OK" in (result.run.steps[1].detail or "")

        # The same click where the recording met no question: cancelled, and the step fails.
        HITS.clear()
        unasked = workflow.model_copy(
            update={
                "steps": tuple(
                    s.model_copy(update={"dialog": None}) if s is click else s
                    for s in workflow.steps
                )
            }
        )
        refused = run(sv, approve(sv, unasked), site, assume_yes=True)
        assert refused.run.status is RunStatus.FAILED
        assert "a question the recording never answered; it was cancelled" in (
            refused.run.error or ""
        )
        assert "/deleted" not in HITS


def _record(sv: Any, url: str, scenario: Any, pace: Any) -> Any:
    import asyncio

    return asyncio.run(record_demonstration(sv, url, scenario, pace))


def test_a_popup_left_open_over_the_next_element_is_closed_with_escape(site: str) -> None:
    workflow = Workflow(
        name="Birthday and VIP",
        domains=("127.0.0.1",),
        steps=(
            GotoStep(title="Open the form", url="http://127.0.0.1:1/picker"),
            FillStep(title="Type the day", target=_by_role("textbox", "Birthday"), value="5"),
            CheckStep(title="Tick VIP", target=_by_role("checkbox", "VIP"), timeout_s=3),
        ),
        success=(TextPresent(text="Birthday"),),
    )
    with services() as sv:
        result = run(sv, approve(sv, workflow), site)
    assert result.run.status is RunStatus.SUCCEEDED, result.run.error
    assert "/vip?true" in HITS
    assert "pressed Escape" in (result.run.steps[2].detail or "")
