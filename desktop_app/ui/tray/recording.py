"""A desktop recording started from the tray menu, with the main window left where it is."""

from __future__ import annotations

from desktop_app.ui.record import CANNOT_RECORD_THE_DESKTOP, RecordingController, start_recording
from desktop_app.ui.tray.base import TrayBase

__all__ = ["TrayRecording"]


class TrayRecording(TrayBase):
    """The menu's "Record on the desktop…": the record dialog with the desktop chosen, on its
    own (the main window stays hidden in the tray), then the recording bar as from the window.
    When the desktop cannot be recorded here, a notification says why in one line (the box the
    recording shows says it too)."""

    def record_desktop(self) -> None:
        """Ask what the demonstration is for, then record on the desktop."""
        start_recording(self._host, desktop=True, on_controller=self._follow_recording)

    def _follow_recording(self, controller: RecordingController) -> None:
        controller.recording_unavailable.connect(self._on_controller_recording_unavailable)

    def _on_controller_recording_unavailable(self, reason: str) -> None:
        self.notify(CANNOT_RECORD_THE_DESKTOP, reason, failed=True)
