"""Recording from the window: the control bar's handle on a recording in the browser."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from desktop_app.app import Services, record_web
from desktop_app.core.models.trajectory import Event, Trajectory
from desktop_app.ui.backend import RecordingControls, RecordingRequest

if TYPE_CHECKING:
    from playwright.async_api import Page

    from desktop_app.adapters.browser.web_recorder import WebRecorder

__all__ = ["WebRecordingControls", "record_with_controls"]


class WebRecordingControls:
    """What the control bar drives: a :class:`~desktop_app.ui.backend.RecordingControls`
    over the web recorder.

    ``page`` is the first page of the recording (tests act as the user through it).
    """

    def __init__(self, recorder: WebRecorder, page: Page, stop: asyncio.Event) -> None:
        self._recorder = recorder
        self._stop = stop
        self.page = page

    @property
    def trajectory_id(self) -> str:
        """The recording's id."""
        return self._recorder.trajectory_id

    @property
    def paused(self) -> bool:
        """Whether events are being dropped for now."""
        return self._recorder.paused

    def pause(self) -> None:
        """Drop what happens from now on until :meth:`resume`."""
        self._recorder.pause()

    def resume(self) -> None:
        """Record again."""
        self._recorder.resume()

    async def mark_sensitive(self) -> str | None:
        """Mark the focused field of the active page sensitive; its label, or None if none."""
        return await self._recorder.mark_sensitive()

    def add_note(self, text: str) -> None:
        """Record a note at this point of the recording."""
        self._recorder.add_note(text)

    def stop(self) -> None:
        """End the recording (as if the browser was closed)."""
        self._stop.set()


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
