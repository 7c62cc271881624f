"""Pages of our own making: overlays (harmless ones cleared, committing ones never) and a
redirect that tries to take the run to another site."""

from __future__ import annotations

from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from replay_support import approve, run, services, serving

from desktop_app.core.models.run import FailureKind, RunStatus
from desktop_app.core.models.target import Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import ClickStep, GotoStep, TextPresent, Workflow

pytestmark = pytest.mark.slow

_PAGE = """<!doctype html><html><head><title>Overlay test</title><style>
  .backdrop {{position: fixed; inset: 0; background: rgba(0,0,0,.4); display: flex;
              align-items: center; justify-content: center}}
  .box {{background: white; padding: 2em}}
</style></head><body>
<main><h1>Page</h1><button onclick="document.body.insertAdjacentHTML('beforeend',
  '<p>Next was clicked</p>')">Next</button></main>
<div class="backdrop" id="overlay"><div class="box" role="dialog" aria-modal="true"
  aria-labelledby="t"><h2 id="t">{title}</h2>
  <button onclick="document.getElementById('overlay').remove();
    fetch('/{clicked}')">{button}</button></div></div>
</body></html>"""

PAGES = {
    "/cookies": _PAGE.format(title="Cookies on this site", button="Got it", clicked="accepted"),
    "/confirm": _PAGE.format(title="Delete all contacts?", button="OK", clicked="deleted"),
}
PAGES["/start"] = "<!doctype html><title>Start</title><a href='/away'>Go on</a>"
PAGES["/elsewhere"] = "<!doctype html><title>Elsewhere</title><button>Pay now</button>"
HITS: list[str] = []
#: Links to another host (localhost, the same server) whose address names this one (127.0.0.1).
LOOKALIKE_LINKS = {
    "user": "http://127.0.0.1@localhost:{port}/elsewhere",
    "query": "http://localhost:{port}/elsewhere?back=http://127.0.0.1/",
    "script": 'javascript:location.href="http://localhost:{port}/elsewhere#127.0.0.1"',
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        HITS.append(self.path)
        port = self.server.server_address[1]
        if self.path.startswith("/start-"):  # a link to another host spelled like this one
            href = LOOKALIKE_LINKS[self.path.removeprefix("/start-")].format(port=port)
            PAGES[self.path] = f"<!doctype html><title>Start</title><a href='{href}'>Go on</a>"
        if self.path == "/away":  # a server-side redirect to another host
            self.send_response(302)
            self.send_header("Location", f"http://localhost:{port}/elsewhere")
            self.end_headers()
            return
        body = PAGES.get(self.path, "").encode()
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    HITS.clear()
    with serving(_Handler) as url:
        yield url


def _click_next(path: str) -> Workflow:
    next_button = Target(
        locators=(Locator(strategy=LocatorStrategy.ROLE, value="button", name="Next"),)
    )
    return Workflow(
        name=f"Click Next on {path}",
        domains=("127.0.0.1",),
        steps=(
            GotoStep(title="Open the page", url=f"http://127.0.0.1:1{path}"),
            ClickStep(
                title="Click 'Next'",
                target=next_button,
                expectations=(TextPresent(text="Next was clicked"),),
                timeout_s=3,
            ),
        ),
        success=(TextPresent(text="Next was clicked"),),
    )


def test_a_harmless_overlay_is_cleared_and_noted(site: str) -> None:
    with services() as sv:
        result = run(sv, approve(sv, _click_next("/cookies")), site, patience_s=0.5)
    assert result.run.status is RunStatus.SUCCEEDED, result.run.error
    assert "/accepted" in HITS
    assert "cleared the overlay 'Cookies on this site' with 'Got it'" in (
        result.run.steps[1].detail or ""
    )


def test_an_overlay_asking_to_commit_to_something_is_never_clicked_away(site: str) -> None:
    with services() as sv:
        result = run(sv, approve(sv, _click_next("/confirm")), site, patience_s=0.5)
    assert result.run.status is RunStatus.FAILED
    assert "may commit to something; not cleared" in (result.run.steps[-1].detail or "")
    assert "/deleted" not in HITS


def _follow_a_link(start: str) -> Workflow:
    link = Target(locators=(Locator(strategy=LocatorStrategy.ROLE, value="link", name="Go on"),))
    pay = Target(locators=(Locator(strategy=LocatorStrategy.ROLE, value="button", name="Pay now"),))
    return Workflow(
        name="Follow a link",
        domains=("127.0.0.1",),
        steps=(
            GotoStep(title="Open the start", url=f"http://127.0.0.1:1{start}"),
            ClickStep(title="Click 'Go on'", target=link),
            ClickStep(title="Click 'Pay now'", target=pay),
        ),
    )


def test_a_redirect_to_another_site_stops_the_run_there(site: str) -> None:
    with services() as sv:
        result = run(sv, approve(sv, _follow_a_link("/start")), site, patience_s=0.5)
    assert result.run.status is RunStatus.FAILED
    assert [s.title for s in result.run.steps] == ["Open the start", "Click 'Go on'"]
    assert "outside the workflow's domains" in (result.run.steps[-1].error or "")


@pytest.mark.parametrize("spelling", sorted(LOOKALIKE_LINKS))
def test_a_link_to_another_site_that_names_this_one_is_refused(site: str, spelling: str) -> None:
    """The guard sees only what may leave the domains (a page's own files load without it):
    an address that merely mentions the workflow's host still goes to it, and is refused
    before the other site is asked for anything."""
    with services() as sv:
        result = run(sv, approve(sv, _follow_a_link(f"/start-{spelling}")), site, patience_s=0.5)
    assert result.run.status is RunStatus.FAILED
    assert not [hit for hit in HITS if hit.startswith("/elsewhere")]
    # A script's navigation comes when the click is over: the next step fails with it.
    assert "outside the workflow's domains" in (result.run.steps[-1].error or "")
    assert result.run.steps[-1].failure is FailureKind.REFUSED
