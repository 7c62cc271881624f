"""Never a look-alike by its position: rows that show the same thing, options of one group.

A page of our own keeps contacts on the server (the judge is its data, never the run's report).
Targets are described by the real capture script on the page as it was "recorded" (one search
result, options in their first order), then the run meets the page as it is now (two similar
results, options relabeled and reordered). A fallback locator that picks by position must
never decide; the element that is clearly the recorded one may be acted on; true look-alikes
end the run with nothing done.
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from replay_support import approve, described, run, services, serving

from desktop_app.core.models.run import FailureKind, Resolution, RunStatus
from desktop_app.core.models.target import Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import (
    CheckStep,
    ClickStep,
    GotoStep,
    SelectStep,
    TextPresent,
    Workflow,
)

pytestmark = pytest.mark.slow


@dataclass
class _Contacts:
    """The server's own data."""

    rows: dict[int, tuple[str, str]] = field(default_factory=dict)  # id -> (name, status)
    saved_status: list[str] = field(default_factory=list)
    radio_order: tuple[tuple[str, str], ...] = (
        ("lead", "Lead"),
        ("customer", "Customer"),
        ("former", "Former"),
    )


DATA = _Contacts()


def _list_page(query: str, message: str = "") -> str:
    shown = sorted(
        ((i, n, s) for i, (n, s) in DATA.rows.items() if query.lower() in n.lower()),
        key=lambda row: -row[0],
    )
    rows = "".join(
        f"<tr><td><input type=checkbox name=sel value={i}></td>"
        f"<td><a href='/contacts/{i}'>{html.escape(n)}</a></td><td>{s}</td></tr>"
        for i, n, s in shown
    )
    note = f"<p role=status>{html.escape(message)}</p>" if message else ""
    return (
        "<!doctype html><title>Contacts</title><h1>Contacts</h1>"
        f"{note}<form method=get action=/contacts><input name=q aria-label=Search "
        f"value='{html.escape(query)}'><button>Search</button></form>"
        "<form method=post action=/delete><table><tbody>"
        f"{rows}</tbody></table>"
        "<select name=action aria-label=Action><option value=''>---</option>"
        "<option value=delete>Delete selected</option></select>"
        "<button>Go</button></form>"
    )


def _form_page() -> str:
    radios = "".join(
        f"<label><input type=radio name=status value={value}> {label}</label>"
        for value, label in DATA.radio_order
    )
    return (
        "<!doctype html><title>Status</title><h1>Status</h1><form method=post action=/save>"
        f"<fieldset><legend>Status</legend>{radios}</fieldset><button>Save</button></form>"
    )


class _Handler(BaseHTTPRequestHandler):
    def _send(self, body: str, status: int = 200) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        if parts.path == "/contacts":
            self._send(_list_page(query.get("q", [""])[0], query.get("m", [""])[0]))
        elif parts.path == "/form":
            self._send(_form_page())
        else:
            self._send("<!doctype html><title>Contact</title><h1>Contact</h1>")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        form = parse_qs(self.rfile.read(length).decode())
        if self.path == "/delete" and form.get("action") == ["delete"]:
            ids = [int(i) for i in form.get("sel", [])]
            for i in ids:
                DATA.rows.pop(i, None)
            location = f"/contacts?m=Deleted+{len(ids)}+contact"
        elif self.path == "/save":
            DATA.saved_status.extend(form.get("status", []))
            location = "/form?saved=1"
        else:
            location = "/contacts"
        self.send_response(303)
        self.send_header("Location", location)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    global DATA
    DATA = _Contacts()
    with serving(_Handler) as url:
        yield url


def _only(target: Target, *strategies: LocatorStrategy) -> Target:
    """*target* keeping only its locators of *strategies* (outside any item), in their order."""
    kept = tuple(
        loc for loc in target.locators if loc.strategy in strategies and loc.within is None
    )
    assert kept, f"none of {strategies} in {[loc.describe() for loc in target.locators]}"
    return target.model_copy(update={"locators": kept})


def _delete_workflow(row_box: Target, query: str) -> Workflow:
    def role(kind: str, name: str) -> Target:
        return Target(locators=(Locator(strategy=LocatorStrategy.ROLE, value=kind, name=name),))

    return Workflow(
        name="Delete a contact",
        domains=("127.0.0.1",),
        steps=(
            GotoStep(title="Search", url=f"http://127.0.0.1:1/contacts?q={query}"),
            CheckStep(title="Tick the contact's row", target=row_box, timeout_s=3),
            SelectStep(title="Choose delete", target=role("combobox", "Action"), value="delete"),
            ClickStep(title="Go", target=role("button", "Go"), irreversible=True),
        ),
        success=(TextPresent(text="Deleted 1 contact"),),
    )


