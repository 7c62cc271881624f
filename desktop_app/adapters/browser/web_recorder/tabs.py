"""The tabs a web recording follows, each with the Chromium watch that reports on it."""

from __future__ import annotations

import asyncio
from collections import deque
from typing import TYPE_CHECKING

from desktop_app.adapters.browser.step_pictures import Began
from desktop_app.adapters.browser.tab_watch import TabWatch

if TYPE_CHECKING:
    from playwright.async_api import Page

__all__ = ["Tab", "watch_result"]


class Tab:
    """One page being recorded: its id, what Chromium tells about it, its newest action."""

    def __init__(self, page: Page, tab_id: str) -> None:
        self.page = page
        self.id = tab_id
        self.watch: asyncio.Task[TabWatch | None] | None = None
        self.expect_typed = False
        self.last_action_ms: float | None = None  # when the newest action here began
        self.last_ref: str | None = None  # and its id
        self.began: deque[Began] = deque(maxlen=50)  # its recent actions (top frame)

    def first_action_after(self, moment_ms: float) -> Began | None:
        """The first action begun here after *moment_ms* that is known."""
        return min((b for b in self.began if b.at_ms > moment_ms), key=_at_ms, default=None)


def _at_ms(action: Began) -> float:
    return action.at_ms


async def watch_result(task: asyncio.Task[TabWatch | None] | None) -> TabWatch | None:
    if task is None:
        return None
    try:
        return await asyncio.shield(task)
    except Exception:
        return None
