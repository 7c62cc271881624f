"""The window's :class:`~desktop_app.ui.backend.Backend`, implemented over the services."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Final

from desktop_app.adapters.secrets import remember_parameter_secrets
from desktop_app.adapters.write_behind import WriteBehind
from desktop_app.app import Services, api_key, make_structured_llm, replay
from desktop_app.core.library import WorkflowLibrary
from desktop_app.core.models.run import Run
from desktop_app.core.models.trajectory import Event, Trajectory
from desktop_app.core.ports import MediaStore, RunStore
from desktop_app.core.replay.engine import ReplayEvent
from desktop_app.core.replay.parameters import bind_parameters
from desktop_app.core.replay.person import Person
from desktop_app.core.trajectories import TrajectoryLibrary
from desktop_app.core.values import value_text
from desktop_app.ops.changes import Changes, Origin
from desktop_app.ops.induce import Induced, LlmUse, choose_llm, induce
from desktop_app.ops.library import Reindexed, reindex
from desktop_app.ops.secrets import remember_secrets
from desktop_app.settings import Settings
from desktop_app.ui.backend import (
    LocatorPreview,
    RecordingControls,
    RecordingRequest,
    RunRequest,
)

__all__ = ["ServicesBackend"]

#: What a run or a recording imports first: Playwright and the adapters over it (80-120 ms of the
#: GUI thread if the first run imports them on the loop, most of it PySide's import hook).
_BROWSER_MODULES: Final = (
    "playwright.async_api",
    "desktop_app.adapters.browser.launch",
    "desktop_app.adapters.browser.replay_page",
    "desktop_app.adapters.browser.web_recorder",
)


class ServicesBackend:
    """Everything the window does, over one data directory's services (which it does not own)."""

    def __init__(self, services: Services) -> None:
        self._services = services
        # A replay's record and screenshots are written behind it; the window reads through
        # the same writer, so it sees them before they are on disk (a step's screenshot).
        self._writes = WriteBehind(services.runs, services.media)

    @property
    def services(self) -> Services:
        """The services underneath."""
        return self._services

    @property
    def settings(self) -> Settings:
        """The settings in force."""
        return self._services.settings

    @property
    def workflows(self) -> WorkflowLibrary:
        """The workflow library."""
        return self._services.workflows

    @property
    def trajectories(self) -> TrajectoryLibrary:
        """Recordings."""
        return self._services.trajectories

    @property
    def runs(self) -> RunStore:
        """Run records (a read waits for the replay's writes given before it)."""
        return self._writes.runs

    @property
    def media(self) -> MediaStore:
        """Screenshots (one a replay has not written yet is read from memory)."""
        return self._writes.media

    def llm_configured(self) -> bool:
        """Whether an LLM endpoint or key is configured."""
        key, _ = api_key(self.settings)
        return key is not None or self.settings.llm_base_url is not None

    def induce(
        self, trajectory_ids: Sequence[str], *, cancel: threading.Event | None = None
    ) -> Induced:
        """Induce and save a draft from recordings (the LLM when one is configured); *cancel*
        stops it."""
        settings = self.settings
        return induce(
            self._services.trajectories,
            self._services.workflows,
            trajectory_ids,
            actor=settings.actor,
            origin=Origin.WINDOW,
            llm=choose_llm(LlmUse.AUTO, lambda: make_structured_llm(settings)),
            llm_model=settings.llm_model,
            cancel=cancel,
        )

    async def record(
        self,
        request: RecordingRequest,
        *,
        on_started: Callable[[RecordingControls], object],
        on_event: Callable[[Event], object],
    ) -> Trajectory:
        """Record in Chromium, or on the desktop, with the control bar's controls."""
        from desktop_app.gui.recording import record_desktop_with_controls, record_with_controls

        record = record_desktop_with_controls if request.kind == "desktop" else record_with_controls
        return await record(self._services, request, on_started=on_started, on_event=on_event)

    async def replay(
        self,
        request: RunRequest,
        *,
        person: Person | None,
        on_event: Callable[[ReplayEvent], object],
        on_note: Callable[[str], object] | None = None,
    ) -> Run:
        """Bind the values, keep secrets in the keyring if asked (*on_note* hears what was not
        kept, and the run goes on), run, and learn."""
        workflow = request.version.workflow
        params = bind_parameters(workflow, request.values, secrets=request.secrets)
        # What the form holds was typed or confirmed there (the keyring's are shown masked).
        typed = {name: request.secrets.get(name, "") for name in params.secrets}
        missed = remember_secrets(
            remember_parameter_secrets,
            workflow.id,
            typed,
            asked=request.save_secrets,
            given=typed.keys(),
        )
        if missed is not None and on_note is not None:
            on_note(missed)
        options = replace(request.options, screenshots=True, screenshot_every_step=True)
        result = await replay(
            self._services,
            request.version,
            params,
            options=options,
            person=person,
            base_url=request.base_url,
            headless=request.headless,
            on_event=on_event,
            writes=self._writes,
        )
        return result.run

    def prepare_browser(self) -> None:
        """Import Playwright and the browser adapters, so the first run or recording does not
        import them on the loop the window shares."""
        for name in _BROWSER_MODULES:
            importlib.import_module(name)

    async def open_preview(self, url: str, *, headless: bool = False) -> LocatorPreview:
        """A browser page at *url* for the editor's "Test" buttons."""
        from desktop_app.adapters.browser.preview import open_preview

        return await open_preview(self.settings.browser, url, headless=headless)

    def stored_secret(self, workflow_id: str, name: str) -> str | None:
        """A secret parameter's value from the OS keyring."""
        from desktop_app.adapters.secrets import get_parameter_secret

        return get_parameter_secret(workflow_id, name)

    def last_values(self, workflow_id: str) -> dict[str, str]:
        """The non-secret values of the workflow's latest run."""
        for run in self.runs.runs(workflow_id, limit=1):
            return {
                name: value_text(value)
                for name, value in run.parameters.items()
                if name not in run.secret_parameters and value is not None
            }
        return {}

    def save_settings(self, values: Mapping[str, Any]) -> Changes:
        """Write the settings file and use the new settings from now on."""
        from desktop_app.gui.settings_io import save_settings

        self._services.settings = save_settings(self.settings, values)
        return Changes.of(Origin.WINDOW, settings=True)

    def api_key_source(self) -> str:
        """Where the API key comes from."""
        return api_key(self.settings)[1]

    def set_api_key(self, key: str | None) -> Changes:
        """Save (or with None, remove) the API key in the OS keyring."""
        from desktop_app.adapters.secrets import delete_api_key, set_api_key

        if key:
            set_api_key(key)
        else:
            delete_api_key()
        return Changes.of(Origin.WINDOW, settings=True)

    def test_llm(self) -> str:
        """One call to the configured LLM; what answered."""
        from desktop_app.gui.settings_io import test_llm_connection

        return test_llm_connection(self.settings)

    def browser_info(self) -> str:
        """The browser found now for the settings in force."""
        from desktop_app.gui.settings_io import describe_browser

        return describe_browser(self.settings.browser)

    def set_data_dir(self, path: str | None) -> Changes:
        """Write (or remove) the data-directory pointer read at the next start."""
        from pathlib import Path

        from desktop_app.gui.settings_io import write_data_dir_pointer

        write_data_dir_pointer(Path(path) if path else None)
        return Changes.of(Origin.WINDOW, settings=True)

    def reindex(self) -> Reindexed:
        """Rebuild the search index."""
        return reindex(self._services.workflows, origin=Origin.WINDOW)