def _recorded_row_box(site: str) -> Target:
    """The row checkbox of "Maria Garcia" as recorded when her search showed one row."""
    DATA.rows = {2: ("Maria Garcia", "Customer")}
    box = Locator(strategy=LocatorStrategy.CSS, value="input[name=sel]")
    target = described(f"{site}/contacts?q=Maria+Garcia", box)
    DATA.rows = {2: ("Maria Garcia", "Customer"), 5: ("Maria Garcia-Lopez", "Lead")}
    return target


def test_the_recorder_finds_a_row_by_what_it_shows_not_by_its_place(site: str) -> None:
    target = _recorded_row_box(site)
    within = [loc for loc in target.locators if loc.within is not None]
    assert within, [loc.describe() for loc in target.locators]
    assert within[0].within is not None and within[0].within.text == "Maria Garcia"
    assert not any("value=" in loc.value for loc in target.locators), "a record key was kept"
    with services() as sv:
        workflow = approve(sv, _delete_workflow(target, "Maria+Garcia"))
        result = run(sv, workflow, site, assume_yes=True)  # a delete, unattended: --yes
    assert result.run.status is RunStatus.SUCCEEDED, result.run.error
    assert set(DATA.rows) == {5}, "only the row that shows exactly 'Maria Garcia' goes"
    assert result.run.steps[1].resolution is Resolution.DIRECT


def test_a_positional_fallback_never_picks_between_similar_rows(site: str) -> None:
    # What an older recording kept for a nameless box: a selector two rows match now, and an
    # XPath by position, which finds the first row: Maria Garcia-Lopez's.
    target = _only(_recorded_row_box(site), LocatorStrategy.CSS, LocatorStrategy.XPATH)
    assert any(loc.positional for loc in target.locators)
    with services() as sv:
        result = run(sv, approve(sv, _delete_workflow(target, "Maria+Garcia")), site)
    assert 5 in DATA.rows, "the look-alike row was deleted"
    tick = result.run.steps[1]
    assert "look-alike" in (tick.detail or "") or "different element" in (tick.detail or "")
    # The row that is clearly the recorded one (it shows her name) may still be found.
    if result.run.status is RunStatus.SUCCEEDED:
        assert set(DATA.rows) == {5}
        assert tick.resolution is Resolution.FINGERPRINT
    else:
        assert set(DATA.rows) == {2, 5}


def test_rows_that_show_the_same_end_the_run_with_nothing_done(site: str) -> None:
    target = _recorded_row_box(site)
    DATA.rows = {2: ("Maria Garcia", "Customer"), 7: ("Maria Garcia", "Customer")}
    with services() as sv:
        result = run(sv, approve(sv, _delete_workflow(target, "Maria+Garcia")), site)
    assert result.run.status is RunStatus.FAILED
    assert set(DATA.rows) == {2, 7}
    assert result.run.steps[-1].title == "Tick the contact's row"
    assert result.run.steps[-1].failure is FailureKind.AMBIGUOUS
    assert len(result.run.steps[-1].nearest) >= 2  # both rows' boxes, named


def test_a_fallback_never_lands_on_another_option_of_the_group(site: str) -> None:
    customer = Locator(strategy=LocatorStrategy.ROLE, value="radio", name="Customer")
    recorded = described(f"{site}/form", customer)
    assert recorded.fingerprint is not None
    assert recorded.fingerprint.attributes.get("option-value") == "customer"
    # Relabeled and reordered: the recorded name is gone, the XPath's place holds "Prospect".
    DATA.radio_order = (("former", "Past"), ("lead", "Prospect"), ("customer", "Client"))
    target = _only(recorded, LocatorStrategy.ROLE, LocatorStrategy.XPATH)
    workflow = Workflow(
        name="Set the status",
        domains=("127.0.0.1",),
        steps=(
            GotoStep(title="Open the form", url="http://127.0.0.1:1/form"),
            CheckStep(title="Choose 'Customer'", target=target, timeout_s=3),
            ClickStep(
                title="Save",
                target=Target(
                    locators=(Locator(strategy=LocatorStrategy.ROLE, value="button", name="Save"),)
                ),
            ),
        ),
    )
    with services() as sv:
        result = run(sv, approve(sv, workflow), site)
    assert "lead" not in DATA.saved_status and "former" not in DATA.saved_status
    if DATA.saved_status:
        assert DATA.saved_status == ["customer"]
        assert result.run.steps[1].resolution is Resolution.FINGERPRINT
    else:
        assert result.run.status is RunStatus.FAILED
