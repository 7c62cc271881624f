"""Starting Chromium (a fresh or a named persistent profile) or attaching to one over CDP."""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from desktop_app.adapters.browsers import find_browser
from desktop_app.core.errors import BrowserError
from desktop_app.core.redaction import environment_without

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Playwright, ViewportSize

__all__ = ["CHROMIUM_ARGS", "BrowserSession", "open_browser"]

#: Flags that keep Chromium from phoning home or nagging, on every launch.
CHROMIUM_ARGS: Final = (
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
)

_INSTALL_HINT: Final = (
    "install Chromium (Debian/Ubuntu: sudo apt-get install chromium) or Google Chrome, "
    "or set PROCEDURA_BROWSER to a Chromium-family browser"
)


def _args() -> list[str]:
    args = list(CHROMIUM_ARGS)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox
    return args


@dataclass
class BrowserSession:
    """A running Playwright with the browser context to record or replay in.

    ``owns_browser`` is False when attached to the user's own browser: closing the session
    then only disconnects, it never closes their windows.
    """

    playwright: Playwright
    context: BrowserContext
    browser: Browser | None
    owns_browser: bool
    executable: str | None

    async def close(self) -> None:
        """Close what we started, disconnect from what we attached to, stop Playwright."""
        try:
            if self.owns_browser:
                if self.browser is not None:
                    await self.browser.close()
                else:
                    await self.context.close()
            elif self.browser is not None:
                await self.browser.close()  # for a CDP connection this only disconnects
        except Exception:
            pass
        finally:
            await self.playwright.stop()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


async def open_browser(
    *,
    configured: Path | None = None,
    headless: bool = False,
    profile_dir: Path | None = None,
    attach: str | None = None,
    viewport: tuple[int, int] | None = (1280, 800),
    withheld: Collection[str] = (),
) -> BrowserSession:
    """Launch Chromium, or attach to a running one at the CDP URL *attach*.

    Args:
        configured: the browser from settings (``PROCEDURA_BROWSER``), if any.
        headless: no window (tests, batch runs).
        profile_dir: a persistent profile directory; None for a fresh temporary profile.
        attach: e.g. ``http://127.0.0.1:9222`` to record in the user's own Chrome.
        viewport: the page size; None to follow the window size.
        withheld: secret values: a launched browser gets this process's environment without
            the variables that hold one (``--secret-env``'s among them).

    Raises:
        BrowserError: no browser found, it failed to start, or nothing answered at *attach*.
    """
    from playwright.async_api import Error, async_playwright

    playwright = await async_playwright().start()
    try:
        if attach is not None:
            try:
                browser = await playwright.chromium.connect_over_cdp(attach, timeout=10_000)
            except Error as exc:
                raise BrowserError(
                    f"could not attach to a browser at {attach} ({_first_line(exc)}); start Chrome "
                    "with --remote-debugging-port=9222 and try again"
                ) from None
            context = browser.contexts[0] if browser.contexts else await browser.new_context()
            return BrowserSession(playwright, context, browser, owns_browser=False, executable=None)

        found = find_browser(configured)
        if found is None:
            raise BrowserError(
                f"PROCEDURA_BROWSER={configured} does not exist; {_INSTALL_HINT}"
                if configured is not None
                else f"no browser found; {_INSTALL_HINT}"
            )
        executable = None if found.source == "playwright" else str(found.path)
        size: ViewportSize | None = (
            {"width": viewport[0], "height": viewport[1]} if viewport else None
        )
        env: dict[str, str | float | bool] = dict(environment_without(os.environ, withheld))
        try:
            if profile_dir is not None:
                profile_dir.mkdir(parents=True, exist_ok=True)
                context = await playwright.chromium.launch_persistent_context(
                    str(profile_dir),
                    executable_path=executable,
                    headless=headless,
                    args=_args(),
                    env=env,
                    viewport=size,
                    no_viewport=size is None,
                )
                return BrowserSession(
                    playwright, context, None, owns_browser=True, executable=str(found.path)
                )
            browser = await playwright.chromium.launch(
                executable_path=executable, headless=headless, args=_args(), env=env
            )
        except Error as exc:
            raise BrowserError(
                f"could not start the browser {found.path}: {_first_line(exc)}; {_INSTALL_HINT}"
            ) from None
        context = await browser.new_context(viewport=size, no_viewport=size is None)
        return BrowserSession(
            playwright, context, browser, owns_browser=True, executable=str(found.path)
        )
    except BaseException:
        await playwright.stop()
        raise
