"""Desktop replay on two toolkits: a GTK 3 form (with its accessibility tree) and a Tk one.

On an Xvfb display, a scripted person (xdotool) fills the contact form (Name, Email, a
Password field marked sensitive, Save) while ``record_desktop`` records it, at machine
speed (no pause at all) and at a person's pace (0.15-0.4 s before each action, keys 40 ms
apart). Each recording is induced, approved as is and replayed (no LLM, ``--yes``) with new
values into three variants of the form: the same window elsewhere on the screen, the form
re-laid out (a banner above, other row spacing, a larger font, Save on the left) and drawn at
twice the size (``GDK_SCALE=2`` for GTK, ``--scale 2`` for Tk). The GTK app runs with a
private accessibility bus (AT-SPI), so steps can find their element through its tree; Tk has
none, so image anchors are all it offers.

A replay that healed (an image anchor found elsewhere) is followed by two more into the same
form: the same version again (what the healed run taught is remembered) and the version it
proposed, approved.

Every replay is judged by the app's own saved data, never by Procedura's report: **right**
when the name and email saved are the replay's values and the password has the replay's
length; a value that ended up in another field counts as **typed into the wrong field**. Each
desktop step of a run is counted by what found its element (its ``locator.strategy``:
``accessible`` or ``image_anchor``), or as failed.

    .venv/bin/python bench/desktop.py [--smoke]
"""

from __future__ import annotations

import asyncio
import random
import shutil
import statistics
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from common import Section, isolated_home
from common import main as cli_main

from desktop_support import (  # isort: skip
    Form,
    GtkForm,
    a11y_missing,
    a11y_session,
    act,
    approved_as_is,
    record,
    until,
    xvfb,
)

from desktop_app.adapters.desktop.recorder import DesktopRecorder
from desktop_app.app import Services, open_services, replay
from desktop_app.core.models import ActionKind, Event, ParameterType, SecretPlaceholder, Trajectory
from desktop_app.core.models.run import Run, StepStatus
from desktop_app.core.models.target import LocatorStrategy
from desktop_app.core.models.workflow import WorkflowVersion
from desktop_app.core.replay.engine import ReplayOptions
from desktop_app.core.replay.parameters import bind_parameters
from desktop_app.settings import load_settings

APPS: Final = ("gtk", "tk")
TITLES: Final = {"gtk": "GTK 3 form (accessibility tree)", "tk": "Tk form (no accessibility)"}
#: The share of replays whose saved data is right that each app should reach.
GOALS: Final = {"gtk": "== 100", "tk": ">= 90"}
#: Unattended, offline, and bounded: a run past its limit fails (and is waited for no longer
#: than _RUN_GUARD_S in any case).
OPTIONS: Final = ReplayOptions(use_llm=False, assume_yes=True, time_limit_s=90)
_RUN_GUARD_S: Final = 150.0
_RECORD_GUARD_S: Final = 120.0
_SAVED_WAIT_S: Final = 3.0
RECORDED: Final = ("Jane Doe", "jane@example.test", "s3cret-Pa55word")


@dataclass(frozen=True)
class Pace:
    """How fast the scripted person goes: seconds before each action, ms between keys."""

    name: str
    think_s: tuple[float, float]
    key_ms: int
    hold_s: float


MACHINE: Final = Pace("machine", (0.0, 0.0), 0, 0.0)
PERSON: Final = Pace("person", (0.15, 0.4), 40, 0.09)


@dataclass(frozen=True)
class Variant:
    """Where and how the form is shown for a replay."""

    name: str
    x: int
    y: int
    relayout: bool = False
    scale: int = 1


VARIANTS: Final = (
    Variant("moved", 330, 260),
    Variant("relayout", 90, 120, relayout=True),
    Variant("x2", 60, 60, scale=2),
)


@dataclass
class Outcome:
    """One replay: what the app saved, and how its steps found their elements."""

    app: str
    pace: str
    variant: str
    verdict: str  # right, wrong, nothing (the form saved nothing)
    wrong_field: int
    by_accessibility: int
    by_image: int
    by_other: int  # a step that needed no element (typing into the focused field) or other
    failed: int
    not_reached: int
    status: str
    error: str | None
    round: str = "first"  # first; again (the same version, same drift); proposed (its repair)
    healed: int = 0  # clicks found by their image anchor elsewhere (resolution fingerprint)
    remembered: int = 0  # clicks found by a remembered repair (resolution experience)
    direct: int = 0  # steps found as recorded
    seconds: float = 0.0
    proposed: int | None = None  # the version the run proposed


