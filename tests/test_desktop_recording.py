"""Recording the desktop: a Tk contact form on an Xvfb display, xdotool as the person."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import pty
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from desktop_support import (
    EMAIL,
    NAME,
    PASSWORD,
    PASSWORD_ROW,
    SAVE,
    SECRET,
    act,
    click_at,
    contact_form,
    grep,
    masked,
    needs_xvfb,
    record,
    terminal_like_window,
    typed,
    until,
    wait_for,
    window_manager_says_active,
    xdotool,
    xvfb,
)

from desktop_app.adapters.desktop.imaging import find_image, image_size
from desktop_app.adapters.desktop.recorder import (
    ELEMENT_PAD,
    MAX_WIDTH,
    UNIQUE_BELOW,
    DesktopRecorder,
)
from desktop_app.app import Services, open_services
from desktop_app.core.models import (
    ActionKind,
    BoundingBox,
    Event,
    LocatorStrategy,
    Modifier,
    Point,
    SecretPlaceholder,
    Trajectory,
)
from desktop_app.settings import load_settings


@pytest.mark.slow
@needs_xvfb
def test_recording_the_contact_form(home: Path, tmp_path: Path) -> None:
    with xvfb(), contact_form(tmp_path / "out.json") as form:

        async def scenario(
            services: Services, recorder: DesktopRecorder, seen: list[Event]
        ) -> None:
            recorder.mark_sensitive_region("Contact form", PASSWORD_ROW)
            await act(*click_at(form, NAME, "click", "1"))
            await act("type", "Jane Dox")
            await act("key", "BackSpace")
            await act("type", "e")
            await until(lambda: typed(seen, "Jane Doe"), "the name to be recorded")
            # Persisted as it happened: the store has the click and the typing already.
            raw = services.trajectories.raw_events(recorder.trajectory_id)
            assert [e.action for e in raw[:2]] == [
                ActionKind.DESKTOP_CLICK,
                ActionKind.DESKTOP_TYPE,
            ]
            assert raw[-1].value == "Jane Doe"

            await act(*click_at(form, EMAIL, "click", "1"))
            await act("type", "jane@example.test")
            await until(lambda: typed(seen, "jane@example.test"), "the email to be recorded")
            await act("key", "ctrl+a")
            await until(lambda: any(e.action is ActionKind.HOTKEY for e in seen), "the hotkey")

            await act(*click_at(form, PASSWORD, "click", "1"))
            await act("type", SECRET)
            secret = SecretPlaceholder(label="Contact form")
            await until(lambda: len(typed(seen, secret)) == len(SECRET), "the password")

            # A person's click: the press, then the release a moment later.
            await act(*click_at(form, SAVE, "mousedown", "1", "sleep", "0.1", "mouseup", "1"))
            await asyncio.to_thread(form.saved)
            await until(lambda: len([e for e in seen if e.point is not None]) == 4, "Save")

        async def run() -> tuple[Trajectory, list[str], int]:
            with open_services(load_settings(), write=True) as services:
                trajectory = await record(services, functools.partial(scenario, services))
                leaks = grep(home, SECRET)  # the database and its write-ahead log, the media
                raw = len(services.trajectories.raw_events(trajectory.id))
            return trajectory, leaks, raw

        trajectory, leaks_while_open, raw_count = asyncio.run(run())
        assert form.saved() == {
            "name": "Jane Doe",
            "email": "jane@example.test",
            "password_length": len(SECRET),
        }

    events = trajectory.events
    assert [e.action for e in events] == [
        ActionKind.DESKTOP_CLICK,
        ActionKind.DESKTOP_TYPE,
        ActionKind.DESKTOP_CLICK,
        ActionKind.DESKTOP_TYPE,
        ActionKind.HOTKEY,
        ActionKind.DESKTOP_CLICK,
        ActionKind.DESKTOP_TYPE,
        ActionKind.DESKTOP_CLICK,
    ]
    assert raw_count > len(events)  # every keystroke was stored as it came
    assert not trajectory.incomplete and trajectory.kind == "desktop"
    assert trajectory.recorder is not None and trajectory.recorder.startswith("procedura-desktop")
    assert {e.before.window_title for e in events if e.before} == {"Contact form"}
    assert {e.before.app for e in events if e.before} == {"Contactform"}
    assert [e.value for e in events if e.action is ActionKind.DESKTOP_TYPE] == [
        "Jane Doe",
        "jane@example.test",
        SecretPlaceholder(label="Contact form"),
    ]
    hotkey = events[4]
    assert hotkey.key == "a" and hotkey.modifiers == (Modifier.CONTROL,)

    clicks = [e for e in events if e.action is ActionKind.DESKTOP_CLICK]
    assert [(c.point.x, c.point.y) for c in clicks if c.point] == [NAME, EMAIL, PASSWORD, SAVE]
    # Inside the sensitive region: its anchor is what is beside the region (the label), never
    # the region itself.
    beside = clicks[2].target
    assert beside is not None and beside.fingerprint is not None
    box = beside.fingerprint.bbox
    assert box is not None and box.x + box.width <= PASSWORD_ROW.x
    media = load_settings().media_dir
    for click, (x, y) in zip([clicks[0], clicks[1], clicks[3]], [NAME, EMAIL, SAVE], strict=True):
        assert click.target is not None and click.target.fingerprint is not None
        (locator,) = click.target.locators
        assert locator.strategy is LocatorStrategy.IMAGE_ANCHOR
        anchor = (media / locator.value[:2] / locator.value[2:4] / locator.value).read_bytes()
        width, height = image_size(anchor)
        box = click.target.fingerprint.bbox
        assert box is not None and (box.width, box.height) == (width, height)
        assert box.x <= x < box.x + width and box.y <= y < box.y + height
        # As high as the field (26 px) or the button (32-34 px, with its highlight ring) and
        # its padding: clear of the rows above and below (35 px apart), and of the mask.
        assert width <= MAX_WIDTH and height <= 34 + 2 * ELEMENT_PAD
        assert (x, y) == SAVE or height < 35
        assert box.y + height <= PASSWORD_ROW.y or box.y >= PASSWORD_ROW.y + PASSWORD_ROW.height
        shot = click.before.screenshot if click.before else None
        assert shot is not None
        window = (media / shot[:2] / shot[2:4] / shot).read_bytes()
        places = find_image(window, anchor, limit=2)  # it marks one spot of the window only
        assert places[0].score > 0.99 and (len(places) == 1 or places[1].score < UNIQUE_BELOW)
        attributes = dict(click.target.fingerprint.attributes)
        assert attributes.pop("element_box").count(",") == 3  # the element's edges, x,y,w,h
        assert attributes == {"button": "left", "clicks": "1"}
        assert click.target.fingerprint.name == "Contact form"
    name_box = clicks[0].target.fingerprint.bbox if clicks[0].target.fingerprint else None
    assert name_box is not None and name_box.x < 60  # inside a text field: widened to its label
    for click in clicks:
        shot = click.before.screenshot if click.before else None
        assert shot is not None
        png = (media / shot[:2] / shot[2:4] / shot).read_bytes()
        assert image_size(png) == (420, 260)  # the window
        assert masked(png, PASSWORD_ROW)

    assert leaks_while_open == []
    assert grep(home, SECRET) == []


@pytest.mark.slow
@needs_xvfb
def test_double_clicks_keys_and_a_window_marked_sensitive(home: Path, tmp_path: Path) -> None:
    with xvfb(), contact_form(tmp_path / "out.json") as form:

        async def scenario(recorder: DesktopRecorder, seen: list[Event]) -> None:
            await act(*click_at(form, NAME, "click", "--repeat", "2", "--delay", "60", "1"))
            await until(lambda: seen, "the double click")
            recorder.mark_sensitive_window("contact*")
            await act(*click_at(form, EMAIL, "click", "1"))
            await act("type", "abc")
            await act("key", "Return", "shift+Tab", "F5", "BackSpace")
            await until(lambda: len(seen) >= 9, "the keys")

        async def run() -> Trajectory:
            with open_services(load_settings(), write=True) as services:
                return await record(services, scenario)

        trajectory = asyncio.run(run())

    events = trajectory.events
    assert [(e.action, e.key, e.modifiers) for e in events] == [
        (ActionKind.DESKTOP_CLICK, None, ()),
        (ActionKind.DESKTOP_CLICK, None, ()),
        (ActionKind.DESKTOP_TYPE, None, ()),
        (ActionKind.HOTKEY, "enter", ()),
        (ActionKind.HOTKEY, "tab", (Modifier.SHIFT,)),
        (ActionKind.HOTKEY, "f5", ()),
        (ActionKind.HOTKEY, "backspace", ()),  # nothing typed to take back: the key itself
    ]
    double, in_sensitive = events[0], events[1]
    assert double.target is not None and double.target.fingerprint is not None
    assert {**double.target.fingerprint.attributes, "element_box": ""} == {
        "button": "left",
        "clicks": "2",
        "element_box": "",
    }
    assert in_sensitive.target is None  # a click in a sensitive window keeps no image of it
    assert in_sensitive.point is not None and (in_sensitive.point.x, in_sensitive.point.y) == EMAIL
    assert events[2].value == SecretPlaceholder(label="Contact form")
    shot = in_sensitive.before.screenshot if in_sensitive.before else None
    assert shot is not None
    media = load_settings().media_dir
    png = (media / shot[:2] / shot[2:4] / shot).read_bytes()
    assert masked(png, BoundingBox(x=0, y=0, width=420, height=260))  # all of it


def claim_window(window: str, pid: int) -> None:
    """Say that *pid* owns *window* (``_NET_WM_PID``), as Procedura's own windows do."""
    from Xlib import Xatom
    from Xlib import display as xdisplay

    connection = xdisplay.Display()
    try:
        xwin = connection.create_resource_object("window", int(window))
        xwin.change_property(connection.intern_atom("_NET_WM_PID"), Xatom.CARDINAL, 32, [pid])
        connection.sync()
    finally:
        connection.close()


