"""TodoMVC (npm ``todomvc`` 0.1.1): one to-do app written in many front-end frameworks, each a
static page that routes by the URL's hash and keeps its items in the page's ``localStorage``.

Variants: the implementations that run in today's Chromium and read a seeded list, each
starting at ``/`` (redirected to ``/examples/<implementation>/index.html``). What differs:

* ``vanillajs``: plain DOM, rendered on ``load``; the edit box is made on the double-click;
  writes ``localStorage`` by property (``localStorage[key] = …``); toggle-all is labelled;
* ``react`` (0.12, JSX compiled in the page after ``load``): a hidden edit box in every row;
  the toggle-all checkbox has no label;
* ``vue`` (0.10): the edit box is bound live (the row's title changes while one types);
  saves from a deep ``$watch``; toggle-all unlabelled;
* ``backbone`` (1.1.2): one ``localStorage`` key per to-do plus an index of ids; rows are
  re-rendered whole on every change; toggle-all labelled;
* ``angularjs`` (1.3): the list renders after its route resolves; each row's edit box is in a
  ``<form>`` and bound live; toggle-all labelled;
* ``emberjs`` (1.6): Handlebars views with ``<script>`` markers inside the rows; the edit box
  exists only while editing; the button's name is "Clear completed ( 1 )"; toggle-all
  unlabelled;
* ``mithril``: a virtual DOM redrawn after each event; toggle-all unlabelled;
* ``knockoutjs`` (3.1): ``data-bind`` bindings; a hidden edit box in every row, bound live on
  ``keydown`` (``valueUpdate: 'afterkeydown'``: the row's title follows the keys pressed, not
  ``input`` events); toggle-all labelled; saves the whole list 500 ms after the last change
  (``rateLimit``), each to-do with an ``editing`` flag and a new one without ``completed``;
* ``knockoutjs_require``: the same app on Knockout 3.0, its modules loaded by require.js
  after ``load``; 3.0 has no ``rateLimit``, so it saves at every change (in ``knockoutjs``'s
  layout, under a key of its own); no filter links;
* ``backbone_require``: ``backbone``'s app (its storage layout and key) as require.js modules
  loaded after ``load``, its row and footer templates fetched by the ``text!`` plugin
  (requests after ``load``); toggle-all labelled.

Everywhere a row is an ``<li>`` with a checkbox and a destroy button that have no accessible
name (the title is a ``<label>`` tied to neither), the destroy button shows only on hover,
editing is a double-click on the title, and the footer button reads "Clear completed (N)".
Left out: ``jquery`` (the package lacks its jQuery: it does not start), ``angularjs_require``
(Angular 1.2.8: toggle-all's ``ng-click`` runs before its ``ng-model`` updates, so a tick marks
nothing and the next one marks all while unticking the box) and ``emberjs_require`` (the
package ships only a page that points at its readme).

Each instance is a small HTTP server of its own (a new port, so a new origin and an empty
``localStorage``) that serves the package (its implementation at every implementation's address, so
a workflow recorded on one meets another where it was recorded) and, in HTML pages only, puts one
``<script>`` first in ``<head>``: it seeds the prepared to-dos into an empty origin once (in the
implementation's own layout) and, after every ``setItem``/``removeItem``/``clear`` (or write by
property), posts the whole ``localStorage`` to the server (a synchronous request, so the server has
it before the app goes on; ``sendBeacon`` while the page closes). :meth:`TodoSite.state` reads the
last snapshot, or the seed while the app has written nothing.

Tasks: ``create`` (add two to-dos), ``search-edit`` (double-click the to-do titled exactly the
value, retype it, Enter), ``bulk-delete`` (tick the to-do titled exactly the value, "Clear
completed"), ``complete-all`` (add a to-do, tick toggle-all). Look-alikes: "Buy oat milk" and
"Buy oat milk and eggs" are both in the list; replays act on "Buy oat milk".
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final, cast
from urllib.parse import urlsplit

from browser_support import free_port
from demonstrations import Demonstrator
from playwright.async_api import Locator
from third_party import TODOMVC_VERSION, todo_items, todomvc_root

from realapps.harness import App, Instance, State, Task, Values, Variant

#: Implementation → its ``localStorage`` key.
STORAGE_KEYS: Final[dict[str, str]] = {
    "vanillajs": "todos-vanillajs",
    "react": "react-todos",
    "vue": "todos-vuejs",
    "backbone": "todos-backbone",
    "angularjs": "todos-angularjs",
    "emberjs": "todos-emberjs",
    "mithril": "todos-mithril",
    "knockoutjs": "todos-knockoutjs",
    "knockoutjs_require": "todos-knockout-require",
    "backbone_require": "todos-backbone",
}
IMPLEMENTATIONS: Final = tuple(STORAGE_KEYS)
#: How long :meth:`TodoSite.state` waits for the server to hear no more snapshots (a beacon
#: sent as the page closed may still be on its way).
_QUIET_S: Final = 0.4
_SNAPSHOT_PATH: Final = "/__storage"
_COOKIE: Final = "procedura-seeded=1"
_HEAD: Final = re.compile(r"<head(\s[^>]*)?>", re.IGNORECASE)

_SCRIPT: Final = """<script>(function () {
  var seed = %SEED%, store = window.localStorage, proto = Storage.prototype;
  var set = proto.setItem, remove = proto.removeItem, clear = proto.clear;
  if (seed && document.cookie.indexOf("%COOKIE%") < 0 && store.length === 0) {
    for (var k in seed) set.call(store, k, seed[k]);
  }
  document.cookie = "%COOKIE%; path=/";
  var origin = performance.timeOrigin, n = 0;
  function send(storage) {
    if (storage !== store) return;
    var all = {};
    for (var i = 0; i < store.length; i++) all[store.key(i)] = store.getItem(store.key(i));
    var body = JSON.stringify({t: origin, n: ++n, s: all});
    try {  // synchronous: the server has it before the app goes on (and shows the change)
      var xhr = new XMLHttpRequest();
      xhr.open("POST", "%PATH%", false);
      xhr.send(body);
    } catch (e) {  // not allowed while the page closes: a beacon survives that
      navigator.sendBeacon("%PATH%", body);
    }
  }
  proto.setItem = function () { var r = set.apply(this, arguments); send(this); return r; };
  proto.removeItem = function () { var r = remove.apply(this, arguments); send(this); return r; };
  proto.clear = function () { var r = clear.apply(this, arguments); send(this); return r; };
  var proxy = new Proxy(store, {
    get: function (t, p) { var v = t[p]; return typeof v === "function" ? v.bind(t) : v; },
    set: function (t, p, v) { t.setItem(p, v); return true; },
    deleteProperty: function (t, p) { t.removeItem(p); return true; }
  });
  Object.defineProperty(window, "localStorage", {get: function () { return proxy; }});
})();</script>"""


def _seed(implementation: str, items: list[dict[str, Any]]) -> dict[str, str]:
    """*items* (``title``, ``completed``) as *implementation* keeps them in ``localStorage``."""
    key = STORAGE_KEYS[implementation]
    ids = [f"0seed{n}-{n:04d}-4000-8000-procedura{n:03d}" for n in range(len(items))]
    plain = [{"title": i["title"], "completed": i["completed"]} for i in items]
    if implementation == "vanillajs":
        records = [{**p, "id": 1000 + n} for n, p in enumerate(plain)]
        return {key: json.dumps({"todos": records})}
    if implementation == "react":
        return {key: json.dumps([{"id": i, **p} for i, p in zip(ids, plain, strict=True)])}
    if implementation in ("backbone", "backbone_require"):
        seeded = {key: ",".join(ids)}
        for n, (i, p) in enumerate(zip(ids, plain, strict=True)):
            seeded[f"{key}-{i}"] = json.dumps({**p, "order": n + 1, "id": i})
        return seeded
    if implementation == "emberjs":
        by_id = {
            i: {"id": i, "title": p["title"], "isCompleted": p["completed"]}
            for i, p in zip(ids, plain, strict=True)
        }
        return {key: json.dumps({"todo": {"records": by_id}})}
    return {key: json.dumps(plain)}


def _items(implementation: str, storage: dict[str, str]) -> list[dict[str, Any]]:
    """The to-dos in *storage* as ``{"title", "completed"}``, in the app's own order."""
    key = STORAGE_KEYS[implementation]
    if key not in storage:
        return []
    if implementation in ("backbone", "backbone_require"):
        records = [json.loads(storage.get(f"{key}-{i}", "null")) for i in storage[key].split(",")]
        ordered = sorted((r for r in records if r), key=lambda r: r.get("order", 0))
        return todo_items({key: json.dumps(ordered)})
    if implementation == "emberjs":
        found = json.loads(storage[key]).get("todo", {}).get("records", {})
        return [
            {"title": r.get("title"), "completed": bool(r.get("isCompleted"))}
            for r in found.values()
        ]
    return todo_items({key: storage[key]})