@dataclass
class AppReport:
    """What one app's part of the bench measured, or why it did not run."""

    app: str
    skipped: str | None = None
    outcomes: list[Outcome] = field(default_factory=list)
    recordings: int = 0
    failures: list[str] = field(default_factory=list)  # recordings that did not work out
    leaks: list[str] = field(default_factory=list)  # paces whose recording kept password text
    learned: list[Outcome] = field(default_factory=list)  # the rounds after a healed replay


# ── the person at the keyboard ─────────────────────────────────────────────────────────────────


async def _think(pace: Pace, rng: random.Random) -> None:
    low, high = pace.think_s
    if high:  # the person's pace: reading the form, finding the field
        await asyncio.sleep(rng.uniform(low, high))


async def _click(form: Any, part: str, pace: Pace, rng: random.Random) -> None:
    await _think(pace, rng)
    x, y, _, _ = form.geometry()
    px, py = form.point(part)
    where = ["mousemove", str(x + px), str(y + py)]
    if pace.hold_s:
        await act(
            *where, "sleep", "0.1", "mousedown", "1", "sleep", str(pace.hold_s), "mouseup", "1"
        )
    else:
        await act(*where, "click", "1")


async def _type(text: str, pace: Pace, rng: random.Random) -> None:
    await _think(pace, rng)
    await act("type", "--delay", str(pace.key_ms), text)


async def _demonstrate(services: Services, form: Any, pace: Pace, rng: random.Random) -> Trajectory:
    async def scenario(recorder: DesktopRecorder, seen: list[Event]) -> None:
        # The field itself: the anchor of a click in it is then cut from its label, beside it.
        recorder.mark_sensitive_region("Contact form", form.box("password"))
        for part, text in zip(("name", "email", "password"), RECORDED, strict=True):
            await _click(form, part, pace, rng)
            await _type(text, pace, rng)
        await _click(form, "save", pace, rng)
        await asyncio.to_thread(form.saved)
        await until(lambda: sum(e.point is not None for e in seen) == 4, "the click on Save")

    return await asyncio.wait_for(record(services, scenario), _RECORD_GUARD_S)


def _typed(trajectory: Trajectory) -> list[object]:
    return [e.value for e in trajectory.events if e.action is ActionKind.DESKTOP_TYPE]


def _leaked(trajectory: Trajectory) -> bool:
    """Whether some of the password was stored as plain text (three characters or more)."""
    secret = RECORDED[2]
    pieces = {secret[i : i + 3] for i in range(len(secret) - 2)}
    return any(
        isinstance(value, str) and any(piece in value for piece in pieces)
        for value in _typed(trajectory)
    )


def _unfaithful(trajectory: Trajectory) -> str | None:
    """What is wrong with the recording's typing (None: the name, the email and the password,
    masked, in that order, and nothing else)."""
    typed = _typed(trajectory)
    expected = [RECORDED[0], RECORDED[1]]
    plain = [v for v in typed if isinstance(v, str)]
    masked = len(typed) - len(plain)
    if plain == expected and masked == 1 and isinstance(typed[2], SecretPlaceholder):
        return None
    shown = [
        "<secret>"
        if not isinstance(v, str)
        else "<part of the password>"
        if v and v in RECORDED[2]
        else v
        for v in typed
    ]
    return f"the recording's typing is {shown}, not the name, the email and the password"


# ── one app ────────────────────────────────────────────────────────────────────────────────────


def _form(app: str, out: Path, variant: Variant | None) -> Any:
    where: dict[str, Any] = {"x": 40, "y": 40}
    if variant is not None:
        where = {"x": variant.x, "y": variant.y, "relayout": variant.relayout}
        where["scale"] = variant.scale
    return GtkForm(out, **where) if app == "gtk" else Form(out, **where)


def _values(app: str, pace: str, variant: str) -> tuple[str, str, str]:
    """New values for one replay, unlike each other and the recorded ones (the secret's
    length differs from the others' so a wrong field shows in the saved length too)."""
    tag = f"{app}{pace[0]}{variant}"
    return f"Ann {tag.title()}", f"ann.{tag}@example.test", f"pw-{tag}-0123456789xyz"


