"""Recording is exact at any speed: the same demonstration recorded at a person's pace, at machine
speed, and (for one demonstration on each app) at machine speed on a machine two busy processes
compete for, gives the same workflow (steps, targets, parameters, checks), on the demo app and
on apps nobody here wrote. Every step's picture shows the page the step was recorded on, with
its element in it; at machine speed a step may lack one only where the screen never showed its
page as it was acted on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from browser_support import busy_machine
from demonstrations import MACHINE, PERSON, SCENARIOS, Scenario, signature
from recording_support import app_for, record_demonstration

from desktop_app.adapters.browser.step_pictures import RECEIPT_LAG_MS, PictureChoice
from desktop_app.app import Services, open_services
from desktop_app.core.induction.heuristic import induce
from desktop_app.core.models import ActionKind, Event, Trajectory
from desktop_app.settings import load_settings

pytestmark = pytest.mark.slow

#: Where each picture says which page it is of (a test-only mark, out of the app's own DOM: a
#: fixed box in a closed shadow root, coloured after the page's address).
_BADGE_PX = 32
_BADGE_JS = """(() => {
  const host = document.createElement("procedura-test-badge");
  host.style.cssText = "position: fixed; left: 0; top: 0; z-index: 2147483647; display: flex;"
    + "pointer-events: none";
  const root = host.attachShadow({ mode: "closed" });
  const boxes = [0, 1].map(() => {
    const box = document.createElement("div");
    box.style.cssText = "width: BADGEpx; height: BADGEpx";
    root.append(box);
    return box;
  });
  const paint = () => {
    const digest = window.__badgeColours ? window.__badgeColours(location.href) : null;
    if (digest) boxes.forEach((box, i) => { box.style.background = digest[i]; });
  };
  const levels = [32, 96, 160, 224];
  window.__badgeColours = (url) => {
    let h = 2166136261;
    const normal = url.replace(/#\\/?$/, "").replace(/\\/$/, "");
    for (const c of normal) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
    return [0, 1].map((i) => {
      const part = (h >>> (i * 6)) & 63;
      return `rgb(${levels[part & 3]}, ${levels[(part >> 2) & 3]}, ${levels[(part >> 4) & 3]})`;
    });
  };
  const install = () => { document.documentElement.append(host); paint(); };
  if (document.documentElement) {
    install();
  } else {  // in place from the first element parsed, so no frame of the page is without it
    const watch = new MutationObserver(() => {
      if (!document.documentElement) return;
      watch.disconnect();
      install();
    });
    watch.observe(document, { childList: true });
  }
  // Repainted the moment the address changes (and checked at every frame besides).
  addEventListener("hashchange", paint, true);
  addEventListener("popstate", paint, true);
  for (const name of ["pushState", "replaceState"]) {
    const native = history[name].bind(history);
    history[name] = (...args) => { const result = native(...args); paint(); return result; };
  }
  setInterval(paint, 16);
})()""".replace("BADGE", str(_BADGE_PX))
_LEVELS = (32, 96, 160, 224)
#: The demonstrations also recorded with two processes competing for the CPU (one an app:
#: the demo app, TodoMVC in React, Flask-Admin); bench/recording.py does them all.
LOADED = ("demo-create-contact", "todomvc-react", "flask-admin-create")


def _badge_code(url: str) -> tuple[tuple[int, int, int], ...]:
    """The colours the badge shows for *url* (as the page computes them)."""
    normal = url.removesuffix("/").removesuffix("#").removesuffix("#/").removesuffix("/")
    h = 2166136261
    for char in normal:
        h = ((h ^ ord(char)) * 16777619) & 0xFFFFFFFF
    colours = []
    for i in range(2):
        part = (h >> (i * 6)) & 63
        colours.append((_LEVELS[part & 3], _LEVELS[(part >> 2) & 3], _LEVELS[(part >> 4) & 3]))
    return tuple(colours)


def _read_badge(image: np.ndarray) -> tuple[tuple[int, int, int], ...]:
    """The colours of the badge in a picture, snapped to the levels it uses."""
    colours = []
    inset = _BADGE_PX // 4
    for i in range(2):
        x = i * _BADGE_PX
        block = image[inset : _BADGE_PX - inset, x + inset : x + _BADGE_PX - inset]
        b, g, r = (float(v) for v in block.reshape(-1, 3).mean(axis=0))
        snap = lambda v: min(_LEVELS, key=lambda level: abs(level - v))  # noqa: E731
        colours.append((snap(r), snap(g), snap(b)))
    return tuple(colours)


def _page_of(event: Event) -> set[str]:
    """The addresses a step's picture may show: where the action began, where a navigation
    arrived (after the page's own redirects)."""
    urls = {event.before.url if event.before else None}
    if event.action is ActionKind.NAVIGATE:
        urls |= {event.url, event.after.url if event.after else None}
    return {u for u in urls if u}


def _pictures_problems(
    services: Services, trajectory: Trajectory, choices: list[PictureChoice] | None = None
) -> list[str]:
    """Every step's picture shows its page (by the badge) and its element inside the frame.

    With *choices* (what the recorder said of how it chose each picture, at machine speed), a
    step may have none only if the screen truly showed no frame of its page as it was acted
    on: none reached it from the page's drawing to the page's response, and the screen did go
    on showing frames after (the screencast was alive)."""
    problems = []
    for index, event in enumerate(trajectory.events):
        if event.action in {ActionKind.NOTE, ActionKind.SWITCH_TAB, ActionKind.SCROLL}:
            continue
        ref = event.before.screenshot if event.before else None
        if ref is None:
            said = _choice_of(event, choices or [])
            if said is None or not _never_on_screen(said):
                problems.append(f"event {index} ({event.action.value}) has no picture")
            continue
        image = cv2.imread(str(services.media.path(ref)))
        shown = _read_badge(image)
        if shown not in {_badge_code(u) for u in _page_of(event)}:
            seen = [u for e in trajectory.events for u in _page_of(e) if _badge_code(u) == shown]
            problems.append(
                f"event {index} ({event.action.value}) on {sorted(_page_of(event))}: "
                f"a picture of another page ({seen[0] if seen else 'unknown'})"
            )
        box = event.target.fingerprint.bbox if event.target and event.target.fingerprint else None
        if box is not None:
            height, width = image.shape[:2]
            if box.x < 0 or box.y < 0 or box.x + box.width > width or box.y + box.height > height:
                problems.append(f"event {index} ({event.action.value}): its element is outside")
    return problems


def _choice_of(event: Event, choices: list[PictureChoice]) -> PictureChoice | None:
    began = event.at.timestamp() * 1000
    return next((c for c in choices if abs(c.began_ms - began) < 1), None)


def _never_on_screen(said: PictureChoice) -> bool:
    """No frame reached the screen while the step's page was as acted on (the recorder was
    right to leave it without a picture), and frames did reach it after."""
    return (
        said.since_ms <= said.began_ms <= said.until_ms
        and not any(said.since_ms <= f < said.until_ms for f in said.frames)
        and any(f >= said.until_ms for f in said.frames)
    )


def _element_crop(services: Services, event: Event) -> np.ndarray | None:
    box = event.target.fingerprint.bbox if event.target and event.target.fingerprint else None
    ref = event.before.screenshot if event.before else None
    if box is None or ref is None or box.width < 8 or box.height < 8:
        return None
    image = cv2.imread(str(services.media.path(ref)), cv2.IMREAD_GRAYSCALE)
    x, y, w, h = int(box.x) + 3, int(box.y) + 3, int(box.width) - 6, int(box.height) - 6
    crop = image[y : y + h, x : x + w]
    return crop if crop.size else None


def _same_elements_pictured(
    services: Services, reference: Trajectory, other: Trajectory, choices: list[PictureChoice]
) -> list[str]:
    """Each step's element looks in *other*'s picture as in *reference*'s (it was on screen,
    as the person saw it, not a moment before it appeared), where the recorder took a frame
    that surely shows it so (see step_pictures: what it may take as a last resort, or a frame
    stamped within the browser's receipt lag of the drawing, may show the moment before)."""
    problems = []
    for index, (a, b) in enumerate(zip(reference.events, other.events, strict=True)):
        said = _choice_of(b, choices)
        if said is not None and not _surely_as_acted_on(said):
            continue
        crop_a, crop_b = _element_crop(services, a), _element_crop(services, b)
        if crop_a is None or crop_b is None or crop_a.shape != crop_b.shape:
            continue
        shade = float(np.mean(np.abs(crop_a.astype(int) - crop_b.astype(int))))
        # An option the pointer is over is drawn highlighted (light text on a dark band): the
        # same element, shaded otherwise. Its outlines stay where they were.
        shape = float(np.mean(np.abs(_outlines(crop_a) - _outlines(crop_b))))
        if shade > 40 and shape > 8:
            problems.append(f"event {index} ({a.action.value}): its element looks different")
    return problems


def _surely_as_acted_on(said: PictureChoice) -> bool:
    return (
        said.rule in {"in place", "caught up"}
        and said.frame_ms is not None
        and said.drawn_ms is not None
        and said.frame_ms >= said.drawn_ms + RECEIPT_LAG_MS
    )


def _outlines(crop: np.ndarray) -> np.ndarray:
    """How sharply the picture changes at each pixel, whichever way (dark on light or not)."""
    dx = cv2.Sobel(crop, cv2.CV_32F, 1, 0)
    dy = cv2.Sobel(crop, cv2.CV_32F, 0, 1)
    return np.clip(np.hypot(dx, dy), 0, 255)


def _differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """Where two workflow signatures differ, step by step, field by field."""
    found = [f"{key}: {a[key]!r} != {b[key]!r}" for key in a if key != "steps" and a[key] != b[key]]
    steps_a, steps_b = a["steps"], b["steps"]
    if len(steps_a) != len(steps_b):
        found.append(f"steps: {[x['title'] for x in steps_a]} != {[x['title'] for x in steps_b]}")
        return found
    for i, (x, y) in enumerate(zip(steps_a, steps_b, strict=True)):
        found += [
            f"step {i} ({x['title']}) {k}: {x.get(k)!r} != {y.get(k)!r}"
            for k in x
            if x.get(k) != y.get(k)
        ]
    return found


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_the_same_workflow_at_any_speed(
    home: Path, scenario: Scenario, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="desktop_app.adapters.browser")
    said: dict[str, str] = {}  # what the recorder said of each recording's pictures

    async def scenario_run() -> dict[str, tuple[Trajectory, dict[str, Any], list[str]]]:
        runs = {}
        with app_for(scenario) as url, open_services(load_settings(), write=True) as services:
            paces = [("person", PERSON, False), ("machine", MACHINE, False)]
            if scenario.name in LOADED:
                paces.append(("machine, loaded", MACHINE, True))
            for label, pace, busy in paces:
                first = len(caplog.records)
                with busy_machine() if busy else contextlib.nullcontext():
                    trajectory = await record_demonstration(
                        services, url, scenario, pace, init_script=_BADGE_JS
                    )
                records = caplog.records[first:]
                said[label] = "\n".join(r.getMessage() for r in records)
                # How the recorder chose each picture; a script can act on a page before the
                # screen ever showed it as it was, a person cannot.
                choices = [r.__dict__["picture"] for r in records if "picture" in r.__dict__]
                problems = _pictures_problems(
                    services, trajectory, [] if label == "person" else choices
                )
                if label != "person":
                    problems += _same_elements_pictured(
                        services, runs["person"][0], trajectory, choices
                    )
                runs[label] = (trajectory, signature(induce(trajectory).workflow), problems)
        return runs

    runs = asyncio.run(scenario_run())
    person = runs["person"][1]
    for label, (_trajectory, workflow, problems) in runs.items():
        assert problems == [], (label, problems, said[label])
        assert workflow == person, (label, _differences(workflow, person))
