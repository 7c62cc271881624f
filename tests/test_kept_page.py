"""A fleet worker keeps one page between rows and wipes it: the next row sees what a new
browser context would show, nothing of the last row (cookies, storage of every origin it spoke
to, service workers, the HTTP cache, tabs, history, ``window.name``), and two rows for
different sites each get their own guard. Real headless Chromium, a site on 127.0.0.1 that
also answers as ``localhost`` (a second origin, in a frame)."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import CHROMIUM
from playwright.async_api import Page
from replay_support import PageHandler, approve, services, serving

from desktop_app.adapters.browser.kept import KeptBrowser
from desktop_app.app import replay
from desktop_app.core.models.run import RunStatus
from desktop_app.core.models.workflow import GotoStep, TextPresent, Workflow
from desktop_app.core.replay.engine import ReplayOptions
from desktop_app.core.replay.parameters import bind_parameters

pytestmark = pytest.mark.slow

_SERVED = itertools.count(1)

#: What a page can find of an earlier visitor (as the page reads it).
_LOOK = """async () => ({
    cookies: document.cookie,
    local: localStorage.length,
    session: sessionStorage.length,
    name: window.name,
    history: history.length,
    databases: (await indexedDB.databases()).length,
    caches: (await caches.keys()).length,
    workers: (await navigator.serviceWorker.getRegistrations()).length,
    private: await (await fetch('/private')).text(),
})"""

#: What a row leaves behind: everything the look above would find.
_LEAVE = """async () => {
    document.cookie = 'visitor=row-one';
    localStorage.setItem('k', 'row one');
    sessionStorage.setItem('k', 'row one');
    window.name = 'row one';
    await new Promise(done => { const r = indexedDB.open('rows'); r.onsuccess = done; });
    await (await caches.open('rows')).put('/cached', new Response('row one'));
    await navigator.serviceWorker.register('/worker.js');
    await fetch('/private');
    onbeforeunload = e => { e.preventDefault(); e.returnValue = 'stay'; };
}"""


class _Site(PageHandler):
    def do_GET(self) -> None:
        if self.path == "/private":  # a private page cached an hour: one visitor's own
            self._send(f"served {next(_SERVED)}", "text/plain", "private, max-age=3600")
        elif self.path == "/worker.js":
            self._send("self.addEventListener('fetch', () => {});", "text/javascript")
        else:
            self.send_response(200)
            self.send_header("Set-Cookie", "session=from-the-server")
            data = b"<title>Rows</title><p>Rows</p>"
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    def _send(self, body: str, kind: str, cache: str = "no-store") -> None:
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Cache-Control", cache)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def site() -> Iterator[str]:
    with serving(_Site) as url:
        yield url


async def _look(page: Page, url: str) -> dict[str, Any]:
    await page.goto(url + "/")
    seen: dict[str, Any] = await page.evaluate(_LOOK)
    return seen


def _hosts(url: str) -> tuple[str, str]:
    """The site at two origins (two hosts, one server)."""
    return url, url.replace("127.0.0.1", "localhost")


def test_the_next_row_finds_nothing_of_the_last(site: str) -> None:
    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]], bool]:
        kept = KeptBrowser(configured=_path(CHROMIUM), withheld=())
        try:
            first = await kept.run_context()
            new = [await _look(first.page, url) for url in _hosts(site)]  # as a new context
            for url in _hosts(site):
                await first.page.goto(url + "/")
                await first.page.click("p")  # a person's touch: the page may now ask to stay
                await first.page.evaluate(_LEAVE)
            first.clean = True
            await first.close()
            second = await kept.run_context()
            same = second.page is first.page
            later = [await _look(second.page, url) for url in _hosts(site)]
            second.clean = True
            await second.close()
            return new, later, same
        finally:
            await kept.close()

    new, later, same = asyncio.run(scenario())
    assert same, "the page was not kept: a new context was made instead of wiping"
    for was, now in zip(new, later, strict=True):
        assert was["cookies"] == "session=from-the-server"
        # The private page row one saw (and had cached for an hour) is fetched anew.
        assert now.pop("private") != was.pop("private")
        # History holds the blank page the wipe left, and nothing of row one.
        assert now.pop("history") <= was.pop("history") + 1
        assert now == was


def test_a_page_that_cannot_be_wiped_surely_is_not_lent_again(site: str) -> None:
    """Not handed back clean (the run could not take back its listeners), closed by the run,
    or with another tab the row opened (whose scripts could write again what is cleared): the
    next run gets a new context, where the row's storage is not."""

    async def scenario() -> tuple[list[Page], list[str]]:
        kept = KeptBrowser(configured=_path(CHROMIUM), withheld=())
        pages, found = [], []
        try:
            for leave, clean in (
                ("", False),
                ("closed", True),
                ("tab", True),
                ("", True),
                ("", True),
            ):
                lent = await kept.run_context()
                pages.append(lent.page)
                await lent.page.goto(site + "/")
                found.append(await lent.page.evaluate("String(localStorage.length)"))
                await lent.page.evaluate("localStorage.setItem('k', 'row')")
                if leave == "closed":
                    await lent.page.close()
                elif leave == "tab":
                    async with lent.context.expect_page():
                        await lent.page.evaluate("window.open('/')")
                lent.clean = clean
                await lent.close()
        finally:
            await kept.close()
        return pages, found

    pages, found = asyncio.run(scenario())
    assert [a is b for a, b in itertools.pairwise(pages)] == [False, False, False, True]
    assert found == ["0"] * 5


def _workflow(url: str, host: str) -> Workflow:
    return Workflow(
        name=f"Open the rows on {host}",
        domains=(host,),
        steps=(GotoStep(title="Open the rows", url=url.replace("127.0.0.1", host) + "/"),),
        success=(TextPresent(text="Rows"),),
    )


def test_rows_for_two_sites_each_run_under_their_own_guard(site: str) -> None:
    """The last row's guard is gone: a row for another host is not refused by it, and the
    row's own guard still refuses what its workflow does not allow."""
    with services() as sv:
        here, there = (approve(sv, _workflow(site, h)) for h in ("127.0.0.1", "localhost"))
        kept = KeptBrowser(configured=_path(CHROMIUM), withheld=())

        async def rows() -> list[RunStatus]:
            statuses = []
            try:
                for version in (here, there, here):
                    params = bind_parameters(version.workflow, {})
                    result = await replay(
                        sv,
                        version,
                        params,
                        options=ReplayOptions(use_llm=False),
                        browser_factory=kept.run_context,
                    )
                    statuses.append(result.run.status)
                # Not allowed by this workflow: another host's page is refused.
                wrong = here.workflow.model_copy(
                    update={"steps": _workflow(site, "localhost").steps}
                )
                outside = here.model_copy(update={"workflow": wrong})
                result = await replay(
                    sv,
                    outside,
                    bind_parameters(wrong, {}),
                    options=ReplayOptions(use_llm=False),
                    browser_factory=kept.run_context,
                )
                statuses.append(result.run.status)
            finally:
                await kept.close()
            return statuses

        statuses = asyncio.run(rows())
    assert statuses[:3] == [RunStatus.SUCCEEDED] * 3
    assert statuses[3] is RunStatus.FAILED


def _path(found: str | None) -> Path:
    assert found, "Chromium is not installed"
    return Path(found)
