"""Finding a Chromium-family browser to record and replay with (nothing is launched here)."""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = ["BrowserInfo", "find_browser"]

_SYSTEM_NAMES: Final = (
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
    "microsoft-edge",
)


@dataclass(frozen=True, slots=True)
class BrowserInfo:
    """A browser executable and where it was found: ``setting``, ``playwright`` or ``system``."""

    path: Path
    source: str


def _playwright_cache() -> Path:
    env = os.environ.get("PLAYWRIGHT_BROWSERS_PATH")
    if env and env != "0":
        return Path(env)
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "ms-playwright"
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA", Path.home())) / "ms-playwright"
    return Path.home() / ".cache" / "ms-playwright"


def _playwright_chromium() -> Path | None:
    cache = _playwright_cache()
    if not cache.is_dir():
        return None
    relative = {
        "darwin": ("chrome-mac/Chromium.app/Contents/MacOS/Chromium",),
        "win32": ("chrome-win/chrome.exe",),
    }.get(sys.platform, ("chrome-linux/chrome", "chrome-linux64/chrome"))
    for folder in sorted(cache.glob("chromium-*"), reverse=True):
        for rel in relative:
            exe = folder / rel
            if exe.is_file() and os.access(exe, os.X_OK):
                return exe
    return None


def find_browser(configured: Path | None = None) -> BrowserInfo | None:
    """The browser to use: the configured one, else Playwright's Chromium, else one on PATH.

    An explicitly configured browser wins, since the user chose it; it must exist.
    """
    if configured is not None:
        return BrowserInfo(configured, "setting") if configured.is_file() else None
    bundled = _playwright_chromium()
    if bundled is not None:
        return BrowserInfo(bundled, "playwright")
    for name in _SYSTEM_NAMES:
        found = shutil.which(name)
        if found:
            return BrowserInfo(Path(found), "system")
    return None
