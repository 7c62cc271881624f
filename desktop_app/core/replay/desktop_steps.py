"""Desktop steps in a run: find the window, then the spot, healing the way web steps do.

A ``desktop_click`` climbs its own ladder:

0. **accessibility** — when the step was recorded on an element the application's
   accessibility tree showed (an ``accessible`` locator: its role and its name or label), the
   window's tree is searched for it: the only element of that role and name (else the only one
   with the recorded path of ancestors) is clicked, at the same place within it as recorded,
   wherever the layout put it and at whatever scale. Elements alike are never told apart by
   position: then, as when the application shows no tree or the element is not in it, images
   take over. A disabled (greyed) element is waited for, as a person would.
1. **recorded** — the window with the recorded title (else the one application window with a
   close title) is focused, and the recorded point, relative to the window, is clicked once the
   step's image anchor is seen there (within :data:`SLACK_PX`): at :data:`HERE_SCORE`, or at
   :data:`NEAR_SCORE` when nothing else in the window looks as much like it (a focus ring or a
   hover changes a few pixels). A window that moved changes nothing: the point is relative to
   it. Without an anchor the point is clicked as recorded. While it waits for the recorded
   anchor, a repair remembered for the step's drift is looked for at its own spot
   (:mod:`.desktop_learning`): there, it is clicked (``experience``).
2. **image** — the anchor is looked for in the window, then on the whole screen (template
   matching on a fresh screenshot, the anchor resized to each of :data:`SCALES`: a form drawn at
   twice the size, or with a larger font): a match of at least :data:`FOUND_SCORE` that is
   clearly ahead of any other place (by :data:`AHEAD_BY`) is clicked, at the same offset within
   the anchor as the recorded click (scaled). The run record says ``fingerprint`` (the anchor
   is the recorded look of the spot) and where it was found. A place between
   :data:`HOVER_SCORE` and :data:`FOUND_SCORE` with nothing else close is scored again with
   the pointer on it (recorded hovered, a button looks different until pointed at). Not found
   whole, a row's anchor is found as its label and its element apart
   (:mod:`.desktop_parts`).
3. **LLM** — with a vision-capable model configured (``llm_vision``), the model is shown the
   anchor and a screenshot of the window and answers where to click; never once a secret was
   typed on the desktop in this run (the screen could show it).
4. **person** — asked to put the window in the state the step expects (close a dialog, say) and
   to confirm; the ladder is then climbed once more. Skip and abort work as for web steps.

``desktop_type`` and ``hotkey`` steps focus their window (rung 1's window search) and act. A
``desktop_type`` step recorded with its field (the element that had the keyboard focus) types
into that field, found as in rung 0 and given the focus first, and then reads the field back:
what was typed must be in it (not for a secret). Where the application shows a tree but the
field is not in it, or is one of several alike, the step types only if the focus is on a field
of that role and name already; else it stops before typing anything.
Expectations: a window title (the active window, else any window) and an image anchor visible.
A click healed at rungs 2 and 3 returns the repair it teaches (:mod:`.desktop_learning`).
"""

from __future__ import annotations

import asyncio
import fnmatch
import re
import time
from collections.abc import Sequence
from typing import Final

from rapidfuzz import fuzz

from desktop_app.core.llm import StructuredLLM
from desktop_app.core.models.common import BoundingBox, Point
from desktop_app.core.models.experience import Experience
from desktop_app.core.models.run import Resolution
from desktop_app.core.models.target import Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import (
    DesktopClickStep,
    DesktopTypeStep,
    Expectation,
    HotkeyStep,
    ImageVisible,
    Step,
    WindowTitleMatches,
    Workflow,
)
from desktop_app.core.ports import MediaStore
from desktop_app.core.replay.browser import Handle
from desktop_app.core.replay.desktop import (
    SCALES,
    DesktopPort,
    DesktopUnavailable,
    Element,
    ImageMatch,
    Window,
)
from desktop_app.core.replay.desktop_elements import (
    Lookup,
    accessible_locator,
    find,
    names,
    point_in,
    recorded_box,
)
from desktop_app.core.replay.desktop_learning import Spot, cut_box, remembered, repair_of_click
from desktop_app.core.replay.desktop_parts import by_parts
from desktop_app.core.replay.desktop_vision import ask_vision
from desktop_app.core.replay.ladder import (
    Found,
    ReplayOptions,
    RunAborted,
    StepFailed,
    StepSkipped,
    Tracker,
)
from desktop_app.core.replay.lessons import StepRepair
from desktop_app.core.replay.memory import ExperienceMemory
from desktop_app.core.replay.person import Person, Question

