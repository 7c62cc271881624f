"""A secret stays in its place: the field it is typed into is covered in every screenshot of the
run whatever the field's type, a secret stated in an intent is stored masked, and the browser
of a run never inherits a secret's environment variable."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from conftest import Cli
from factories import full_workflow
from replay_support import DATA, approve, services, serving

from desktop_app.app import replay
from desktop_app.core.models.run import MASK, RunStatus, StepStatus
from desktop_app.core.models.target import Fingerprint, Locator, LocatorStrategy, Target
from desktop_app.core.models.trajectory import Trajectory
from desktop_app.core.models.workflow import (
    ClickStep,
    FillStep,
    GotoStep,
    Parameter,
    ParameterType,
    TextPresent,
    Workflow,
)
from desktop_app.core.redaction import scrub_stated_secrets
from desktop_app.core.replay.engine import ReplayOptions
from desktop_app.core.replay.parameters import bind_parameters
from desktop_app.ops.changes import Origin
from desktop_app.ops.induce import induce

SECRET = "Zq7-TOKEN-4471"

# A plain text field, drawn red with green 48 px text, that moves down and is labelled anew once
# saved (the recorded locator finds it no more): wherever it is when a screenshot is taken, it
# must be covered (Playwright's mask colour, #FF00FF).
_PAGE = """<!doctype html><title>Access</title><body style="margin:0;background:#fff">
<label id=label for=reference style="position:absolute;left:100px;top:60px">Reference</label>
<input id=reference type=text autocomplete=off style="position:absolute;left:100px;top:100px;
  width:500px;height:80px;border:0;padding:0;font-size:48px;color:#00ff00;background:#ff0000">
<button id=save style="position:absolute;left:100px;top:220px">Save</button>
<p id=out role=status style="position:absolute;left:100px;top:260px"></p>
<script>
  document.getElementById("save").addEventListener("click", () => {
    document.getElementById("reference").style.top = "400px";
    document.getElementById("label").textContent = "Kept code";
    document.getElementById("out").textContent = "Saved";
  });