def _bind(version: WorkflowVersion, values: tuple[str, str, str]) -> Any:
    workflow = version.workflow
    secrets = [p.name for p in workflow.parameters if p.type is ParameterType.SECRET]
    plain = [p.name for p in workflow.parameters if p.type is not ParameterType.SECRET]
    if len(secrets) != 1 or len(plain) != 2:
        kinds = [p.type.value for p in workflow.parameters]
        raise ValueError(f"induced parameters {kinds}, not name, email and a secret")
    return bind_parameters(
        workflow, dict(zip(plain, values[:2], strict=True)), secrets={secrets[0]: values[2]}
    )


def _judge(saved: dict[str, Any] | None, values: tuple[str, str, str]) -> tuple[str, int]:
    """The verdict on what the form saved, and how many values went into another field."""
    if saved is None:
        return "nothing", 0
    name, email, secret = values
    got_name, got_email = str(saved.get("name", "")), str(saved.get("email", ""))
    length = saved.get("password_length")
    wrong = 0
    wrong += name in got_email or name in str(length)
    wrong += email in got_name
    wrong += secret in got_name or secret in got_email
    wrong += length not in (0, len(secret))  # something else typed into the password field
    right = got_name == name and got_email == email and length == len(secret)
    return ("right" if right else "wrong"), int(wrong)


def _saved(form: Any) -> dict[str, Any] | None:
    try:
        data: dict[str, Any] = form.saved(timeout=_SAVED_WAIT_S)
    except AssertionError:
        return None
    return data


def _classify(version: WorkflowVersion, run: Run | None) -> Counter[str]:
    """Per desktop step of *version*, what found its element in *run*."""
    kinds = {s.id: s.kind for s in version.workflow.steps if s.kind.startswith("desktop_")}
    counts: Counter[str] = Counter()
    seen = set()
    for step in run.steps if run is not None else ():
        if step.step_id not in kinds or not step.top_level:
            continue
        seen.add(step.step_id)
        if step.status is StepStatus.FAILED:
            counts["failed"] += 1
        elif step.locator is not None and step.locator.strategy is LocatorStrategy.ACCESSIBLE:
            counts["accessibility"] += 1
        elif step.locator is not None and step.locator.strategy is LocatorStrategy.IMAGE_ANCHOR:
            counts["image"] += 1
        else:
            counts["other"] += 1
    counts["not_reached"] = len(set(kinds) - seen)
    return counts


def _replay_one(
    services: Services,
    version: WorkflowVersion,
    app: str,
    pace: Pace,
    variant: Variant,
    tmp: Path,
    round_: str = "first",
) -> Outcome:
    tag = variant.name if round_ == "first" else f"{variant.name}{round_}"
    values = _values(app, pace.name, tag)
    out = tmp / f"{app}-{pace.name}-{tag}.json"
    run: Run | None = None
    error: str | None = None
    with _form(app, out, variant) as form:
        try:
            params = _bind(version, values)
            result = asyncio.run(
                asyncio.wait_for(replay(services, version, params, options=OPTIONS), _RUN_GUARD_S)
            )
            run = result.run
            error = run.error
        except (TimeoutError, ValueError) as exc:
            error = f"{type(exc).__name__}: {exc}"
        saved = _saved(form)
    verdict, wrong = _judge(saved, values)
    counts = _classify(version, run)
    resolutions = Counter(
        s.resolution.value
        for s in (run.steps if run is not None else ())
        if s.top_level and s.resolution is not None
    )
    return Outcome(
        app=app,
        pace=pace.name,
        variant=variant.name,
        verdict=verdict,
        wrong_field=wrong,
        by_accessibility=counts["accessibility"],
        by_image=counts["image"],
        by_other=counts["other"],
        failed=counts["failed"],
        not_reached=counts["not_reached"],
        status=run.status.value if run is not None else "not run",
        error=error,
        round=round_,
        healed=resolutions["fingerprint"],
        remembered=resolutions["experience"],
        direct=resolutions["direct"],
        seconds=(run.finished_at - run.started_at).total_seconds()
        if run is not None and run.finished_at is not None
        else 0.0,
        proposed=run.proposed_version if run is not None else None,
    )


def _missing(app: str) -> str | None:
    if not sys.platform.startswith("linux") or not (
        shutil.which("Xvfb") and shutil.which("xdotool")
    ):
        return "needs Linux with Xvfb and xdotool (Debian: xvfb xdotool)"
    if app == "gtk":
        return a11y_missing()
    return None


