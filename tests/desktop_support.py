"""Desktop tests: an Xvfb display started by the test, the contact forms (Tk, and GTK 3 with its
accessibility tree on a private AT-SPI bus), xdotool as the user."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, Self

import pytest

from desktop_app.adapters.desktop.imaging import decode_png
from desktop_app.adapters.desktop.recorder import MASK_COLOUR, DesktopRecorder
from desktop_app.app import Services, record_desktop
from desktop_app.core.models import ActionKind, BoundingBox, Event, Trajectory

FORM = Path(__file__).parent / "desktop_form.py"
GTK_FORM = Path(__file__).parent / "desktop_gtk_form.py"
#: The Python that has PyGObject and GTK 3 (Debian's): the GTK app runs in it, not in the venv.
SYSTEM_PYTHON = Path("/usr/bin/python3")
#: Where distributions put at-spi2-core's bus launcher.
BUS_LAUNCHERS = (
    Path("/usr/libexec/at-spi-bus-launcher"),
    Path("/usr/lib/at-spi2-core/at-spi-bus-launcher"),
    Path("/usr/lib/at-spi2/at-spi-bus-launcher"),
)

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


def _stop(process: subprocess.Popen[Any], *, group: bool = False) -> None:
    """End *process* (with *group*, the process group it leads: what it started too):
    politely, then by force."""

    def signal_it(number: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            if group:
                os.killpg(process.pid, number)
            else:
                process.send_signal(number)

    if process.poll() is None:
        signal_it(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=5)
    if process.poll() is None:
        signal_it(signal.SIGKILL)
        process.wait(timeout=5)
    elif group:  # what the leader started and left behind
        signal_it(signal.SIGKILL)


class _FormApp:
    """A contact form (Tk or GTK) running on the test's display: its window, where its parts
    are (as the app reported them), what it saved."""

    def __init__(
        self, argv: list[str], out: Path, *, title: str, env: dict[str, str], log: bool
    ) -> None:
        """*log*: what the app says goes to a file next to *out* (else to a pipe, which a
        talkative app could fill)."""
        self.out = out
        self.title_at_start = title
        self._layout_file = out.with_name(out.stem + ".layout.json")
        self._layout_file.unlink(missing_ok=True)
        self._log = out.with_name(out.stem + ".stderr") if log else None
        with contextlib.ExitStack() as stack:
            stderr = stack.enter_context(self._log.open("wb")) if self._log else subprocess.PIPE
            self.process = subprocess.Popen(
                [*argv, str(out), "--title", title, "--layout-out", str(self._layout_file)],
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                env=env,
            )
        try:
            self.window = wait_for(self._find, timeout=15, what="the form's window")
            self.layout: dict[str, Any] = wait_for(
                self._read_layout, timeout=15, what="the form's layout"
            )
            xdotool("windowfocus", "--sync", self.window)  # as a window manager does for a new one
        except BaseException:
            self.close()
            raise

    def _said(self) -> str:
        if self._log is not None:
            return self._log.read_text(errors="replace")
        return self.process.stderr.read().decode(errors="replace")  # type: ignore[union-attr]

    def _find(self) -> str | None:
        if self.process.poll() is not None:
            raise AssertionError(f"the form exited: {self._said()}")
        found = subprocess.run(
            ["xdotool", "search", "--onlyvisible", "--name", f"^{self.title_at_start}$"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        ).stdout.split()
        return found[0] if found else None

    def _read_layout(self) -> dict[str, Any] | None:
        if self.process.poll() is not None:
            raise AssertionError(f"the form exited: {self._said()}")
        if not self._layout_file.exists():
            return None
        layout: dict[str, Any] = json.loads(self._layout_file.read_text(encoding="utf-8"))
        return layout

    def box(self, part: str) -> BoundingBox:
        """Where *part* (``name``, ``email``, ``password``, ``save``, ``password_row``, a
        ``<field>_label``) is, relative to the window's top-left corner, in screen pixels."""
        raw = self.layout[part]
        return BoundingBox(x=raw["x"], y=raw["y"], width=raw["width"], height=raw["height"])

    def point(self, part: str) -> tuple[int, int]:
        """The middle of *part*, relative to the window (for :func:`click_at`)."""
        raw = self.layout[part]
        return raw["x"] + raw["width"] // 2, raw["y"] + raw["height"] // 2

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
        _stop(self.process)
        if self.process.stderr is not None and not self.process.stderr.closed:
            self.process.stderr.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


class Form(_FormApp):
    """The Tk contact form (tests/desktop_form.py) running on the test's display.

    *shifted*: a banner above, Save on the left; *relayout*: that, other row spacing and a
    larger font; *scale* 2: everything twice the size.
    """

    def __init__(
        self,
        out: Path,
        *,
        x: int = 40,
        y: int = 40,
        shifted: bool = False,
        relayout: bool = False,
        scale: int = 1,
        title: str = "Contact form",
    ) -> None:
        argv = [sys.executable, str(FORM), "--x", str(x), "--y", str(y), "--scale", str(scale)]
        argv += ["--shifted"] * shifted + ["--relayout"] * relayout
        super().__init__(argv, out, title=title, env=dict(os.environ), log=False)


