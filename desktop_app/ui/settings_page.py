"""The Settings screen: the LLM and its key, search embeddings, the browser, safety limits, data.

Every field edits one setting of ``settings.toml`` (the API key goes to the OS keyring, the data
folder to a pointer file read at start-up). A setting an environment variable sets wins over the
file, so its field is read-only and says which variable sets it. Apply writes through the backend
on the store thread and announces ``settings_changed``; Revert puts the fields back.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

import annotated_types
from PySide6.QtCore import QEvent, QObject, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.errors import ProceduraError
from desktop_app.settings import (
    Settings,
    SettingsError,
    environment_overrides,
    environment_variables,
    platform_home,
    read_data_dir_pointer,
)
from desktop_app.ui.host import Host

__all__ = ["SettingsPage", "SettingsState"]

#: Colours of the one-line reports (readable on light and dark themes).
SUCCESS_COLOR = "#1a7f37"
FAILURE_COLOR = "#cf222e"
_MUTED = "color: #6a737d;"
_INVALID = f"border: 1px solid {FAILURE_COLOR};"
_FIELD_WIDTH = 420
_CAPTION_WIDTH = 170


@dataclass(frozen=True, slots=True)
class SettingsState:
    """What the screen shows, loaded on the store thread.

    Attributes:
        settings: the settings in force.
        overrides: the settings the environment sets: name → variable.
        key_source: where the API key comes from (``environment``, ``keyring``, ``none``).
        browser: the browser found now, in one line.
        pointer: the data folder the next start uses when PROCEDURA_HOME is unset.
        pointer_problem: why the pointer file could not be read, if it could not.
    """

    settings: Settings
    overrides: dict[str, str] = field(default_factory=dict)
    key_source: str = "none"
    browser: str = ""
    pointer: Path | None = None
    pointer_problem: str | None = None


class _WheelGuard(QObject):
    """Lets the page scroll over a spin box or list that does not have focus (no silent edits)."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.Wheel
            and isinstance(watched, QWidget)
            and not watched.hasFocus()
        ):
            event.ignore()
            return True
        return False


class _Field:
    """One editable setting: its widget, how to read and fill it, and its row."""

    def __init__(
        self,
        name: str,
        editor: QWidget,
        get: Callable[[], Any],
        put: Callable[[Any], None],
        changed: Any,
    ) -> None:
        self.name = name
        self.editor = editor
        self.get = get
        self.put = put
        self.changed = changed
        self.env_badge = QLabel()
        self.env_badge.setObjectName(f"settings-{name}-env")
        self.env_badge.setStyleSheet(
            "QLabel { border: 1px solid palette(mid); border-radius: 8px; padding: 1px 6px; }"
        )
        self.env_badge.hide()
        self.help = ""

    def set_overridden(self, variable: str | None) -> None:
        """Make the field read-only when the environment sets it."""
        self.editor.setEnabled(variable is None)
        self.env_badge.setVisible(variable is not None)
        if variable is not None:
            self.env_badge.setText(f"set by {variable}")
            tip = (
                f"{variable} sets this in the environment, and the environment wins over this "
                "screen. Unset it (and restart) to change the setting here."
            )
            self.env_badge.setToolTip(tip)
            self.editor.setToolTip(tip)
        else:
            self.editor.setToolTip(self.help)


def _bounds(name: str) -> tuple[float | None, bool, float | None]:
    """The setting's lower bound, whether it is strict, and its upper bound (from the model)."""
    low: float | None = None
    strict = False
    high: float | None = None
    for meta in Settings.model_fields[name].metadata:
        if isinstance(meta, annotated_types.Ge):
            low = float(cast(float, meta.ge))
        elif isinstance(meta, annotated_types.Gt):
            low, strict = float(cast(float, meta.gt)), True
        elif isinstance(meta, annotated_types.Le):
            high = float(cast(float, meta.le))
    return low, strict, high