@contextmanager
def _desktop(with_a11y: bool) -> Iterator[None]:
    """A fresh display, with the accessibility bus when *with_a11y*."""
    with ExitStack() as stack:
        stack.enter_context(xvfb())
        if with_a11y:
            stack.enter_context(a11y_session())
        yield


def _bench_app(app: str, paces: tuple[Pace, ...], variants: tuple[Variant, ...]) -> AppReport:
    report = AppReport(app, skipped=_missing(app))
    if report.skipped:
        return report
    rng = random.Random(f"bench-desktop-{app}")
    # Tk has no AT-SPI bridge, but it runs on the same kind of desktop: the bus is there when
    # it can be, and holds no tree of it.
    with (
        tempfile.TemporaryDirectory(prefix="procedura-bench-desktop-") as tmp,
        isolated_home(),
        _desktop(with_a11y=a11y_missing() is None),
        open_services(load_settings(), write=True) as services,
    ):
        for pace in paces:
            try:
                with _form(app, Path(tmp) / f"{app}-{pace.name}-recorded.json", None) as form:
                    trajectory = asyncio.run(_demonstrate(services, form, pace, rng))
                report.recordings += 1
                if _leaked(trajectory):
                    report.leaks.append(pace.name)
                if problem := _unfaithful(trajectory):
                    report.failures.append(f"{pace.name}: {problem}")
                    continue
                version = approved_as_is(services, trajectory, actor="bench")
                _bind(version, RECORDED)  # name, email and a secret were induced
            except (AssertionError, TimeoutError, ValueError) as exc:
                report.failures.append(f"{pace.name}: {type(exc).__name__}: {exc}"[:200])
                continue
            for variant in variants:
                first = _replay_one(services, version, app, pace, variant, Path(tmp))
                report.outcomes.append(first)
                if first.healed == 0 or first.verdict != "right":
                    continue
                # What the healed run taught: the same version on the same drift again (its
                # repairs remembered), then the version it proposed, approved.
                report.learned.append(
                    _replay_one(services, version, app, pace, variant, Path(tmp), "again")
                )
                if first.proposed is not None:
                    approved = services.workflows.approve(
                        version.workflow_id, actor="bench", version=first.proposed
                    )
                    report.learned.append(
                        _replay_one(services, approved, app, pace, variant, Path(tmp), "proposed")
                    )
    return report


# ── the section ────────────────────────────────────────────────────────────────────────────────


_REPLAY_METRICS: Final = (
    "replays with the right data",
    "steps found by accessibility",
    "steps found by image",
    "steps failed",
    "values typed into the wrong field",
)


def _tally(outcomes: list[Outcome], key: str) -> str:
    """ "moved: 2/2, relayout: 0/2" (right of all, per value of *key*)."""
    values = dict.fromkeys(getattr(o, key) for o in outcomes)
    return ", ".join(
        f"{v}: {sum(o.verdict == 'right' for o in outcomes if getattr(o, key) == v)}"
        f"/{sum(getattr(o, key) == v for o in outcomes)}"
        for v in values
    )


def _add_app(section: Section, report: AppReport) -> None:
    name = report.app.upper() if report.app == "gtk" else report.app.title()
    if report.skipped:
        section.add(f"{name}: replays with the right data", None, "%", note=report.skipped)
        return
    faithful = report.recordings - sum(": the recording's typing" in f for f in report.failures)
    section.add(
        f"{name}: recordings that hold the task as done",
        faithful,
        f"of {report.recordings}",
        note="; ".join(report.failures) or "name, email, masked password, Save",
    )
    section.add(
        f"{name}: recordings that kept some of the password as plain text",
        len(report.leaks),
        "",
        "== 0",
        f"of {report.recordings}" + (f" ({', '.join(report.leaks)} pace)" if report.leaks else ""),
    )
    done = report.outcomes
    if not done:
        why = "nothing was replayed: no recording held the task as done"
        for metric in _REPLAY_METRICS:
            section.add(f"{name}: {metric}", None, note=why)
        return
    right = sum(o.verdict == "right" for o in done)
    section.add(
        f"{name}: replays with the right data",
        100 * right / len(done),
        "%",
        GOALS[report.app],
        f"{right}/{len(done)}; {_tally(done, 'variant')}; {_tally(done, 'pace')} pace",
    )
    steps = sum(o.by_accessibility + o.by_image + o.by_other + o.failed for o in done)
    section.add(
        f"{name}: steps found by accessibility",
        sum(o.by_accessibility for o in done),
        "steps",
        note=f"of {steps} desktop steps run",
    )
    section.add(f"{name}: steps found by image", sum(o.by_image for o in done), "steps")
    section.add(
        f"{name}: steps failed",
        sum(o.failed for o in done),
        "steps",
        note=f"{sum(o.not_reached for o in done)} more not reached; "
        f"{sum(o.by_other for o in done)} needed no element (typing into the focused field)",
    )
    section.add(
        f"{name}: values typed into the wrong field",
        sum(o.wrong_field for o in done),
        "",
        "== 0",
        f"in {sum(o.wrong_field > 0 for o in done)} of {len(done)} replays",
    )
    _add_learned(section, name, done, report.learned)
    for o in (*done, *report.learned):
        if o.verdict != "right":
            section.notes.append(
                f"{name} {o.pace}/{o.variant}/{o.round}: {o.verdict} (run {o.status}"
                + (f": {o.error[:200]}" if o.error else "")
                + f"; steps by a11y {o.by_accessibility}, image {o.by_image}, "
                f"failed {o.failed}, not reached {o.not_reached})"
            )


