"""Desktop tests: an Xvfb display started by the test, the Tk contact form, xdotool as the user."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop_app.adapters.desktop.imaging import decode_png
from desktop_app.adapters.desktop.recorder import MASK_COLOUR, DesktopRecorder
from desktop_app.app import Services, record_desktop
from desktop_app.core.models import ActionKind, BoundingBox, Event, Trajectory

FORM = Path(__file__).parent / "desktop_form.py"

needs_xvfb = pytest.mark.skipif(
    not (shutil.which("Xvfb") and shutil.which("xdotool")) or not sys.platform.startswith("linux"),
    reason="desktop tests need Xvfb and xdotool (Linux)",
)


@contextlib.contextmanager
def xvfb(width: int = 1024, height: int = 768, *options: str) -> Iterator[str]:
    """A virtual X display (``:N``) for the duration; DISPLAY points at it meanwhile. *options*
    go to Xvfb (``"-extension", "RECORD"``: a server whose input cannot be listened to)."""
    read, write = os.pipe()
    process = subprocess.Popen(
        [
            "Xvfb",
            "-displayfd",
            str(write),
            "-screen",
            "0",
            f"{width}x{height}x24",
            "-nolisten",
            "tcp",
            # An X server resets when its last client leaves and drops a client that connects
            # meanwhile ("connection reset by peer"): the recorder connects right after a probe.
            "-noreset",
            *options,
        ],
        pass_fds=(write,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    try:
        with os.fdopen(read) as fh:
            number = fh.readline().strip()  # Xvfb writes its display number once it is ready
        if not number:
            raise RuntimeError("Xvfb did not start")
        display = f":{number}"
        saved = os.environ.get("DISPLAY")
        os.environ["DISPLAY"] = display
        try:
            yield display
        finally:
            if saved is None:
                os.environ.pop("DISPLAY", None)
            else:
                os.environ["DISPLAY"] = saved
    finally:
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=10)
        if process.poll() is None:
            process.kill()


def xdotool(*args: str) -> str:
    """Run xdotool on the current DISPLAY (as the person at the keyboard); its output."""
    result = subprocess.run(
        ["xdotool", *args], capture_output=True, text=True, timeout=20, check=True
    )
    return result.stdout.strip()


def wait_for(predicate: Any, timeout: float = 10.0, what: str = "the condition") -> Any:
    """Poll *predicate* until it returns something truthy; that value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class Form:
    """The Tk contact form running on the test's display."""

    def __init__(self, out: Path, *, x: int = 40, y: int = 40, shifted: bool = False) -> None:
        self.out = out
        args = [sys.executable, str(FORM), str(out), "--x", str(x), "--y", str(y)]
        if shifted:
            args.append("--shifted")
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.window = wait_for(self._find, timeout=15, what="the form's window")
        xdotool("windowfocus", "--sync", self.window)  # as a window manager does for a new one

    def _find(self) -> str | None:
        if self.process.poll() is not None:
            raise AssertionError(f"the form exited: {self.process.stderr.read().decode()}")  # type: ignore[union-attr]
        found = subprocess.run(
            ["xdotool", "search", "--onlyvisible", "--name", "^Contact form$"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.split()
        return found[0] if found else None

    def geometry(self) -> tuple[int, int, int, int]:
        """x, y, width, height of the window on the screen."""
        values = dict(
            line.split("=", 1)
            for line in xdotool("getwindowgeometry", "--shell", self.window).splitlines()
        )
        return int(values["X"]), int(values["Y"]), int(values["WIDTH"]), int(values["HEIGHT"])

    def title(self) -> str:
        return xdotool("getwindowname", self.window)

    def saved(self, timeout: float = 10.0) -> dict[str, Any]:
        """What Save wrote (waits for it)."""
        wait_for(self.out.exists, timeout=timeout, what="the form to save")
        data: dict[str, Any] = json.loads(self.out.read_text(encoding="utf-8"))
        return data

    def close(self) -> None:
        self.process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=5)
        if self.process.stderr is not None:
            self.process.stderr.close()

    def __enter__(self) -> Form:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


# Where things are in the form, relative to its window (tests/desktop_form.py's layout).
NAME = (200, 30)
EMAIL = (200, 65)
PASSWORD = (200, 100)
SAVE = (360, 150)
PASSWORD_ROW = BoundingBox(x=100, y=80, width=300, height=40)
SECRET = "s3cret-Pa55word"

Scenario = Callable[[DesktopRecorder, list[Event]], Awaitable[None]]


@contextlib.contextmanager
def contact_form(out: Path, **where: Any) -> Iterator[Form]:
    """The contact form running (``x``, ``y``, ``shifted`` as :class:`Form` takes), then closed."""
    with Form(out, **where) as running:
        yield running


async def act(*args: str) -> None:
    """xdotool, off the loop (the recorder hands its events to the loop meanwhile)."""
    await asyncio.to_thread(xdotool, *args)


async def until(predicate: Callable[[], Any], what: str, timeout: float = 10.0) -> Any:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not (value := predicate()):
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)
    return value


