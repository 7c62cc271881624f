"""Inducing a draft workflow from recordings, and opening it in the editor."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from desktop_app.core.induction.cancel import InductionCancelled
from desktop_app.ops.induce import Induced
from desktop_app.ui.host import Host

__all__ = ["induce_draft", "say_cancelled", "show_draft"]


async def induce_draft(
    host: Host, trajectory_ids: Sequence[str], *, cancel: threading.Event | None = None
) -> Induced:
    """Induce a draft from recordings (with the LLM when one is configured) and save it.

    Setting *cancel* stops it (it raises :class:`InductionCancelled`, nothing saved); so does
    cancelling this coroutine (the window closing).
    """
    stop = cancel if cancel is not None else threading.Event()
    try:
        draft = await host.tasks.call(host.backend.induce, trajectory_ids, cancel=stop)
    except asyncio.CancelledError:
        stop.set()  # the store thread stops too, before it saves anything
        raise
    host.events.announce(draft.changes)
    return draft


def say_cancelled(host: Host, exc: BaseException) -> bool:
    """Tell the person an induction they cancelled stopped; whether *exc* was that."""
    if not isinstance(exc, InductionCancelled):
        return False
    host.show_status("Induction cancelled: no draft was saved, and the recordings are kept")
    return True


def show_draft(host: Host, draft: Induced) -> None:
    """Open a freshly induced draft in the editor and say what induction noticed."""
    version = draft.saved.version
    workflow = version.workflow
    editor = host.open_editor(workflow.id, version.version)
    host.show_status(
        f"Drafted “{workflow.name}”: {len(workflow.steps)} steps, "
        f"{len(workflow.parameters)} parameters — review it in the editor"
    )
    if draft.notes:
        box = QMessageBox(
            QMessageBox.Icon.Information,
            "Notes on the new draft",
            f"“{workflow.name}” was drafted from the "
            f"{'recordings' if len(draft.recordings) > 1 else 'recording'}. "
            "Worth a look while you review it:",
            parent=editor or host.window,  # over the editor: the main window stays behind it
        )
        box.setObjectName("induction-notes")
        box.setInformativeText("\n".join(f"• {note}" for note in draft.notes))
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