def _add_learned(section: Section, name: str, first: list[Outcome], learned: list[Outcome]) -> None:
    """What healed replays taught: the same drift again, and the versions they proposed."""
    healed = [o for o in first if o.healed and o.verdict == "right"]
    if not healed:
        return
    again = [o for o in learned if o.round == "again"]
    proposed = [o for o in learned if o.round == "proposed"]
    section.add(
        f"{name}: healed replays that proposed a version",
        sum(o.proposed is not None for o in healed),
        f"of {len(healed)}",
    )
    was = {(o.pace, o.variant): o for o in healed}
    section.add(
        f"{name}: the same drift again: right data",
        sum(o.verdict == "right" for o in again),
        f"of {len(again)}",
    )
    section.add(
        f"{name}: the same drift again: healed clicks taken from memory",
        sum(o.remembered for o in again),
        f"of {sum(was[(o.pace, o.variant)].healed for o in again)}",
        note=f"{sum(o.healed for o in again)} found by searching the screen again",
    )
    ratios = [
        o.seconds / was[(o.pace, o.variant)].seconds
        for o in again
        if o.seconds and was[(o.pace, o.variant)].seconds
    ]
    if ratios:
        section.add(
            f"{name}: the same drift again: run time / the healed run's",
            statistics.median(ratios),
            "x",
            note=f"median of {len(ratios)}",
        )
    steps = sum(o.direct + o.healed + o.remembered + o.failed for o in proposed)
    section.add(
        f"{name}: the proposed version approved: right data",
        sum(o.verdict == "right" for o in proposed),
        f"of {len(proposed)}",
        note=f"{sum(o.direct for o in proposed)} of {steps} steps as recorded",
    )


def measure(smoke: bool = False) -> Section:
    """Both apps at both paces into the three variants (smoke: a person's pace, re-laid out)."""
    paces = (PERSON,) if smoke else (MACHINE, PERSON)
    variants = tuple(v for v in VARIANTS if v.name == "relayout") if smoke else VARIANTS
    section = Section(
        "desktop",
        "Desktop replay: GTK (accessibility) and Tk (image) forms, moved, re-laid out, x2",
    )
    reports = [_bench_app(app, paces, variants) for app in APPS]
    ran = [r for r in reports if not r.skipped]
    section.add(
        "apps benchmarked",
        len(ran),
        f"of {len(APPS)}",
        note="; ".join(f"{TITLES[r.app]} skipped: {r.skipped}" for r in reports if r.skipped)
        or ", ".join(TITLES[r.app] for r in ran),
    )
    for report in reports:
        _add_app(section, report)
    section.notes.append(
        f"Recorded at {', '.join(p.name for p in paces)} pace on the plain form at (40, 40); "
        f"replayed into {', '.join(v.name for v in variants)} with new values, no LLM, --yes. "
        "Judged by the form's own saved JSON. Goals: GTK all right (healed through its "
        "accessibility tree), Tk >= 90% (image anchors only), no value in a wrong field."
    )
    return section


def main() -> None:
    cli_main(__doc__, measure, smoke_help="a person's pace only, the re-laid-out form only")


if __name__ == "__main__":
    main()
