"""Inducing a draft workflow from a recording, and opening it in the editor."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from desktop_app.ui.backend import InducedDraft
from desktop_app.ui.host import Host

__all__ = ["induce_draft", "show_draft"]


async def induce_draft(host: Host, trajectory_id: str) -> InducedDraft:
    """Induce a draft from a recording (with the LLM when one is configured) and save it."""
    backend = host.backend
    use_llm = await host.tasks.call(backend.llm_configured)
    draft = await host.tasks.call(backend.induce, trajectory_id, use_llm=use_llm)
    host.events.workflows_changed.emit(draft.saved.version.workflow_id)
    return draft


def show_draft(host: Host, draft: InducedDraft) -> None:
    """Open a freshly induced draft in the editor and say what induction noticed."""
    version = draft.saved.version
    workflow = version.workflow
    host.open_editor(workflow.id, version.version)
    host.show_status(
        f"Drafted “{workflow.name}”: {len(workflow.steps)} steps, "
        f"{len(workflow.parameters)} parameters — review it in the editor"
    )
    if draft.notes:
        box = QMessageBox(
            QMessageBox.Icon.Information,
            "Notes on the new draft",
            f"“{workflow.name}” was drafted from the recording. Worth a look while you review it:",
            parent=host.window,
        )
        box.setObjectName("induction-notes")
        box.setInformativeText("\n".join(f"• {note}" for note in draft.notes))
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