__all__ = [
    "AHEAD_BY",
    "FOUND_SCORE",
    "HERE_SCORE",
    "HOVER_SCORE",
    "NEAR_SCORE",
    "SLACK_PX",
    "DesktopSteps",
    "title_matches",
]

#: How far (pixels) the anchor may sit from its recorded place and still count as "there".
SLACK_PX: Final = 12
#: The least template-matching score for "the anchor is where it was recorded".
HERE_SCORE: Final = 0.9
#: The least score for "the anchor is found elsewhere" (rung 2).
FOUND_SCORE: Final = 0.85
#: The least score for "the anchor is still at its spot, drawn a little differently" (a
#: focused field's ring, a hovered button): accepted only where nothing else looks alike.
NEAR_SCORE: Final = 0.6
#: The least score of a place that, alone, is scored again with the pointer on it (a button
#: recorded hovered looks different until it is pointed at).
HOVER_SCORE: Final = 0.7
#: How much better than the next place the best match must be to be trusted.
AHEAD_BY: Final = 0.05
#: A window's title must be this similar (0-100) to the recorded one to stand in for it.
TITLE_SIMILARITY: Final = 80.0
_POLL_S: Final = 0.1
_BY_TREE: Final = "accessibility: "
#: How long a field may take to show what was typed into it (seconds).
_READ_BACK_S: Final = 2.0


