"""How runs read in the window: wording of statuses and rungs, and the step table's Qt model.

The run view (live) and the Runs screen (history) show steps with the same model, so a step
reads the same wherever it appears.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any, Final

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from desktop_app.core.models.run import (
    RUN_STATUS_LABELS,
    Resolution,
    Run,
    RunStatus,
    RunStep,
    StepStatus,
)
from desktop_app.core.outcomes import failure_lines
from desktop_app.ui import theme
from desktop_app.ui.table_model import RowsModel

__all__ = [
    "RESOLUTION_HELP",
    "RESOLUTION_LABELS",
    "RUN_STATUS_LABELS",
    "RunStepsModel",
    "StepColumn",
    "format_duration",
    "format_when",
    "run_seconds",
    "run_summary",
    "status_color",
]

#: Which rung of the healing ladder found a step's element, as the step tables say it.
RESOLUTION_LABELS: Final[dict[Resolution, str]] = {
    Resolution.DIRECT: "recorded locator",
    Resolution.ALTERNATE: "alternate locator",
    Resolution.FINGERPRINT: "fingerprint match",
    Resolution.EXPERIENCE: "remembered repair",
    Resolution.LLM: "LLM",
    Resolution.PERSON: "you",
    Resolution.NOT_NEEDED: "no element",
}

#: The tooltip of each rung.
RESOLUTION_HELP: Final[dict[Resolution, str]] = {
    Resolution.DIRECT: "Rung 1: the first recorded locator found the element, as recorded.",
    Resolution.ALTERNATE: "Rung 1: a later recorded locator found the element.",
    Resolution.FINGERPRINT: (
        "Rung 2 (healed): the page had drifted; the element was recognised by how it looked "
        "when recorded (text, role, attributes, position, neighbours)."
    ),
    Resolution.EXPERIENCE: "Rung 3 (healed): a repair remembered from an earlier run.",
    Resolution.LLM: "Rung 4 (healed): the LLM picked the element on the page.",
    Resolution.PERSON: "Rung 5 (healed): a person pointed at the element.",
    Resolution.NOT_NEEDED: "This step acts on no element (opening a page, waiting, a check).",
}


_STEP_STATUS: Final[dict[StepStatus, str]] = {
    StepStatus.SUCCEEDED: "✓ Succeeded",
    StepStatus.FAILED: "✗ Failed",
    StepStatus.SKIPPED: "– Skipped",
}


def status_tone(status: RunStatus | StepStatus | None) -> theme.Tone | None:
    """The theme's tone of a status (None: plain text).

    Done, unverified has its own: neither the success green nor the failure red (nor the amber
    of a stop).
    """
    if status in (RunStatus.SUCCEEDED, StepStatus.SUCCEEDED):
        return "ok"
    if status is RunStatus.UNVERIFIED:
        return "unverified"
    if status in (RunStatus.FAILED, StepStatus.FAILED):
        return "error"
    if status in (RunStatus.ABORTED, RunStatus.INTERRUPTED, StepStatus.SKIPPED):
        return "warning"
    return None


def status_color(status: RunStatus | StepStatus | None) -> QColor | None:
    """The text colour of a status in the current scheme (None: the palette's)."""
    tone = status_tone(status)
    return theme.color(tone) if tone is not None else None


def run_seconds(run: Run) -> float | None:
    """How long the run took (None while it runs)."""
    if run.finished_at is None:
        return None
    return (run.finished_at - run.started_at).total_seconds()


def format_duration(ms: float | None) -> str:
    """``820 ms``, ``3.4 s``, ``2 min 05 s``; ``""`` for None."""
    if ms is None:
        return ""
    if ms < 1000:
        return f"{ms:.0f} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"


def format_when(moment: datetime, *, now: datetime | None = None) -> str:
    """A time in the local zone: ``today 14:03``, ``yesterday 09:12`` or ``2026-05-01 14:03``."""
    local = moment.astimezone()
    today = (now or datetime.now().astimezone()).date()
    days = (today - local.date()).days
    clock = local.strftime("%H:%M")
    if days == 0:
        return f"today {clock}"
    if days == 1:
        return f"yesterday {clock}"
    return local.strftime("%Y-%m-%d %H:%M")


def run_summary(run: Run, *, with_status: bool = True) -> str:
    """One line, as the command line words it: ``Succeeded: 10 steps in 1.9 s, 0 healed, …``."""
    seconds = run_seconds(run)
    took = f" in {seconds:.1f} s" if seconds is not None else ""
    calls = "1 LLM call" if run.llm_calls == 1 else f"{run.llm_calls} LLM calls"
    text = f"{len(run.steps)} steps{took}, {len(run.healed)} healed, {calls}, {run.tokens:,} tokens"
    return (
        f"{RUN_STATUS_LABELS[run.status]}: {text}" if with_status else text[:1].upper() + text[1:]
    )


class StepColumn(int, Enum):
    """The step table's columns."""

    NUMBER = 0
    TITLE = 1
    STATUS = 2
    RESOLUTION = 3
    LOCATOR = 4
    DURATION = 5
    LLM = 6
    DETAIL = 7


_HEADERS: Final = (
    "#",
    "Step",
    "Status",
    "Found by",
    "Locator used",
    "Time",
    "LLM",
    "Error / detail",
)


@dataclass(slots=True)
class _Row:
    """One line of the step table: a step that has not run, is running, or has its record."""

    title: str
    number: int | None = None
    running: bool = False
    depth: int = 0
    step: RunStep | None = None


class RunStepsModel(RowsModel[_Row]):
    """The steps of one run: filled at once from a record, or step by step as a replay goes.

    For a live run, :meth:`plan` lists the workflow's steps as not run yet; each replay event then
    marks one running (:meth:`step_started`) and fills in its record (:meth:`step_finished`).
    Steps of a called workflow are inserted under the call step as they start.
    """

    HEADERS = _HEADERS

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._next = 0  # the first planned row that has not started
        self._open: list[int] = []  # rows running now (a call step and its inner steps)
        self._ended = False

    # ── filling ─────────────────────────────────────────────────────────────────────────────

    def set_steps(self, steps: tuple[RunStep, ...] | list[RunStep]) -> None:
        """Show a finished record's steps."""
        self.beginResetModel()
        self._rows = [_Row(title=s.title, number=s.index + 1, depth=s.depth, step=s) for s in steps]
        self._next = len(self._rows)
        self._open = []
        self._ended = True
        self.endResetModel()

    def plan(self, titles: list[str]) -> None:
        """List the steps a run is about to do, none started."""
        self.beginResetModel()
        self._rows = [_Row(title=t) for t in titles]
        self._next = 0
        self._open = []
        self._ended = False
        self.endResetModel()

    def step_started(self, index: int, title: str, depth: int = 0) -> int:
        """A step began (the engine's ``index``, shown *depth* deep); its row."""
        if not self._open and self._next < len(self._rows):
            row = self._next
            self._rows[row].title = title
            self._next += 1
        else:  # a called workflow's step, or one past the plan: insert it where it runs
            row = self._next
            self.beginInsertRows(QModelIndex(), row, row)
            self._rows.insert(row, _Row(title=title, depth=max(depth, len(self._open))))
            self.endInsertRows()
            self._next += 1
        item = self._rows[row]
        item.number = index + 1
        item.running = True
        self._open.append(row)
        self._changed(row)
        return row

    def step_finished(self, step: RunStep) -> int:
        """A step ended with *step* as its record; its row."""
        if self._open:
            row = self._open.pop()
        else:  # a finish without a start: add it at the end of what ran
            row = self._next
            self.beginInsertRows(QModelIndex(), row, row)
            self._rows.insert(row, _Row(title=step.title))
            self.endInsertRows()
            self._next += 1
        item = self._rows[row]
        item.step, item.running, item.number, item.title = step, False, step.index + 1, step.title
        self._changed(row)
        return row

    def end(self) -> None:
        """The run is over: what is still marked running did not finish; the rest did not run."""
        self._ended = True
        for row in self._open:
            self._rows[row].running = False
        self._open = []
        if self._rows:
            self.dataChanged.emit(
                self.index(0, 0), self.index(len(self._rows) - 1, len(_HEADERS) - 1)
            )

    # ── reading ─────────────────────────────────────────────────────────────────────────────

    def step_at(self, row: int) -> RunStep | None:
        """The record of the step on *row* (None until it has finished)."""
        item = self.row_at(row)
        return item.step if item is not None else None

    def steps(self) -> list[RunStep]:
        """The records of the steps that finished, in table order."""
        return [r.step for r in self._rows if r.step is not None]

    def running_row(self) -> int | None:
        """The innermost row running now."""
        return self._open[-1] if self._open else None

    def text(self, row: int, column: StepColumn) -> str:
        """What a cell shows."""
        value = self.data(self.index(row, column))
        return value if isinstance(value, str) else ""

    # ── Qt ──────────────────────────────────────────────────────────────────────────────────

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        row = self.row_at(index)
        if row is None:
            return None
        column = StepColumn(index.column())
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(row, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(row, column)
        if role == Qt.ItemDataRole.ForegroundRole:
            return self._foreground(row, column)
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (
            StepColumn.NUMBER,
            StepColumn.DURATION,
            StepColumn.LLM,
        ):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _display(self, row: _Row, column: StepColumn) -> str:
        step = row.step
        if column is StepColumn.NUMBER:
            return str(row.number) if row.number is not None else ""
        if column is StepColumn.TITLE:
            return "    " * row.depth + row.title
        if step is None:
            if column is StepColumn.STATUS:
                if row.running:
                    return "▶ Running…"
                return "Not run" if self._ended else "Waiting"
            return ""
        if column is StepColumn.STATUS:
            return _STEP_STATUS[step.status]
        if column is StepColumn.RESOLUTION:
            return RESOLUTION_LABELS[step.resolution] if step.resolution else "not found"
        if column is StepColumn.LOCATOR:
            return step.locator.describe() if step.locator is not None else ""
        if column is StepColumn.DURATION:
            return format_duration(step.duration_ms)
        if column is StepColumn.LLM:
            if not step.llm_calls:
                return ""
            tokens = step.prompt_tokens + step.completion_tokens
            return f"{step.llm_calls} ({tokens:,} tok)"
        if column is StepColumn.DETAIL:
            if step.error and step.failure is not None:
                return f"{step.failure.words[:1].upper()}{step.failure.words[1:]}: {step.error}"
            return step.error or step.detail or ""
        return ""

    def _tooltip(self, row: _Row, column: StepColumn) -> str | None:
        step = row.step
        if column is StepColumn.TITLE:
            return row.title
        if step is None:
            return None
        if column is StepColumn.RESOLUTION:
            if step.resolution is None:
                return "No rung of the healing ladder found the element."
            used = f"\nLocator: {step.locator.describe()}" if step.locator is not None else ""
            return RESOLUTION_HELP[step.resolution] + used
        if column is StepColumn.LLM and step.llm_calls:
            return (
                f"{step.llm_calls} LLM call(s): {step.prompt_tokens:,} prompt and "
                f"{step.completion_tokens:,} completion tokens"
            )
        if column in (StepColumn.DETAIL, StepColumn.STATUS, StepColumn.LOCATOR):
            parts = [p for p in (step.error, *failure_lines(step), step.detail) if p]
            if column is StepColumn.LOCATOR and step.locator is not None:
                parts.insert(0, step.locator.describe())
            return "\n".join(parts) or None
        return None

    def _foreground(self, row: _Row, column: StepColumn) -> QBrush | None:
        step = row.step
        if step is None:
            if column is StepColumn.STATUS and not row.running:
                return QBrush(theme.color("muted"))
            return None
        if column is StepColumn.STATUS:
            color = status_color(step.status)
            return QBrush(color) if color is not None else None
        if column is StepColumn.RESOLUTION and step.resolution and step.resolution.is_heal:
            return QBrush(theme.color("warning"))
        if column is StepColumn.DETAIL and step.error:
            return QBrush(theme.color("error"))
        return None

    def _changed(self, row: int) -> None:
        self.dataChanged.emit(self.index(row, 0), self.index(row, len(_HEADERS) - 1))