class GtkForm(_FormApp):
    """The GTK 3 contact form (tests/desktop_gtk_form.py), run by the system Python.

    Its accessibility bridge talks to the session bus :func:`a11y_session` set up (without one,
    the bridge is off: nothing tries to start a bus of its own). *relayout*: a banner above,
    other spacing, a larger font, Save on the left; *scale* 2: ``GDK_SCALE=2``.
    """

    def __init__(
        self,
        out: Path,
        *,
        x: int = 40,
        y: int = 40,
        relayout: bool = False,
        scale: int = 1,
        title: str = "Contact form",
        twins: bool = False,
    ) -> None:
        argv = [str(SYSTEM_PYTHON), str(GTK_FORM), "--x", str(x), "--y", str(y)]
        argv += ["--relayout"] * relayout + ["--twins"] * twins
        super().__init__(argv, out, title=title, env=gtk_environment(scale), log=True)


def gtk_environment(scale: int = 1) -> dict[str, str]:
    """The environment a GTK 3 app gets here: X11 on the current DISPLAY, *scale* as
    ``GDK_SCALE``, settings in memory, and the venv's Python variables left out."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "NO_AT_BRIDGE", "GDK_SCALE"}
    }
    env.update({"GDK_BACKEND": "x11", "GSETTINGS_BACKEND": "memory", "GTK_THEME": "Adwaita"})
    if scale != 1:
        env["GDK_SCALE"] = str(scale)
    if not env.get("DBUS_SESSION_BUS_ADDRESS"):
        env["NO_AT_BRIDGE"] = "1"  # no accessibility bus to find (and none to autolaunch)
    return env


# ── the accessibility bus (AT-SPI over D-Bus) ──────────────────────────────────────────────────

_BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={path}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


def _bus_launcher() -> Path | None:
    return next((p for p in BUS_LAUNCHERS if p.is_file() and os.access(p, os.X_OK)), None)


@functools.cache
def a11y_missing() -> str | None:
    """What this machine lacks for the accessibility tests (None: nothing)."""
    if not sys.platform.startswith("linux"):
        return "the accessibility tests need Linux (AT-SPI)"
    if shutil.which("dbus-daemon") is None:
        return "dbus-daemon is missing (Debian: dbus)"
    if _bus_launcher() is None:
        return "at-spi-bus-launcher is missing (Debian: at-spi2-core)"
    if not SYSTEM_PYTHON.is_file():
        return f"{SYSTEM_PYTHON} is missing (it runs the GTK test app)"
    probe = subprocess.run(
        [str(SYSTEM_PYTHON), "-c", "import gi; gi.require_version('Gtk', '3.0')"],
        capture_output=True,
        timeout=30,
        check=False,
        env=gtk_environment(),
    )
    if probe.returncode != 0:
        return f"{SYSTEM_PYTHON} has no GTK 3 bindings (Debian: python3-gi gir1.2-gtk-3.0)"
    return None


needs_a11y = pytest.mark.skipif(
    a11y_missing() is not None, reason=a11y_missing() or "accessibility tests can run"
)


def _ask(address: str, message: Any, timeout: float = 2.0) -> Any:
    """Send *message* on the bus at *address*; the reply's body (raises on an error reply)."""
    from jeepney.io.blocking import open_dbus_connection
    from jeepney.wrappers import unwrap_msg

    with open_dbus_connection(bus=address) as connection:
        return unwrap_msg(connection.send_and_get_reply(message, timeout=timeout))


def _a11y_address(session: str) -> str | None:
    """The accessibility bus's address, as ``org.a11y.Bus`` on *session* gives it (None: not
    there yet)."""
    from jeepney import DBusAddress, new_method_call
    from jeepney.wrappers import DBusErrorResponse

    bus = DBusAddress("/org/a11y/bus", bus_name="org.a11y.Bus", interface="org.a11y.Bus")
    try:
        (address,) = _ask(session, new_method_call(bus, "GetAddress"))
    except (DBusErrorResponse, OSError, TimeoutError):
        return None
    return str(address) or None


