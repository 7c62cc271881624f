"""Running a workflow from the window: load the version, ask for parameters, run it."""

from __future__ import annotations

import functools

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from desktop_app.ui.host import Host
from desktop_app.ui.run_view.dialog import RunDialog
from desktop_app.ui.run_view.run_setup import RunSetup, load_setup
from desktop_app.ui.run_view.window import RunWindow
from desktop_app.ui.windows import bring_forward

__all__ = ["open_run"]


def open_run(host: Host, workflow_id: str, version: int | None, *, verify: bool = False) -> None:
    """Ask for a run's parameters, then run it in a run window.

    Args:
        host: the main window (or the tray's host).
        workflow_id: the workflow.
        version: a version to run (it may be a draft; the dialog says so), or None for the
            approved one.
        verify: a verification (``workflows verify``): the recorded values, a stop before the
            first irreversible step unless the person asks otherwise.
    """

    async def load() -> RunSetup:
        return await host.tasks.call(
            functools.partial(load_setup, verify=verify), host.backend, workflow_id, version
        )

    def show(setup: RunSetup) -> None:
        dialog = RunDialog(setup, host.backend.settings, host.window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def start() -> None:
            window = RunWindow(host, setup)
            _keep(host, window)
            bring_forward(window)  # in front of the main window the dialog hands back to
            window.start(dialog.request())

        dialog.accepted.connect(start)
        dialog.open()

    host.tasks.start(load(), label="Opening the workflow…", on_done=show)


def _keep(host: Host, window: QWidget) -> None:
    host.adopt(window)
