"""Testing on a live page: the one test page the editor's "Test" buttons use, for a step's
locators, a block's condition ("holds now") and what a loop over page items finds."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import TypeVar

from pydantic import ValidationError

from desktop_app.core.describe import describe_condition
from desktop_app.core.editing import Where, step_at
from desktop_app.core.errors import BrowserError
from desktop_app.core.models.target import Locator, LocatorStrategy
from desktop_app.core.models.workflow import (
    Expectation,
    ForEachStep,
    ImageVisible,
    PageItems,
    ParameterType,
    ValueCompare,
    WindowTitleMatches,
    item_variables,
    walk,
)
from desktop_app.core.replay.conditions import compare
from desktop_app.core.replay.render import render_condition, render_source
from desktop_app.core.templating import placeholders
from desktop_app.ui.backend import Backend, LocatorPreview
from desktop_app.ui.editor.window_base import EditorWindowBase

__all__ = ["LocatorTester", "LocatorTests"]

_T = TypeVar("_T")


class LocatorTester:
    """The one live page "Test" buttons use: opened on the first test, reused after.

    A test on another address than the page was opened at opens that address instead, and so
    does a test after the page's window was closed (or its browser went away).
    ``headless`` keeps the browser out of sight (tests set it).
    """

    def __init__(self, backend: Backend) -> None:
        self._backend = backend
        self._preview: LocatorPreview | None = None
        self._opened_at: str | None = None
        self._lock: asyncio.Lock | None = None
        self.headless = False
        self.opened = 0

    @property
    def is_open(self) -> bool:
        """Whether a test page is open."""
        return self._preview is not None

    @property
    def preview(self) -> LocatorPreview | None:
        """The test page, once a test opened it."""
        return self._preview

    async def count(self, url: str, locator: Locator, values: Mapping[str, str]) -> int:
        """How many elements *locator* finds on the test page (highlighting them there)."""
        return await self._on_page(url, lambda page: page.test(locator, values))

    async def holds(self, url: str, condition: Expectation) -> bool:
        """Whether *condition* (placeholders filled) holds on the test page now."""
        return await self._on_page(url, lambda page: page.holds(condition))

    async def items(self, url: str, source: PageItems) -> list[tuple[str, dict[str, str]]]:
        """The items a loop over *source* (placeholders filled) finds on the test page now."""
        return await self._on_page(url, lambda page: page.items(source))

    async def _on_page(self, url: str, test: Callable[[LocatorPreview], Awaitable[_T]]) -> _T:
        """*test* on the test page, opened at *url* (once: a test at another address, or after
        the page was closed, opens it again)."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            preview = self._preview
            if preview is None or url != self._opened_at or not preview.is_open:
                await self._close()
                preview = await self._backend.open_preview(url, headless=self.headless)
                self._preview, self._opened_at = preview, url
                self.opened += 1
            try:
                return await test(preview)
            except BrowserError:
                await self._close()
                raise

    async def close(self) -> None:
        """Close the test page and its browser, if open."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            await self._close()

    async def _close(self) -> None:
        preview, self._preview, self._opened_at = self._preview, None, None
        if preview is not None:
            with contextlib.suppress(BrowserError):  # it was gone already
                await preview.close()


class LocatorTests(EditorWindowBase):
    """What the editor window's "Test" buttons do: test a step's locator on the test page."""

    tester: LocatorTester

    # ── locator tests ───────────────────────────────────────────────────────────────────────

    def _test_values(self) -> dict[str, str]:
        workflow = self.workflow
        values: dict[str, str] = {}
        for param in workflow.parameters if workflow is not None else ():
            if param.type is ParameterType.SECRET or param.default is None:
                continue
            default = param.default
            values[param.name] = (
                ("true" if default else "false") if isinstance(default, bool) else str(default)
            )
        return values

    async def test_locator(self, row: Where, locator_row: int) -> int | None:
        """Test locator *locator_row* of the step at *row* (an index or a path) on the test
        page; the number of matches.

        The result shows beside the locator ("1 match", "3 matches", "no match") and the
        matches are outlined in the test page. None when it could not be tested (the reason
        shows instead).
        """
        workflow = self.workflow
        if workflow is None:
            return None
        step = step_at(workflow, row)
        target = step.target_or_none
        if target is None or not 0 <= locator_row < len(target.locators):
            return None
        locator = target.locators[locator_row]
        url = self.form.test_url.text().strip()
        values = self._test_values()
        if not url:
            self.form.set_test_result(step.id, locator_row, "type the page address above", "bad")
            self.form.test_url.setFocus()
            return None
        if locator.strategy in (LocatorStrategy.IMAGE_ANCHOR, LocatorStrategy.ACCESSIBLE):
            self.form.set_test_result(step.id, locator_row, "desktop only", "warn")
            return None
        needed = [n for n in placeholders(" ".join(locator.texts)) if n not in values]
        if needed:
            self.form.set_test_result(
                step.id, locator_row, f"give {{{needed[0]}}} a default to test", "warn"
            )
            return None
        self.form.set_test_result(step.id, locator_row, "testing…", "busy")
        try:
            count = await self.tester.count(url, locator, values)
        except BrowserError as exc:
            self.form.set_test_result(step.id, locator_row, "could not test", "bad")
            raise exc
        text = "no match" if count == 0 else "1 match" if count == 1 else f"{count} matches"
        tone = "good" if count == 1 else "bad" if count == 0 else "warn"
        self.form.set_test_result(step.id, locator_row, text, tone)
        self._host.show_status(f"{locator.describe()}: {text} on {self.form.test_url.text()}")
        return count

    def _page_url(self, say: Callable[[str, str], None]) -> str | None:
        url = self.form.test_url.text().strip()
        if not url:
            say("type the page address above (Test on page)", "bad")
            self.form.test_url.setFocus()
            return None
        return url

    def _missing(self, name: str) -> str:
        """Why ``{name}`` has no value to test with."""
        workflow = self.workflow
        loops = [s for s in walk(workflow.steps if workflow else ()) if isinstance(s, ForEachStep)]
        if any(name in item_variables(loop) for loop in loops):
            return f"{{{name}}} has a value only while the loop runs"
        return f"give {{{name}}} a default to test"

    async def test_condition(self, where: Where) -> bool | None:
        """Whether the condition of the step at *where* holds now: on the test page (the
        element or text it is about is outlined there), or between the values it compares
        (the parameters' defaults). The answer shows beside "Test now" ("holds now", "does
        not hold now"); None when it could not be tested (the reason shows instead)."""
        workflow = self.workflow
        editor = self.form.condition_editor()
        if workflow is None:
            return None
        condition = getattr(step_at(workflow, where), "condition", None)
        if condition is None:
            return None

        def say(text: str, tone: str) -> None:
            if editor is not None and self.form.step_id == step_at(workflow, where).id:
                editor.set_result(text, tone)

        try:
            rendered = render_condition(condition, self._test_values())
        except KeyError as exc:
            say(self._missing(str(exc.args[0])), "warn")
            return None
        except ValidationError:
            say("fill in the condition first", "warn")
            return None
        if isinstance(rendered, ValueCompare):
            holds = compare(rendered)
        else:
            if isinstance(rendered, WindowTitleMatches | ImageVisible):
                say("only a desktop run can test this", "warn")
                return None
            url = self._page_url(say)
            if url is None:
                return None
            say("testing…", "busy")
            try:
                holds = await self.tester.holds(url, rendered)
            except BrowserError:
                say("could not test", "bad")
                raise
        say("holds now" if holds else "does not hold now", "good" if holds else "warn")
        self._host.show_status(
            f"{describe_condition(condition)}: {'holds' if holds else 'does not hold'} now"
        )
        return holds

    async def test_source(self, where: Where) -> list[str] | None:
        """The items the loop at *where* (over items on the page) finds on the test page now,
        outlined there; "finds 7 items: …" shows beside "Test now". None when it could not be
        tested (the reason shows instead)."""
        workflow = self.workflow
        editor = self.form.source_editor()
        if workflow is None:
            return None
        step = step_at(workflow, where)
        if not isinstance(step, ForEachStep) or not isinstance(step.over, PageItems):
            return None

        def say(text: str, tone: str) -> None:
            if editor is not None and self.form.step_id == step.id:
                editor.set_result(text, tone)

        try:
            rendered = render_source(step.over, self._test_values())
        except KeyError as exc:
            say(self._missing(str(exc.args[0])), "warn")
            return None
        except ValidationError:
            say("say which elements are the items first", "warn")
            return None
        url = self._page_url(say)
        if url is None or not isinstance(rendered, PageItems):
            return None
        say("testing…", "busy")
        try:
            found = await self.tester.items(url, rendered)
        except BrowserError as exc:
            say(str(exc), "bad")
            raise
        keys = [key for key, _fields in found]
        say(_items_text(keys), "good" if keys else "warn")
        return keys

    def _on_form_condition_test_requested(self, step_id: str) -> None:
        path = self.steps_model.path_of(step_id)
        if path is not None:
            self._host.tasks.start(self.test_condition(path), label="Testing the condition…")

    def _on_form_source_test_requested(self, step_id: str) -> None:
        path = self.steps_model.path_of(step_id)
        if path is not None:
            self._host.tasks.start(self.test_source(path), label="Reading the items…")

    def _on_form_locator_test_requested(self, step_id: str, locator_row: int) -> None:
        path = self.steps_model.path_of(step_id)
        if path is not None:
            self._host.tasks.start(
                self.test_locator(path, locator_row), label="Testing the locator…"
            )


def _items_text(keys: list[str]) -> str:
    """``finds 3 items: INV-001, INV-002, INV-003`` (the first few, then how many more)."""
    if not keys:
        return "finds no items"
    shown = ", ".join(keys[:5]) + (f", … ({len(keys) - 5} more)" if len(keys) > 5 else "")
    return f"finds {len(keys)} item{'s' * (len(keys) != 1)}: {shown}"