class DesktopSteps:
    """Runs desktop steps and checks desktop expectations over a :class:`DesktopPort`.

    Args:
        desktop: the desktop (None: desktop steps fail with a clear message).
        media: where recorded image anchors are read from.
        llm: a vision-capable LLM for rung 3, or None.
        person: who is asked at rung 4, or None.
        options: what the run may do.
        memory: remembered repairs (:mod:`.desktop_learning`), or None.
    """

    def __init__(
        self,
        desktop: DesktopPort | None,
        media: MediaStore,
        *,
        llm: StructuredLLM | None,
        person: Person | None,
        options: ReplayOptions,
        memory: ExperienceMemory | None = None,
    ) -> None:
        self._desktop = desktop
        self._media = media
        self._memory = memory
        self._llm = llm
        self._person = person
        self._options = options
        self.secret_typed = False

    def _port(self) -> DesktopPort:
        if self._desktop is None:
            raise StepFailed(
                "desktop steps need a desktop to drive, and none was opened for this run"
            )
        return self._desktop

    # ── steps ───────────────────────────────────────────────────────────────────────────────

    async def run(
        self,
        bound: Step,
        tracker: Tracker,
        *,
        title: str,
        secret: bool,
        workflow: Workflow | None = None,
        original: Step | None = None,
    ) -> StepRepair | None:
        """Do the desktop step *bound* (placeholders filled); *secret*: it types a secret.
        *original* is the step as *workflow* has it (what remembered repairs are looked up for).

        Returns: the repair a healed click teaches if the step then holds, else None.

        Raises:
            StepFailed: the window or the spot could not be found, or the desktop failed.
            StepSkipped / RunAborted: the person asked said so.
        """
        try:
            match bound:
                case DesktopClickStep():
                    recorded = original if isinstance(original, DesktopClickStep) else bound
                    return await self._click(bound, tracker, title, workflow, recorded)
                case DesktopTypeStep(text=text):
                    window = await self._window(bound.window_title, None, bound.timeout_s, tracker)
                    field = await self._field(bound, window, tracker)
                    if secret:  # before typing: a failure half-way may show some of it
                        self.secret_typed = True
                    await self._port().type_text(text)
                    if secret:
                        tracker.note("typed a secret (not shown)")
                    if field is not None and not secret and not field.secret:
                        await self._read_back(field, text, tracker)
                case HotkeyStep(keys=keys):
                    await self._window(bound.window_title, None, bound.timeout_s, tracker)
                    await self._port().hotkey(keys)
                case _:
                    raise StepFailed(f"a {bound.kind} step is not a desktop step")
        except DesktopUnavailable as exc:
            raise StepFailed(str(exc)) from None
        return None

    async def _click(
        self,
        step: DesktopClickStep,
        tracker: Tracker,
        title: str,
        workflow: Workflow | None,
        recorded: DesktopClickStep,
    ) -> StepRepair | None:
        port = self._port()
        for attempt in range(2):  # the second time after a person set the window right
            window = await self._window(step.window_title, step.app, step.timeout_s, tracker)
            spot = await self._find_spot(
                step, window, tracker, title, asked=attempt > 0, learned=(workflow, recorded)
            )
            if spot is not None:
                point = spot.point
                by_tree = spot.detail.startswith(_BY_TREE)
                tracker.found = Found(
                    handle=Handle(selector=f"({point.x:.0f}, {point.y:.0f}) on the screen"),
                    resolution=spot.resolution,
                    locator=spot.experience.repaired_locator
                    if spot.experience is not None
                    else accessible_locator(step.target)
                    if by_tree
                    else _anchor_locator(step.target),
                    detail=spot.detail,
                    experience_id=spot.experience.id if spot.experience is not None else None,
                )
                repair = None
                if workflow is not None and spot.resolution is not Resolution.DIRECT:
                    repair = await self._repair(workflow, recorded, spot, window)  # before acting
                await port.click(point.x, point.y, button=step.button, count=step.click_count)
                return repair
        raise StepFailed("the spot to click was not found, even after the person was asked")

    async def _repair(
        self, workflow: Workflow, step: DesktopClickStep, spot: Spot, window: Window
    ) -> StepRepair | None:
        """What clicking *spot* teaches (:mod:`.desktop_learning`): a fresh anchor cut where it
        is now. Once a secret was typed (the screen could show it) nothing is cut: an anchor
        found at its own size keeps its recorded image at its new place, else nothing is
        learned."""
        ref = cut = None
        anchor = self._anchor(step.target)
        locator = _anchor_locator(step.target)
        if spot.experience is None and anchor is not None and locator is not None:
            _, where = anchor
            recorded = step.point or Point(x=window.box.width / 2, y=window.box.height / 2)
            offset = Point(x=recorded.x - where.x, y=recorded.y - where.y)
            cut = cut_box(spot.point, offset, where, spot.scale, window.box)
            if cut is not None and not self.secret_typed:
                image = await self._port().screenshot(cut)
                ref = await asyncio.to_thread(self._media.put, image, "png")
            elif (
                cut is not None
                and spot.resolution is Resolution.FINGERPRINT
                and abs(cut.width - where.width) < 0.5
                and abs(cut.height - where.height) < 0.5
            ):
                ref = locator.value  # the recorded image, where it is now
        return repair_of_click(
            workflow,
            step,
            spot,
            window=window.box,
            window_title=window.title,
            anchor_ref=ref,
            cut=cut,
        )

    async def _find_spot(
        self,
        step: DesktopClickStep,
        window: Window,
        tracker: Tracker,
        title: str,
        *,
        asked: bool,
        learned: tuple[Workflow | None, DesktopClickStep],
    ) -> Spot | None:
        """The screen point to click, how it was found and why; None after the person was
        asked to set the window right (climb again). *learned*: the workflow and the step as
        recorded, whose remembered repairs are looked for at their spots with the recorded
        one."""
        port = self._port()
        by_tree = await self._by_accessibility(step, window, tracker)
        if isinstance(by_tree, Lookup):  # alike in the tree: alike to images too
            if asked:
                return None
            await self._ask_person(step, window, title, tracker)
            return None
        if by_tree is not None:
            return by_tree
        recorded = step.point or Point(x=window.box.width / 2, y=window.box.height / 2)
        expected = Point(x=window.box.x + recorded.x, y=window.box.y + recorded.y)
        anchor = self._anchor(step.target)
        if anchor is None:
            return Spot(expected, Resolution.DIRECT, "no image anchor: clicked the recorded spot")
        image, where = anchor
        offset = Point(x=recorded.x - where.x, y=recorded.y - where.y)

        deadline = time.monotonic() + min(self._options.patience_s, step.timeout_s)
        box = _grown(_moved(where, window.box), SLACK_PX)
        known = await self._remembered(*learned)
        await port.move(expected.x, expected.y)  # as when it was recorded: hovered
        while True:  # rung 1: the anchor where it was recorded (the window may still be drawing)
            here = await port.find_image(image, box=box, limit=1)
            if here and here[0].score >= HERE_SCORE:  # the recorded point itself is clicked,
                twin = await self._twin(image, window, here[0])  # if nothing else is alike
                if twin is None:
                    detail = f"image anchor at the recorded spot ({_pct(here[0].score)})"
                    return Spot(expected, Resolution.DIRECT, detail)
                tracker.note(
                    f"image anchor: at the recorded spot ({_pct(here[0].score)}), and alike "
                    f"elsewhere in the window ({_pct(twin.score)}): not told apart by its place"
                )
                break
            if (again := await self._remembered_here(known, window, tracker)) is not None:
                return again
            if time.monotonic() >= deadline:
                break
            await asyncio.sleep(_POLL_S)

        tried = []
        anchor_was = _moved(where, window.box)
        for region, name in ((window.box, "the window"), (None, "the screen")):  # rung 2
            matches = await port.find_image(image, box=region, limit=2, scales=SCALES)
            best = matches[0] if matches else None
            alone = len(matches) < 2 or matches[1].score <= matches[0].score - AHEAD_BY
            if (
                best is not None
                and alone
                and abs(best.scale - 1.0) < 0.02
                and best.score >= NEAR_SCORE
                and abs(best.box.x - anchor_was.x) <= SLACK_PX
                and abs(best.box.y - anchor_was.y) <= SLACK_PX
            ):  # still where it was, drawn a little differently (focus, hover, a caret)
                detail = (
                    f"image anchor at the recorded spot, a little changed ({_pct(best.score)}; "
                    "nothing else alike)"
                )
                return Spot(expected, Resolution.DIRECT, detail)
            if best is not None and alone and HOVER_SCORE <= best.score < FOUND_SCORE:
                best = await self._hovered(image, best, offset)
            if best is None or best.score < FOUND_SCORE:
                tried.append(f"not in {name} (best {_pct(best.score) if best else 'none'})")
                continue
            if len(matches) > 1 and matches[1].score > best.score - AHEAD_BY:
                tried.append(
                    f"{name} has two places alike ({_pct(best.score)}, {_pct(matches[1].score)})"
                )
                continue
            spot = _at(best.box, offset, best.scale)
            moved = spot.x - expected.x, spot.y - expected.y
            scaled = f" at {best.scale:.2f}x" if abs(best.scale - 1.0) >= 0.02 else ""
            return Spot(
                spot,
                Resolution.FINGERPRINT,
                f"image anchor found in {name}{scaled} {moved[0]:+.0f}, {moved[1]:+.0f} px from "
                f"the recorded spot ({_pct(best.score)}): the layout changed",
                scale=best.scale,
            )
        element_box = recorded_box(step.target.fingerprint if step.target else None)
        if element_box is not None:  # rung 2b: the row's label and its element, found apart
            paired, why = await by_parts(port, image, where, element_box, recorded, window.box)
            if paired is not None:
                moved = paired.point.x - expected.x, paired.point.y - expected.y
                return Spot(
                    paired.point,
                    Resolution.FINGERPRINT,
                    f"image anchor: {why}, {moved[0]:+.0f}, {moved[1]:+.0f} px from the "
                    "recorded spot: the layout changed",
                    scale=paired.label.scale,
                )
            tried.append(why)
        tracker.note("image anchor: " + "; ".join(tried))

        by_llm = await ask_vision(  # rung 3
            self._llm,
            self._options,
            port,
            step,
            window,
            image,
            tracker,
            secret_typed=self.secret_typed,
        )
        if by_llm is not None:
            return Spot(by_llm[0], Resolution.LLM, by_llm[1])
        if asked:
            return None
        await self._ask_person(step, window, title, tracker)  # rung 4: then climb again
        return None

    async def _remembered(
        self, workflow: Workflow | None, step: DesktopClickStep
    ) -> list[tuple[Experience, bytes]]:
        """The remembered repairs of *step* for its drift, with their anchors."""
        if workflow is None or self._memory is None:
            return []
        could_ask = self._person is not None or (
            self._llm is not None and self._options.use_llm and self._options.vision
        )
        found = await asyncio.to_thread(
            remembered, self._memory, workflow, step, could_ask=could_ask
        )
        kept = []
        for experience in found:
            try:
                kept.append((experience, self._media.get(experience.repaired_locator.value)))
            except (OSError, KeyError, ValueError):
                continue  # its anchor is gone
        return kept

    async def _remembered_here(
        self, known: Sequence[tuple[Experience, bytes]], window: Window, tracker: Tracker
    ) -> Spot | None:
        """A remembered repair whose anchor is at its remembered spot, nothing else in the
        window alike: where it clicked, in the window as it is now."""
        for experience, image in known:
            assert experience.fingerprint is not None and experience.fingerprint.bbox is not None
            assert experience.point is not None
            box = _grown(_moved(experience.fingerprint.bbox, window.box), SLACK_PX)
            here = await self._port().find_image(image, box=box, limit=1)
            if not here or here[0].score < HERE_SCORE:
                continue
            if await self._twin(image, window, here[0]) is not None:
                tracker.note("a remembered repair's anchor is alike elsewhere in the window")
                continue
            point = experience.point
            return Spot(
                Point(x=window.box.x + point.x, y=window.box.y + point.y),
                Resolution.EXPERIENCE,
                f"remembered repair from run of {experience.created_at:%Y-%m-%d}: its image "
                f"anchor at its spot ({_pct(here[0].score)})",
                experience=experience,
            )
        return None

    async def _twin(self, anchor: bytes, window: Window, here: ImageMatch) -> ImageMatch | None:
        """Another place in *window* that looks as much like the anchor as *here* does (within
        :data:`AHEAD_BY`), if any: a row added above the recorded one, a second field alike,
        would otherwise be clicked for being where the recorded one was."""
        matches = await self._port().find_image(anchor, box=window.box, limit=2)
        others = [m for m in matches if not _overlapping(m.box, here.box)]
        if others and others[0].score > here.score - AHEAD_BY:
            return others[0]
        return None

    async def _hovered(self, anchor: bytes, match: ImageMatch, offset: Point) -> ImageMatch:
        """*match* scored again with the pointer on it, as when it was recorded (a person
        points at a button before clicking it: its hovered look is in the anchor); the better
        of the two."""
        port = self._port()
        spot = _at(match.box, offset, match.scale)
        await port.move(spot.x, spot.y)
        again = await port.find_image(
            anchor, box=_grown(match.box, SLACK_PX), limit=1, scales=(match.scale,)
        )
        return again[0] if again and again[0].score > match.score else match

    async def _by_accessibility(
        self, step: DesktopClickStep, window: Window, tracker: Tracker
    ) -> Spot | Lookup | None:
        """Rung 0: the recorded element in the window's accessibility tree, if it is there;
        the lookup when several elements are it (then nothing may be picked: the images,
        which see less than the tree, would pick by their place)."""
        element = await self._element(step.target, window, step.timeout_s, tracker)
        if isinstance(element, Lookup):
            return element
        if element is None:
            return None
        fingerprint = step.target.fingerprint if step.target else None
        spot = point_in(element, fingerprint, step.point)
        return Spot(spot, Resolution.DIRECT, f"{_BY_TREE}{_said(element, window)}")

    async def _element(
        self, target: Target | None, window: Window, timeout_s: float, tracker: Tracker
    ) -> Element | Lookup | None:
        """The element *target* names in *window*'s accessibility tree, shown and enabled
        (waited for, the application may still be drawing it); the lookup when several are
        alike; None when the step has no ``accessible`` locator, the application shows no
        tree, or it is not there."""
        locator = accessible_locator(target)
        if locator is None or target is None:
            return None
        path = target.fingerprint.ancestors if target.fingerprint else ()
        port = self._port()
        deadline = time.monotonic() + min(self._options.patience_s, timeout_s)
        while True:
            elements = await port.elements(window)
            if elements is None:
                tracker.note("accessibility: the application shows no tree here; images instead")
                return None
            lookup = find(elements, locator, path)
            found = lookup.element
            if found is not None and not _disabled(found):
                return found
            if time.monotonic() >= deadline:
                if found is not None:
                    tracker.note(f"accessibility: {locator.describe()} stayed disabled")
                else:
                    tracker.note(f"accessibility: {lookup.why}")
                return lookup if lookup.ambiguous else None
            await asyncio.sleep(_POLL_S)

    async def _field(
        self, step: DesktopTypeStep, window: Window, tracker: Tracker
    ) -> Element | None:
        """The field to type into, focused; None to type wherever the window's focus is (the
        step has no recorded field, or the application shows no tree).

        Raises:
            StepFailed: the application shows a tree, the recorded field is not (uniquely) in
                it and the focus is not on one like it; or it would not take the focus.
        """
        locator = accessible_locator(step.target)
        if locator is None:
            return None
        port = self._port()
        found = await self._element(step.target, window, step.timeout_s, tracker)
        field = found if isinstance(found, Element) else None
        if field is None:
            elements = await port.elements(window)
            if elements is None:
                return None  # no tree: as recorded without one
            read = names(elements)
            focused = [(e, n) for e, n in zip(elements, read, strict=True) if "focused" in e.states]
            if (
                focused
                and focused[0][0].role == locator.value
                and focused[0][1] == (locator.name or "")
            ):
                tracker.note(f"typed into the focused {_said(focused[0][0], window)}")
                return focused[0][0]
            raise StepFailed(
                f"the field to type into, {locator.describe()}, was not found in "
                f"'{window.title}' ({'; '.join(tracker.notes) or 'not in the window'}): "
                "nothing was typed"
            )
        if "focused" not in field.states and not await port.focus_element(field):
            raise StepFailed(
                f"{_said(field, window)} would not take the keyboard focus: nothing was typed"
            )
        tracker.found = Found(
            handle=Handle(selector=f"{_said(field, window)}"),
            resolution=Resolution.DIRECT,
            locator=locator,
            detail=f"{_BY_TREE}typed into {_said(field, window)}",
        )
        return field

    async def _read_back(self, field: Element, text: str, tracker: Tracker) -> None:
        """Check that *field* shows *text* (the application got every key; it may take a
        moment to draw them). Fields that expose no text are not checked.

        Raises:
            StepFailed: the field does not hold what was typed.
        """
        wanted = _squash(text.split("\n")[0])
        if not wanted:
            return
        port = self._port()
        deadline = time.monotonic() + _READ_BACK_S
        while True:
            shown = await port.element_text(field)
            if shown is None:
                return
            if wanted in _squash(shown):
                tracker.note("the field shows what was typed")
                return
            if time.monotonic() >= deadline:
                raise StepFailed(
                    f"the field '{field.name or field.role}' shows {shown[:80]!r} after typing, "
                    "not the value typed: the application did not take it"
                )
            await asyncio.sleep(_POLL_S)

    async def _ask_person(
        self, step: DesktopClickStep, window: Window, title: str, tracker: Tracker
    ) -> None:
        if self._person is None:
            raise StepFailed(
                f"could not find where to click in '{window.title}' "
                f"({'; '.join(tracker.notes) or 'no anchor matched'})"
            )
        answer = await self._person.ask(
            Question(
                kind="confirm",
                step_title=title,
                message=(
                    f"Procedura cannot find where to click in the window '{window.title}'. Put "
                    "the window in the state this step expects (close a dialog, scroll to the "
                    "spot), then confirm to try again."
                ),
                element=f"the spot recorded at {step.point.x:.0f}, {step.point.y:.0f} in the window"
                if step.point
                else None,
            )
        )
        if answer.action == "abort":
            raise RunAborted("aborted by the person asked to find the spot")
        if answer.action == "skip":
            raise StepSkipped("skipped by the person asked to find the spot")
        if answer.action != "confirm":
            raise StepFailed("the spot to click was not found, and the person declined")
        tracker.note("a person set the window right; tried again")

    # ── windows ─────────────────────────────────────────────────────────────────────────────

    async def _window(
        self, title: str | None, app: str | None, timeout_s: float, tracker: Tracker
    ) -> Window:
        """The step's window, focused (waited for up to *timeout_s*; it may still be opening).

        The exact title first; else a window of the same application whose title is close
        (the only one); else, without a recorded title, the active window.
        """
        port = self._port()
        deadline = time.monotonic() + timeout_s
        while True:
            windows = await port.windows()
            window, how = _pick_window(windows, title, app)
            if window is None and title is None:
                window, how = await port.active_window(), "the active window"
            if window is not None:
                if how:
                    tracker.note(f"window: {how}")
                await port.focus(window)  # always: typing goes where the keyboard focus is
                return window
            if time.monotonic() >= deadline:
                shown = ", ".join(repr(w.title) for w in windows[:6] if w.title) or "none"
                raise StepFailed(f"no window titled {title!r} appeared (open windows: {shown})")
            await asyncio.sleep(_POLL_S)

    # ── expectations ────────────────────────────────────────────────────────────────────────

    async def expectation_holds(self, expectation: Expectation, *, timeout_s: float) -> bool:
        """Whether *expectation* holds within *timeout_s* (it is polled)."""
        port = self._port()
        deadline = time.monotonic() + timeout_s
        while True:
            if await self._holds_now(port, expectation):
                return True
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(_POLL_S)

    async def _holds_now(self, port: DesktopPort, expectation: Expectation) -> bool:
        match expectation:
            case WindowTitleMatches(pattern=pattern, match=how):
                active = await port.active_window()
                titles = [active.title] if active is not None else []
                titles += [w.title for w in await port.windows()]
                return any(title_matches(t, pattern, how) for t in titles)
            case ImageVisible(anchor=ref):
                matches = await port.find_image(self._media.get(ref), limit=1)
                return bool(matches) and matches[0].score >= FOUND_SCORE
        raise StepFailed(f"a {expectation.kind} expectation is not checked on the desktop")

    async def screenshot(self) -> bytes | None:
        """A screenshot for the run record, or None once a secret was typed (it could show)."""
        if self._desktop is None or self.secret_typed:
            return None
        try:
            return await self._desktop.screenshot()
        except (DesktopUnavailable, OSError):
            return None

    # ── anchors ─────────────────────────────────────────────────────────────────────────────

    def _anchor(self, target: Target | None) -> tuple[bytes, BoundingBox] | None:
        """The recorded anchor image and where it was in the window, if the step has one."""
        locator = _anchor_locator(target)
        if target is None or locator is None:
            return None
        fingerprint = target.fingerprint
        if fingerprint is None or fingerprint.bbox is None:
            return None
        try:
            return self._media.get(locator.value), fingerprint.bbox
        except (OSError, KeyError, ValueError):
            return None


