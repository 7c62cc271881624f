"""(Being built.)"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from desktop_app.ui.host import Host


class LibraryPage(QWidget):
    """(Being built.)"""

    def __init__(self, host: Host) -> None:
        super().__init__()
        self._host = host

    async def reload(self) -> None:
        """Load what the screen shows."""

    def show_version(self, workflow_id: str, version: int | None) -> None:
        """Show a version."""

    def show_run(self, run_id: str) -> None:
        """Show a run."""

    def focus_search(self) -> None:
        """Put the cursor in the search box."""
