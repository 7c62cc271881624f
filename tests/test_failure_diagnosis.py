"""Failures that explain themselves: a failed run names the step, the kind of failure, what the
page said (its own validation and error messages), and the elements most like a missing one.

A page of our own keeps customers on the server (the judge is its data, never the run's report):
its form checks the email in the browser (``type=email``) and on the server (a Django-style
error list), and its code field keeps four characters.
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import pytest
from conftest import Cli
from replay_support import PageHandler, approve, run, services, serving

from desktop_app.core.models.run import FailureKind, RunStatus
from desktop_app.core.models.target import (
    BoundingBox,
    Fingerprint,
    Locator,
    LocatorStrategy,
    Target,
)
from desktop_app.core.models.workflow import (
    ClickStep,
    FillStep,
    GotoStep,
    Parameter,
    TextPresent,
    Workflow,
)
from desktop_app.core.outcomes import failure_lines

pytestmark = pytest.mark.slow

QUICK = 0.5


@dataclass
class _Customers:
    """The server's own data."""

    saved: list[tuple[str, str]] = field(default_factory=list)


DATA = _Customers()


def _form(*, browser_checks: bool, error: str = "", name: str = "", email: str = "") -> str:
    kind = "email" if browser_checks else "text"
    errors = f"<ul class=errorlist><li>{html.escape(error)}</li></ul>" if error else ""
    return (
        "<!doctype html><title>New customer</title><h1>New customer</h1>"
        "<form method=post><p><label for=name>Name</label>"
        f"<input id=name name=name value='{html.escape(name)}'></p>"
        f"<p><label for=email>Email</label>{errors}"
        f"<input id=email name=email type={kind} required value='{html.escape(email)}'></p>"
        "<p><label for=code>Code</label><input id=code name=code maxlength=4></p>"
        "<button>Save</button> <a href=/customers/new>Cancel</a></form>"
    )


class _Handler(PageHandler):
    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path == "/done":
            self.send_page("<!doctype html><title>Saved</title><p>Customer created</p>")
        else:
            self.send_page(_form(browser_checks=path == "/customers/new"))

    def do_POST(self) -> None:
        form = {k: v[0] for k, v in self.form().items()}
        name, email = form.get("name", ""), form.get("email", "")
        if "@" not in email:
            error = "Enter a valid email address."
            self.send_page(_form(browser_checks=False, error=error, name=name, email=email))
            return
        DATA.saved.append((name, email))
        self.redirect("/done")


@pytest.fixture
def site() -> Iterator[str]:
    global DATA
    DATA = _Customers()
    with serving(_Handler) as url:
        yield url


def _field(css: str, label: str) -> Target:
    return Target(
        locators=(
            Locator(strategy=LocatorStrategy.LABEL, value=label),
            Locator(strategy=LocatorStrategy.CSS, value=css),
        )
    )


def _button(name: str) -> Target:
    """A button as recorded: by its role and name, with its fingerprint."""
    return Target(
        locators=(Locator(strategy=LocatorStrategy.ROLE, value="button", name=name),),
        fingerprint=Fingerprint(
            tag="button",
            role="button",
            name=name,
            text=name,
            attributes={"type": "submit"},
            bbox=BoundingBox(x=10, y=200, width=60, height=24),
            nearby_text=("Code", "Cancel"),
            ancestors=("form", "body"),
        ),
    )


def _new_customer(path: str, *, save: str = "Save", code: bool = False) -> Workflow:
    steps = [
        GotoStep(title="Open the form", url=f"http://127.0.0.1:1{path}"),
        FillStep(title="Fill 'Name'", target=_field("#name", "Name"), value="{name}"),
        FillStep(title="Fill 'Email'", target=_field("#email", "Email"), value="{email}"),
    ]
    if code:
        steps.append(FillStep(title="Fill 'Code'", target=_field("#code", "Code"), value="{code}"))
    steps.append(ClickStep(title=f"Click '{save}'", target=_button(save)))
    return Workflow(
        name="New customer",
        domains=("127.0.0.1",),
        parameters=(
            Parameter(name="name"),
            Parameter(name="email"),
            *((Parameter(name="code"),) if code else ()),
        ),
        steps=tuple(steps),
        success=(TextPresent(text="Customer created"),),
    )


def test_an_error_the_server_shows_is_named_with_its_words(site: str) -> None:
    with services() as sv:
        version = approve(sv, _new_customer("/customers/plain"))
        values = {"name": "Ada", "email": "ada.example.test"}
        result = run(sv, version, site, values=values, patience_s=QUICK)
    assert result.run.status is RunStatus.FAILED
    assert DATA.saved == []
    failed = result.run.first_failure
    assert failed is not None and failed.title == "Check that the task was done"
    assert failed.failure is FailureKind.PAGE_ERROR
    assert failed.page_messages == ("Enter a valid email address.",)
    assert failure_lines(failed)[:2] == [
        "why: the page showed an error",
        'the page says: "Enter a valid email address."',
    ]


def test_the_browser_s_own_validation_message_names_the_field(site: str) -> None:
    with services() as sv:
        version = approve(sv, _new_customer("/customers/new"))
        values = {"name": "Ada", "email": "ada.example.test"}
        result = run(sv, version, site, values=values, patience_s=QUICK)
    assert result.run.status is RunStatus.FAILED
    assert DATA.saved == []
    failed = result.run.first_failure
    assert failed is not None and failed.failure is FailureKind.PAGE_ERROR
    assert len(failed.page_messages) == 1
    assert failed.page_messages[0].startswith("Email: "), failed.page_messages
    assert "@" in failed.page_messages[0]  # Chromium's words: "Please include an '@' …"


def test_a_value_the_field_will_not_keep_is_named_so(site: str) -> None:
    with services() as sv:
        version = approve(sv, _new_customer("/customers/plain", code=True))
        values = {"name": "Ada", "email": "ada@example.test", "code": "ABCDEFG"}
        result = run(sv, version, site, values=values, patience_s=QUICK)
    assert result.run.status is RunStatus.FAILED
    assert DATA.saved == []
    failed = result.run.first_failure
    assert failed is not None and failed.title == "Fill 'Code'"
    assert failed.failure is FailureKind.VALUE_NOT_ACCEPTED
    assert "ABCD" in (failed.error or "")


def test_a_missing_element_names_the_nearest_ones_and_the_cli_shows_why(
    site: str, procedura: Cli
) -> None:
    with services() as sv:
        version = approve(sv, _new_customer("/customers/plain", save="Archive"))
        values = {"name": "Ada", "email": "ada@example.test"}
        result = run(sv, version, site, values=values, patience_s=QUICK)
    assert result.run.status is RunStatus.FAILED
    assert DATA.saved == []
    failed = result.run.first_failure
    assert failed is not None and failed.title == "Click 'Archive'"
    assert failed.failure is FailureKind.ELEMENT_MISSING
    assert failed.nearest and failed.nearest[0].startswith('button "Save" (0.')
    shown = procedura("runs", "show", result.run.id)
    assert shown.exit_code == 0, shown.stderr
    assert "why: element missing" in shown.stdout
    assert 'nearest on the page: button "Save" (0.' in shown.stdout