def title_matches(title: str, pattern: str, how: str = "glob") -> bool:
    """Whether a window *title* matches *pattern* (``glob``: ``*`` wildcards, else a plain
    title contains it; ``regex``; ``exact``)."""
    if how == "exact":
        return title == pattern
    if how == "regex":
        return re.search(pattern, title) is not None
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(title, pattern)
    return pattern in title


def _pick_window(
    windows: Sequence[Window], title: str | None, app: str | None
) -> tuple[Window | None, str]:
    if title is None:
        return None, ""
    for window in windows:
        if window.title == title:
            return window, ""
    close = [
        w
        for w in windows
        if w.title
        and fuzz.ratio(w.title, title) >= TITLE_SIMILARITY
        and (app is None or w.app == app)
    ]
    if len(close) == 1:
        return close[0], f"'{close[0].title}' stands in for '{title}' (a close title)"
    return None, ""


def _said(element: Element, window: Window) -> str:
    """*element* for a person: its role and name, and where it is in the window."""
    what = f'{element.role} "{element.name}"' if element.name else element.role
    box = element.box
    return f"{what} at ({box.x - window.box.x:.0f}, {box.y - window.box.y:.0f}) in the window"


def _overlapping(a: BoundingBox, b: BoundingBox) -> bool:
    return (
        a.x < b.x + b.width
        and b.x < a.x + a.width
        and a.y < b.y + b.height
        and b.y < a.y + a.height
    )


