"""Running a workflow from the window: the parameter dialog, then the run window.

:func:`open_run` loads the version (the approved one, or the one asked for, which may be a
draft), asks for the parameters and run options in a :class:`RunDialog`, and starts the replay in
a :class:`RunWindow`. The run window lists the steps as they run (status, the healing rung that
found each element, time, LLM use, errors), shows the latest screenshot, asks the person running
it when the replay needs them (:class:`~desktop_app.ui.person_dialogs.DialogPerson`), can stop the
run (it is recorded as interrupted), and ends with a summary that links to the run record and to
the repair a healed run proposes.

Its parts: :mod:`.launch` (:func:`open_run`), :mod:`.run_setup` (what a run needs before it
starts), :mod:`.dialog` (the parameter dialog) and :mod:`.window` (the run window).
"""

from desktop_app.ui.run_view.dialog import RunDialog
from desktop_app.ui.run_view.launch import open_run
from desktop_app.ui.run_view.run_setup import RunSetup, load_setup
from desktop_app.ui.run_view.window import RunWindow

__all__ = ["RunDialog", "RunSetup", "RunWindow", "load_setup", "open_run"]
