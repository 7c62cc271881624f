"""The Settings screen's sections (LLM, search, browser, safety, data, team) and the fields in
them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.settings import Settings, environment_variables
from desktop_app.ui.settings_page.fields import (
    _FIELD_WIDTH,
    _bounds,
    _caption,
    _explain,
    _Field,
    _Form,
    _optional_text,
    _WheelGuard,
)

__all__ = ["SettingsSections"]


class SettingsSections(QWidget):
    """The sections of the Settings screen, each a group of fields with what it does; the page
    puts them in a column and wires their buttons to what it does."""

    _fields: dict[str, _Field]
    _wheel_guard: _WheelGuard

    if TYPE_CHECKING:

        def _on_save_key_button_clicked(self) -> None:
            """Save the typed key to the keyring (the page defines it)."""

        def _on_remove_key_button_clicked(self) -> None:
            """Remove the key from the keyring (the page defines it)."""

        def _update_key_buttons(self) -> None:
            """Enable the key's buttons that apply (the page defines it)."""

        def _on_test_button_clicked(self) -> None:
            """Test the LLM connection (the page defines it)."""

        def _on_reindex_button_clicked(self) -> None:
            """Rebuild the search index (the page defines it)."""

        def _on_browser_browse_clicked(self) -> None:
            """Pick the browser's executable (the page defines it)."""

        def _on_home_browse_clicked(self) -> None:
            """Pick the data folder (the page defines it)."""

        def _on_open_home_clicked(self) -> None:
            """Show the data folder in the file manager (the page defines it)."""

        def _on_team_join_button_clicked(self) -> None:
            """Ask for a team's server and join it (the page defines it)."""

        def _on_team_leave_button_clicked(self) -> None:
            """Go back to personal mode, once confirmed (the page defines it)."""

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
        self.test_result.setAccessibleName("Connection test result")
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
            "Run &time limit:",
            self._number("run_time_limit_min", suffix=" min"),
            "The longest one run may take, a loop over many items included; past it the run "
            "stops before its next step. 0: no limit.",
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
        self._add(
            form,
            "Stale &after:",
            self._number("stale_after_days", suffix=" days"),
            "A workflow version nobody ran for this many days is flagged stale in the Library "
            "(never archived or deleted for it); 0 never flags one for that.",
        )
        self._add(
            form,
            "&Propose after:",
            self._number("propose_after_runs", suffix=" runs"),
            "An agent step that did the same actions in this many runs in a row is proposed, "
            "for review, as recorded steps (no LLM needed then); 0 proposes nothing.",
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

    def _team_section(self) -> QGroupBox:
        box, form = self._section(
            "team",
            "Team",
            "Personal mode keeps the library in the data folder, for you alone. In team mode "
            "the library is the team's, on its PostgreSQL server: what you may do there is what "
            "your roles allow, and a runner fleet can run workflows for everyone (docs/team.md).",
        )

        def line(name: str, accessible: str) -> QLabel:
            label = QLabel()
            label.setObjectName(f"settings-team-{name}")
            label.setAccessibleName(accessible)
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            return label

        self.team_mode = line("mode", "Mode")
        form.add_row(_caption("Mode:"), self.team_mode)
        self.team_user = line("user", "Team login")
        self.team_roles = line("roles", "Your roles")
        self.team_index = line("index", "Team search index")
        self.team_queue = line("queue", "Runner fleet queue")
        #: The rows shown in team mode only: a caption and its line.
        self._team_rows: list[tuple[QLabel, QLabel]] = []
        for caption, label in (
            ("You are:", self.team_user),
            ("You may:", self.team_roles),
            ("Search index:", self.team_index),
            ("Runner fleet:", self.team_queue),
        ):
            shown = _caption(caption)
            form.add_row(shown, label)
            self._team_rows.append((shown, label))
        self.team_problem = line("problem", "Problem reaching the team's server")
        self.team_problem.hide()
        form.add_row(_caption(""), self.team_problem)
        self.team_note = line("note", "Team mode note")
        self.team_note.hide()
        form.add_row(_caption(""), self.team_note)

        self.team_join_button = QPushButton("&Join a team…")
        self.team_join_button.setObjectName("settings-team-join")
        self.team_join_button.setToolTip(
            "Use a team's library: its server checks your login (procedura team join)"
        )
        self.team_join_button.clicked.connect(self._on_team_join_button_clicked)
        self.team_leave_button = QPushButton("&Leave the team")
        self.team_leave_button.setObjectName("settings-team-leave")
        self.team_leave_button.setToolTip(
            "Back to personal mode; the team's password is removed from this computer"
        )
        self.team_leave_button.clicked.connect(self._on_team_leave_button_clicked)
        buttons = QWidget()
        buttons_line = QHBoxLayout(buttons)
        buttons_line.setContentsMargins(0, 0, 0, 0)
        buttons_line.addWidget(self.team_join_button)
        buttons_line.addWidget(self.team_leave_button)
        buttons_line.addStretch(1)
        form.add_row(_caption(""), buttons)
        return box
