"""The Review screen: what waits for review, what each version changes, and the decision.

Left, the review queue (every version in review, newest first; repairs a replay proposed are
marked) and a picker to compare any two versions of any workflow. Right, the version's header and
the review buttons, a readable diff against the version it came from, its change note, for a
repair what healed and why (which rung found each step's element, with which locator, on what
evidence), and the version's review history.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

from PySide6.QtCore import (
    QAbstractListModel,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    QUrl,
    Signal,
)
from PySide6.QtGui import QColor, QIcon, QImage, QKeySequence, QPainter, QPixmap, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListView,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.diff import (
    FieldChange,
    LocatorChange,
    StepChange,
    WorkflowDiff,
    base_for,
    diff_workflows,
    step_heading,
)
from desktop_app.core.errors import ProceduraError
from desktop_app.core.library import WorkflowLibrary
from desktop_app.core.models.run import Resolution, Run
from desktop_app.core.models.workflow import StatusTransition, WorkflowStatus, WorkflowVersion
from desktop_app.core.outcomes import outcome_words
from desktop_app.core.ports import MediaStore, RunStore
from desktop_app.core.replay.learning import REPLAY_ACTOR
from desktop_app.core.views import WorkflowSummary
from desktop_app.ops.changes import MANY, Changes, Origin
from desktop_app.ops.review import Decision, Reviewed, decide
from desktop_app.ui.host import Host
from desktop_app.ui.table_model import RowsModel
from desktop_app.ui.tasks import describe_error

__all__ = [
    "REPLAY_ACTOR",
    "CommentDialog",
    "HistoryModel",
    "QueueEntry",
    "ReviewPage",
    "ReviewQueueModel",
    "diff_html",
    "healed_html",
]

#: Who saves the versions a replay proposes (``desktop_app.app.replay``).

#: The rungs of the healing ladder, as a reviewer reads them.
RUNGS: Final = {
    Resolution.ALTERNATE: "an alternate recorded locator (rung 1)",
    Resolution.FINGERPRINT: "fingerprint match (rung 2)",
    Resolution.EXPERIENCE: "experience memory (rung 3)",
    Resolution.LLM: "the LLM (rung 4)",
    Resolution.PERSON: "a person (rung 5)",
}

EMPTY_QUEUE: Final = (
    "<b>Nothing waits for review.</b><br><br>"
    "Drafts appear here when someone submits them (<i>Submit for review</i> in the editor, or "
    "<code>procedura workflows submit</code>), and repairs appear when a replay heals steps "
    "that drifted.<br><br>"
    "You can still compare any two versions of any workflow below."
)

# Colours for the diff: dark text on light tints, readable on light and dark themes alike.
_ADDED: Final = ("#e3f4e6", "#14532d")
_REMOVED: Final = ("#fde7e7", "#7f1d1d")
_CHANGED: Final = ("#fff3d6", "#5c3b00")
_MOVED: Final = ("#e6ecfb", "#1e3a8a")
_PLAIN: Final = ("#f3f4f6", "#1f2937")
_STATUS_COLOURS: Final = {
    WorkflowStatus.DRAFT: "#6b7280",
    WorkflowStatus.IN_REVIEW: "#b45309",
    WorkflowStatus.APPROVED: "#15803d",
    WorkflowStatus.ARCHIVED: "#6b7280",
}


def _when(moment: datetime) -> str:
    return f"{moment.astimezone():%Y-%m-%d %H:%M}"


def _status_words(status: WorkflowStatus) -> str:
    return status.value.replace("_", " ")


# ── the queue ───────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class QueueEntry:
    """A version waiting for review."""

    name: str
    version: WorkflowVersion

    @property
    def workflow_id(self) -> str:
        """The workflow's id."""
        return self.version.workflow_id

    @property
    def number(self) -> int:
        """The version number."""
        return self.version.version

    @property
    def is_repair(self) -> bool:
        """Whether a replay proposed it (what healed, for someone to confirm)."""
        return self.version.created_by == REPLAY_ACTOR

    @property
    def submission(self) -> StatusTransition | None:
        """The transition that put it in review."""
        return next(
            (
                t
                for t in reversed(self.version.transitions)
                if t.to_status is WorkflowStatus.IN_REVIEW
            ),
            None,
        )

    @property
    def submitted_at(self) -> datetime:
        """When it went into review."""
        submission = self.submission
        return submission.at if submission is not None else self.version.created_at