@pytest.mark.slow
@needs_xvfb
def test_pauses_and_procedura_own_windows_are_left_out(home: Path, tmp_path: Path) -> None:
    with xvfb(), contact_form(tmp_path / "out.json") as form:

        async def save() -> dict[str, Any]:
            await act(*click_at(form, SAVE, "mousedown", "1", "sleep", "0.1", "mouseup", "1"))
            saved = await asyncio.to_thread(form.saved)  # the form got the input: so did we
            form.out.unlink()
            return saved

        async def scenario(recorder: DesktopRecorder, seen: list[Event]) -> None:
            recorder.pause()
            await act(*click_at(form, NAME, "click", "1"))
            await act("type", "paused")
            assert (await save())["name"] == "paused"
            recorder.resume()
            claim_window(form.window, os.getpid())  # now it is one of Procedura's windows
            await act(*click_at(form, EMAIL, "click", "1"))
            await act("type", "own")
            assert (await save())["email"] == "own"
            recorder.add_note("checked by hand")
            await until(lambda: seen, "the note")

        async def run() -> Trajectory:
            with open_services(load_settings(), write=True) as services:
                return await record(services, scenario)

        trajectory = asyncio.run(run())

    assert [(e.action, e.value) for e in trajectory.events] == [
        (ActionKind.NOTE, "checked by hand")
    ]


