"""Shared helpers for tests that drive a real headless Chromium."""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar
from urllib.error import URLError
from urllib.request import urlopen

from playwright.async_api import Browser, Playwright, async_playwright

from desktop_app.adapters.browser.launch import CHROMIUM_ARGS

T = TypeVar("T")

CHROMIUM = (
    shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
)
#: How tests launch Chromium: the product's flags, no sandbox (tests run as root in CI).
LAUNCH_ARGS = ["--no-sandbox", *CHROMIUM_ARGS]


def free_port() -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def chromium_with_cdp(
    profile: Path, processes: list[subprocess.Popen[bytes]] | None = None
) -> Iterator[str]:
    """A headless Chromium of its own, reachable over CDP; yields the CDP URL.

    Its process is appended to *processes* when given (to kill it on purpose).
    """
    assert CHROMIUM, "Chromium is not installed (bash scripts/test.sh installs it)"
    port = free_port()
    proc = subprocess.Popen(
        [
            CHROMIUM,
            "--headless=new",
            *LAUNCH_ARGS,
            f"--remote-debugging-port={port}",
            f"--user-data-dir={profile}",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    if processes is not None:
        processes.append(proc)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urlopen(f"{url}/json/version", timeout=1):
                    break
            except (URLError, OSError):
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("Chromium did not open its CDP port") from None
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def busy_machine(processes: int = 2) -> Iterator[None]:
    """Processes keeping the CPU busy meanwhile (two: the machines have two cores)."""
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]
    try:
        yield
    finally:
        for process in busy:
            process.kill()
            process.wait()


async def wait_for(predicate: object, *, timeout: float = 20.0, what: str = "condition") -> None:
    """Poll *predicate* (a callable returning bool) until true, without a fixed sleep."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():  # type: ignore[operator]
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


class BrowserLoop:
    """One headless Chromium with an event loop of its own, for synchronous tests to share."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        try:
            self.run(self._start())
        except BaseException:
            self.close()
            raise

    async def _start(self) -> None:
        assert CHROMIUM, "Chromium is not installed (bash scripts/test.sh installs it)"
        self._playwright = await async_playwright().start()
        self._browser = await self._playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS
        )

    @property
    def browser(self) -> Browser:
        """The running browser."""
        assert self._browser is not None
        return self._browser

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run *coroutine* on this loop (tests are synchronous)."""
        return self.loop.run_until_complete(coroutine)

    def close(self) -> None:
        """Close the browser, stop Playwright and the loop."""

        async def stop() -> None:
            if self._browser is not None:
                await self._browser.close()
            if self._playwright is not None:
                await self._playwright.stop()

        try:
            self.run(stop())
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        finally:
            self.loop.close()