def _explain(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setStyleSheet(_MUTED)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def _caption(text: str, buddy: QWidget | None = None) -> QLabel:
    """A form label; every section's labels share one width, so the fields line up."""
    label = QLabel(text)
    label.setMinimumWidth(_CAPTION_WIDTH)
    label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    if buddy is not None:
        label.setBuddy(buddy)
    return label


class _Form(QGridLayout):
    """Captions on the left, fields on the right (a grid: wrapped text gets its full height)."""

    def __init__(self) -> None:
        super().__init__()
        self.setColumnStretch(1, 1)
        self.setHorizontalSpacing(10)
        self.setVerticalSpacing(6)

    def add_row(self, caption: QLabel, widget: QWidget) -> None:
        """Add a row: *caption* and *widget*."""
        row = self.rowCount()
        self.addWidget(caption, row, 0)
        self.addWidget(widget, row, 1)


def _optional_text(editor: QLineEdit) -> str | None:
    return editor.text().strip() or None


class SettingsPage(QWidget):
    """Settings, grouped in sections with what each one does.

    Signals:
        settings_saved(): Apply wrote the settings (after ``settings_changed``).
        connection_tested(bool, str): a connection test ended: whether it worked, and its line.
    """

    settings_saved = Signal()
    connection_tested = Signal(bool, str)

    def __init__(self, host: Host) -> None:
        super().__init__()
        self.setObjectName("settings-page")
        self._host = host
        self._fields: dict[str, _Field] = {}
        self._loaded: dict[str, Any] = {}
        self._loaded_home_text = ""
        self._state: SettingsState | None = None
        self._saving = False
        self._pending_shown = False
        self._wheel_guard = _WheelGuard(self)
        # The search index keeps the embeddings it was opened with until the next start.
        self._started_with = _embedding_identity(host.backend.settings)

        content = QWidget()
        content.setObjectName("settings-content")
        column = QVBoxLayout(content)
        column.setContentsMargins(16, 12, 16, 12)
        column.setSpacing(14)
        title = QLabel("Settings")
        title.setStyleSheet("font-size: 16pt; font-weight: 600;")
        column.addWidget(title)
        column.addWidget(
            _explain(
                "Changes are kept in settings.toml in the data folder when you click Apply. "
                "Environment variables win over this screen: a setting one of them sets is shown "
                "read-only, with the variable's name."
            )
        )
        column.addWidget(self._llm_section())
        column.addWidget(self._search_section())
        column.addWidget(self._browser_section())
        column.addWidget(self._safety_section())
        column.addWidget(self._data_section())
        column.addStretch(1)

        scroll = QScrollArea()
        scroll.setObjectName("settings-scroll")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(content)
        scroll.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        content.setMaximumWidth(1080)

        self.message = QLabel()
        self.message.setObjectName("settings-message")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.revert_button = QPushButton("Re&vert")
        self.revert_button.setObjectName("settings-revert")
        self.revert_button.setToolTip("Put every field back as it was last applied")
        self.revert_button.clicked.connect(self._on_revert_button_clicked)
        self.apply_button = QPushButton("&Apply")
        self.apply_button.setObjectName("settings-apply")
        self.apply_button.setToolTip("Save the changes (Ctrl+S)")
        self.apply_button.setDefault(True)
        self.apply_button.clicked.connect(self._on_apply_button_clicked)
        bar = QHBoxLayout()
        bar.setContentsMargins(16, 6, 16, 10)
        bar.addWidget(self.message, 1)
        bar.addWidget(self.revert_button)
        bar.addWidget(self.apply_button)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(scroll, 1)
        line = QFrame()
        line.setFrameShape(QFrame.Shape.HLine)
        line.setFrameShadow(QFrame.Shadow.Sunken)
        layout.addWidget(line)
        layout.addLayout(bar)

        save = QShortcut(QKeySequence.StandardKey.Save, self)
        save.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        save.activated.connect(self._on_apply_button_clicked)

        for item in self._fields.values():
            item.changed.connect(lambda *_args, f=item: self._on_field_changed(f))
        self.home_edit.textChanged.connect(lambda _text: self._update_dirty())
        host.events.settings_changed.connect(self._on_events_settings_changed)
        self._update_dirty()

    # ── sections ────────────────────────────────────────────────────────────────────────────

    def _section(self, name: str, title: str, text: str) -> tuple[QGroupBox, _Form]:
        box = QGroupBox(title)
        box.setObjectName(f"settings-section-{name}")
        layout = QVBoxLayout(box)
        layout.addWidget(_explain(text))
        form = _Form()
        layout.addLayout(form)
        return box, form

    def _add(self, form: _Form, label: str, item: _Field, help: str, *extra: QWidget) -> None:
        item.help = f"{help}\n\nsettings.toml: {item.name} · environment: " + " or ".join(
            environment_variables(item.name)
        )
        item.editor.setToolTip(item.help)
        row = QWidget()
        line = QHBoxLayout(row)
        line.setContentsMargins(0, 0, 0, 0)
        line.addWidget(item.editor)
        for widget in extra:
            line.addWidget(widget)
        line.addWidget(item.env_badge)
        line.addStretch(1)
        form.add_row(_caption(label, item.editor), row)
        self._fields[item.name] = item

    def _text(self, name: str, placeholder: str = "", *, optional: bool = True) -> _Field:
        editor = QLineEdit()
        editor.setObjectName(f"settings-{name}")
        editor.setPlaceholderText(placeholder)
        editor.setClearButtonEnabled(True)
        editor.setMinimumWidth(_FIELD_WIDTH)

        def get() -> Any:
            return _optional_text(editor) if optional else editor.text().strip()

        def put(value: Any) -> None:
            editor.setText("" if value is None else str(value))

        return _Field(name, editor, get, put, editor.textChanged)

    def _number(self, name: str, *, suffix: str = "", step: float = 1, decimals: int = 1) -> _Field:
        low, strict, high = _bounds(name)
        annotation = Settings.model_fields[name].annotation
        editor: QSpinBox | QDoubleSpinBox
        if annotation is int:
            editor = QSpinBox()
            editor.setRange(int(low or 0) + (1 if strict else 0), int(high or 2_000_000_000))
            editor.setSingleStep(int(step))
        else:
            editor = QDoubleSpinBox()
            editor.setDecimals(decimals)
            editor.setRange((low or 0.0) + (10.0**-decimals if strict else 0.0), high or 3600.0)
            editor.setSingleStep(step)
        editor.setObjectName(f"settings-{name}")
        editor.setSuffix(suffix)
        editor.setGroupSeparatorShown(True)
        editor.setAccelerated(True)
        editor.setCorrectionMode(QAbstractSpinBox.CorrectionMode.CorrectToNearestValue)
        editor.setMinimumWidth(140)
        self._guard(editor)
        return _Field(name, editor, editor.value, editor.setValue, editor.valueChanged)

    def _guard(self, editor: QWidget) -> None:
        editor.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        editor.installEventFilter(self._wheel_guard)

    def _llm_section(self) -> QGroupBox:
        box, form = self._section(
            "llm",
            "Language model (LLM)",
            "Procedura works without an LLM. With one, it names steps and parameters when it "
            "drafts a workflow, and finds elements that replay could not. Any OpenAI-compatible "
            "endpoint works, including a local server (Ollama, LM Studio, vLLM, llama.cpp).",
        )
        self._add(
            form,
            "Base &URL:",
            self._text("llm_base_url", "https://api.openai.com/v1 (OpenAI's, when empty)"),
            "The OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1 for Ollama.",
        )
        self._add(
            form,
            "&Model:",
            self._text("llm_model", "gpt-4o-mini (when empty)"),
            "The model name the endpoint knows, e.g. gpt-4o-mini or qwen2.5:7b-instruct.",
        )
        vision = QCheckBox("The model reads &images")
        vision.setObjectName("settings-llm_vision")
        self._add(
            form,
            "",
            _Field("llm_vision", vision, vision.isChecked, vision.setChecked, vision.toggled),
            "Desktop replay may then show it a screenshot of the window to find where to click "
            "when the recorded picture of the spot is nowhere to be seen (never once a secret "
            "was typed in the run).",
        )

        self.key_edit = QLineEdit()
        self.key_edit.setObjectName("settings-api-key")
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_edit.setMinimumWidth(_FIELD_WIDTH - 240)
        self.key_edit.setToolTip(
            "Paste the key and click Save to keyring. It goes to the OS keyring (service "
            "'procedura'), never to a file."
        )
        show = QToolButton()
        show.setObjectName("settings-show-key")
        show.setText("Sho&w")
        show.setCheckable(True)
        show.setToolTip("Show the key as you type it")
        show.toggled.connect(
            lambda on: self.key_edit.setEchoMode(
                QLineEdit.EchoMode.Normal if on else QLineEdit.EchoMode.Password
            )
        )
        self.key_edit.returnPressed.connect(self._on_save_key_button_clicked)
        self.key_edit.textChanged.connect(lambda _t: self._update_key_buttons())
        self.save_key_button = QPushButton("&Save to keyring")
        self.save_key_button.setObjectName("settings-save-key")
        self.save_key_button.setToolTip("Keep the key in the OS keyring (replaces a stored one)")
        self.save_key_button.clicked.connect(self._on_save_key_button_clicked)
        self.remove_key_button = QPushButton("Remove")
        self.remove_key_button.setObjectName("settings-remove-key")
        self.remove_key_button.setToolTip("Delete the key from the OS keyring")
        self.remove_key_button.clicked.connect(self._on_remove_key_button_clicked)
        key_row = QWidget()
        key_line = QHBoxLayout(key_row)
        key_line.setContentsMargins(0, 0, 0, 0)
        key_line.addWidget(self.key_edit)
        key_line.addWidget(show)
        key_line.addWidget(self.save_key_button)
        key_line.addWidget(self.remove_key_button)
        key_line.addStretch(1)
        form.add_row(_caption("API &key:", self.key_edit), key_row)
        self.key_source = QLabel()
        self.key_source.setObjectName("settings-key-source")
        self.key_source.setWordWrap(True)
        form.add_row(_caption(""), self.key_source)

        self._add(
            form,
            "Time&out:",
            self._number("llm_timeout_s", suffix=" s", step=5),
            "How long one LLM request may take before it counts as failed.",
        )

        self.test_button = QPushButton("&Test connection")
        self.test_button.setObjectName("settings-test")
        self.test_button.setToolTip(
            "Ask the model for one tiny JSON answer, the way replay does, and report what answered"
        )
        self.test_button.clicked.connect(self._on_test_button_clicked)
        self.test_result = QLabel()
        self.test_result.setObjectName("settings-test-result")
        self.test_result.setWordWrap(True)
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.test_details_button = QToolButton()
        self.test_details_button.setObjectName("settings-test-details-button")
        self.test_details_button.setText("Details")
        self.test_details_button.setCheckable(True)
        self.test_details_button.hide()
        self.test_details = QPlainTextEdit()
        self.test_details.setObjectName("settings-test-details")
        self.test_details.setReadOnly(True)
        self.test_details.setMaximumHeight(140)
        self.test_details.hide()
        self.test_details_button.toggled.connect(self.test_details.setVisible)
        test_row = QWidget()
        test_column = QVBoxLayout(test_row)
        test_column.setContentsMargins(0, 0, 0, 0)
        test_line = QHBoxLayout()
        test_line.addWidget(self.test_button)
        test_line.addWidget(self.test_result, 1)
        test_line.addWidget(self.test_details_button)
        test_column.addLayout(test_line)
        test_column.addWidget(self.test_details)
        form.add_row(_caption(""), test_row)
        return box

    def _search_section(self) -> QGroupBox:
        box, form = self._section(
            "search",
            "Search (embeddings)",
            "The Library's search compares meanings with embeddings. MiniLM runs on this "
            "computer and works offline. An OpenAI-compatible endpoint receives workflow names, "
            "descriptions and steps to embed. A change applies when Procedura next starts; "
            "then rebuild the search index.",
        )
        combo = QComboBox()
        combo.setObjectName("settings-embedding")
        combo.addItem("MiniLM (offline, on this computer)", "minilm")
        combo.addItem("OpenAI-compatible endpoint", "openai")
        self._guard(combo)

        def put(value: Any) -> None:
            combo.setCurrentIndex(max(0, combo.findData(value)))

        embedding = _Field("embedding", combo, combo.currentData, put, combo.currentIndexChanged)
        self._add(form, "&Embeddings:", embedding, "Which embeddings the search index uses.")
        self._add(
            form,
            "Embeddin&g model:",
            self._text("embedding_model", "text-embedding-3-small (when empty)"),
            "The endpoint's embedding model (only for an OpenAI-compatible endpoint).",
        )
        self._add(
            form,
            "Embedding endpo&int:",
            self._text("embedding_base_url", "the LLM base URL, when empty"),
            "Where embeddings are computed, when it is not the LLM's endpoint.",
        )
        self.embedding_notice = QLabel()
        self.embedding_notice.setObjectName("settings-embedding-notice")
        self.embedding_notice.setWordWrap(True)
        self.embedding_notice.hide()
        self.reindex_button = QPushButton("&Rebuild search index")
        self.reindex_button.setObjectName("settings-reindex")
        self.reindex_button.setToolTip(
            "Rebuild the index from the database (what `procedura reindex` does); "
            "it can take a minute with many workflows"
        )
        self.reindex_button.clicked.connect(self._on_reindex_button_clicked)
        index_row = QWidget()
        index_column = QVBoxLayout(index_row)
        index_column.setContentsMargins(0, 0, 0, 0)
        index_column.addWidget(self.embedding_notice)
        index_line = QHBoxLayout()
        index_line.addWidget(self.reindex_button)
        index_line.addStretch(1)
        index_column.addLayout(index_line)
        form.add_row(_caption(""), index_row)
        return box

    def _browser_section(self) -> QGroupBox:
        box, form = self._section(
            "browser",
            "Browser",
            "Recording and replay drive a Chromium-family browser (Chromium, Chrome, Edge). "
            "Leave this empty to use Playwright's Chromium, else one found on PATH.",
        )
        browser = self._text("browser", "automatic")
        browse = QPushButton("Browse…")
        browse.setObjectName("settings-browser-browse")
        browse.setToolTip("Choose the browser's executable")
        browse.clicked.connect(self._on_browser_browse_clicked)
        self._browser_browse = browse
        self._add(form, "&Browser:", browser, "The browser executable to use.", browse)
        self.browser_found = QLabel()
        self.browser_found.setObjectName("settings-browser-found")
        self.browser_found.setWordWrap(True)
        self.browser_found.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.add_row(_caption("In use now:"), self.browser_found)
        return box

    def _safety_section(self) -> QGroupBox:
        box, form = self._section(
            "safety",
            "Replay safety",
            "Limits that keep a run from spending too much or acting without you. When the LLM "
            "budget is spent, replay asks you instead. 0 turns LLM help off.",
        )
        per_step = self._number("llm_max_calls_per_step")
        self._add(
            form,
            "LLM &calls per step:",
            per_step,
            "The most LLM calls replay makes to find one step's element.",
        )
        self._add(
            form,
            "&LLM calls per run:",
            self._number("llm_max_calls_per_run"),
            "The most LLM calls in one run (also in one induction).",
        )
        self._add(
            form,
            "LLM toke&ns per run:",
            self._number("llm_max_tokens_per_run", step=1000),
            "The most prompt plus completion tokens in one run.",
        )
        self._add(
            form,
            "Replay &patience:",
            self._number("replay_patience_s", suffix=" s", step=0.5),
            "Seconds replay waits for a step's recorded locators before it starts healing "
            "(at most 60).",
        )
        self._add(
            form,
            "Page &ready after:",
            self._number("replay_ready_quiet_s", suffix=" s", step=0.05, decimals=2),
            "Seconds a page just loaded must be quiet (nothing loading, nothing changing) "
            "before replay acts on it (at most 5).",
        )
        self._add(
            form,
            "App &saved after:",
            self._number("replay_save_quiet_s", suffix=" s", step=0.1, decimals=2),
            "Seconds the app must be quiet, with nothing pending, after the last step before "
            "the run checks its outcome and closes the browser (at most 10).",
        )
        self._add(
            form,
            "&Reaction within:",
            self._number("replay_reaction_s", suffix=" s", step=0.5),
            "Seconds a click the page reacted to when recorded may take to get a reaction "
            "before replay does it once more (at most 30).",
        )
        check = QCheckBox("Ask be&fore an irreversible step found by healing acts")
        check.setObjectName("settings-confirm_irreversible")
        self._add(
            form,
            "",
            _Field("confirm_irreversible", check, check.isChecked, check.setChecked, check.toggled),
            "Submit, pay, delete, send: when healing found the element, the desktop app asks "
            "you before it acts. Off, runs go ahead as `procedura run --yes` would.",
        )
        return box

    def _data_section(self) -> QGroupBox:
        box, form = self._section(
            "data",
            "Data and identity",
            "Workflows, recordings, runs, screenshots and these settings live in the data folder.",
        )
        self.home_in_use = QLabel()
        self.home_in_use.setObjectName("settings-home-in-use")
        self.home_in_use.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        open_home = QPushButton("Open folder")
        open_home.setObjectName("settings-open-home")
        open_home.setToolTip("Show the data folder in the file manager")
        open_home.clicked.connect(self._on_open_home_clicked)
        in_use = QWidget()
        in_use_line = QHBoxLayout(in_use)
        in_use_line.setContentsMargins(0, 0, 0, 0)
        in_use_line.addWidget(self.home_in_use)
        in_use_line.addWidget(open_home)
        in_use_line.addStretch(1)
        form.add_row(_caption("In use now:"), in_use)

        self.home_edit = QLineEdit()
        self.home_edit.setObjectName("settings-home")
        self.home_edit.setMinimumWidth(_FIELD_WIDTH)
        self.home_edit.setToolTip(
            "The folder Procedura uses from its next start. Empty: the platform's default."
        )
        self.home_browse = QPushButton("Browse…")
        self.home_browse.setObjectName("settings-home-browse")
        self.home_browse.setToolTip("Choose the data folder")
        self.home_browse.clicked.connect(self._on_home_browse_clicked)
        self.home_env = QLabel()
        self.home_env.setObjectName("settings-home-env")
        self.home_env.hide()
        home_row = QWidget()
        home_line = QHBoxLayout(home_row)
        home_line.setContentsMargins(0, 0, 0, 0)
        home_line.addWidget(self.home_edit)
        home_line.addWidget(self.home_browse)
        home_line.addWidget(self.home_env)
        home_line.addStretch(1)
        form.add_row(_caption("&Data folder:", self.home_edit), home_row)
        self.home_note = QLabel()
        self.home_note.setObjectName("settings-home-note")
        self.home_note.setWordWrap(True)
        form.add_row(_caption(""), self.home_note)

        self._add(
            form,
            "&Your name:",
            self._text("actor", optional=False),
            "Recorded with every review step (submit, approve, reject).",
        )
        return box

    # ── loading ─────────────────────────────────────────────────────────────────────────────

    @property
    def state(self) -> SettingsState | None:
        """What was last loaded."""
        return self._state

    def field_editor(self, name: str) -> QWidget:
        """The widget that edits setting *name*."""
        return self._fields[name].editor

    async def reload(self) -> None:
        """Load the settings in force, where the key comes from and what the browser is."""
        backend = self._host.backend

        def load() -> SettingsState:
            pointer: Path | None = None
            problem: str | None = None
            try:
                pointer = read_data_dir_pointer()
            except SettingsError as exc:
                problem = str(exc)
            return SettingsState(
                settings=backend.settings,
                overrides=environment_overrides(),
                key_source=backend.api_key_source(),
                browser=backend.browser_info(),
                pointer=pointer,
                pointer_problem=problem,
            )

        self._fill(await self._host.tasks.call(load))

    def _fill(self, state: SettingsState) -> None:
        self._state = state
        settings = state.settings
        for name, item in self._fields.items():
            item.put(getattr(settings, name))
            item.editor.setStyleSheet("")
            item.set_overridden(state.overrides.get(name))
        self._loaded = {name: item.get() for name, item in self._fields.items()}

        self._show_key_source(state)
        self.browser_found.setText(state.browser)
        self._browser_browse.setEnabled("browser" not in state.overrides)

        self.home_in_use.setText(str(settings.home))
        home_variable = state.overrides.get("home")
        if home_variable is not None:
            self.home_edit.setText(str(settings.home))
        else:
            self.home_edit.setText(str(state.pointer or platform_home()))
        self.home_edit.setPlaceholderText(str(platform_home()))
        self.home_edit.setStyleSheet("")
        self.home_edit.setEnabled(home_variable is None)
        self.home_browse.setEnabled(home_variable is None)
        self.home_env.setVisible(home_variable is not None)
        self.home_env.setText(f"set by {home_variable}" if home_variable else "")
        self._loaded_home_text = self.home_edit.text().strip()
        self._update_dirty()

    def _show_key_source(self, state: SettingsState) -> None:
        variable = state.overrides.get("llm_api_key")
        if state.key_source == "environment":
            text = (
                f"From the environment ({variable or 'OPENAI_API_KEY'}); it wins, so the "
                "keyring is not used while it is set."
            )
        elif state.key_source == "keyring":
            text = "Stored in the OS keyring. Type a new key to replace it."
        else:
            text = (
                "None. OpenAI needs one; a local server usually does not. "
                "The key is kept in the OS keyring, never in a file."
            )
        self.key_source.setText(text)
        self.key_edit.setPlaceholderText(
            "•••••••• (in the keyring)" if state.key_source == "keyring" else "sk-…"
        )
        self.key_edit.setEnabled(state.key_source != "environment")
        self._update_key_buttons()

    def _update_key_buttons(self) -> None:
        source = self._state.key_source if self._state is not None else "none"
        self.save_key_button.setEnabled(
            source != "environment" and bool(self.key_edit.text().strip())
        )
        self.remove_key_button.setEnabled(source == "keyring")

    # ── changes ─────────────────────────────────────────────────────────────────────────────

    def changes(self) -> dict[str, Any]:
        """The settings whose fields differ from what was loaded (editable fields only)."""
        return {
            name: value
            for name, item in self._fields.items()
            if item.editor.isEnabled() and (value := item.get()) != self._loaded.get(name)
        }

    def _home_changed(self) -> bool:
        return self.home_edit.isEnabled() and self.home_edit.text().strip() != (
            self._loaded_home_text
        )

    def has_changes(self) -> bool:
        """Whether a field differs from what was applied."""
        return bool(self.changes()) or self._home_changed()

    def _on_field_changed(self, item: _Field) -> None:
        item.editor.setStyleSheet("")
        self._update_dirty()

    def _update_dirty(self) -> None:
        dirty = self.has_changes()
        self.apply_button.setEnabled(dirty)
        self.revert_button.setEnabled(dirty)
        self.test_button.setText("Apply and &test" if dirty else "&Test connection")
        if dirty:
            self._say("You have changes that are not applied yet (Ctrl+S applies them).", None)
            self._pending_shown = True
        elif self._pending_shown:
            self._say("", None)
        self._update_notes()

    def _update_notes(self) -> None:
        embedding = self._fields["embedding"].get()
        self._fields["embedding_model"].editor.setEnabled(
            embedding == "openai" and "embedding_model" not in self._overrides()
        )
        self._fields["embedding_base_url"].editor.setEnabled(
            embedding == "openai" and "embedding_base_url" not in self._overrides()
        )
        if self._state is not None:
            applied = _embedding_identity(self._state.settings)
            pending = applied != self._started_with
            self.embedding_notice.setVisible(pending)
            self.embedding_notice.setText(
                "Search keeps using the embeddings it started with until Procedura restarts. "
                "After the restart, click Rebuild search index (or run `procedura reindex`) "
                "so every workflow can be found."
                if pending
                else ""
            )
            self.reindex_button.setEnabled(not pending)

        text = self.home_edit.text().strip()
        if not self.home_edit.isEnabled():
            note = (
                "PROCEDURA_HOME chooses the data folder; unset it to choose one here."
                if self._state is not None
                else ""
            )
        elif self._state is not None and self._state.pointer_problem:
            note = self._state.pointer_problem
        elif self._state is not None and Path(text or platform_home()) != self._state.settings.home:
            note = (
                "Procedura uses this folder from its next start. Nothing is moved: the folder "
                "keeps its own workflows, runs and settings (a new folder starts empty)."
            )
        else:
            note = "Changing the folder takes effect the next time Procedura starts."
        self.home_note.setText(note)
        self.home_note.setStyleSheet(_MUTED)

    def _overrides(self) -> dict[str, str]:
        return self._state.overrides if self._state is not None else {}

    def _say(self, text: str, ok: bool | None) -> None:
        """One line in the bar: green when *ok*, red when not, muted when None."""
        self.message.setText(text)
        self._pending_shown = False
        if ok is None:
            self.message.setStyleSheet(_MUTED)
        else:
            self.message.setStyleSheet(f"color: {SUCCESS_COLOR if ok else FAILURE_COLOR};")

    # ── apply / revert ──────────────────────────────────────────────────────────────────────

    def _on_revert_button_clicked(self) -> None:
        if self._state is not None:
            self._fill(self._state)
        self._say("", None)

    def _on_apply_button_clicked(self) -> None:
        if not self.has_changes() or self._saving:
            return
        self._host.tasks.start(self._apply(), label="Saving settings…", on_error=self._on_failed)

    async def _apply(self) -> None:
        """Write the changed settings and the data folder, then show the settings in force."""
        changes = self.changes()
        home = self.home_edit.text().strip() if self._home_changed() else None
        backend = self._host.backend
        self._saving = True
        self.apply_button.setEnabled(False)
        try:
            if home is not None:
                await self._host.tasks.call(backend.set_data_dir, home or None)
            if changes:
                await self._host.tasks.call(backend.save_settings, changes)
            self._host.events.settings_changed.emit()
        finally:
            self._saving = False
            self._update_dirty()
        await self.reload()
        self._say(
            "Settings saved."
            + (" The data folder changes at the next start." if home is not None else ""),
            True,
        )
        self._host.show_status("Settings saved")
        self.settings_saved.emit()

    def _on_failed(self, exc: BaseException) -> bool:
        """Show a readable failure in the bar, pointing at the field at fault."""
        if not isinstance(exc, ProceduraError):
            return False
        self._say(str(exc), False)
        setting = getattr(exc, "setting", None)
        editor = (
            self.home_edit
            if setting == "home"
            else self._fields[setting].editor
            if setting in self._fields
            else None
        )
        if editor is not None:
            editor.setStyleSheet(_INVALID)
            editor.setFocus()
        return True

    def _on_events_settings_changed(self) -> None:
        if self._saving or self.has_changes():
            return  # our own Apply reloads; never drop what the user is typing
        self._host.tasks.start(self.reload(), label="Loading settings…")

    # ── the API key ─────────────────────────────────────────────────────────────────────────

    def _on_save_key_button_clicked(self) -> None:
        key = self.key_edit.text().strip()
        if not key or not self.save_key_button.isEnabled():
            return
        self._host.tasks.start(
            self._set_key(key), label="Saving the API key…", on_error=self._on_failed
        )

    def _on_remove_key_button_clicked(self) -> None:
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Remove the API key",
            "Remove the LLM API key from the OS keyring? Procedura cannot show it to you again.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setObjectName("settings-remove-key-confirm")
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.finished.connect(self._on_remove_key_confirm_finished)
        box.open()

    def _on_remove_key_confirm_finished(self, result: int) -> None:
        if result == QMessageBox.StandardButton.Yes:
            self._host.tasks.start(
                self._set_key(None), label="Removing the API key…", on_error=self._on_failed
            )

    async def _set_key(self, key: str | None) -> None:
        backend = self._host.backend
        await self._host.tasks.call(backend.set_api_key, key)
        self.key_edit.clear()
        source = await self._host.tasks.call(backend.api_key_source)
        if self._state is not None:
            self._state = replace(self._state, key_source=source)
            self._show_key_source(self._state)
        self._say(
            "The API key is saved in the OS keyring." if key else "The API key was removed.", True
        )
        self._saving = True
        try:
            self._host.events.settings_changed.emit()
        finally:
            self._saving = False

    # ── test connection ─────────────────────────────────────────────────────────────────────

    def _on_test_button_clicked(self) -> None:
        if not self.test_button.isEnabled():
            return
        self.test_button.setEnabled(False)
        self._show_test("Testing…", None, "")
        self._host.tasks.start(
            self._test(),
            label="Testing the LLM connection…",
            on_done=self._on_test_done,
            on_error=self._on_test_failed,
        )

    async def _test(self) -> str:
        if self.has_changes():
            await self._apply()
        return await self._host.tasks.call(self._host.backend.test_llm)

    def _on_test_done(self, line: str) -> None:
        self.test_button.setEnabled(True)
        self._show_test(line, True, "")
        self.connection_tested.emit(True, line)

    def _on_test_failed(self, exc: BaseException) -> bool:
        self.test_button.setEnabled(True)
        if isinstance(exc, SettingsError):
            self._show_test("Not tested: the settings could not be applied.", False, "")
            return self._on_failed(exc)
        line = str(exc) if isinstance(exc, ProceduraError) else f"{type(exc).__name__}: {exc}"
        line = " ".join(line.split()) or type(exc).__name__
        settings = self._state.settings if self._state is not None else None
        details = [f"{type(exc).__name__}: {line}"]
        if settings is not None:
            details += [
                "",
                f"endpoint: {settings.llm_base_url or 'OpenAI (https://api.openai.com/v1)'}",
                f"model: {settings.llm_model}",
                f"API key: {self._state.key_source if self._state else 'none'}",
                f"timeout: {settings.llm_timeout_s:g} s (a test waits at most 15 s)",
            ]
        if not isinstance(exc, ProceduraError):
            details += ["", "".join(traceback.format_exception(exc))]
        self._show_test(line, False, "\n".join(details))
        self.connection_tested.emit(False, line)
        return True

    def _show_test(self, line: str, ok: bool | None, details: str) -> None:
        self.test_result.setText(line)
        if ok is None:
            self.test_result.setStyleSheet(_MUTED)
        else:
            color = SUCCESS_COLOR if ok else FAILURE_COLOR
            self.test_result.setStyleSheet(f"color: {color};")
        self.test_details.setPlainText(details)
        self.test_details_button.setVisible(bool(details))
        if not details:
            self.test_details_button.setChecked(False)

    # ── search index ────────────────────────────────────────────────────────────────────────

    def _on_reindex_button_clicked(self) -> None:
        self.reindex_button.setEnabled(False)

        def done(counts: tuple[int, int]) -> None:
            self.reindex_button.setEnabled(True)
            workflows, experiences = counts
            self._say(
                f"The search index was rebuilt: {_count(workflows, 'workflow')}, "
                f"{_count(experiences, 'remembered repair')}.",
                True,
            )
            self._host.events.workflows_changed.emit("")

        def failed(exc: BaseException) -> bool:
            self.reindex_button.setEnabled(True)
            return self._on_failed(exc)

        self._host.tasks.run(
            self._host.backend.reindex,
            label="Rebuilding the search index…",
            on_done=done,
            on_error=failed,
        )

    # ── pickers ─────────────────────────────────────────────────────────────────────────────

    def _on_browser_browse_clicked(self) -> None:
        editor = self._fields["browser"].editor
        assert isinstance(editor, QLineEdit)
        start = editor.text().strip() or str(Path.home())
        path, _ = QFileDialog.getOpenFileName(self, "Choose a browser", start)
        if path:
            editor.setText(path)

    def _on_home_browse_clicked(self) -> None:
        start = self.home_edit.text().strip() or str(Path.home())
        path = QFileDialog.getExistingDirectory(self, "Choose the data folder", start)
        if path:
            self.home_edit.setText(path)

    def _on_open_home_clicked(self) -> None:
        if self._state is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self._state.settings.home)))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _embedding_identity(settings: Settings) -> tuple[str, ...]:
    """What decides the index's vectors: the embeddings, and for an endpoint its model and URL."""
    if settings.embedding == "minilm":
        return ("minilm",)
    return (
        "openai",
        settings.embedding_model,
        settings.embedding_base_url or settings.llm_base_url or "",
    )