class _Handler(SimpleHTTPRequestHandler):
    """Serves the package, instruments its HTML pages and takes the storage snapshots."""

    def __init__(self, *args: Any, site: TodoSite, **kwargs: Any) -> None:
        self.site = site
        super().__init__(*args, **kwargs)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def translate_path(self, path: str) -> str:
        """Every implementation's address serves this instance's own: a workflow recorded on
        one implementation meets this one where it was recorded (the same app, another DOM),
        as an app upgraded in place would."""
        parts = path.split("/", 3)  # "", "examples", implementation, rest
        if len(parts) >= 3 and parts[1] == "examples" and parts[2] in IMPLEMENTATIONS:
            parts[2] = self.site.implementation
            path = "/".join(parts)
        return super().translate_path(path)

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path == "/":
            self.send_response(302)
            self.send_header("Location", f"/examples/{self.site.implementation}/index.html")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if not path.endswith((".html", "/")):
            super().do_GET()
            return
        file = Path(self.translate_path(path))
        if file.is_dir():
            file = file / "index.html"
        if not file.is_file():
            self.send_error(404)
            return
        html = file.read_text(encoding="utf-8")
        head = _HEAD.search(html)
        at = head.end() if head else 0
        body = (html[:at] + self.site.script() + html[at:]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        if urlsplit(self.path).path != _SNAPSHOT_PATH:
            self.send_error(404)
            return
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with contextlib.suppress(ValueError, TypeError, KeyError):
            data = json.loads(raw)
            self.site.take((float(data["t"]), int(data["n"])), dict(data["s"]))
        self.send_response(204)
        self.end_headers()


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet about browsers that hang up (a closed page), loud about the rest."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class TodoSite:
    """One instance: the package served on a port of its own, with the storage snapshots."""

    def __init__(self, implementation: str) -> None:
        self.implementation = implementation
        self.seeded: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._snapshot: tuple[tuple[float, int], dict[str, str]] | None = None
        self._heard = time.monotonic() - _QUIET_S
        handler = functools.partial(_Handler, site=self, directory=str(todomvc_root()))
        self._server = _Server(("127.0.0.1", free_port()), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> TodoSite:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def seed(self, items: list[dict[str, Any]]) -> None:
        """What an empty origin starts with (before the page first opens)."""
        self.seeded = [{"title": i["title"], "completed": bool(i["completed"])} for i in items]

    def script(self) -> str:
        seed = _seed(self.implementation, self.seeded) if self.seeded else None
        return (
            _SCRIPT.replace("%SEED%", json.dumps(seed).replace("</", "<\\/"))
            .replace("%COOKIE%", _COOKIE)
            .replace("%PATH%", _SNAPSHOT_PATH)
        )

    def take(self, order: tuple[float, int], storage: dict[str, str]) -> None:
        with self._lock:
            self._heard = time.monotonic()
            if self._snapshot is None or order > self._snapshot[0]:
                self._snapshot = (order, storage)

    def storage(self) -> dict[str, str] | None:
        """The last ``localStorage`` the page sent (after a quiet moment), None if none."""
        while True:
            with self._lock:
                if time.monotonic() - self._heard >= _QUIET_S:
                    return None if self._snapshot is None else dict(self._snapshot[1])
            time.sleep(0.05)

    def state(self) -> State:
        storage = self.storage()
        if storage is None:
            return {"todos": [dict(i) for i in self.seeded]}
        return {"todos": _items(self.implementation, storage)}


def _variant(implementation: str) -> Variant:
    @contextlib.contextmanager
    def start() -> Iterator[Instance]:
        with TodoSite(implementation) as site:
            yield site

    return Variant("todomvc", f"todomvc {TODOMVC_VERSION} {implementation}", start)


def _seeding(*titles: str) -> Callable[[Instance], None]:
    def prepare(instance: Instance) -> None:
        cast(TodoSite, instance).seed([{"title": t, "completed": False} for t in titles])

    return prepare


# ── tasks ──────────────────────────────────────────────────────────────────────────────────

_NEW: Final = "What needs to be done?"


def _row(do: Demonstrator, title: str) -> Locator:
    """The list row whose title is exactly *title*."""
    page = do.page
    return page.get_by_role("listitem").filter(has=page.get_by_text(title, exact=True))


async def _add(do: Demonstrator, title: str) -> None:
    new = do.page.get_by_placeholder(_NEW)
    await do.type_into(new, title)
    await do.press(new, "Enter")
    await _row(do, title).wait_for()


async def create(do: Demonstrator, values: Values) -> None:
    """Add two to-dos, waiting for each to show."""
    await _add(do, values["first"])
    await _add(do, values["second"])


async def search_edit(do: Demonstrator, values: Values) -> None:
    """Double-click the to-do titled exactly *title*, retype it, Enter."""
    title = _row(do, values["title"]).get_by_text(values["title"], exact=True)
    await asyncio.sleep(do.pace.think_ms / 1000)
    await title.scroll_into_view_if_needed()
    await title.dblclick(delay=do.pace.hold_ms)
    # The one edit box that opened in the list (the row's title is hidden meanwhile).
    field = do.page.get_by_role("listitem").get_by_role("textbox")
    await do.type_into(field, values["new_title"])
    await do.press(field, "Enter")
    await _row(do, values["new_title"]).get_by_role("checkbox").wait_for()


async def bulk_delete(do: Demonstrator, values: Values) -> None:
    """Tick the to-do titled exactly *title* and clear the completed ones."""
    row = _row(do, values["title"])
    await do.check(row.get_by_role("checkbox"))
    await do.click(do.page.get_by_role("button", name="Clear completed"))
    await do.page.get_by_text(values["title"], exact=True).wait_for(state="detached")


async def complete_all(do: Demonstrator, values: Values) -> None:
    """Add a to-do, then mark every to-do as complete with the toggle-all box."""
    await _add(do, values["title"])
    # Named "Mark all as complete" where its <label for> exists; else the first checkbox, the
    # chevron left of the new to-do's field.
    named = do.page.get_by_role("checkbox", name="Mark all as complete")
    await do.check(named if await named.count() else do.page.get_by_role("checkbox").first)
    await do.page.get_by_role("button", name="Clear completed").wait_for()


def _todos(state: State) -> list[dict[str, Any]]:
    return [dict(t) for t in state.get("todos", [])]


def _created(before: State, values: Values) -> State:
    added = [{"title": values[k], "completed": False} for k in ("first", "second")]
    return {"todos": _todos(before) + added}


def _edited(before: State, values: Values) -> State:
    return {
        "todos": [
            {**t, "title": values["new_title"]} if t["title"] == values["title"] else t
            for t in _todos(before)
        ]
    }


def _deleted(before: State, values: Values) -> State:
    return {"todos": [t for t in _todos(before) if t["title"] != values["title"]]}


def _all_completed(before: State, values: Values) -> State:
    added = [*_todos(before), {"title": values["title"], "completed": False}]
    return {"todos": [{**t, "completed": True} for t in added]}


_PLANS: Final = ("Repaint the garden shed", "Call the plumber Rasmussen", "Renew passport")

TASKS: Final = (
    Task(
        name="create",
        intent="Add the to-dos {first} and {second}",
        start="/",
        demonstrate=create,
        recorded={"first": "Water the ferns", "second": "Book dentist visit"},
        replays=(
            {"first": "Order printer toner", "second": "Return library books"},
            {"first": "Send invoice to Kowalski", "second": "Defrost the freezer"},
        ),
        expected=_created,
    ),
    Task(
        name="search-edit",
        intent="Rename the to-do {title} to {new_title}",
        start="/",
        demonstrate=search_edit,
        recorded={"title": "Call the plumber Rasmussen", "new_title": "Call the electrician"},
        replays=(
            {"title": "Repaint the garden shed", "new_title": "Repaint the porch railing"},
            {"title": "Buy oat milk", "new_title": "Buy soy yoghurt"},
        ),
        expected=_edited,
        prepare=_seeding(*_PLANS, "Buy oat milk and eggs", "Buy oat milk"),
    ),
    Task(
        name="bulk-delete",
        intent="Complete the to-do {title} and clear the completed to-dos",
        start="/",
        demonstrate=bulk_delete,
        recorded={"title": "Renew passport"},
        replays=({"title": "Repaint the garden shed"}, {"title": "Buy oat milk"}),
        expected=_deleted,
        prepare=_seeding(*_PLANS, "Buy oat milk and eggs", "Buy oat milk"),
    ),
    Task(
        name="complete-all",
        intent="Add the to-do {title} and mark all to-dos as complete",
        start="/",
        demonstrate=complete_all,
        recorded={"title": "Sweep the chimney"},
        replays=({"title": "Oil the bicycle chain"}, {"title": "Prune the apple tree"}),
        expected=_all_completed,
        prepare=_seeding("Repaint the garden shed", "Renew passport"),
    ),
)

APP: Final = App(
    name="todomvc",
    variants=tuple(_variant(i) for i in IMPLEMENTATIONS),
    tasks=TASKS,
    notes=(
        "Row checkboxes and destroy buttons have no accessible name: a row is told only by its "
        "title's text; the destroy button shows only while the row is hovered.",
        "Editing opens on a double-click; the edit box has no name, no label, no placeholder.",
        "The toggle-all checkbox is named 'Mark all as complete' in vanillajs, backbone, "
        "angularjs and the knockoutjs and require.js ones; elsewhere it is the first, unnamed "
        "checkbox.",
        "Look-alike titles: 'Buy oat milk' and 'Buy oat milk and eggs' (match exactly).",
        "react (JSX compiled in the page), angularjs, vanillajs and the require.js ones "
        "(modules and templates fetched after load) show the list only after the load event: "
        "wait for the rows, not for the page to load.",
        "knockoutjs saves 500 ms after the last change: wait for the save before closing.",
    ),
)