def click_at(form: Form, point: tuple[int, int], *extra: str) -> list[str]:
    """xdotool's arguments to move to *point* in the form, pause as a hand does, then *extra*."""
    x, y, _, _ = form.geometry()
    return ["mousemove", str(x + point[0]), str(y + point[1]), "sleep", "0.15", *extra]


def typed(seen: list[Event], value: object) -> list[Event]:
    return [e for e in seen if e.action is ActionKind.DESKTOP_TYPE and e.value == value]


async def record(services: Services, scenario: Scenario, **options: Any) -> Trajectory:
    """Record while *scenario* runs (it gets the recorder and the events stored so far)."""
    stop = asyncio.Event()
    seen: list[Event] = []
    recorders: list[DesktopRecorder] = []
    task = asyncio.create_task(
        record_desktop(
            services,
            intent="Add a contact",
            stop=stop,
            on_recorder=recorders.append,
            on_event=seen.append,
            **options,
        )
    )
    try:
        await until(lambda: recorders or task.done(), "the recorder to start")
        if task.done():
            return await task
        await scenario(recorders[0], seen)
    finally:
        stop.set()
    return await task


def grep(root: Path, needle: str) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def masked(png: bytes, box: BoundingBox) -> bool:
    image = decode_png(png)
    region = image[int(box.y) : int(box.y + box.height), int(box.x) : int(box.x + box.width)]
    red, green, blue = MASK_COLOUR
    return region.size > 0 and bool((region == (blue, green, red)).all())


@contextlib.contextmanager
def terminal_like_window(title: str = "Terminal") -> Iterator[str]:
    """A plain top-level window of this process (``_NET_WM_PID`` says so), as a terminal
    emulator's would be for a command started in it; its id (for ``WINDOWID``)."""
    from Xlib import Xatom, display

    connection = display.Display()
    try:
        screen = connection.screen()
        window = screen.root.create_window(
            500, 420, 400, 200, 0, screen.root_depth, background_pixel=screen.white_pixel
        )
        window.set_wm_name(title)
        window.set_wm_class("terminal", "Terminal")
        pid = connection.intern_atom("_NET_WM_PID")
        window.change_property(pid, Xatom.CARDINAL, 32, [os.getpid()])
        window.map()
        connection.sync()
        handle = str(window.id)
        wait_for(
            lambda: (
                subprocess.run(
                    ["xdotool", "getwindowname", handle], capture_output=True, check=False
                ).returncode
                == 0
            ),
            what="the window to be shown",
        )
        yield handle
        window.destroy()
        connection.sync()
    finally:
        connection.close()


@contextlib.contextmanager
def window_manager_says_active(handle: str) -> Iterator[None]:
    """Root window properties as a window manager sets them, naming *handle* the active window
    (a bare Xvfb has no window manager to say which one is)."""
    from Xlib import X, Xatom, display

    connection = display.Display()
    try:
        root = connection.screen().root
        check = root.create_window(-10, -10, 1, 1, 0, X.CopyFromParent)
        for name, value in (
            ("_NET_SUPPORTING_WM_CHECK", check.id),
            ("_NET_ACTIVE_WINDOW", int(handle)),
        ):
            root.change_property(connection.intern_atom(name), Xatom.WINDOW, 32, [value])
        connection.sync()
        yield
        for name in ("_NET_SUPPORTING_WM_CHECK", "_NET_ACTIVE_WINDOW"):
            root.delete_property(connection.intern_atom(name))
        check.destroy()
        connection.sync()
    finally:
        connection.close()