@contextlib.contextmanager
def popup_of_ours(x: int, y: int, width: int, height: int) -> Iterator[None]:
    """A popup (override-redirect, like a tray menu: in no window manager's list) of this
    process at (*x*, *y*) on the screen, above whatever is there."""
    from Xlib import X, Xatom
    from Xlib import display as xdisplay

    connection = xdisplay.Display()
    try:
        screen = connection.screen()
        popup = screen.root.create_window(
            x, y, width, height, 0, screen.root_depth,
            background_pixel=screen.black_pixel, override_redirect=True,
        )  # fmt: skip
        popup.change_property(
            connection.intern_atom("_NET_WM_PID"), Xatom.CARDINAL, 32, [os.getpid()]
        )
        popup.map()
        popup.configure(stack_mode=X.Above)
        connection.sync()
        yield
        popup.destroy()
        connection.sync()
    finally:
        connection.close()


@pytest.mark.slow
@needs_xvfb
def test_a_click_on_a_popup_menu_of_procedura_is_left_out(home: Path, tmp_path: Path) -> None:
    with xvfb(), contact_form(tmp_path / "out.json") as form:
        left, top, _, _ = form.geometry()

        async def scenario(recorder: DesktopRecorder, seen: list[Event]) -> None:
            with popup_of_ours(left + NAME[0] - 40, top + NAME[1] - 10, 80, 20):
                await act(*click_at(form, NAME, "click", "1"))  # on the popup
                await act(*click_at(form, EMAIL, "click", "1"))  # on the form, beside it
                # Input is handled in order: the popup was still there for the first click.
                await until(lambda: any(e.point is not None for e in seen), "the click on Email")

        async def run() -> Trajectory:
            with open_services(load_settings(), write=True) as services:
                return await record(services, scenario)

        trajectory = asyncio.run(run())

    clicks = [e.point for e in trajectory.events if e.action is ActionKind.DESKTOP_CLICK]
    assert clicks == [Point(x=EMAIL[0], y=EMAIL[1])]