def _dot(colour: str) -> QIcon:
    pixmap = QPixmap(14, 14)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(QColor(colour))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.drawEllipse(2, 2, 10, 10)
    painter.end()
    return QIcon(pixmap)


class ReviewQueueModel(QAbstractListModel):
    """The versions in review, newest first, as a list: a thin adapter over :class:`QueueEntry`."""

    EntryRole: Final = Qt.ItemDataRole.UserRole + 1

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._entries: list[QueueEntry] = []
        self._icons: dict[bool, QIcon] = {}

    @property
    def entries(self) -> list[QueueEntry]:
        """The entries shown, in order."""
        return list(self._entries)

    def set_entries(self, entries: Sequence[QueueEntry]) -> None:
        """Show *entries* (newest first)."""
        self.beginResetModel()
        self._entries = sorted(entries, key=lambda e: e.submitted_at, reverse=True)
        self.endResetModel()

    def row_of(self, workflow_id: str, number: int) -> int | None:
        """The row showing that version, if it is in the queue."""
        return next(
            (
                row
                for row, e in enumerate(self._entries)
                if e.workflow_id == workflow_id and e.number == number
            ),
            None,
        )

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        """How many versions wait."""
        return 0 if parent.isValid() else len(self._entries)

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        """Two lines per version: name and number, then who proposed it and when."""
        if not index.isValid() or not 0 <= index.row() < len(self._entries):
            return None
        entry = self._entries[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            submission = entry.submission
            who = submission.actor if submission is not None else entry.version.created_by
            if entry.is_repair:
                second = f"Repair proposed by a replay · {_when(entry.submitted_at)}"
            else:
                second = f"Submitted by {who} · {_when(entry.submitted_at)}"
            return f"{entry.name} — version {entry.number}\n{second}"
        if role == Qt.ItemDataRole.ToolTipRole:
            note = entry.version.change_note or "(no change note)"
            return f"{entry.name}, version {entry.number}\n\n{note}"
        if role == Qt.ItemDataRole.DecorationRole:
            if entry.is_repair not in self._icons:
                self._icons[entry.is_repair] = _dot("#d97706" if entry.is_repair else "#2563eb")
            return self._icons[entry.is_repair]
        if role == Qt.ItemDataRole.AccessibleTextRole:
            kind = "repair" if entry.is_repair else "submitted draft"
            return f"{entry.name} version {entry.number}, {kind}"
        if role == self.EntryRole:
            return entry
        return None


class HistoryModel(RowsModel[StatusTransition]):
    """A version's review history: when, who, what changed, and the comment."""

    HEADERS = ("When", "Who", "Change", "Comment")

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        """One transition per row."""
        t = self.row_at(index)
        if t is None:
            return None
        if role == Qt.ItemDataRole.DisplayRole and index.column() == 3:
            line = " ".join(t.comment.split())
            return line if len(line) <= 140 else line[:139] + "…"
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            frm = _status_words(t.from_status) if t.from_status is not None else "created"
            return (
                _when(t.at),
                t.actor,
                f"{frm} → {_status_words(t.to_status)}",
                t.comment,
            )[index.column()]
        if role == Qt.ItemDataRole.ForegroundRole and index.column() == 2:
            return QColor(_STATUS_COLOURS[t.to_status])
        return None


# ── loading (on the store thread) ───────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class _Queue:
    entries: list[QueueEntry]
    summaries: list[WorkflowSummary]


def _load_queue(library: WorkflowLibrary) -> _Queue:
    summaries = library.list()
    entries = [
        QueueEntry(name=v.workflow.name, version=v)
        for s in summaries
        for v in library.versions_by_id(s.id)
        if v.status is WorkflowStatus.IN_REVIEW
    ]
    return _Queue(entries=entries, summaries=sorted(summaries, key=lambda s: s.name.lower()))


@dataclass(frozen=True, slots=True)
class _Workflow:
    versions: list[WorkflowVersion]
    repair_runs: list[Run]


def _load_workflow(library: WorkflowLibrary, runs: RunStore, workflow_id: str) -> _Workflow:
    versions = library.versions_by_id(workflow_id)
    proposing = [r for r in runs.runs(workflow_id, limit=500) if r.proposed_version is not None]
    return _Workflow(versions=versions, repair_runs=proposing)


def _load_images(media: MediaStore, refs: Sequence[str]) -> dict[str, bytes]:
    images: dict[str, bytes] = {}
    for ref in refs:
        try:
            images[ref] = media.get(ref)
        except ProceduraError:  # a screenshot that is gone: the table says so
            continue
    return images


@dataclass(slots=True)
class _Shown:
    """What the right side shows."""

    workflow_id: str | None = None
    versions: list[WorkflowVersion] = field(default_factory=list)
    repair_runs: list[Run] = field(default_factory=list)
    compared: int | None = None
    base: int | None = None

    def version(self, number: int | None) -> WorkflowVersion | None:
        return next((v for v in self.versions if v.version == number), None)


# ── HTML ────────────────────────────────────────────────────────────────────────────────────

_CSS: Final = """
h2 { margin-top: 14px; margin-bottom: 4px; font-size: large; }
.muted { color: #6b7280; }
.code { font-family: monospace; }
td { vertical-align: top; }
"""


def _e(text: str | None) -> str:
    return html.escape(text or "")


def _tint(colours: tuple[str, str], text: str, *, strike: bool = False) -> str:
    background, foreground = colours
    deco = " text-decoration: line-through;" if strike else ""
    return (
        f'<span style="background-color: {background}; color: {foreground};{deco}">'
        f"&nbsp;{text}&nbsp;</span>"
    )


def _before_after(before: str | None, after: str | None) -> str:
    if before is None:
        return _tint(_ADDED, _e(after))
    if after is None:
        return _tint(_REMOVED, _e(before), strike=len(before) <= _LONG)
    if len(before) + len(after) > _LONG:  # long text: one above the other, easier to compare
        return f"{_tint(_REMOVED, _e(before))}<br>→ {_tint(_ADDED, _e(after))}"
    return f"{_tint(_REMOVED, _e(before), strike=True)} → {_tint(_ADDED, _e(after))}"


#: Values longer than this are shown before-above-after, without strike-through.
_LONG: Final = 90


def _field_row(change: FieldChange) -> str:
    return (
        f'<tr><td class="muted" width="130">{_e(change.label)}</td>'
        f'<td class="code">{_before_after(change.before, change.after)}</td></tr>'
    )


def _locator_row(change: LocatorChange) -> str:
    if change.change == "added":
        label = f"locator #{change.new_rank}"
        text = _tint(_ADDED, "+ " + _e(change.after))
    elif change.change == "removed":
        label = f"locator #{change.old_rank}"
        text = _tint(_REMOVED, "− " + _e(change.before), strike=True)
    elif change.change == "changed":
        label = (
            f"locator #{change.new_rank}"
            if change.old_rank == change.new_rank
            else f"locator #{change.old_rank} → #{change.new_rank}"
        )
        text = _before_after(change.before, change.after)
    else:
        label = f"locator #{change.old_rank} → #{change.new_rank}"
        text = _tint(_MOVED, "↕ " + _e(change.after)) + " <span class='muted'>re-ranked</span>"
    return f'<tr><td class="muted" width="130">{label}</td><td class="code">{text}</td></tr>'


def _step_block(step: StepChange) -> str:
    if step.status == "added":
        colours, mark, what = _ADDED, "+", "added"
    elif step.status == "removed":
        colours, mark, what = _REMOVED, "−", "removed"
    elif step.status == "changed":
        colours, mark, what = _CHANGED, "~", "changed"
    elif step.moved:
        colours, mark, what = _MOVED, "↕", "moved"
    else:
        colours, mark, what = _PLAIN, " ", "unchanged"
    if step.moved and step.status == "changed":
        what = "changed and moved"
    background, foreground = colours
    title = _e(step_heading(step))
    if step.old_title is not None:
        title += f' <span class="muted">(was “{_e(step.old_title)}”)</span>'
    rows = [f'<tr><td colspan="2" class="code muted">{_e(step.summary)}</td></tr>']
    if step.moved:
        assert step.old_index is not None and step.new_index is not None
        rows.append(
            '<tr><td class="muted" width="130">position</td><td>'
            + _tint(_MOVED, f"moved from {step.old_index + 1} to {step.new_index + 1}")
            + "</td></tr>"
        )
    if step.old_step_id is not None:
        rows.append(
            '<tr><td class="muted" width="130">matched</td><td>by likeness to step '
            f"<span class='code'>{_e(step.old_step_id)}</span> (its id changed)</td></tr>"
        )
    rows += [_field_row(c) for c in step.fields if c.field != "title"]
    if step.old_title is not None:
        rows.insert(
            1,
            _field_row(
                FieldChange(field="title", label="title", before=step.old_title, after=step.title)
            ),
        )
    rows += [_locator_row(c) for c in step.locators]
    if step.fingerprint:
        rows.append(
            '<tr><td class="muted" width="130">fingerprint</td>'
            f"<td>{_e(step.fingerprint)}</td></tr>"
        )
    return (
        '<table width="100%" cellspacing="0" cellpadding="4" style="margin-top: 6px;">'
        f'<tr><td width="22" align="center" style="background-color: {foreground}; '
        f'color: white;"><b>{mark}</b></td>'
        f'<td style="background-color: {background}; color: {foreground};">'
        f'<b>{title}</b> &nbsp;<span style="color: {foreground};">{what}</span>'
        f'<table cellspacing="0" cellpadding="2" style="margin-top: 2px;">{"".join(rows)}'
        "</table></td></tr></table>"
    )


def diff_html(diff: WorkflowDiff, *, unchanged: bool = False) -> str:
    """*diff* as the HTML the review screen shows (added green, removed red, changes amber)."""
    parts: list[str] = []
    if diff.old_version is None:
        parts.append(
            "<p>Compared with nothing (a first version, or no base chosen): the whole version "
            "is shown as new.</p>"
        )
    elif diff.is_empty:
        parts.append(
            f"<p>Version {diff.new_version} has the same content as version {diff.old_version}.</p>"
        )
    fields = [c for c in diff.fields if c.field != "success"]
    success = [c for c in diff.fields if c.field == "success"]
    if fields:
        parts.append("<h2>Workflow</h2><table cellspacing='0' cellpadding='2'>")
        parts += [_field_row(c) for c in fields]
        parts.append("</table>")
    if success:
        parts.append(
            "<h2>Done when</h2><p class='muted'>The success check: what shows the task was "
            "done, checked after the last step. A run succeeds only when it holds.</p>"
            "<table cellspacing='0' cellpadding='2'>"
        )
        parts += [_field_row(c) for c in success]
        parts.append("</table>")
    if diff.parameters:
        parts.append("<h2>Parameters</h2><table cellspacing='0' cellpadding='3'>")
        for p in diff.parameters:
            if p.change == "added":
                head = _tint(_ADDED, "+ " + _e(p.summary))
            elif p.change == "removed":
                head = _tint(_REMOVED, "− " + _e(p.summary), strike=True)
            elif p.change == "renamed":
                head = (
                    f"{_tint(_REMOVED, _e('{' + (p.old_name or '') + '}'), strike=True)} → "
                    f"{_tint(_ADDED, _e('{' + p.name + '}'))} renamed"
                )
            else:
                head = _tint(_CHANGED, "~ " + _e(p.name))
            parts.append(f"<tr><td colspan='2' class='code'>{head}</td></tr>")
            parts += [_field_row(c) for c in p.fields]
        parts.append("</table>")
    steps = diff.steps if unchanged else diff.changed_steps
    if steps:
        parts.append("<h2>Steps</h2>")
        parts += [_step_block(s) for s in steps]
        hidden = len(diff.steps) - len(steps)
        if hidden:
            parts.append(
                f"<p class='muted'>{hidden} other step{'s' if hidden != 1 else ''} unchanged.</p>"
            )
    return "".join(parts)


def _image_url(ref: str) -> str:
    return f"media:{ref}"


def healed_html(version: WorkflowVersion, runs: Sequence[Run], images: Sequence[str] = ()) -> str:
    """What healed in the run(s) that proposed *version*, and why.

    Args:
        version: a version a replay proposed.
        runs: the runs whose ``proposed_version`` is this version.
        images: media refs of screenshots available as ``media:<ref>`` document resources.
    """
    parts = ["<h2>What healed and why</h2>"]
    if not runs:
        parts.append(
            "<p>The run that proposed this version is no longer in the run history; its "
            "change note above says what healed.</p>"
        )
        return "".join(parts)
    by_id = {s.id: s for s in version.workflow.steps}
    available = set(images)
    for run in runs:
        healed = run.healed
        llm = f", {run.llm_calls} LLM call(s), {run.tokens} tokens" if run.llm_calls else ""
        parts.append(
            f"<p>Run <span class='code'>{_e(run.id[:8])}</span> of version "
            f"{run.workflow_version} on {_when(run.started_at)} "
            f"({_e(outcome_words(run.status))}{llm}) "
            f"healed {len(healed)} step{'s' if len(healed) != 1 else ''}:</p>"
        )
        if not healed:
            continue
        parts.append(
            "<table width='100%' cellspacing='0' cellpadding='4' border='1' "
            "style='border-color: #d1d5db; border-style: solid;'>"
            "<tr><th align='left'>Step</th><th align='left'>Healed by</th>"
            "<th align='left'>Locator used</th><th align='left'>Why</th></tr>"
        )
        for s in healed:
            assert s.resolution is not None
            step = by_id.get(s.step_id)
            target = step.target_or_none if step is not None else None
            if s.locator is not None:
                locator = _e(s.locator.describe())
            elif target is not None:
                locator = (
                    f"{_e(target.locators[0].describe())}"
                    "<br><span class='muted'>(first in this version)</span>"
                )
            else:
                locator = "<span class='muted'>—</span>"
            why = _e(s.detail or s.error or "—")
            if s.llm_calls:
                why += f"<br><span class='muted'>{s.llm_calls} LLM call(s)</span>"
            shot = (
                f"<br><img src='{_image_url(s.screenshot)}' width='220'>"
                if s.screenshot is not None and s.screenshot in available
                else ""
            )
            parts.append(
                f"<tr><td>{s.index + 1}. {_e(s.title)}{shot}</td>"
                f"<td>{_tint(_CHANGED, _e(RUNGS[s.resolution]))}</td>"
                f"<td class='code'>{locator}</td><td>{why}</td></tr>"
            )
        parts.append("</table>")
    return "".join(parts)


def _page(body: str) -> str:
    return f"<html><head><style>{_CSS}</style></head><body>{body}</body></html>"


class _DiffBrowser(QTextBrowser):
    """A text browser that shows screenshots from the media store as ``media:<ref>`` images."""

    def __init__(self) -> None:
        super().__init__()
        self.images: dict[str, QImage] = {}

    def loadResource(self, kind: int, name: QUrl | str) -> object:
        """The screenshot *name* names, if it was loaded; else what the browser finds."""
        name = QUrl(name)
        if name.scheme() == "media" and name.path() in self.images:
            return self.images[name.path()]
        return super().loadResource(kind, name)


# ── the comment dialog ──────────────────────────────────────────────────────────────────────


class CommentDialog(QDialog):
    """Asks for a review comment; with *required*, refuses to close on an empty one.

    Signals:
        comment_given(str): the reviewer confirmed, with this comment.
    """

    comment_given = Signal(str)

    def __init__(
        self,
        parent: QWidget,
        *,
        title: str,
        prompt: str,
        confirm: str,
        required: bool,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("review-comment")
        self.setWindowTitle(title)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self._required = required
        label = QLabel(prompt)
        label.setWordWrap(True)
        self.editor = QPlainTextEdit()
        self.editor.setObjectName("review-comment-text")
        self.editor.setPlaceholderText(
            "What should change, and why" if required else "Optional: anything worth recording"
        )
        self.editor.setTabChangesFocus(True)
        label.setBuddy(self.editor)
        self.problem = QLabel("Say what should change: a comment is required.")
        self.problem.setObjectName("review-comment-problem")
        self.problem.setStyleSheet("color: #b91c1c;")
        self.problem.hide()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        ok = buttons.button(QDialogButtonBox.StandardButton.Ok)
        ok.setText(confirm)
        ok.setToolTip(f"{confirm.rstrip('…')} (Ctrl+Enter)")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        for keys in ("Ctrl+Return", "Ctrl+Enter"):
            QShortcut(QKeySequence(keys), self).activated.connect(self.accept)
        layout = QVBoxLayout(self)
        layout.addWidget(label)
        layout.addWidget(self.editor)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)
        self.resize(460, 240)
        self.editor.setFocus()

    @property
    def comment(self) -> str:
        """The comment as typed, trimmed."""
        return self.editor.toPlainText().strip()

    def accept(self) -> None:
        """Close and give the comment, unless one is required and there is none."""
        if self._required and not self.comment:
            self.problem.show()
            self.editor.setFocus()
            return
        self.comment_given.emit(self.comment)
        super().accept()


# ── the screen ──────────────────────────────────────────────────────────────────────────────


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
        self.workflow_combo.setToolTip("Any workflow, to compare two of its versions")
        self.base_combo = QComboBox()
        self.base_combo.setObjectName("review-base")
        self.base_combo.setToolTip("The version to compare against (the older one, usually)")
        self.compared_combo = QComboBox()
        self.compared_combo.setObjectName("review-compared")
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
        self.approve_button.clicked.connect(self._on_approve_button_clicked)
        self.request_button.clicked.connect(self._on_request_button_clicked)
        self.submit_button.clicked.connect(self._on_submit_button_clicked)
        self.editor_button.clicked.connect(self._on_editor_button_clicked)
        buttons = QHBoxLayout()
        for button in (self.approve_button, self.request_button, self.submit_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.editor_button)

        self.problem = QLabel()
        self.problem.setObjectName("review-error")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet(
            "background-color: #fde7e7; color: #7f1d1d; padding: 6px; border-radius: 4px;"
        )
        self.problem.hide()

        self.diff_view = _DiffBrowser()
        self.diff_view.setObjectName("review-diff")
        self.diff_view.setOpenLinks(False)
        self.diff_view.document().setDefaultStyleSheet(_CSS)

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
        """Load the queue and the workflows, then refresh what the right side shows."""
        self._load_token += 1
        token = self._load_token
        queue = await self._host.tasks.call(_load_queue, self._host.backend.workflows)
        if token != self._load_token:
            return
        self._fill_queue(queue.entries)
        self._fill_workflows(queue.summaries)
        shown = self._shown
        if shown.workflow_id is not None and any(
            s.id == shown.workflow_id for s in queue.summaries
        ):
            await self._load(shown.workflow_id, shown.compared, shown.base, keep_base=True)
        elif queue.entries:
            first = self.queue_model.entries[0]
            self._select_queue_row(first.workflow_id, first.number)
            await self._load(first.workflow_id, first.number, None)
        else:
            self._shown = _Shown()
            self._show_nothing()

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
            _load_workflow, backend.workflows, backend.runs, workflow_id
        )
        if token != self._load_token:
            return
        if not loaded.versions:
            self._shown = _Shown()
            self._show_nothing("That workflow no longer exists.")
            return
        shown = _Shown(
            workflow_id=workflow_id, versions=loaded.versions, repair_runs=loaded.repair_runs
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
            _compute, base, compared, self._host.backend.media, refs
        )
        if token != self._render_token:
            return
        self._show_header(compared, base)
        self.diff_view.images = {
            ref: image
            for ref, data in images.items()
            if not (image := QImage.fromData(data)).isNull()
        }
        self.diff_view.setHtml(_page(_version_html(compared, base, diff, runs, list(images))))
        self.history_model.set_rows(compared.transitions)
        self._update_buttons()

    def _show_header(self, compared: WorkflowVersion, base: WorkflowVersion | None) -> None:
        colour = _STATUS_COLOURS[compared.status]
        repair = (
            " &nbsp;<span style='color: #b45309;'>⚕ repair</span>"
            if (compared.created_by == REPLAY_ACTOR)
            else ""
        )
        self.title.setText(
            f"<span style='font-size: x-large; font-weight: 600;'>"
            f"{_e(compared.workflow.name)} — version {compared.version}</span> &nbsp;"
            f"<span style='color: {colour}; font-weight: 600;'>"
            f"{_e(_status_words(compared.status))}</span>{repair}"
        )
        if base is not None:
            against = f"compared with version {base.version}"
        else:
            against = "first version" if compared.version == 1 else "compared with nothing"
        self.subtitle.setText(
            f"Saved by {compared.created_by} on {_when(compared.created_at)} · {against}"
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
        self.diff_view.setHtml(_page(f"<p class='muted'>{_e(text)}</p>"))
        self.problem.hide()
        self._rendered = None
        self.history_model.set_rows(())
        self._update_buttons()

    def _fill_queue(self, entries: Sequence[QueueEntry]) -> None:
        self.queue.selectionModel().blockSignals(True)
        try:
            self.queue_model.set_entries(entries)
            if self._shown.workflow_id is not None and self._shown.compared is not None:
                self._select_queue_row(self._shown.workflow_id, self._shown.compared)
        finally:
            self.queue.selectionModel().blockSignals(False)
        self._queue_stack.setCurrentWidget(self.queue if entries else self.queue_empty)

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
            combo.clear()
            for s in summaries:
                combo.addItem(s.name, s.id)
                combo.setItemData(
                    combo.count() - 1,
                    f"{s.name}: {s.latest_version} version(s), {_status_words(s.status)}",
                    Qt.ItemDataRole.ToolTipRole,
                )
            combo.setEnabled(bool(summaries))
            if not summaries:
                combo.addItem("No workflows yet — record one (Ctrl+R)")
            self._sync_workflow_combo()
        finally:
            combo.blockSignals(blocked)

    def _sync_workflow_combo(self) -> None:
        index = self.workflow_combo.findData(self._shown.workflow_id)
        blocked = self.workflow_combo.blockSignals(True)
        self.workflow_combo.setCurrentIndex(index if index >= 0 else 0)
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
                    who = "replay repair" if v.created_by == REPLAY_ACTOR else v.created_by
                    combo.addItem(f"v{v.version} · {_status_words(v.status)} · {who}", v.version)
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


def _compute(
    base: WorkflowVersion | None,
    compared: WorkflowVersion,
    media: MediaStore,
    refs: Sequence[str],
) -> tuple[WorkflowDiff, dict[str, bytes]]:
    diff = diff_workflows(base.workflow if base is not None else None, compared.workflow)
    return diff, _load_images(media, refs)


def _version_html(
    compared: WorkflowVersion,
    base: WorkflowVersion | None,
    diff: WorkflowDiff,
    runs: Sequence[Run],
    images: Sequence[str],
) -> str:
    parts: list[str] = []
    against = f"version {base.version}" if base is not None else "nothing"
    parts.append(
        f"<p><b>{_e(diff.summary())}</b> <span class='muted'>(against {against})</span></p>"
    )
    if not compared.workflow.success:
        parts.append(
            "<p style='color: #9a6700;'>⚠ No success check: runs of this version end “done, "
            "unverified”. <b>Done when</b> in the step editor adds what shows the task was "
            "done.</p>"
        )
    # A repair's note lists what healed; the table below says it better, when its run is known.
    if compared.change_note and not runs:
        parts.append(f"<h2>Change note</h2><p>{_e(compared.change_note)}</p>")
    if compared.created_by == REPLAY_ACTOR or runs:
        parts.append(healed_html(compared, runs, images))
    parts.append("<h2>What changes</h2>" if not diff.is_empty else "")
    parts.append(diff_html(diff))
    return "".join(parts)