</script>"""
_FIELD_AREA = 500 * 80


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        data = _PAGE.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    with serving(_Handler) as url:
        yield url


def _grep(root: Path, needle: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def _save_a_reference(*, then_publish: bool = False) -> Workflow:
    """Type the secret parameter ``code`` into the plain text field "Reference" (its recorded
    fingerprint an ordinary text box), then save; with *then_publish*, click a button the page
    does not have (the step fails)."""
    plain = Fingerprint(tag="input", role="textbox", name="Reference", attributes={"type": "text"})
    steps: list[Any] = [
        GotoStep(title="Open the form", url="http://127.0.0.1:1/form"),
        FillStep(
            title="Fill 'Reference' with {code}",
            target=Target(
                locators=(Locator(strategy=LocatorStrategy.LABEL, value="Reference"),),
                fingerprint=plain,
            ),
            value="{code}",
        ),
        ClickStep(
            title="Save",
            target=Target(
                locators=(Locator(strategy=LocatorStrategy.ROLE, value="button", name="Save"),)
            ),
        ),
    ]
    if then_publish:
        steps.append(
            ClickStep(
                title="Publish",
                target=Target(
                    locators=(
                        Locator(strategy=LocatorStrategy.ROLE, value="button", name="Publish"),
                    )
                ),
            )
        )
    return Workflow(
        name="Save a reference",
        domains=("127.0.0.1",),
        parameters=(Parameter(name="code", type=ParameterType.SECRET),),
        steps=tuple(steps),
        success=(TextPresent(text="Saved"),),
    )


def _pixels(path: Path | None) -> np.ndarray[Any, Any]:
    assert path is not None
    image = cv2.imdecode(np.frombuffer(path.read_bytes(), np.uint8), cv2.IMREAD_COLOR)
    assert image is not None, path
    return image  # BGR


def _count(image: np.ndarray[Any, Any], bgr: tuple[int, int, int]) -> int:
    return int(np.all(np.abs(image.astype(int) - bgr) <= 8, axis=-1).sum())


_RED, _GREEN, _MAGENTA = (0, 0, 255), (0, 255, 0), (255, 0, 255)


@pytest.mark.slow
def test_the_field_a_secret_is_typed_into_is_covered_in_every_screenshot(
    home: Path, site: str
) -> None:
    every = ReplayOptions(use_llm=False, screenshot_every_step=True, patience_s=1.0)
    failures_only = ReplayOptions(use_llm=False, patience_s=1.0)
    with services() as sv:
        runs = []
        for workflow, options in (
            (_save_a_reference(), every),
            (_save_a_reference(then_publish=True), failures_only),
        ):
            version = approve(sv, workflow)
            params = bind_parameters(version.workflow, {}, secrets={"code": SECRET})
            result = asyncio.run(
                replay(sv, version, params, options=options, base_url=site, headless=True)
            )
            runs.append(result.run)
        shots = [
            [sv.media.path(s.screenshot) if s.screenshot else None for s in r.steps] for r in runs
        ]
    succeeded, failed = runs
    every_step, on_failure = shots
    assert succeeded.status is RunStatus.SUCCEEDED, succeeded.error
    assert len(every_step) == 4 and all(every_step)
    assert failed.status is RunStatus.FAILED
    assert failed.steps[-1].title == "Publish" and failed.steps[-1].status is StepStatus.FAILED
    assert on_failure[-1] is not None  # the failure's screenshot

    # Before the secret was typed the field shows (the check below means something) ...
    opened = _pixels(every_step[0])
    assert _count(opened, _RED) > _FIELD_AREA * 0.9
    # ... and from then on, in every screenshot, it is covered wherever it is.
    for path in [*every_step[1:], on_failure[-1]]:
        image = _pixels(path)
        assert _count(image, _RED) == 0, path
        assert _count(image, _GREEN) == 0, path
        assert _count(image, _MAGENTA) >= _FIELD_AREA, path
    moved = _pixels(every_step[-1])  # the field moved down on Save
    assert _count(moved[400:480, 100:600], _MAGENTA) == _FIELD_AREA

    assert _grep(home, "Save a reference")  # the scan really looks inside the files
    assert _grep(home, SECRET) == []


def test_a_secret_stated_in_an_intent_is_stored_masked(home: Path) -> None:
    stated = "log in as bob with password hunter2 and create a contact"
    document = json.loads((DATA / "create-contact.trajectory.json").read_text(encoding="utf-8"))
    document["intent"] = stated
    with services() as sv:
        imported = sv.trajectories.import_json(json.dumps(document))
        induced = induce(
            sv.trajectories, sv.workflows, [imported.id], actor="tester", origin=Origin.CLI
        ).saved.version.workflow
        # A workflow whose texts state one, saved as the editor or an import would.
        written = full_workflow(
            name="Log in as bob with password hunter2",
            description="Signs in with pwd: hunter2 here",
        ).model_copy(update={"intent_template": "Sign {user} in with password hunter2"})
        saved = sv.workflows.save(written, actor="ann").version.workflow
        # A recording whose intent holds, unannounced, what was typed into a secret field.
        session = sv.trajectories.start_recording(Trajectory(intent="log in as bob: Zebra-4471"))
        recorded = session.finish(secrets={"Zebra-4471"})
        found = [m.workflow.id for m in sv.workflows.search("log in as bob", limit=5)]
        trajectory = sv.trajectories.get(imported.id)
        listed = {t.id: t.intent for t in sv.trajectories.list()}
        stored = sv.workflows.get(saved.id).workflow
    masked = f"log in as bob with password {MASK} and create a contact"
    assert trajectory.intent == masked and listed[imported.id] == masked
    assert "hunter2" not in induced.model_dump_json() and MASK in induced.name + induced.description
    assert stored.name == f"Log in as bob with password {MASK}"
    assert stored.description == f"Signs in with pwd: {MASK} here"
    assert stored.intent_template == f"Sign {{user}} in with password {MASK}"
    assert recorded.intent == listed[recorded.id] == f"log in as bob: {MASK}"
    assert {induced.id, saved.id} <= set(found)  # both are in the index, masked
    assert _grep(home / "index", "in as bob")  # the scan really looks inside the index
    assert _grep(home, "hunter2") == []
    assert _grep(home, "Zebra-4471") == []


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        ("log in with password hunter2", f"log in with password {MASK}"),
        ("my password is letmein, then", f"my password is {MASK} then"),
        ("PIN: 0000", f"PIN: {MASK}"),
        ("use api key sk-live-9 and token ghp_42", f"use api key {MASK} and token {MASK}"),
        ('passphrase "correct horse" to unlock', f"passphrase {MASK} to unlock"),
        ("Reset the password for bob", "Reset the password for bob"),
        ("the password is required", "the password is required"),
        ("Pin the first repo; create a token for CI", "Pin the first repo; create a token for CI"),
        ("Sign {user} in with password {password}", "Sign {user} in with password {password}"),
    ],
)
def test_what_counts_as_a_secret_stated_in_a_sentence(text: str, stored: str) -> None:
    assert scrub_stated_secrets(text) == stored
    assert scrub_stated_secrets(stored) == stored  # masking again changes nothing


def _chromium_environments(stop: threading.Event, seen: dict[int, bytes]) -> None:
    """Until *stop*, the environment of every Chromium process below this one, by pid."""
    me = os.getpid()
    while not stop.is_set():
        parents: dict[int, int] = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
        for pid in parents:
            ancestor, hops = parents.get(pid), 0
            while ancestor not in (None, 0, 1, me) and hops < 20:
                ancestor, hops = parents.get(ancestor), hops + 1
            if ancestor != me or pid in seen:
                continue
            try:
                exe = os.readlink(f"/proc/{pid}/exe")
                if "chrom" in Path(exe).name:
                    seen[pid] = Path(f"/proc/{pid}/environ").read_bytes()
            except OSError:
                continue
        time.sleep(0.02)


@pytest.mark.slow
def test_the_browser_of_a_run_does_not_inherit_a_secret_variable(
    procedura: Cli, site: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with services() as sv:
        workflow_id = approve(sv, _save_a_reference()).workflow_id
    monkeypatch.setenv("REFERENCE_CODE", SECRET)
    monkeypatch.setenv("SAME_VALUE_ELSEWHERE", SECRET)
    monkeypatch.setenv("PROCEDURA_TEST_CANARY", "inherited")
    stop, seen = threading.Event(), dict[int, bytes]()
    watcher = threading.Thread(target=_chromium_environments, args=(stop, seen), daemon=True)
    watcher.start()
    try:
        result = procedura(
            "run", workflow_id[:8], "--base-url", site, "--headless", "--non-interactive",
            "--no-llm", "--secret-env", "code=REFERENCE_CODE",
        )  # fmt: skip
    finally:
        stop.set()
        watcher.join()
    assert result.exit_code == 0, result.stdout + result.stderr
    assert seen, "no Chromium process was seen"
    # Chromium's helpers write their title over their environment: the browser's own shows it.
    assert any(b"PROCEDURA_TEST_CANARY=inherited" in e for e in seen.values())
    for pid, environ in seen.items():
        assert b"REFERENCE_CODE" not in environ and b"SAME_VALUE_ELSEWHERE" not in environ, pid
        assert SECRET.encode() not in environ, pid
