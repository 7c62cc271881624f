"""The runner fleet's test bench: a real Redis server and real ``procedura worker`` processes,
started by the tests, and an order desk whose own ledger says what was done.

The order desk: ``/?for=NAME`` shows a form (Customer, Place order); posting it writes the
order to the ledger and shows "Order placed for NAME". Two names misbehave, once each, so a
worker can be killed at a known moment: ``hang-before…`` makes the form page hang (before any
irreversible step), ``hang-after…`` makes the order hang after it was written (in the
irreversible step).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from replay_support import PageHandler

from desktop_app.core.models.target import Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import (
    ClickStep,
    FillStep,
    GotoStep,
    Parameter,
    TextPresent,
    Workflow,
)

__all__ = ["OrderDesk", "RedisServer", "Workers", "order_workflow"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """``redis-server`` on a free port of 127.0.0.1, nothing kept on disk."""

    def __init__(self) -> None:
        exe = shutil.which("redis-server")
        if exe is None:
            pytest.fail("redis-server is missing: install Debian's redis-server (bootstrap does)")
        self.port = _free_port()
        self.root = Path(tempfile.mkdtemp(prefix="procedura-redis-"))
        self._process = subprocess.Popen(
            [exe, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.root)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port)):
                return
            if self._process.poll() is not None:
                pytest.fail("redis-server ended at start")
            time.sleep(0.05)
        pytest.fail("redis-server did not listen within 30 s")

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def stop(self) -> None:
        self._process.terminate()
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
        shutil.rmtree(self.root, ignore_errors=True)


class OrderDesk:
    """The order desk's state: its ledger, and the names that hang (once)."""

    def __init__(self) -> None:
        self.ledger: list[str] = []
        self.lock = threading.Lock()
        self.hung: set[str] = set()
        self.hanging = threading.Event()  # set while a request hangs
        self.release = threading.Event()

    def orders(self) -> Counter[str]:
        with self.lock:
            return Counter(self.ledger)

    def handler(self) -> type[PageHandler]:
        desk = self

        class Handler(PageHandler):
            def do_GET(self) -> None:
                from urllib.parse import parse_qs, urlsplit

                query = parse_qs(urlsplit(self.path).query)
                name = query.get("for", [""])[0]
                if urlsplit(self.path).path == "/done":
                    self.send_page(f"<title>Done</title><p>Order placed for {name}</p>")
                    return
                if name.startswith("hang-before") and desk._first(name):
                    desk._hang()
                    return
                self.send_page(
                    "<title>Orders</title><form method=post action=/order>"
                    "<label>Customer <input name=customer></label>"
                    "<button>Place order</button></form>"
                )

            def do_POST(self) -> None:
                name = self.form().get("customer", [""])[0]
                with desk.lock:
                    desk.ledger.append(name)
                if name.startswith("hang-after") and desk._first(name):
                    desk._hang()
                    return
                self.redirect(f"/done?for={name}")

        return Handler

    def _first(self, name: str) -> bool:
        with self.lock:
            if name in self.hung:
                return False
            self.hung.add(name)
            return True

    def _hang(self) -> None:
        self.hanging.set()
        self.release.wait(120)


def order_workflow(base: str) -> Workflow:
    """Place an order for {customer}: the order is irreversible; done when the desk says so."""
    return Workflow(
        name="Place an order",
        intent_template="Place an order for {customer}",
        domains=("127.0.0.1",),
        parameters=(Parameter(name="customer"),),
        steps=(
            GotoStep(title="Open the desk", url=f"{base}/?for={{customer}}"),
            FillStep(
                title="Type the customer",
                target=Target(
                    locators=(
                        Locator(strategy=LocatorStrategy.ROLE, value="textbox", name="Customer"),
                    )
                ),
                value="{customer}",
            ),
            ClickStep(
                title="Place the order",
                target=Target(
                    locators=(
                        Locator(strategy=LocatorStrategy.ROLE, value="button", name="Place order"),
                    )
                ),
                irreversible=True,
            ),
        ),
        success=(TextPresent(text="Order placed for {customer}"),),
    )


class Workers:
    """``procedura worker`` processes of one fleet, each in a process group of its own."""

    def __init__(self, env: dict[str, str], root: Path) -> None:
        self._env = env
        self._root = root
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(self, count: int) -> None:
        for _ in range(count):
            n = len(self.processes)
            home = self._root / f"worker-{n}"
            with (self._root / f"worker-{n}.log").open("wb") as log:
                self.processes.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "desktop_app", "worker", "--name", f"w{n}@test"],
                        env={**self._env, "PROCEDURA_HOME": str(home)},
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )
                )

    def kill_running(self, pid: int) -> None:
        """Kill, at once and whole (as a machine that loses power), the worker one of whose
        processes is *pid*."""
        for process in self.processes:
            with contextlib.suppress(ProcessLookupError):
                if os.getpgid(pid) == process.pid:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait(10)
                    return
        raise AssertionError(f"no worker runs process {pid}")

    def stop(self) -> None:
        for process in self.processes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)

    def logs(self) -> str:
        return "\n".join(
            p.read_text(errors="replace")[-3000:] for p in sorted(self._root.glob("worker-*.log"))
        )


def environment(**values: Any) -> dict[str, str]:
    """This process's environment with *values* (PROCEDURA_ names) on top."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROCEDURA_")}
    env.update({k: str(v) for k, v in values.items()})
    return env