def _record_command(out: Path, *, stdin: int, **env: str) -> subprocess.Popen[str]:
    """``procedura record desktop --out OUT`` started with *stdin*, recording once it says so."""
    environ = {k: v for k, v in os.environ.items() if k != "WINDOWID"} | env
    process = subprocess.Popen(
        [*(sys.executable, "-m", "desktop_app", "record", "desktop"), "--out", str(out)],
        cwd=REPO,
        env=environ,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    started = process.stderr.readline()
    assert started.startswith("recording "), started
    return process


def _stored(value: str) -> bool:
    with open_services(load_settings(), write=False) as services:
        return any(
            e.value == value
            for summary in services.trajectories.list()
            for e in services.trajectories.raw_events(summary.id)
        )


def _finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    """Ctrl+C: what the command said and how it ended."""
    try:
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return process.returncode, stdout, stderr


@pytest.mark.slow
@needs_xvfb
def test_the_terminal_recording_started_from_is_left_out(home: Path, tmp_path: Path) -> None:
    out = tmp_path / "recording.json"
    terminal, tty = pty.openpty()  # the command runs in a terminal: its input is one
    try:
        with (
            xvfb(),
            contact_form(tmp_path / "saved.json") as form,
            terminal_like_window() as window,
        ):
            # The terminal's window belongs to the process the command was started from.
            process = _record_command(out, stdin=tty, WINDOWID=window)
            xdotool("windowfocus", "--sync", window)
            xdotool("type", "in the terminal")
            xdotool("key", "ctrl+c")
            xdotool("windowfocus", "--sync", form.window)
            xdotool(*click_at(form, NAME, "click", "1"))
            xdotool("type", "Jane")
            wait_for(lambda: _stored("Jane"), what="the typing to be stored while recording")
            code, _, stderr = _finish(process)
    finally:
        os.close(terminal)
        os.close(tty)
    assert code == 0, stderr
    saved = Trajectory.model_validate_json(out.read_text(encoding="utf-8"))
    assert [(e.action, e.value) for e in saved.events] == [
        (ActionKind.DESKTOP_CLICK, None),
        (ActionKind.DESKTOP_TYPE, "Jane"),
    ]


@pytest.mark.slow
@needs_xvfb
def test_record_desktop_started_outside_a_terminal_records_the_active_window(
    home: Path, tmp_path: Path
) -> None:
    """Started from a menu or a launcher, the command has no terminal: the window the person
    works in is active, and it is recorded (it was once taken for the terminal and left out)."""
    out = tmp_path / "recording.json"
    form_out = tmp_path / "saved.json"
    with xvfb(), contact_form(form_out) as form, window_manager_says_active(form.window):
        process = _record_command(out, stdin=subprocess.DEVNULL)
        xdotool(*click_at(form, NAME, "click", "1"))
        xdotool("type", "Jane")
        wait_for(lambda: _stored("Jane"), what="the typing to be stored while recording")
        code, stdout, stderr = _finish(process)
        assert code == 0, stderr
        assert stdout.startswith("recorded 2 events as trajectory ")

        # Nothing done: not kept, and the command says so and why it may be, in one line.
        process = _record_command(tmp_path / "empty.json", stdin=subprocess.DEVNULL)
        code, stdout, stderr = _finish(process)
    assert code == 1 and stdout == ""
    assert stderr.count("\n") == 1
    assert stderr.startswith("error: nothing was recorded: no click or key press reached the")
    assert "do the task in another application's window" in stderr
    with open_services(load_settings(), write=False) as services:
        assert len(services.trajectories.list()) == 1
    assert not (tmp_path / "empty.json").exists()


def test_record_desktop_without_a_display_says_so_and_stores_nothing(home: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    result = subprocess.run(
        [sys.executable, "-m", "desktop_app", "record", "desktop", "--intent", "x"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("error: desktop recording and replay need an X11 display")
    assert "DISPLAY is not set" in result.stderr
    assert not home.exists()  # the data directory was not even opened


@pytest.mark.slow
@needs_xvfb
def test_record_desktop_command_until_ctrl_c(home: Path, tmp_path: Path) -> None:
    out = tmp_path / "recording.json"
    with xvfb(), contact_form(tmp_path / "saved.json") as form:
        process = subprocess.Popen(
            [
                *(sys.executable, "-m", "desktop_app", "record", "desktop"),
                *("--intent", "Add a contact", "--sensitive-window", "nothing like it"),
                *("--out", str(out)),
            ],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stderr is not None
            started = process.stderr.readline()
            assert started.startswith("recording ") and "press Ctrl+C in this terminal" in started
            xdotool(*click_at(form, NAME, "click", "1"))
            xdotool("type", "Jane")

            def stored() -> bool:
                with open_services(load_settings(), write=False) as services:
                    (summary,) = services.trajectories.list()
                    raw = services.trajectories.raw_events(summary.id)
                return any(e.value == "Jane" for e in raw)

            wait_for(stored, what="the typing to be stored while recording")
            process.send_signal(signal.SIGINT)
            stdout, stderr = process.communicate(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate()
    assert process.returncode == 0, stderr
    lines = stdout.splitlines()
    assert lines[0].startswith("recorded 2 events as trajectory ")
    trajectory_id = lines[0].rsplit(" ", 1)[1]
    assert lines[1:] == [
        f"see it with: procedura trajectories show {trajectory_id[:8]}",
        f"induce a workflow from it with: procedura induce {trajectory_id[:8]}",
    ]
    saved = Trajectory.model_validate_json(out.read_text(encoding="utf-8"))
    assert saved.id == trajectory_id and saved.intent == "Add a contact"
    assert [e.action for e in saved.events] == [ActionKind.DESKTOP_CLICK, ActionKind.DESKTOP_TYPE]
    assert saved.events[1].value == "Jane"


def _anchor_of(click: Any, media: Path) -> bytes:
    ref = click.target.locators[0].value
    return (media / ref[:2] / ref[2:4] / ref).read_bytes()
