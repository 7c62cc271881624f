"""Replay waits for the app the way a person does: a page that attaches its handlers a moment
after ``load`` (by a timer, or by a script a loader fetches late) gets its input, a save
debounced or sent by a late request is made before the browser closes, an action the page
ignores is done once more when it has caught up and fails when it still does nothing, and an
item the app did not keep is not "succeeded". Pages of our own; the judge is what the app
wrote to its storage (mirrored to the server as it was written) after the browser closed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from replay_support import approve, run, services, serving

from desktop_app.core.models.run import RunStatus, StepStatus
from desktop_app.core.models.target import Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import (
    FillStep,
    GotoStep,
    Parameter,
    PressStep,
    TextPresent,
    Workflow,
)

pytestmark = pytest.mark.slow

# A shopping list kept in localStorage. ``stored`` writes the storage and tells the server at
# once (a synchronous request: the server has it before the app goes on), so the server knows
# what the app's storage held when the browser closed.
_LIST = """<!doctype html><title>List</title><h1>Shopping</h1>
<label>New item <input id=new autocomplete=off></label>
<ul id=list></ul>
<script>
  const mode = new URLSearchParams(location.search).get("mode") || "ready";
  const items = JSON.parse(localStorage.getItem("items") || "[]");
  const list = document.getElementById("list");
  function stored(saved) {
    localStorage.setItem("items", JSON.stringify(saved));
    const request = new XMLHttpRequest();
    request.open("POST", "/stored", false);
    request.send(JSON.stringify(saved));
  }
  function show() {
    list.replaceChildren(...items.map((text) => {
      const li = document.createElement("li");
      li.textContent = text;
      return li;
    }));
  }
  let pending = null;
  function save() {
    if (mode === "debounce") {  // saves 600 ms after the last change
      clearTimeout(pending);
      pending = setTimeout(() => stored(items), 600);
    } else if (mode === "fetch") {  // asks the server for a token first, then saves there
      fetch("/token").then((r) => r.text()).then((token) =>
        fetch("/stored?" + token, {method: "POST", body: JSON.stringify(items)}));
    } else if (mode === "forgetful") {  // keeps the list in memory, only a count in storage
      localStorage.setItem("count", String(items.length));
    } else if (mode === "unsaved") {  // saves nothing, and asks to stay when one leaves
      localStorage.setItem("count", String(items.length));
      addEventListener("beforeunload", (e) => { e.preventDefault(); e.returnValue = ""; });
    } else {
      stored(items);
    }
  }
  window.start = () => {
    const input = document.getElementById("new");
    input.addEventListener("keydown", (e) => {
      if (e.key !== "Enter" || mode === "dead") return;
      const text = input.value.trim();
      if (!text) return;
      items.push(text);
      input.value = "";
      show();
      save();
    });
    show();
  };
  if (mode === "late") {  // handlers 1.5 s after load
    addEventListener("load", () => setTimeout(start, 1500));
  } else if (mode === "lazy") {  // shows the list, sets itself up on the first Enter, missing it
    show();
    const input = document.getElementById("new");
    const wake = (e) => {
      if (e.key !== "Enter") return;
      input.removeEventListener("keydown", wake);
      setTimeout(start, 300);
    };
    input.addEventListener("keydown", wake);
  } else if (mode === "loader") {  // a loader fetches the app after load; it takes 1.5 s
    addEventListener("load", () => {
      const script = document.createElement("script");
      script.src = "/app.js";
      document.head.append(script);
    });
  } else {
    start();
  }