@contextlib.contextmanager
def a11y_session(timeout: float = 20.0) -> Iterator[str]:
    """A private D-Bus session bus with the accessibility bus launched on it (for the current
    DISPLAY: use it inside :func:`xvfb`); ``DBUS_SESSION_BUS_ADDRESS`` points at the session
    bus meanwhile, so apps started now register their AT-SPI trees. The accessibility bus's
    address; everything is stopped afterwards.

    The session bus activates nothing: what runs is what this started.
    """
    launcher_path = _bus_launcher()
    if launcher_path is None:
        raise RuntimeError(a11y_missing())
    with tempfile.TemporaryDirectory(prefix="procedura-a11y-") as tmp:
        config = Path(tmp) / "session.conf"
        config.write_text(_BUS_CONFIG.format(path=Path(tmp) / "bus"), encoding="utf-8")
        read, write = os.pipe()
        with (Path(tmp) / "bus.log").open("wb") as log:
            bus = subprocess.Popen(
                ["dbus-daemon", f"--config-file={config}", "--nofork", f"--print-address={write}"],
                pass_fds=(write,),
                stdout=subprocess.DEVNULL,
                stderr=log,
                start_new_session=True,
            )
        os.close(write)
        try:
            with os.fdopen(read) as fh:
                session = fh.readline().strip()  # once it listens (EOF if it exits)
            if not session:
                raise RuntimeError("dbus-daemon did not start")
            env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": session}
            with (Path(tmp) / "launcher.log").open("wb") as log:
                launcher = subprocess.Popen(
                    [str(launcher_path), "--launch-immediately"],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=log,
                    start_new_session=True,  # its accessibility bus and registry go with it
                )
            try:
                address = wait_for(
                    lambda: _a11y_address(session) if launcher.poll() is None else _gone(tmp),
                    timeout=timeout,
                    what="the accessibility bus",
                )
                saved = os.environ.get("DBUS_SESSION_BUS_ADDRESS")
                os.environ["DBUS_SESSION_BUS_ADDRESS"] = session
                try:
                    yield str(address)
                finally:
                    if saved is None:
                        os.environ.pop("DBUS_SESSION_BUS_ADDRESS", None)
                    else:
                        os.environ["DBUS_SESSION_BUS_ADDRESS"] = saved
            finally:
                _stop(launcher, group=True)
        finally:
            _stop(bus, group=True)


def _gone(tmp: str) -> None:
    said = (Path(tmp) / "launcher.log").read_text(errors="replace")
    raise RuntimeError(f"at-spi-bus-launcher exited: {said[-500:]}")


#: AT-SPI's relation types the tests look for (``AtspiRelationType``).
LABEL_FOR, LABELLED_BY = 1, 2


def a11y_nodes(a11y: str, application: str) -> list[tuple[str, str, frozenset[int]]]:
    """The tree of *application* on the accessibility bus *a11y*, depth first: each node's
    role name, accessible name and relation types."""
    from jeepney import DBusAddress, Properties, new_method_call

    def walk(bus_name: str, path: str) -> Iterator[tuple[str, str, frozenset[int]]]:
        node = DBusAddress(path, bus_name=bus_name, interface="org.a11y.atspi.Accessible")
        ((_signature, name),) = _ask(a11y, Properties(node).get("Name"))
        (role,) = _ask(a11y, new_method_call(node, "GetRoleName"))
        (relations,) = _ask(a11y, new_method_call(node, "GetRelationSet"))
        yield str(role), str(name), frozenset(int(kind) for kind, _targets in relations)
        (children,) = _ask(a11y, new_method_call(node, "GetChildren"))
        for child_bus, child_path in children:
            yield from walk(child_bus, child_path)

    for bus_name, path in _applications(a11y):
        nodes = list(walk(bus_name, path))
        if nodes[0][1] == application:
            return nodes
    raise LookupError(f"no application {application!r} on the accessibility bus")


def _applications(a11y: str) -> list[tuple[str, str]]:
    from jeepney import DBusAddress, new_method_call

    root = DBusAddress(
        "/org/a11y/atspi/accessible/root",
        bus_name="org.a11y.atspi.Registry",
        interface="org.a11y.atspi.Accessible",
    )
    (children,) = _ask(a11y, new_method_call(root, "GetChildren"))
    return [(str(bus_name), str(path)) for bus_name, path in children]


def a11y_applications(a11y: str) -> list[str]:
    """The names of the applications registered on the accessibility bus *a11y* (the
    children of the AT-SPI registry's desktop)."""
    from jeepney import DBusAddress, Properties

    names = []
    for bus_name, path in _applications(a11y):
        app = DBusAddress(path, bus_name=bus_name, interface="org.a11y.atspi.Accessible")
        ((_signature, name),) = _ask(a11y, Properties(app).get("Name"))
        names.append(str(name))
    return names


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


def approved_as_is(services: Services, trajectory: Trajectory, actor: str = "tester") -> Any:
    """The workflow induced from *trajectory*, saved and approved unchanged (its version)."""
    from desktop_app.core.induction.heuristic import induce

    workflow = induce(trajectory).workflow
    saved = services.workflows.save(workflow, actor=actor)
    return services.workflows.approve(workflow.id, actor=actor, version=saved.version.version)


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
