"""The Review screen: the queue, the comparison picker, a version's diff and the decision."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QImage, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListView,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.diff import base_for
from desktop_app.core.errors import ProceduraError
from desktop_app.core.models.common import utcnow
from desktop_app.core.models.run import Run
from desktop_app.core.models.workflow import WorkflowStatus, WorkflowVersion
from desktop_app.core.replay.learning import REPLAY_ACTOR
from desktop_app.core.replay.online import ONLINE_ACTOR
from desktop_app.core.scores import VersionRecord, stale_reason
from desktop_app.core.views import WorkflowSummary
from desktop_app.ops.changes import MANY, Changes, Origin
from desktop_app.ops.review import Decision, Reviewed, decide
from desktop_app.ops.scores import approved_at
from desktop_app.ui import theme
from desktop_app.ui.host import Host
from desktop_app.ui.review_page.loading import (
    compute,
    is_listed,
    load_queue,
    load_workflow,
    load_workflows,
)
from desktop_app.ui.review_page.markup import (
    css,
    escape,
    page,
    status_colour,
    status_words,
    version_html,
    when,
)
from desktop_app.ui.review_page.models import (
    HistoryModel,
    QueueEntry,
    ReviewQueueModel,
    WorkflowsModel,
)
from desktop_app.ui.review_page.widgets import CommentDialog, DiffBrowser
from desktop_app.ui.tasks import describe_error

__all__ = ["EMPTY_QUEUE", "ReviewPage"]

EMPTY_QUEUE: Final = (
    "<b>Nothing waits for review.</b><br><br>"
    "Drafts appear here when someone submits them (<i>Submit for review</i> in the editor, or "
    "<code>procedura workflows submit</code>), and repairs appear when a replay heals steps "
    "that drifted.<br><br>"
    "You can still compare any two versions of any workflow below."
)

#: How the version list names the proposers that are not people.
_WHO = {REPLAY_ACTOR: "replay repair", ONLINE_ACTOR: "online induction"}


@dataclass(slots=True)
class _Shown:
    """What the right side shows."""

    workflow_id: str | None = None
    versions: list[WorkflowVersion] = field(default_factory=list)
    repair_runs: list[Run] = field(default_factory=list)
    records: dict[int, VersionRecord] = field(default_factory=dict)
    verifications: dict[int, Run] = field(default_factory=dict)
    compared: int | None = None
    base: int | None = None

    def version(self, number: int | None) -> WorkflowVersion | None:
        return next((v for v in self.versions if v.version == number), None)


class ReviewPage(QWidget):
    """The Review screen.

    Signals:
        version_reviewed(str, int, str): a status change was recorded here (workflow id,
            version, the new status).
    """

    version_reviewed = Signal(str, int, str)

    def __init__(self, host: Host) -> None:
        super().__init__()
        self.setObjectName("review-page")
        self._host = host
        self._shown = _Shown()
        self._load_token = 0
        self._reload_token = 0
        self._render_token = 0
        self._busy = False
        self._rendered: tuple[str, int] | None = None

        # Left: the queue and the comparison picker.
        self.queue_model = ReviewQueueModel(self)
        self.queue = QListView()
        self.queue.setObjectName("review-queue")
        self.queue.setModel(self.queue_model)
        self.queue.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.queue.setWordWrap(True)
        self.queue.setToolTip(
            "Versions waiting for review, newest first. Orange: a repair a replay proposed; "
            "blue: a draft someone submitted."
        )
        self.queue.selectionModel().currentChanged.connect(self._on_queue_current_changed)
        self.queue_model.more_wanted.connect(self._on_queue_model_more_wanted)
        self.queue_empty = QLabel(EMPTY_QUEUE)
        self.queue_empty.setObjectName("review-queue-empty")
        self.queue_empty.setWordWrap(True)
        self.queue_empty.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.queue_empty.setMargin(8)
        self._queue_stack = QStackedWidget()
        self._queue_stack.addWidget(self.queue)
        self._queue_stack.addWidget(self.queue_empty)

        self.workflow_combo = QComboBox()
        self.workflow_combo.setObjectName("review-workflow")
        self.workflow_combo.setAccessibleName("Workflow to review")
        self.workflows_model = WorkflowsModel(self)
        self.workflow_combo.setModel(self.workflows_model)
        self.workflow_combo.setToolTip("Any workflow, to compare two of its versions")
        self.base_combo = QComboBox()
        self.base_combo.setObjectName("review-base")
        self.base_combo.setAccessibleName("Compare against version")
        self.base_combo.setToolTip("The version to compare against (the older one, usually)")
        self.compared_combo = QComboBox()
        self.compared_combo.setObjectName("review-compared")
        self.compared_combo.setAccessibleName("Version under review")
        self.compared_combo.setToolTip("The version to review: what it changes is shown")
        self.workflow_combo.activated.connect(self._on_workflow_combo_activated)
        self.base_combo.activated.connect(self._on_base_combo_activated)
        self.compared_combo.activated.connect(self._on_compared_combo_activated)
        compare = QGroupBox("Compare versions")
        form = QFormLayout(compare)
        form.addRow("&Workflow:", self.workflow_combo)
        form.addRow("&Base:", self.base_combo)
        form.addRow("Com&pared:", self.compared_combo)

        queue_title = QLabel("<b>Waiting for review</b>")
        queue_title.setBuddy(self.queue)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(queue_title)
        left_layout.addWidget(self._queue_stack, 1)
        left_layout.addWidget(compare)
        left.setMinimumWidth(260)

        # Right: header, buttons, the diff and the history.
        self.title = QLabel()
        self.title.setObjectName("review-title")
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)
        self.subtitle = QLabel()
        self.subtitle.setObjectName("review-subtitle")
        self.subtitle.setAccessibleName("What is compared")
        self.subtitle.setWordWrap(True)
        self.subtitle.setTextFormat(Qt.TextFormat.PlainText)
        self.subtitle.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.approve_button = QPushButton("&Approve…")
        self.approve_button.setObjectName("review-approve")
        self.approve_button.setToolTip(
            "Approve this version: it becomes the one that runs from the tray (Alt+A)"
        )
        self.request_button = QPushButton("Request &changes…")
        self.request_button.setObjectName("review-request-changes")
        self.request_button.setToolTip(
            "Send it back to draft with a comment saying what should change (Alt+C)"
        )
        self.submit_button = QPushButton("&Submit for review")
        self.submit_button.setObjectName("review-submit")
        self.submit_button.setToolTip("Put this draft in the review queue (Alt+S)")
        self.editor_button = QPushButton("Open in &editor")
        self.editor_button.setObjectName("review-open-editor")
        self.editor_button.setToolTip("Edit this workflow in the step editor (Alt+E)")
        self.verify_button = QPushButton("&Verify…")
        self.verify_button.setObjectName("review-verify")
        self.verify_button.setToolTip(
            "Replay this version with its recorded values, stopping before its first "
            "irreversible step; the result shows here (Alt+V)"
        )
        self.verify_button.clicked.connect(self._on_verify_button_clicked)
        self.approve_button.clicked.connect(self._on_approve_button_clicked)
        self.request_button.clicked.connect(self._on_request_button_clicked)
        self.submit_button.clicked.connect(self._on_submit_button_clicked)
        self.editor_button.clicked.connect(self._on_editor_button_clicked)
        buttons = QHBoxLayout()
        for button in (self.approve_button, self.request_button, self.submit_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.verify_button)
        buttons.addWidget(self.editor_button)

        self.problem = QLabel()
        self.problem.setObjectName("review-error")
        self.problem.setWordWrap(True)
        theme.set_role(self.problem, "banner", "error")
        self.problem.hide()

        self.diff_view = DiffBrowser()
        self.diff_view.setObjectName("review-diff")
        self.diff_view.setAccessibleName("Changes")
        self.diff_view.setOpenLinks(False)
        self.diff_view.document().setDefaultStyleSheet(css())

        self.history_model = HistoryModel(self)
        self.history = QTableView()
        self.history.setObjectName("review-history")
        self.history.setModel(self.history_model)
        self.history.verticalHeader().hide()
        self.history.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.history.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.history.setWordWrap(False)
        header = self.history.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        history_box = QWidget()
        history_layout = QVBoxLayout(history_box)
        history_layout.setContentsMargins(0, 0, 0, 0)
        history_label = QLabel("<b>History</b> of this version")
        history_label.setBuddy(self.history)
        history_layout.addWidget(history_label)
        history_layout.addWidget(self.history)

        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(self.diff_view)
        body.addWidget(history_box)
        body.setStretchFactor(0, 4)
        body.setStretchFactor(1, 1)
        body.setChildrenCollapsible(False)

        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.title)
        right_layout.addWidget(self.subtitle)
        right_layout.addLayout(buttons)
        right_layout.addWidget(self.problem)
        right_layout.addWidget(body, 1)

        splitter = QSplitter()
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([320, 880])
        splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)

        refresh = QShortcut(QKeySequence.StandardKey.Refresh, self)
        refresh.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        refresh.activated.connect(self._on_refresh_activated)

        host.events.workflows_changed.connect(self._on_events_changed)
        host.events.runs_changed.connect(self._on_events_changed)
        self._show_nothing()

    # ── public ──────────────────────────────────────────────────────────────────────────────

    @property
    def shown(self) -> tuple[str | None, int | None, int | None]:
        """The workflow id, compared version and base version on the right (None: none)."""
        return self._shown.workflow_id, self._shown.compared, self._shown.base

    async def reload(self) -> None:
        """Load the queue (its first page) and show it, refresh what the right side shows,
        then fill the workflow picker (every workflow: the slowest read, so the last)."""
        self._reload_token += 1
        token = self._reload_token
        workflows = self._host.backend.workflows
        queue = await self._host.tasks.call(load_queue, workflows)
        if token != self._reload_token:
            return
        self._fill_queue(queue.entries, queue.total)
        shown = self._shown
        if shown.workflow_id is not None and await self._host.tasks.call(
            is_listed, workflows, shown.workflow_id
        ):
            await self._load(shown.workflow_id, shown.compared, shown.base, keep_base=True)
        elif queue.entries:
            first = self.queue_model.entries[0]
            self._select_queue_row(first.workflow_id, first.number)
            await self._load(first.workflow_id, first.number, None)
        else:
            self._shown = _Shown()
            self._show_nothing()
        summaries = await self._host.tasks.call(load_workflows, workflows)
        if token == self._reload_token:
            self._fill_workflows(summaries)

    def show_version(self, workflow_id: str, version: int | None) -> None:
        """Show a version (None: the newest one in review, else the latest) and its diff."""
        self._select_queue_row(workflow_id, version)
        self._host.tasks.start(self._load(workflow_id, version, None), label="Loading the version…")

    # ── loading and showing ─────────────────────────────────────────────────────────────────

    async def _load(
        self,
        workflow_id: str,
        compared: int | None,
        base: int | None,
        *,
        keep_base: bool = False,
    ) -> None:
        self._load_token += 1
        token = self._load_token
        backend = self._host.backend
        loaded = await self._host.tasks.call(
            load_workflow, backend.workflows, backend.runs, workflow_id
        )
        if token != self._load_token:
            return
        if not loaded.versions:
            self._shown = _Shown()
            self._show_nothing("That workflow no longer exists.")
            return
        shown = _Shown(
            workflow_id=workflow_id,
            versions=loaded.versions,
            repair_runs=loaded.repair_runs,
            records=loaded.records,
            verifications=loaded.verifications,
        )
        chosen = shown.version(compared)
        if chosen is None:
            in_review = [v for v in loaded.versions if v.status is WorkflowStatus.IN_REVIEW]
            chosen = (in_review or loaded.versions)[-1]
        shown.compared = chosen.version
        if keep_base or base is not None:
            shown.base = base if shown.version(base) is not None else None
        else:
            shown.base = base_for(chosen, loaded.versions)
        self._shown = shown
        self._fill_version_combos()
        await self._render()

    async def _render(self) -> None:
        self._render_token += 1
        token = self._render_token
        shown = self._shown
        compared = shown.version(shown.compared)
        if compared is None:
            self._show_nothing()
            return
        base = shown.version(shown.base)
        runs = [r for r in shown.repair_runs if r.proposed_version == compared.version]
        refs = [s.screenshot for r in runs for s in r.healed if s.screenshot is not None]
        diff, images = await self._host.tasks.call(
            compute, base, compared, self._host.backend.media, refs
        )
        if token != self._render_token:
            return
        self._show_header(compared, base)
        self.diff_view.images = {
            ref: image
            for ref, data in images.items()
            if not (image := QImage.fromData(data)).isNull()
        }
        records = [
            shown.records[v.version]
            for v in (compared, base)
            if v is not None and v.version in shown.records
        ]
        stale = None
        if compared.status is WorkflowStatus.APPROVED and records:
            stale = stale_reason(
                records[0],
                since=approved_at(compared),
                now=utcnow(),
                stale_after_days=self._host.backend.settings.stale_after_days,
            )
        checked = shown.verifications.get(compared.version)
        self.diff_view.setHtml(
            page(
                version_html(
                    compared,
                    base,
                    diff,
                    runs,
                    list(images),
                    records,
                    stale=stale,
                    verification=checked,
                )
            )
        )
        self.history_model.set_rows(compared.transitions)
        self._update_buttons()

    def _show_header(self, compared: WorkflowVersion, base: WorkflowVersion | None) -> None:
        colour = status_colour(compared.status)
        amber = theme.colours().warning
        repair = {
            REPLAY_ACTOR: f" &nbsp;<span style='color: {amber};'>⚕ repair</span>",
            ONLINE_ACTOR: f" &nbsp;<span style='color: {amber};'>⟳ learned from runs</span>",
        }.get(compared.created_by, "")
        self.title.setText(
            f"<span style='font-size: x-large; font-weight: 600;'>"
            f"{escape(compared.workflow.name)} — version {compared.version}</span> &nbsp;"
            f"<span style='color: {colour}; font-weight: 600;'>"
            f"{escape(status_words(compared.status))}</span>{repair}"
        )
        if base is not None:
            against = f"compared with version {base.version}"
        else:
            against = "first version" if compared.version == 1 else "compared with nothing"
        self.subtitle.setText(
            f"Saved by {compared.created_by} on {when(compared.created_at)} · {against}"
        )
        key = (compared.workflow_id, compared.version)
        if key != self._rendered:  # a problem with the decision stays while its version shows
            self.problem.hide()
        self._rendered = key

    def _show_nothing(self, message: str | None = None) -> None:
        self.title.setText("<span style='font-size: x-large; font-weight: 600;'>Review</span>")
        self.subtitle.setText("")
        text = message or (
            "Pick a version on the left to see what it changes. Approve it to make it the one "
            "that runs, or request changes with a comment."
        )
        self.diff_view.setHtml(page(f"<p class='muted'>{escape(text)}</p>"))
        self.problem.hide()
        self._rendered = None
        self.history_model.set_rows(())
        self._update_buttons()

    def _fill_queue(self, entries: Sequence[QueueEntry], total: int) -> None:
        self.queue.selectionModel().blockSignals(True)
        try:
            self.queue_model.set_entries(entries, total)
            if self._shown.workflow_id is not None and self._shown.compared is not None:
                self._select_queue_row(self._shown.workflow_id, self._shown.compared)
        finally:
            self.queue.selectionModel().blockSignals(False)
        self._queue_stack.setCurrentWidget(self.queue if entries else self.queue_empty)

    def _on_queue_model_more_wanted(self, held: int) -> None:
        async def more() -> None:
            token = self._reload_token
            page = await self._host.tasks.call(load_queue, self._host.backend.workflows, held)
            if token == self._reload_token:  # not a page of a queue reloaded since
                self.queue_model.add_entries(page.entries)

        self._host.tasks.start(more(), label="Loading the review queue…")

    def _select_queue_row(self, workflow_id: str, number: int | None) -> None:
        row = (
            self.queue_model.row_of(workflow_id, number)
            if number is not None
            else next(
                (r for r, e in enumerate(self.queue_model.entries) if e.workflow_id == workflow_id),
                None,
            )
        )
        selection = self.queue.selectionModel()
        blocked = selection.blockSignals(True)
        try:
            if row is None:
                selection.clearSelection()
                selection.setCurrentIndex(QModelIndex(), QItemSelectionModel.SelectionFlag.Clear)
            else:
                selection.setCurrentIndex(
                    self.queue_model.index(row),
                    QItemSelectionModel.SelectionFlag.ClearAndSelect,
                )
        finally:
            selection.blockSignals(blocked)

    def _fill_workflows(self, summaries: Sequence[WorkflowSummary]) -> None:
        combo = self.workflow_combo
        blocked = combo.blockSignals(True)
        try:
            self.workflows_model.set_summaries(summaries, "No workflows yet — record one (Ctrl+R)")
            combo.setEnabled(bool(summaries))
            self._sync_workflow_combo()
        finally:
            combo.blockSignals(blocked)

    def _sync_workflow_combo(self) -> None:
        index = self.workflows_model.row_of(self._shown.workflow_id)
        blocked = self.workflow_combo.blockSignals(True)
        self.workflow_combo.setCurrentIndex(index if index is not None else 0)
        self.workflow_combo.blockSignals(blocked)

    def _fill_version_combos(self) -> None:
        self._sync_workflow_combo()
        shown = self._shown
        for combo, current, none_text in (
            (self.base_combo, shown.base, "nothing (show it all as new)"),
            (self.compared_combo, shown.compared, None),
        ):
            blocked = combo.blockSignals(True)
            try:
                combo.clear()
                if none_text is not None:
                    combo.addItem(none_text, None)
                for v in reversed(shown.versions):
                    who = _WHO.get(v.created_by, v.created_by)
                    combo.addItem(f"v{v.version} · {status_words(v.status)} · {who}", v.version)
                    if v.change_note:
                        combo.setItemData(
                            combo.count() - 1, v.change_note, Qt.ItemDataRole.ToolTipRole
                        )
                combo.setCurrentIndex(max(combo.findData(current), 0))
            finally:
                combo.blockSignals(blocked)

    def _update_buttons(self) -> None:
        compared = self._shown.version(self._shown.compared)
        status = compared.status if compared is not None else None
        idle = not self._busy
        self.approve_button.setEnabled(
            idle and status in (WorkflowStatus.IN_REVIEW, WorkflowStatus.DRAFT)
        )
        self.request_button.setEnabled(idle and status is WorkflowStatus.IN_REVIEW)
        self.submit_button.setEnabled(idle and status is WorkflowStatus.DRAFT)
        self.editor_button.setEnabled(compared is not None)
        self.verify_button.setEnabled(
            compared is not None and status is not WorkflowStatus.ARCHIVED
        )
        self.submit_button.setVisible(status is not WorkflowStatus.IN_REVIEW)
        self.request_button.setVisible(status is not WorkflowStatus.DRAFT)

    # ── the decision ────────────────────────────────────────────────────────────────────────

    def _ask(self, *, title: str, prompt: str, confirm: str, required: bool, action: str) -> None:
        dialog = CommentDialog(self, title=title, prompt=prompt, confirm=confirm, required=required)
        dialog.comment_given.connect(lambda comment: self._decide(action, comment))
        dialog.open()

    def _decide(self, action: str, comment: str) -> None:
        workflow_id, number = self._shown.workflow_id, self._shown.compared
        if workflow_id is None or number is None:
            return
        library = self._host.backend.workflows
        actor = self._host.backend.settings.actor
        decision = Decision(action)

        def record() -> Reviewed:
            return decide(
                library,
                workflow_id,
                decision,
                actor=actor,
                origin=Origin.WINDOW,
                version=number,
                comment=comment,
            )

        labels = {
            Decision.APPROVE: "Approving…",
            Decision.REQUEST_CHANGES: "Sending it back…",
            Decision.SUBMIT: "Submitting…",
        }
        self._busy = True
        self._update_buttons()
        self.problem.hide()
        self._host.tasks.run(
            record,
            label=labels[decision],
            on_done=self._on_decision_done,
            on_error=self._on_decision_failed,
        )

    def _on_decision_done(self, done: Reviewed) -> None:
        self._busy = False
        self._update_buttons()
        updated = done.version
        self._host.show_status(done.summary)
        self.version_reviewed.emit(updated.workflow_id, updated.version, updated.status.value)
        self._host.events.announce(done.changes)

    def _on_decision_failed(self, exc: BaseException) -> bool:
        self._busy = False
        self._update_buttons()
        if not isinstance(exc, ProceduraError):
            return False
        self.problem.setText(describe_error(exc))
        self.problem.show()
        # Someone else may have decided first: show the version as it is now.
        self._host.events.announce(
            Changes.of(Origin.WINDOW, workflows=[self._shown.workflow_id or MANY])
        )
        return True

    # ── slots ───────────────────────────────────────────────────────────────────────────────

    def _on_approve_button_clicked(self) -> None:
        compared = self._shown.version(self._shown.compared)
        if compared is None:
            return
        extra = (
            " It has not been submitted for review yet."
            if compared.status is WorkflowStatus.DRAFT
            else ""
        )
        self._ask(
            title="Approve",
            prompt=(
                f"Approve version {compared.version} of {compared.workflow.name!r}? It becomes "
                f"the version that runs from the tray.{extra}"
            ),
            confirm="Approve",
            required=False,
            action="approve",
        )

    def _on_request_button_clicked(self) -> None:
        compared = self._shown.version(self._shown.compared)
        if compared is None:
            return
        self._ask(
            title="Request changes",
            prompt=(
                f"Send version {compared.version} of {compared.workflow.name!r} back to draft. "
                "Say what should change:"
            ),
            confirm="Request changes",
            required=True,
            action="request_changes",
        )

    def _on_submit_button_clicked(self) -> None:
        self._decide("submit", "")

    def _on_verify_button_clicked(self) -> None:
        if self._shown.workflow_id is not None and self._shown.compared is not None:
            self._host.open_run(self._shown.workflow_id, self._shown.compared, verify=True)

    def _on_editor_button_clicked(self) -> None:
        if self._shown.workflow_id is not None:
            self._host.open_editor(self._shown.workflow_id, self._shown.compared)

    def _on_queue_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        entry = current.data(ReviewQueueModel.EntryRole) if current.isValid() else None
        if isinstance(entry, QueueEntry):
            self._host.tasks.start(
                self._load(entry.workflow_id, entry.number, None), label="Loading the version…"
            )

    def _on_workflow_combo_activated(self, index: int) -> None:
        workflow_id = self.workflow_combo.itemData(index)
        if isinstance(workflow_id, str):
            self._select_queue_row(workflow_id, None)
            self._host.tasks.start(
                self._load(workflow_id, None, None), label="Loading the workflow…"
            )

    def _on_base_combo_activated(self, index: int) -> None:
        number = self.base_combo.itemData(index)
        self._shown.base = number if isinstance(number, int) else None
        self._host.tasks.start(self._render(), label="Comparing…")

    def _on_compared_combo_activated(self, index: int) -> None:
        number = self.compared_combo.itemData(index)
        if isinstance(number, int) and self._shown.workflow_id is not None:
            self._select_queue_row(self._shown.workflow_id, number)
            self._host.tasks.start(
                self._load(self._shown.workflow_id, number, None), label="Comparing…"
            )

    def _on_refresh_activated(self) -> None:
        self._host.tasks.start(self.reload(), label="Loading the review queue…")

    def _on_events_changed(self, _what: str = "") -> None:
        self._host.tasks.start(self.reload(), label="Loading the review queue…")