def _disabled(element: Element) -> bool:
    """Whether *element* is shown disabled (greyed: neither enabled nor sensitive)."""
    return not {"enabled", "sensitive"} & element.states


def _squash(text: str) -> str:
    """*text* without its spaces, folded: how a field's value is compared with what was typed
    (an application may reflow or recase what it shows)."""
    return "".join(text.split()).casefold()


def _anchor_locator(target: Target | None) -> Locator | None:
    if target is None:
        return None
    for locator in target.locators:
        if locator.strategy is LocatorStrategy.IMAGE_ANCHOR:
            return locator
    return None


def _moved(box: BoundingBox, window: BoundingBox) -> BoundingBox:
    """*box* (relative to a window) on the screen, for the window at *window*."""
    return BoundingBox(x=window.x + box.x, y=window.y + box.y, width=box.width, height=box.height)


def _grown(box: BoundingBox, by: float) -> BoundingBox:
    return BoundingBox(
        x=max(0.0, box.x - by),
        y=max(0.0, box.y - by),
        width=box.width + 2 * by,
        height=box.height + 2 * by,
    )


def _at(box: BoundingBox, offset: Point, scale: float = 1.0) -> Point:
    """The point at *offset* (as recorded) within a matched anchor's *box*, found at *scale*."""
    return Point(x=box.x + offset.x * scale, y=box.y + offset.y * scale)


def _pct(score: float) -> str:
    return f"score {score:.2f}"