</script>"""

STORED: list[list[str]] = []


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path.startswith("/app.js"):
            time.sleep(1.5)
            self._send(b"start();", "text/javascript")
        elif self.path.startswith("/token"):
            time.sleep(0.6)
            self._send(b"t1", "text/plain")
        else:
            self._send(_LIST.encode(), "text/html; charset=utf-8")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        STORED.append(json.loads(self.rfile.read(length) or b"[]"))
        self._send(b"", "text/plain")

    def _send(self, body: bytes, kind: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    STORED.clear()
    with serving(_Handler) as url:
        yield url


def _add_item(mode: str, *, timeout_s: float = 10) -> Workflow:
    """Open the list in *mode*, type the item, press Enter; the item is shown at the end."""
    field = Target(
        locators=(Locator(strategy=LocatorStrategy.ROLE, value="textbox", name="New item"),)
    )
    return Workflow(
        name="Add an item",
        domains=("127.0.0.1",),
        parameters=(Parameter(name="item"),),
        steps=(
            GotoStep(title="Open the list", url=f"http://127.0.0.1:1/?mode={mode}"),
            FillStep(title="Type the item", target=field, value="{item}", timeout_s=timeout_s),
            PressStep(
                title="Press Enter", target=field, key="Enter", reacts=True, timeout_s=timeout_s
            ),
        ),
        success=(TextPresent(text="{item}"),),
    )


@pytest.mark.parametrize("mode", ["late", "loader", "debounce", "fetch"])
def test_an_item_is_added_and_kept_whenever_the_app_gets_ready_or_saves(
    site: str, mode: str
) -> None:
    with services() as sv:
        result = run(sv, approve(sv, _add_item(mode)), site, values={"item": "Oat milk"})
    assert result.run.status is RunStatus.SUCCEEDED, result.run.error
    # The judge: what the app wrote to its storage, with the browser closed.
    assert STORED and STORED[-1] == ["Oat milk"], STORED
    # The time spent waiting for the app is in the run record.
    waited = sum(s.waited_ms for s in result.run.steps) + result.run.closing_wait_ms
    assert waited > 0


def test_a_page_ready_only_after_it_ignored_the_key_gets_it_once_more(site: str) -> None:
    with services() as sv:
        result = run(sv, approve(sv, _add_item("lazy")), site, values={"item": "Eggs"})
    assert result.run.status is RunStatus.SUCCEEDED, result.run.error
    assert STORED and STORED[-1] == ["Eggs"], STORED
    press = result.run.steps[2]
    assert "did it again" in (press.detail or ""), press.detail


def test_a_key_the_page_silently_ignores_fails_its_step(site: str) -> None:
    with services() as sv:
        result = run(sv, approve(sv, _add_item("dead", timeout_s=3)), site, values={"item": "Tea"})
    assert result.run.status is RunStatus.FAILED
    press = result.run.steps[2]
    assert press.status is StepStatus.FAILED
    assert "did not react" in (press.error or ""), press.error
    assert not STORED


def test_an_item_the_app_did_not_keep_is_not_succeeded(site: str) -> None:
    with services() as sv:
        result = run(sv, approve(sv, _add_item("forgetful")), site, values={"item": "Bread"})
    assert result.run.status is RunStatus.UNVERIFIED, result.run.status
    assert "after the page was loaded again, expected" in (result.run.error or "")
    assert "the app may not have kept" in (result.run.error or "")


def test_a_page_that_asks_to_stay_is_not_left_and_not_succeeded(site: str) -> None:
    with services() as sv:
        result = run(sv, approve(sv, _add_item("unsaved")), site, values={"item": "Jam"})
    assert result.run.status is RunStatus.UNVERIFIED, result.run.status
    assert "the page asked to stay" in (result.run.error or ""), result.run.error


def test_an_item_the_app_kept_in_its_storage_is_seen_again_after_a_reload(site: str) -> None:
    with services() as sv:
        result = run(sv, approve(sv, _add_item("ready")), site, values={"item": "Rice"})
    assert result.run.status is RunStatus.SUCCEEDED, result.run.error
    assert STORED[-1] == ["Rice"]


async def _add_oat_milk(do: Any) -> None:
    field = do.page.get_by_role("textbox", name="New item")
    await do.type_into(field, "Oat milk")
    await do.press(field, "Enter")
    await do.page.get_by_text("Oat milk").wait_for()


def test_a_recorded_key_the_page_reacted_to_must_get_a_reaction_again(site: str) -> None:
    import asyncio

    from demonstrations import MACHINE, Scenario
    from recording_support import record_demonstration

    from desktop_app.core.induction.heuristic import induce

    scenario = Scenario("add", "own", "", "Add 'Oat milk' to the shopping list", _add_oat_milk)
    with services() as sv:
        trajectory = asyncio.run(record_demonstration(sv, f"{site}/?mode=ready", scenario, MACHINE))
        workflow = induce(trajectory).workflow
        press = next(s for s in workflow.steps if isinstance(s, PressStep))
        fill = next(s for s in workflow.steps if isinstance(s, FillStep))
        assert press.reacts, "the list grew when Enter was pressed"
        assert not fill.reacts, "what typing shows depends on what is typed"
        # Replayed where the page ignores the key: the run stops there, nothing is kept.
        STORED.clear()
        dead = workflow.model_copy(
            update={
                "steps": tuple(
                    s.model_copy(update={"url": f"{site}/?mode=dead"})
                    if isinstance(s, GotoStep)
                    else s
                    for s in workflow.steps
                )
            }
        )
        result = run(sv, approve(sv, dead), site, values={workflow.parameters[0].name: "Tea"})
    assert result.run.status is RunStatus.FAILED
    assert "did not react" in (result.run.error or ""), result.run.error
    assert not STORED
