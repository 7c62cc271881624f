"""Helpers for replay tests: approved workflows from the recorded fixtures, and runs of them."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from desktop_app.app import ReplayResult, Services, open_services, replay
from desktop_app.core.models.target import Locator, Target
from desktop_app.core.models.workflow import Workflow, WorkflowVersion
from desktop_app.core.replay.engine import ReplayOptions
from desktop_app.core.replay.parameters import bind_parameters
from desktop_app.core.replay.person import Person, PersonAnswer, Question
from desktop_app.demo_site import DEMO_PASSWORD
from desktop_app.settings import load_settings

DATA = Path(__file__).parent / "data"


@contextmanager
def services(**settings: Any) -> Iterator[Services]:
    """The services over this test's data directory, as the writer."""
    with open_services(load_settings(**settings), write=True) as opened:
        yield opened


def approved(services: Services, task: str, *, strip_fingerprints: bool = False) -> WorkflowVersion:
    """The workflow induced from ``tests/data/<task>.trajectory.json``, approved."""
    from desktop_app.core.documents import load_trajectory
    from desktop_app.core.induction.heuristic import induce

    text = (DATA / f"{task}.trajectory.json").read_text(encoding="utf-8")
    workflow = induce(load_trajectory(text, source=task)).workflow
    if strip_fingerprints:
        workflow = _without_fingerprints(workflow)
    saved = services.workflows.save(workflow, actor="tester")
    return services.workflows.approve(workflow.id, actor="tester", version=saved.version.version)


def approve(services: Services, workflow: Workflow) -> WorkflowVersion:
    """*workflow* (written by a test) saved and approved as it is."""
    saved = services.workflows.save(workflow, actor="tester")
    return services.workflows.approve(workflow.id, actor="tester", version=saved.version.version)


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """A test's own site: *handler* answering on a free port of 127.0.0.1; its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class PageHandler(BaseHTTPRequestHandler):
    """A base for a test's own site: pages sent as HTML, forms read, answered by a redirect."""

    def send_page(self, body: str, status: int = 200) -> None:
        """Answer with the HTML *body*."""
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def form(self) -> dict[str, list[str]]:
        """The form the request sent."""
        length = int(self.headers.get("Content-Length") or 0)
        return parse_qs(self.rfile.read(length).decode())

    def redirect(self, location: str) -> None:
        """Answer "see other" (a form sent, then the page to show)."""
        self.send_response(303)
        self.send_header("Location", location)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def described(url: str, locator: Locator) -> Target:
    """The target the capture script describes for *locator*'s element on *url*: as recorded."""
    from browser_support import CHROMIUM, LAUNCH_ARGS
    from playwright.async_api import async_playwright

    from desktop_app.adapters.browser.replay_page import PlaywrightPage
    from desktop_app.core.replay.browser import Handle
    from desktop_app.resources import resource_path

    async def describe() -> Target:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
            page = await browser.new_page()
            await page.goto(url)
            port = PlaywrightPage(page, ("127.0.0.1",), resource_path("recorder", "capture.js"))
            target = await port.describe(Handle(locator=locator))
            await browser.close()
        assert target is not None
        return target

    return asyncio.run(describe())


def without_success_check(services: Services, version: WorkflowVersion) -> WorkflowVersion:
    """*version* with no success check, approved as a new version: a run that does every step
    of it ends "done, unverified"."""
    workflow = version.workflow.model_copy(update={"success": ()})
    saved = services.workflows.save(workflow, actor="tester")
    return services.workflows.approve(workflow.id, actor="tester", version=saved.version.version)


def _without_fingerprints(workflow: Any) -> Any:
    steps = []
    for step in workflow.steps:
        target = step.target_or_none
        if target is not None:
            step = step.model_copy(
                update={"target": target.model_copy(update={"fingerprint": None})}
            )
        steps.append(step)
    return workflow.model_copy(update={"steps": tuple(steps)})


def run(
    services: Services,
    version: WorkflowVersion,
    base_url: str,
    *,
    values: Mapping[str, str] | None = None,
    use_llm: bool = False,
    assume_yes: bool = False,
    person: Person | None = None,
    on_event: Callable[[Any], None] | None = None,
    patience_s: float = 3.0,
) -> ReplayResult:
    """Replay *version* headless against *base_url* with the demo password.

    *patience_s* shorter than the default makes tests of deliberately unfindable elements quicker.
    """
    params = bind_parameters(version.workflow, dict(values or {}), secrets=_secrets(version))
    return asyncio.run(
        replay(
            services,
            version,
            params,
            options=ReplayOptions(use_llm=use_llm, assume_yes=assume_yes, patience_s=patience_s),
            person=person,
            base_url=base_url,
            headless=True,
            on_event=on_event,
        )
    )


def _secrets(version: WorkflowVersion) -> dict[str, str]:
    return {p.name: DEMO_PASSWORD for p in version.workflow.parameters if p.type.value == "secret"}


class ScriptedPerson:
    """Answers questions with a function, and remembers what it was asked."""

    def __init__(self, answer: Callable[[Question], PersonAnswer]) -> None:
        self.answer = answer
        self.questions: list[Question] = []

    async def ask(self, question: Question) -> PersonAnswer:
        self.questions.append(question)
        return self.answer(question)
