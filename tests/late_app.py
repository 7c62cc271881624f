"""A shopping list that gets ready late or saves late, as real apps do: the page replay must
wait for, and the judge of what was kept (the server hears every write to the app's storage
as it is made, so it knows what the storage held when the browser closed).

Modes (``?mode=``): ``ready`` (set up at once, saves at once), ``late`` (handlers 1.5 s after
``load``), ``loader`` (a loader fetches the app after ``load``; it takes 1.5 s), ``lazy`` (sets
itself up on the first Enter, missing it), ``debounce`` (saves 600 ms after the last change),
``fetch`` (asks the server for a token, then saves), ``forgetful`` (keeps the list in memory
only), ``unsaved`` (saves nothing and asks to stay), ``dead`` (ignores the key).
Used by the replay tests and by ``bench/replay_overhead.py``.
"""

from __future__ import annotations

import contextlib
import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from desktop_app.core.models.target import Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import (
    FillStep,
    GotoStep,
    Parameter,
    PressStep,
    TextPresent,
    Workflow,
)

__all__ = ["MODES_TO_WAIT_FOR", "STORED", "ListHandler", "add_item"]

#: The modes whose item a run keeps only by waiting for the app (to get ready, to save).
MODES_TO_WAIT_FOR = ("late", "loader", "debounce", "fetch")

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


class ListHandler(BaseHTTPRequestHandler):
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
        # A browser closed while the app waited (a script that did not wait for its save)
        # hangs up first: nothing to answer.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def add_item(mode: str, *, timeout_s: float = 10) -> Workflow:
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
