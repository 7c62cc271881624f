"""Recording from the window: the control bar's handle on a recording in the browser or on the
desktop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from desktop_app.app import Services, record_desktop, record_web
from desktop_app.core.models.trajectory import Event, Trajectory
from desktop_app.ui.backend import RecordingControls, RecordingRequest

if TYPE_CHECKING:
    from playwright.async_api import Page

    from desktop_app.adapters.browser.web_recorder import WebRecorder
    from desktop_app.adapters.desktop.recorder import DesktopRecorder

__all__ = [
    "DesktopRecordingControls",
    "WebRecordingControls",
    "record_desktop_with_controls",
    "record_with_controls",
]


class _Controls:
    """What the two recorders' controls share: pause, resume, notes, stop."""

    def __init__(self, recorder: WebRecorder | DesktopRecorder, stop: asyncio.Event) -> None:
        self._recorder = recorder
        self._stop = stop

    @property
    def trajectory_id(self) -> str:
        """The recording's id."""
        return self._recorder.trajectory_id

    @property
    def paused(self) -> bool:
        """Whether what happens is being left out for now."""
        return self._recorder.paused

    def pause(self) -> None:
        """Leave out what happens from now on until :meth:`resume`."""
        self._recorder.pause()

    def resume(self) -> None:
        """Record again."""
        self._recorder.resume()

    def add_note(self, text: str) -> None:
        """Record a note at this point of the recording."""
        self._recorder.add_note(text)

    def stop(self) -> None:
        """End the recording (for the browser: as if it was closed)."""
        self._stop.set()


class WebRecordingControls(_Controls):
    """What the control bar drives: a :class:`~desktop_app.ui.backend.RecordingControls`
    over the web recorder.

    ``page`` is the first page of the recording (tests act as the user through it).
    """

    def __init__(self, recorder: WebRecorder, page: Page, stop: asyncio.Event) -> None:
        super().__init__(recorder, stop)
        self._web = recorder
        self.page = page

    async def mark_sensitive(self) -> str | None:
        """Mark the focused field of the active page sensitive; its label, or None if none."""
        return await self._web.mark_sensitive()


async def record_with_controls(
    services: Services,
    request: RecordingRequest,
    *,
    on_started: Callable[[RecordingControls], object],
    on_event: Callable[[Event], object],
) -> Trajectory:
    """Record in Chromium until the browser closes or the controls stop it.

    *on_started* gets the controls once the start page is open; *on_event* every event as it
    is stored (and again when a field marked sensitive late rewrites it), on the loop's thread.

    Raises:
        BrowserError: no browser, it would not start, or the start page would not open
            (nothing is stored).
    """
    stop = asyncio.Event()
    first: list[Page] = []

    def started(_trajectory_id: str, page: Page) -> None:
        first.append(page)

    def with_recorder(recorder: WebRecorder) -> None:
        on_started(WebRecordingControls(recorder, first[0], stop))

    return await record_web(
        services,
        url=request.url,
        intent=request.intent,
        profile=request.profile,
        headless=request.headless,
        stop=stop,
        on_started=started,
        on_recorder=with_recorder,
        on_event=on_event,
    )


class DesktopRecordingControls(_Controls):
    """What the control bar drives: a :class:`~desktop_app.ui.backend.RecordingControls`
    over the desktop recorder. "Mark sensitive" marks the window last clicked or typed in."""

    def __init__(self, recorder: DesktopRecorder, stop: asyncio.Event) -> None:
        super().__init__(recorder, stop)
        self._desktop = recorder

    async def mark_sensitive(self) -> str | None:
        """Make the window last used sensitive from now on; its title, or None if none yet."""
        window = self._desktop.last_window
        if window is None or not window.title:
            return None
        self._desktop.mark_sensitive_window(window.title)
        return window.title


async def record_desktop_with_controls(
    services: Services,
    request: RecordingRequest,
    *,
    on_started: Callable[[RecordingControls], object],
    on_event: Callable[[Event], object],
) -> Trajectory:
    """Record on the desktop until the controls stop it (Procedura's own windows, the control
    bar among them, are left out).

    Raises:
        DesktopUnavailable: no display, or input cannot be captured here (nothing is stored).
    """
    stop = asyncio.Event()
    return await record_desktop(
        services,
        intent=request.intent,
        stop=stop,
        on_recorder=lambda recorder: on_started(DesktopRecordingControls(recorder, stop)),
        on_event=on_event,
    )
