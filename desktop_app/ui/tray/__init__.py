"""The system tray: approved workflows one click away, runs in the background, notifications.

:class:`Tray` puts an icon in the system tray whose menu lists the approved workflows (pinned
first, then the recently run ones, then the rest grouped by site, with a search entry when there
are many), "Record new…", "Record on the desktop…", "Open Procedura", "Pause runs" and "Quit".
Choosing a workflow asks for its parameters (prefilled with the last run's values and the keyring's
secrets) when it has any, then runs it in the background: the icon and its tooltip show the run
going, the menu can show or stop it, questions for the person running it open as dialogs even while
the main window is hidden, and a notification says how it ended (clicking it opens the run record).

While the tray is there, closing the main window only hides it; the app ends with "Quit" (or Ctrl+Q
in the window). Where the platform has no tray, the tray says so once and the window stays the app,
as before.

Its parts: :mod:`.tray` (the :class:`Tray`, put together from :mod:`.base` (state, the icon's
tooltip, notifications), :mod:`.menu` (the menu), :mod:`.runs` (the runs it starts and follows),
:mod:`.recording` (a desktop recording started from the menu) and :mod:`.fleet` (in team mode with
a fleet: the Fleet submenu, its counts and the newest jobs to cancel or resume)), :mod:`.menu_plan`
(which workflows the menu lists), :mod:`.search_dialog` (picking a workflow by name) and
:mod:`.icons` (the icon and its badges).
"""

from desktop_app.ui.tray.base import NO_TRAY_MESSAGE, TrayMessage, TrayState
from desktop_app.ui.tray.menu_plan import MenuPlan, plan_menu
from desktop_app.ui.tray.search_dialog import WorkflowSearchDialog
from desktop_app.ui.tray.tray import Tray

__all__ = [
    "NO_TRAY_MESSAGE",
    "MenuPlan",
    "Tray",
    "TrayMessage",
    "TrayState",
    "WorkflowSearchDialog",
    "plan_menu",
]
