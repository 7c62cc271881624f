"""The tray's runs: starting them, following them (and batches, and hand-offs), their endings."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import replace

from PySide6.QtCore import Qt

from desktop_app.core.models.run import Run, RunStatus, RunTrigger, run_status_label
from desktop_app.core.outcomes import outcome_reason
from desktop_app.ops.run import replay_options
from desktop_app.ui.backend import RunRequest
from desktop_app.ui.batch_window import BatchWindow
from desktop_app.ui.run_models import run_summary
from desktop_app.ui.run_view import RunDialog, RunSetup, RunWindow, load_setup
from desktop_app.ui.tray.base import TrayBase, _ActiveRun, _status_text, _Watched
from desktop_app.ui.windows import bring_forward

__all__ = ["TrayRuns"]


class TrayRuns(TrayBase):
    """The runs the tray starts or notices: shown in the icon and the menu until they end."""

    # ── running ─────────────────────────────────────────────────────────────────────────────

    @property
    def paused(self) -> bool:
        """Whether choosing a workflow in the tray (or handing a run over) is refused for now."""
        return self._paused

    def set_paused(self, paused: bool) -> None:
        """Pause or resume runs started from the tray."""
        self.pause_action.setChecked(paused)  # toggled → _on_pause_action_toggled

    def run_workflow(self, workflow_id: str) -> None:
        """Run the approved version of *workflow_id*: the parameter dialog first, if it has any."""
        if self._paused:
            self.notify(
                "Runs are paused",
                "Nothing was run. Untick “Pause runs” in the tray menu to run workflows again.",
            )
            return
        host = self._host

        async def load() -> RunSetup:
            return await host.tasks.call(load_setup, host.backend, workflow_id, None)

        host.tasks.start(load(), label="Opening the workflow…", on_done=self._on_setup_loaded)

    def _on_setup_loaded(self, setup: RunSetup) -> None:
        if not setup.version.workflow.parameters:
            self._start(setup, self._direct_request(setup))
            return
        dialog = RunDialog(setup, self._host.backend.settings, None)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self._start(setup, dialog.request()))
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()

    def _direct_request(self, setup: RunSetup) -> RunRequest:
        options = replay_options(
            self._host.backend.settings, trigger=RunTrigger.TRAY, use_llm=setup.llm_configured
        )
        return RunRequest(version=setup.version, options=options)

    def _start(self, setup: RunSetup, request: RunRequest) -> None:
        if self._paused:
            self.notify("Runs are paused", "Nothing was run: runs were paused meanwhile.")
            return
        request = replace(request, options=replace(request.options, trigger=RunTrigger.TRAY))
        window = RunWindow(self._host, setup)
        self._host.adopt(window)
        window.start(request)
        if not window.running:  # the app is closing
            window.close()
            return
        self._watch(window, setup.version.workflow.name, notify=True)

    def stop_run(self, key: object) -> None:
        """Stop one run the tray shows (it is recorded as interrupted)."""
        run = self._active.get(key)
        if run is not None:
            run.progress = "stopping"
            run.stop()
            self._update_state()
            status = self._status_actions.get(key)
            if status is not None:
                status.setText(_status_text(run))

    def stop_all(self) -> None:
        """Stop every run going on."""
        for key in list(self._active):
            self.stop_run(key)

    # The tray's runs, and those it notices, as one list: the instance server adds hand-offs.

    def track_run(
        self,
        key: object,
        name: str,
        stop: Callable[[], object],
        show: Callable[[], object] | None = None,
    ) -> None:
        """Show a run in progress (icon, tooltip, a Stop entry) until :meth:`end_run`."""
        self._active[key] = _ActiveRun(name=name, stop=stop, show=show)
        self._update_state()
        self._build_menu()

    def progress_run(self, key: object, progress: str) -> None:
        """Say how far a tracked run has got ("step 3 of 10")."""
        run = self._active.get(key)
        if run is not None and run.progress != "stopping":
            run.progress = progress
            self._update_state()
            status = self._status_actions.get(key)
            if status is not None:  # in place: the menu may be open
                status.setText(_status_text(run))

    def end_run(self, key: object) -> None:
        """A tracked run is over."""
        if self._active.pop(key, None) is not None:
            self._update_state()
            self._build_menu()

    def _watch(self, window: RunWindow, name: str, *, notify: bool) -> None:
        known = self._watched.get(window)
        if known is not None:  # seen as it started; the tray's own run: say how it ended
            known.name, known.notify = name, known.notify or notify
            return
        watched = _Watched(window=window, name=name, notify=notify)
        self._watched[window] = watched
        self.track_run(window, name, window.stop, show=lambda: bring_forward(window))
        window.progress.valueChanged.connect(lambda _v, w=window: self._on_window_progress(w))
        window.destroyed.connect(lambda *_, w=window: self._forget(w))
        window.job.ended.connect(self._check_windows)
        if window.progress.value() > 0:  # found under way
            self._on_window_progress(window)

    def _on_window_progress(self, window: RunWindow) -> None:
        with contextlib.suppress(RuntimeError):
            bar = window.progress
            self.progress_run(window, f"step {bar.value()} of {bar.maximum()}")

    def _forget(self, window: RunWindow) -> None:
        self._watched.pop(window, None)
        self.end_run(window)

    def _check_windows(self) -> None:
        """Note the watched runs that ended: notify for the tray's own, close hidden windows."""
        for window, watched in list(self._watched.items()):
            try:
                over = not window.running and not window.summary.isHidden()
            except RuntimeError:  # deleted meanwhile
                self._forget(window)
                continue
            if not over or watched.ended:
                continue
            watched.ended = True
            self._watched.pop(window, None)
            self.end_run(window)
            run = window.run
            if watched.notify:
                self._notify_end(watched.name, run, window.summary_text.text())
                self.run_did_finish.emit(run.id if run is not None else "")
            if not window.isVisible():
                window.close()

    def _notify_end(self, name: str, run: Run | None, error: str) -> None:
        if run is None:
            self.notify(
                f"“{name}” did not run", error or "It stopped before it began.", failed=True
            )
            return
        if run.status is RunStatus.SUCCEEDED:
            title = f"✓ “{name}” succeeded"
        elif run.status is RunStatus.UNVERIFIED:
            title = f"⚠ “{name}” done, unverified"
        elif run.status is RunStatus.INTERRUPTED:
            title = f"■ “{name}” was stopped"
        else:
            title = f"✗ “{name}” {run_status_label(run.status).lower()}"
        lines = [run_summary(run, with_status=False)]
        reason = outcome_reason(run)
        if reason:
            lines.append(reason)
        if run.proposed_version is not None:
            lines.append(f"Version {run.proposed_version} is proposed, waiting for review.")
        lines.append("Click to open the run record.")
        unverified = run.status is RunStatus.UNVERIFIED
        self.notify(
            title,
            "\n".join(lines),
            run_id=run.id,
            failed=run.status is not RunStatus.SUCCEEDED and not unverified,
            unverified=unverified,
        )

    def _watch_batch(self, window: BatchWindow) -> None:
        """Show a batch in progress like a run, and notify when it ends (Retry starts again)."""
        if window not in self._batches:
            self._batches.add(window)
            window.progress.valueChanged.connect(lambda _v, w=window: self._on_batch_progress(w))
            window.ended.connect(lambda w=window: self._on_batch_ended(w))
            window.destroyed.connect(lambda *_, w=window: self._forget_batch(w))
        name = window.workflow_name
        self.track_run(window, f"{name} (batch)", window.stop, show=lambda: bring_forward(window))
        self._on_batch_progress(window)

    def _forget_batch(self, window: BatchWindow) -> None:
        self._batches.discard(window)
        self.end_run(window)

    def _on_batch_progress(self, window: BatchWindow) -> None:
        with contextlib.suppress(RuntimeError):
            bar = window.progress
            self.progress_run(window, f"{bar.value()} of {bar.maximum()} rows")

    def _on_batch_ended(self, window: BatchWindow) -> None:
        self.end_run(window)

        def show() -> None:
            try:
                bring_forward(window)
            except RuntimeError:  # closed since
                self.open_window()

        name = window.workflow_name
        self.notify(
            f"“{name}” over a CSV file: {window.outcome.text()}",
            f"{window.status_label.text()}\n{window.results_label.text()}\n"
            "Click to show the batch.",
            failed=window.some_not_done,
            unverified=not window.all_succeeded and not window.some_not_done,
            show=show,
        )

    def _on_run_window_started(self, window: RunWindow) -> None:
        """Follow a run window opened elsewhere (the main window's Run button) as it starts."""
        self._watch(window, window.windowTitle().removeprefix("Run — "), notify=False)
