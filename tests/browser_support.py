"""Shared helpers for tests that drive a real headless Chromium."""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.error import URLError
from urllib.request import urlopen

from desktop_app.adapters.browser.launch import CHROMIUM_ARGS

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


async def wait_for(predicate: object, *, timeout: float = 20.0, what: str = "condition") -> None:
    """Poll *predicate* (a callable returning bool) until true, without a fixed sleep."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():  # type: ignore[operator]
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)
