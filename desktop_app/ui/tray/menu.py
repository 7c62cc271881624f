"""The tray's menu: the runs going on, the approved workflows by group, and its actions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from desktop_app.core.models.workflow import WorkflowStatus
from desktop_app.core.views import RunStats, WorkflowSummary
from desktop_app.ui.batch_window import open_batch
from desktop_app.ui.tray.base import TrayBase, _short, _status_text
from desktop_app.ui.tray.menu_plan import plan_menu
from desktop_app.ui.tray.search_dialog import WorkflowSearchDialog
from desktop_app.ui.windows import bring_forward

__all__ = ["SEARCH_AFTER", "SUBMENUS_AFTER", "TrayMenu"]

#: Above this many approved workflows, the menu gets a "Search workflows…" entry.
SEARCH_AFTER: Final = 12

#: Above this many workflows outside Pinned and Recent, each site gets a submenu.
SUBMENUS_AFTER: Final = 10


class TrayMenu(TrayBase):
    """The tray menu: built from :attr:`plan`, rebuilt as workflows and runs change."""

    # ── the menu ────────────────────────────────────────────────────────────────────────────

    def refresh(self) -> None:
        """Reload the workflows shortly (several changes close together reload once)."""
        self._reload_timer.start()

    async def reload(self) -> None:
        """Load the approved workflows and their run statistics, and rebuild the menu."""
        backend = self._host.backend

        def load() -> tuple[list[WorkflowSummary], dict[str, RunStats]]:
            return backend.workflows.list(status=WorkflowStatus.APPROVED), backend.runs.run_stats()

        summaries, stats = await self._host.tasks.call(load)
        self.plan = plan_menu(summaries, stats)
        self._build_menu()
        self.refresh_fleet()

    def workflow_actions(self) -> list[QAction]:
        """Every workflow entry of the menu (submenus included), in menu order."""
        found: list[QAction] = []

        def walk(menu: QMenu) -> None:
            for action in menu.actions():
                if action.menu() is not None:
                    walk(action.menu())  # type: ignore[arg-type]
                elif isinstance(action.data(), str) and action.data():
                    found.append(action)

        walk(self.menu)
        return found

    def workflow_action(self, workflow_id: str) -> QAction | None:
        """The menu entry that runs *workflow_id*, if the menu lists it."""
        for action in self.workflow_actions():
            if action.data() == workflow_id:
                return action
        return None

    def _build_menu(self) -> None:
        menu = self.menu
        menu.clear()
        self._status_actions.clear()
        for submenu in menu.findChildren(QMenu):
            submenu.deleteLater()
        self._add_run_entries(menu)
        if self._host.backend.fleet_enabled():
            menu.addAction(self.fleet_action)
            menu.addSeparator()
        plan = self.plan
        if plan.count == 0:
            empty = menu.addAction("No approved workflows yet")
            empty.setObjectName("tray-empty")
            empty.setEnabled(False)
            empty.setToolTip("Approve a workflow on the Review screen and it appears here")
        else:
            if plan.count > self.search_after:
                menu.addAction(self.search_action)
            if plan.pinned:
                menu.addSection("Pinned")
                for summary in plan.pinned:
                    self._add_workflow(menu, summary, pinned=True)
            if plan.recent:
                menu.addSection("Recent")
                for summary in plan.recent:
                    self._add_workflow(menu, summary)
            rest = sum(len(group) for _, group in plan.groups)
            if rest > SUBMENUS_AFTER and len(plan.groups) > 1:
                menu.addSection("All workflows")
                for site, group in plan.groups:
                    submenu = menu.addMenu(site)
                    submenu.setObjectName(f"tray-site-{site}")
                    submenu.setToolTipsVisible(True)
                    for summary in group:
                        self._add_workflow(submenu, summary)
            else:
                for site, group in plan.groups:
                    menu.addSection(site)
                    for summary in group:
                        self._add_workflow(menu, summary)
        menu.addSeparator()
        self.batch_action.setEnabled(plan.count > 0)
        menu.addAction(self.batch_action)
        menu.addAction(self.record_action)
        menu.addAction(self.record_desktop_action)
        menu.addAction(self.open_action)
        menu.addAction(self.pause_action)
        menu.addSeparator()
        menu.addAction(self.quit_action)
        self.menu_rebuilt.emit()

    def _add_run_entries(self, menu: QMenu) -> None:
        if not self._active:
            return
        menu.addSection("Running")
        for key, run in list(self._active.items()):
            status = menu.addAction(_status_text(run))
            status.setObjectName("tray-run-status")
            status.setEnabled(False)
            self._status_actions[key] = status
            if run.show is not None:
                show = menu.addAction("Show its progress")
                show.setObjectName("tray-show-run")
                show.triggered.connect(run.show)
            stop = menu.addAction(f"■ Stop “{_short(run.name)}”")
            stop.setObjectName("tray-stop-run")
            stop.setToolTip(
                "Stop now: what was done stays done; the run is recorded as interrupted"
            )
            stop.triggered.connect(lambda _=False, k=key: self.stop_run(k))

    def _add_workflow(self, menu: QMenu, summary: WorkflowSummary, *, pinned: bool = False) -> None:
        label = _short(summary.name).replace("&", "&&")
        asks = bool(summary.parameters)
        action = menu.addAction(("★ " if pinned else "") + label + ("…" if asks else ""))
        action.setObjectName(f"tray-workflow-{summary.id}")
        action.setData(summary.id)
        tip = summary.description or summary.name
        if asks:
            tip += "\n\nAsks for: " + ", ".join(summary.parameters)
        action.setToolTip(tip)
        action.triggered.connect(lambda _=False, wid=summary.id: self.run_workflow(wid))

    def search(self) -> WorkflowSearchDialog:
        """Pick a workflow by typing part of its name, then run it."""
        return self._pick(self.run_workflow)

    def choose_batch(self) -> WorkflowSearchDialog | None:
        """Pick a workflow, then a CSV file: the batch dialog (mapping, report, options)."""
        if self._paused:
            self.notify(
                "Runs are paused",
                "Nothing was run. Untick “Pause runs” in the tray menu to run workflows again.",
            )
            return None
        return self._pick(
            lambda workflow_id: open_batch(self._host, workflow_id),
            title="Run a workflow over a CSV file",
            button="&Choose the file…",
        )

    def _pick(
        self, then: Callable[[str], object], *, title: str = "", button: str = ""
    ) -> WorkflowSearchDialog:
        everything = [*self.plan.pinned, *self.plan.recent]
        for _, group in self.plan.groups:
            everything.extend(group)
        dialog = WorkflowSearchDialog(everything)
        if title:
            dialog.setWindowTitle(title)
        if button:
            dialog.run_button.setText(button)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.picked.connect(then)
        bring_forward(dialog)
        return dialog
