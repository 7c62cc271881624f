"""The Library screen: every workflow, a "What do you want to do?" search, filters and actions."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import (
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.exports.bundle import Resolution
from desktop_app.core.models.common import utcnow
from desktop_app.core.models.workflow import (
    Step,
    WorkflowStatus,
    WorkflowVersion,
    branches,
    status_label,
)
from desktop_app.core.views import RunStats, WorkflowSummary
from desktop_app.ops.changes import Origin
from desktop_app.ops.library import (
    Changed,
    delete,
    import_incoming,
    incoming_file,
    pin,
    unresolved,
)
from desktop_app.ops.review import Archived, Decision, Reviewed, archive, decide
from desktop_app.ops.scores import Scored, score
from desktop_app.ui import theme
from desktop_app.ui.host import Host
from desktop_app.ui.library_model import LibraryModel, LibraryRow
from desktop_app.ui.scores_html import record_html
from desktop_app.ui.table_model import current_item

__all__ = ["LibraryPage"]

_Index = QModelIndex | QPersistentModelIndex

#: How many rows a column fitted to its contents measures (Qt's default, 1,000, calls the
#: model's data() some 30,000 times on every reset of a long list).
_FIT_ROWS = 50

#: How long typing pauses before the semantic search runs.
SEARCH_DELAY_MS = 250


class LibraryPage(QWidget):
    """Find a workflow by what it does, see how it has been doing, and act on it.

    Signals:
        rows_shown(): the table was filled (after a load or a search).
    """

    rows_shown = Signal()

    def __init__(self, host: Host) -> None:
        super().__init__()
        self.setObjectName("library-page")
        self._host = host
        self._all: list[LibraryRow] = []
        self._stats: dict[str, RunStats] = {}
        self._search_generation = 0

        self.search = QLineEdit()
        self.search.setObjectName("library-search")
        self.search.setAccessibleName("Search workflows")
        self.search.setAccessibleDescription(
            "Type what you want to do; the list shows the workflows that match"
        )
        self.search.setPlaceholderText("What do you want to do?  e.g. “add a person to the CRM”")
        self.search.setClearButtonEnabled(True)
        self.search.setToolTip(
            "Describe the task in your own words; workflows are found by meaning (Ctrl+F)"
        )
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self._on_search_timer_timeout)
        self.search.textChanged.connect(lambda _text: self._search_timer.start())
        self.search.returnPressed.connect(self._on_search_return_pressed)

        self.status_filter = QComboBox()
        self.status_filter.setObjectName("library-status-filter")
        self.status_filter.setAccessibleName("Status filter")
        self.status_filter.addItem("All (not archived)", None)
        for status in WorkflowStatus:
            self.status_filter.addItem(status_label(status), status)
        self.domain_filter = QComboBox()
        self.domain_filter.setObjectName("library-domain-filter")
        self.domain_filter.setAccessibleName("Domain filter")
        self.domain_filter.addItem("All domains", None)
        self.status_filter.currentIndexChanged.connect(self._apply_filters)
        self.domain_filter.currentIndexChanged.connect(self._apply_filters)

        record = QPushButton("Record…")
        record.setToolTip("Record a new demonstration (Ctrl+R)")
        record.clicked.connect(host.start_recording)
        import_button = QPushButton("Import…")
        import_button.setObjectName("library-import")
        import_button.setToolTip("Import a workflow file (.json) or a shared bundle (.procedura)")
        import_button.clicked.connect(self._on_import_clicked)

        bar = QHBoxLayout()
        bar.addWidget(self.search, 1)
        bar.addWidget(self.status_filter)
        bar.addWidget(self.domain_filter)
        bar.addWidget(record)
        bar.addWidget(import_button)

        self.model = LibraryModel(self)
        self._keep: str | None = None
        self.table = QTableView()
        self.table.setObjectName("library-table")
        self.table.setAccessibleName("Workflows")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.table.verticalHeader().hide()
        self.table.setAlternatingRowColors(True)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in range(1, len(LibraryModel.HEADERS)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(3, 190)
        header.setResizeContentsPrecision(_FIT_ROWS)  # fit columns to rows on screen, not 1,000
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setWordWrap(False)
        self.table.doubleClicked.connect(lambda _index: self._edit())
        self.table.selectionModel().currentRowChanged.connect(self._on_selection_changed)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)

        self.empty = QLabel(
            "<h3>No workflows yet</h3><p>Record a task you do often (<b>Record…</b>, Ctrl+R): "
            "Procedura turns it into a workflow you can edit, approve and replay.<br>"
            "Or <b>Import…</b> a workflow someone shared with you.</p>"
        )
        self.empty.setObjectName("library-empty")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        self._stack = QStackedWidget()
        self._stack.addWidget(self.table)
        self._stack.addWidget(self.empty)

        self.details = QTextBrowser()
        self.details.setObjectName("library-details")
        self.details.setAccessibleName("Workflow details")
        self.details.setOpenLinks(False)
        self.run_button = QPushButton("Run…")
        self.run_button.setObjectName("library-run")
        self.batch_button = QPushButton("Run over CSV…")
        self.batch_button.setObjectName("library-run-csv")
        self.batch_button.setToolTip(
            "Run the approved version once per row of a CSV file (columns → parameters)"
        )
        self.batch_button.clicked.connect(self._run_batch)
        self.edit_button = QPushButton("Edit")
        self.review_button = QPushButton("Review")
        self.pin_button = QPushButton("Pin")
        self.archive_button = QPushButton("Archive")
        self.delete_button = QPushButton("Delete…")
        self.run_button.setToolTip("Run the approved version (Enter)")
        self.edit_button.setToolTip("Open in the step editor (double-click)")
        self.review_button.setToolTip("Compare versions, approve or request changes")
        self.pin_button.setToolTip("Pinned workflows come first, here and in the tray")
        self.archive_button.setToolTip("Archive: it leaves the library and the tray, but is kept")
        self.run_button.clicked.connect(self._run)
        self.edit_button.clicked.connect(self._edit)
        self.review_button.clicked.connect(self._review)
        self.pin_button.clicked.connect(self._toggle_pin)
        self.archive_button.clicked.connect(self._toggle_archive)
        self.delete_button.clicked.connect(self._delete)
        buttons = QHBoxLayout()
        for button in (
            self.run_button,
            self.batch_button,
            self.edit_button,
            self.review_button,
            self.pin_button,
            self.archive_button,
            self.delete_button,
        ):
            buttons.addWidget(button)
        buttons.addStretch(1)
        side = QWidget()
        side_layout = QVBoxLayout(side)
        side_layout.setContentsMargins(0, 0, 0, 0)
        side_layout.addWidget(self.details, 1)
        side_layout.addLayout(buttons)

        for text, shortcut, slot in (
            ("Run…", "Return", self._run),
            ("Run over a CSV file…", "", self._run_batch),
            ("Edit", "Ctrl+E", self._edit),
            ("Review", "", self._review),
            ("Pin / unpin", "Ctrl+P", self._toggle_pin),
        ):
            action = QAction(text, self.table)
            if shortcut:
                action.setShortcut(QKeySequence(shortcut))
                action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
            action.triggered.connect(slot)
            self.table.addAction(action)

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self._stack)
        splitter.addWidget(side)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(splitter, 1)
        self._update_buttons(None)
        self.model.modelAboutToBeReset.connect(self._on_model_about_to_be_reset)
        self.model.modelReset.connect(self._on_model_reset)
        host.events.workflows_changed.connect(lambda _id: self.refresh())
        host.events.runs_changed.connect(lambda _id: self.refresh())

    # ── loading ─────────────────────────────────────────────────────────────────────────────

    def refresh(self) -> None:
        """Reload in the background."""
        self._host.tasks.start(self.reload(), label="Loading the library…")

    async def reload(self) -> None:
        """Load every workflow (archived too, for the filter) with its run statistics.

        The first time, the workflows are shown as soon as they are read, and their run
        statistics (a query over every run) follow."""
        backend = self._host.backend
        days = backend.settings.stale_after_days

        def read() -> tuple[list[WorkflowSummary], list[str]]:
            """On the store thread: the workflows and their domains."""
            summaries = backend.workflows.list() + backend.workflows.list(
                status=WorkflowStatus.ARCHIVED
            )
            return summaries, sorted({d for s in summaries for d in s.domains})

        def with_stats(
            summaries: list[WorkflowSummary], stats: dict[str, RunStats]
        ) -> list[LibraryRow]:
            """On the store thread: the rows with their runs' statistics."""
            now = utcnow()
            return [
                LibraryRow(s, stats.get(s.id)).with_stale(stale_after_days=days, now=now)
                for s in summaries
            ]

        searching = bool(self.search.text().strip())
        if not self.model.rowCount() and not searching:  # nothing shown: a page by name first
            first = await self._host.tasks.call(backend.workflows.first_by_name, LibraryModel.PAGE)
            if not self.model.rowCount() and first:
                self._stack.setCurrentWidget(self.table)
                self.model.set_rows([LibraryRow(s) for s in first])
                # Painted now: reading everything next keeps the store thread busy in Python,
                # and the window would wait for it to paint this page.
                self.table.viewport().repaint()
        # The run statistics (a query over every run, in SQLite's C code, which lets Python run)
        # are read on a thread of their own while the store thread reads the workflows.
        (summaries, domains), stats = await asyncio.gather(
            self._host.tasks.call(read), asyncio.to_thread(backend.runs.run_stats)
        )
        self._all = await self._host.tasks.call(with_stats, summaries, stats)
        self._stats = stats
        self._fill_domains(domains)
        if searching:
            await self._search(self.search.text())
        else:
            self._show(self._all, ranked=False)

    async def _search(self, text: str) -> None:
        self._search_generation += 1
        generation = self._search_generation
        query = text.strip()
        if not query:
            self._show(self._all, ranked=False)
            return
        status = self._status()
        matches = await self._host.tasks.call(
            self._host.backend.workflows.search, query, limit=20, status=status
        )
        if generation != self._search_generation:
            return  # the user typed on; a newer search will show its results
        stale = {row.summary.id: row.stale for row in self._all}
        self._show(
            [
                LibraryRow(m.workflow, self._stats.get(w := m.workflow.id), m.score, stale.get(w))
                for m in matches
            ],
            ranked=True,
        )

    def _show(self, rows: list[LibraryRow], *, ranked: bool) -> None:
        selected = self.selected()
        header = self.table.horizontalHeader()
        self.model.set_rows(rows)
        if ranked:  # best match first, as the search ranked them
            self.table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        elif header.sortIndicatorSection() < 0:
            self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self._stack.setCurrentWidget(self.empty if not self._all else self.table)
        if selected is None and self.model.rowCount() and ranked:
            self.table.selectRow(0)
        self.rows_shown.emit()

    def _on_model_about_to_be_reset(self) -> None:
        row = self.selected()
        self._keep = row.summary.id if row is not None else None

    def _on_model_reset(self) -> None:
        """Keep the selected workflow selected through a sort, a filter or a reload."""
        keep, self._keep = self._keep, None
        if keep is None or not self.select(keep):
            self._on_selection_changed()

    def _fill_domains(self, domains: list[str]) -> None:
        current = self.domain_filter.currentData()
        self.domain_filter.blockSignals(True)
        self.domain_filter.clear()
        self.domain_filter.addItem("All domains", None)
        for domain in domains:
            self.domain_filter.addItem(domain, domain)
        found = self.domain_filter.findData(current)
        self.domain_filter.setCurrentIndex(max(found, 0))
        self.domain_filter.blockSignals(False)
        self._apply_filters()

    def _apply_filters(self) -> None:
        self.model.set_filters(self._status(), self.domain_filter.currentData())

    def _status(self) -> WorkflowStatus | None:
        data = self.status_filter.currentData()
        return WorkflowStatus(data) if data else None

    # ── selection ───────────────────────────────────────────────────────────────────────────

    def focus_search(self) -> None:
        """Put the cursor in the search box."""
        self.search.setFocus()
        self.search.selectAll()

    def visible_rows(self) -> list[LibraryRow]:
        """The rows the table shows (scrolling down shows them all), in display order."""
        return self.model.rows()

    def selected(self) -> LibraryRow | None:
        """The selected workflow's row."""
        row: LibraryRow | None = current_item(self.table, LibraryModel.ROW_ROLE)
        return row

    def select(self, workflow_id: str) -> bool:
        """Select a workflow if it is shown."""
        row = self.model.row_of(workflow_id)
        if row is None:
            return False
        self.model.reveal(row)
        self.table.selectRow(row)
        return True

    def _on_selection_changed(self, *_: object) -> None:
        row = self.selected()
        self._update_buttons(row)
        if row is None:
            self.details.setHtml(
                f"<p style='color:{theme.colours().muted}'>"
                "Select a workflow to see what it does.</p>"
                if self.model.rowCount()
                else ""
            )
            return
        self.details.setHtml(_summary_html(row, None))
        workflow_id = row.summary.id
        backend = self._host.backend
        approved = row.summary.approved_version

        def read() -> tuple[WorkflowVersion, Scored]:
            latest = backend.workflows.get(workflow_id)
            runs = latest if approved is None else backend.workflows.get(workflow_id, approved)
            days = backend.settings.stale_after_days
            return latest, score(backend.runs, runs, stale_after_days=days)

        async def load() -> None:
            version, scored = await self._host.tasks.call(read)
            current = self.selected()
            if current is not None and current.summary.id == workflow_id:
                self.details.setHtml(_summary_html(current, version, scored))

        self._host.tasks.start(load(), label="Loading the workflow…")

    def _update_buttons(self, row: LibraryRow | None) -> None:
        has = row is not None
        archived = has and row is not None and row.summary.status is WorkflowStatus.ARCHIVED
        runnable = has and row is not None and row.summary.approved_version is not None
        self.run_button.setEnabled(bool(runnable) and not archived)
        self.batch_button.setEnabled(bool(runnable) and not archived)
        for button in (self.edit_button, self.review_button, self.pin_button):
            button.setEnabled(has and not archived)
        self.archive_button.setEnabled(has)
        self.delete_button.setEnabled(has)
        self.archive_button.setText("Restore" if archived else "Archive")
        self.pin_button.setText("Unpin" if row is not None and row.summary.pinned else "Pin")
        if has and not runnable:
            self.run_button.setToolTip("Approve a version first (Review); only approved ones run")
        else:
            self.run_button.setToolTip("Run the approved version (Enter)")

    # ── actions ─────────────────────────────────────────────────────────────────────────────

    def _on_search_timer_timeout(self) -> None:
        self._host.tasks.start(self._search(self.search.text()), label="Searching…")

    def _on_search_return_pressed(self) -> None:
        self._search_timer.stop()
        self._on_search_timer_timeout()

    def _run(self) -> None:
        row = self.selected()
        if row is not None and row.summary.approved_version is not None:
            self._host.open_run(row.summary.id)

    def _run_batch(self) -> None:
        row = self.selected()
        if row is not None and row.summary.approved_version is not None:
            from desktop_app.ui.batch_window import open_batch

            open_batch(self._host, row.summary.id)

    def _edit(self) -> None:
        row = self.selected()
        if row is not None and row.summary.status is not WorkflowStatus.ARCHIVED:
            self._host.open_editor(row.summary.id)

    def _review(self) -> None:
        row = self.selected()
        if row is not None:
            self._host.show_review(row.summary.id, None)

    def _toggle_pin(self) -> None:
        row = self.selected()
        if row is None:
            return
        workflows = self._host.backend.workflows
        workflow_id, pinned = row.summary.id, not row.summary.pinned
        self._change(lambda: pin(workflows, workflow_id, pinned, origin=Origin.WINDOW))

    def _toggle_archive(self) -> None:
        row = self.selected()
        if row is None:
            return
        workflows = self._host.backend.workflows
        actor = self._host.backend.settings.actor
        workflow_id = row.summary.id
        if row.summary.status is WorkflowStatus.ARCHIVED:
            self._change(
                lambda: decide(
                    workflows, workflow_id, Decision.RESTORE, actor=actor, origin=Origin.WINDOW
                )
            )
        else:
            self._change(lambda: archive(workflows, workflow_id, actor=actor, origin=Origin.WINDOW))

    def _delete(self) -> None:
        row = self.selected()
        if row is None:
            return
        answer = QMessageBox.question(
            self,
            "Delete workflow",
            f"Delete “{row.summary.name}” with its {row.summary.latest_version} version(s) and "
            "its run history, for good?\n\nArchiving keeps it instead.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        if answer == QMessageBox.StandardButton.Yes:
            workflows, workflow_id = self._host.backend.workflows, row.summary.id
            self._change(
                lambda: delete(workflows, workflow_id, confirmed=True, origin=Origin.WINDOW)
            )

    def _change(self, change: Callable[[], Changed | Archived | Reviewed]) -> None:
        async def job() -> None:
            done = await self._host.tasks.call(change)
            self._host.events.announce(done.changes)
            self._host.show_status(done.summary)

        self._host.tasks.start(job(), label="Saving…")

    def _on_import_clicked(self) -> None:
        name, _ = QFileDialog.getOpenFileName(
            self,
            "Import a workflow",
            str(Path.home()),
            "Workflows (*.json *.procedura);;All files (*)",
        )
        if name:
            self.import_file(Path(name))

    def import_file(self, path: Path) -> None:
        """Import a workflow document or a bundle (conflicts are asked about)."""
        self._host.tasks.start(self._import(path), label=f"Importing {path.name}…")

    async def _import(self, path: Path) -> None:
        backend = self._host.backend
        incoming = await self._host.tasks.call(incoming_file, path)
        choices: dict[str, Resolution] = {}
        # A choice can bring others (a copy's callers follow it): ask until none is left.
        while conflicts := await self._host.tasks.call(
            unresolved, backend.workflows, incoming, choices
        ):
            for conflict in conflicts:
                choice = self._ask_conflict(conflict.describe())
                if choice is None:
                    self._host.show_status("Import cancelled; nothing was written")
                    return
                choices[conflict.workflow_id] = choice
        done = await self._host.tasks.call(
            import_incoming,
            backend.workflows,
            backend.media,
            incoming,
            actor=backend.settings.actor,
            origin=Origin.WINDOW,
            choices=choices,
        )
        self._host.events.announce(done.changes)
        details = "; ".join(done.details)
        self._host.show_status(done.summary + (f": {details}" if details else ""))

    def _ask_conflict(self, description: str) -> Resolution | None:
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Workflow already here",
            description,
            parent=self,
        )
        box.setObjectName("import-conflict")
        keep = box.addButton("Keep both", QMessageBox.ButtonRole.AcceptRole)
        replace = box.addButton("Replace", QMessageBox.ButtonRole.DestructiveRole)
        skip = box.addButton("Skip", QMessageBox.ButtonRole.RejectRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        clicked = box.clickedButton()
        answers: tuple[tuple[QAbstractButton, Resolution], ...] = (
            (keep, "keep-both"),
            (replace, "replace"),
            (skip, "skip"),
        )
        return next((answer for button, answer in answers if button is clicked), None)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _summary_html(
    row: LibraryRow, version: WorkflowVersion | None, scored: Scored | None = None
) -> str:
    s = row.summary
    parts = [f"<h2 style='margin-bottom:2px'>{_escape(s.name)}</h2>"]
    status = status_label(s.status)
    approved = f" · approved v{s.approved_version}" if s.approved_version is not None else ""
    parts.append(
        f"<p style='color:{theme.colours().muted};margin-top:0'>"
        f"{status}{approved} · latest v{s.latest_version} "
        f"({status_label(s.latest_status).lower()}) · {', '.join(s.domains) or 'no domain'}</p>"
    )
    if s.description:
        parts.append(f"<p>{_escape(s.description)}</p>")
    if row.stats is not None and row.stats.runs:
        unverified = (
            f" ({row.stats.unverified} done, unverified: nothing showed the task was done)"
            if row.stats.unverified
            else ""
        )
        parts.append(
            f"<p>Ran {row.stats.runs} time(s); {row.success_text} succeeded{unverified}; "
            f"last {row.last_run_text}.</p>"
        )
    if scored is not None:
        parts.append(
            f"<p><b>How version {scored.record.version}'s runs went</b></p>"
            + record_html([scored.record], stale=scored.stale)
        )
    if version is not None:
        workflow = version.workflow
        if workflow.parameters:
            items = "".join(
                f"<li><b>{p.name}</b> <i>({p.type.value}"
                + ("" if p.required else ", optional")
                + ")</i>"
                + (f" — {_escape(p.description)}" if p.description else "")
                + "</li>"
                for p in workflow.parameters
            )
            parts.append(f"<p><b>Parameters</b></p><ul>{items}</ul>")
        parts.append(f"<p><b>{len(workflow.steps)} steps</b></p>{_step_list(workflow.steps)}")
    return "".join(parts)


def _step_list(steps: tuple[Step, ...]) -> str:
    """*steps* as a numbered HTML list, a block's own steps nested under it."""
    items = []
    for step in steps:
        inner = "".join(
            ("<br><i>Otherwise:</i>" if name == "otherwise" else "") + _step_list(body)
            for name, body in branches(step)
            if body
        )
        items.append(
            f"<li>{_escape(step.title)}"
            + (" <b>⚠ irreversible</b>" if step.irreversible else "")
            + inner
            + "</li>"
        )
    return f"<ol>{''.join(items)}</ol>"
