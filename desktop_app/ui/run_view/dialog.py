"""The parameter dialog: a run's parameters and options, checked before Run is enabled."""

from __future__ import annotations

from urllib.parse import urlsplit

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QFrame,
    QGroupBox,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.errors import ProceduraError
from desktop_app.core.models.run import RunTrigger
from desktop_app.core.models.workflow import GotoStep, WorkflowVersion, walk
from desktop_app.core.replay.render import check_base_url
from desktop_app.ops.run import replay_options
from desktop_app.settings import Settings
from desktop_app.ui import theme
from desktop_app.ui.backend import RunRequest
from desktop_app.ui.parameter_form import ParameterForm
from desktop_app.ui.run_view.run_setup import STATUS_WORDS, RunSetup
from desktop_app.ui.windows import fit_window

__all__ = ["RunDialog"]


def _origin(version: WorkflowVersion) -> str | None:
    for step in walk(version.workflow.steps):
        if isinstance(step, GotoStep):
            parts = urlsplit(step.url)
            if parts.scheme in ("http", "https") and parts.netloc:
                return f"{parts.scheme}://{parts.netloc}"
    return None


class RunDialog(QDialog):
    """The parameters and options of one run.

    Args:
        setup: the version and what to prefill.
        settings: the settings in force (defaults of the options).
        parent: the window it belongs to.
        previous: a request to start from ("Run again…"), instead of the last run's values.
    """

    def __init__(
        self,
        setup: RunSetup,
        settings: Settings,
        parent: QWidget | None = None,
        *,
        previous: RunRequest | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("run-dialog")
        self._setup = setup
        self._settings = settings
        workflow = setup.version.workflow
        doing = "Verify" if setup.verify else "Run"
        self.setWindowTitle(f"{doing} “{workflow.name}”")
        self.setMinimumWidth(560)
        layout = QVBoxLayout(self)

        title = QLabel(workflow.name)
        big = title.font()
        big.setPointSizeF(big.pointSizeF() * 1.25)
        big.setBold(True)
        title.setFont(big)
        title.setWordWrap(True)
        layout.addWidget(title)
        state = STATUS_WORDS[setup.version.status]
        about = QLabel(f"Version {setup.version.version} · {state}")
        about.setObjectName("run-version")
        about.setEnabled(False)
        layout.addWidget(about)
        if workflow.description:
            description = QLabel(workflow.description)
            description.setWordWrap(True)
            layout.addWidget(description)
        if setup.verify:
            note = QLabel(
                "A verification replays this version with the values it was recorded with (or "
                "the ones below) and stops before its first irreversible step (submit, pay, "
                "delete, send), so nothing is committed. Review then shows each step's result."
            )
            note.setObjectName("verify-note")
            note.setWordWrap(True)
            layout.addWidget(note)
        elif setup.unapproved:
            warning = QLabel(
                f"⚠ Version {setup.version.version} is {state}, not approved. Run it to try it "
                "out; only an approved version runs from the tray."
            )
            warning.setObjectName("draft-warning")
            warning.setWordWrap(True)
            theme.set_role(warning, "banner", "warning")
            layout.addWidget(warning)

        values = dict(previous.values) if previous is not None else setup.last_values
        secrets = dict(previous.secrets) if previous is not None else setup.stored_secrets
        self.form = ParameterForm(
            workflow, values=values, secrets=secrets, stored=setup.stored_secrets
        )
        if previous is not None:
            self.form.remember.setChecked(previous.save_secrets or bool(setup.stored_secrets))
        params = QGroupBox("Parameters")
        params_layout = QVBoxLayout(params)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self.form)
        # Three fields at least; more when the screen has room (the dialog opens at its size
        # hint, bounded by the screen).
        scroll.setMinimumHeight(min(90 + 62 * len(workflow.parameters), 214))
        params_layout.addWidget(scroll)
        layout.addWidget(params, 1)

        options = QGroupBox("Options")
        form = QFormLayout(options)
        self.base_url = QLineEdit()
        self.base_url.setObjectName("run-base-url")
        self.base_url.setClearButtonEnabled(True)
        origin = _origin(setup.version)
        self.base_url.setPlaceholderText(
            f"{origin} (as recorded)" if origin else "the site as recorded"
        )
        self.base_url.setToolTip(
            "Run against another origin (a staging copy, another port): every page of the "
            "workflow's site is opened there instead. Leave it empty to use the recorded site."
        )
        form.addRow("&Base URL:", self.base_url)
        self.show_browser = QCheckBox("&Show the browser while it runs")
        self.show_browser.setObjectName("run-show-browser")
        self.show_browser.setChecked(True)
        self.show_browser.setToolTip(
            "Unchecked, the browser runs headless (no window); the run view still shows a "
            "screenshot of every step."
        )
        form.addRow(self.show_browser)
        self.use_llm = QCheckBox("Allow the &LLM to repair steps (rung 4)")
        self.use_llm.setObjectName("run-use-llm")
        if setup.llm_configured:
            self.use_llm.setChecked(True)
            self.use_llm.setToolTip(
                "Where the page has drifted and neither the recorded locators, the fingerprint "
                f"nor a remembered repair finds an element, ask the LLM ({settings.llm_model}). "
                f"At most {settings.llm_max_calls_per_run} calls per run."
            )
        else:
            self.use_llm.setChecked(False)
            self.use_llm.setEnabled(False)
            self.use_llm.setToolTip("No LLM is configured: set one up under Settings.")
        form.addRow(self.use_llm)
        self.confirm = QCheckBox("&Confirm irreversible steps found by healing")
        self.confirm.setObjectName("run-confirm-irreversible")
        self.confirm.setChecked(settings.confirm_irreversible)
        self.confirm.setToolTip(
            "Ask before a step that submits, pays, deletes or sends acts on an element that was "
            "not found by its recorded locator. Unchecked, such steps go ahead without asking."
        )
        form.addRow(self.confirm)
        self.through = QCheckBox("Do the &irreversible steps too")
        self.through.setObjectName("verify-through-irreversible")
        self.through.setToolTip(
            "The verification goes on past its first irreversible step: it submits, pays, "
            "deletes or sends for real (on a staging copy, give its Base URL)."
        )
        if setup.verify:
            form.addRow(self.through)
        if previous is not None:
            self.base_url.setText(previous.base_url or "")
            self.show_browser.setChecked(not previous.headless)
            self.use_llm.setChecked(previous.options.use_llm and setup.llm_configured)
            self.confirm.setChecked(not previous.options.assume_yes)
        layout.addWidget(options)

        self.options_error = QLabel()
        self.options_error.setObjectName("run-options-error")
        theme.set_tone(self.options_error, "error")
        self.options_error.setWordWrap(True)
        self.options_error.hide()
        layout.addWidget(self.options_error)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.run_button = QPushButton("&Verify" if setup.verify else "&Run")
        self.run_button.setObjectName("run-button")
        self.run_button.setDefault(True)
        self.run_button.setToolTip("Start the run (Ctrl+Enter)")
        buttons.addButton(self.run_button, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        run_shortcut = QAction(self)
        run_shortcut.setShortcuts([QKeySequence("Ctrl+Return"), QKeySequence("Ctrl+Enter")])
        run_shortcut.triggered.connect(self.accept)
        self.addAction(run_shortcut)

        self.form.validity_changed.connect(self._on_form_validity_changed)
        self.base_url.textChanged.connect(self._on_base_url_text_changed)
        self._update()
        self.form.focus_first()
        fit_window(self, self.sizeHint())

    def is_ready(self) -> bool:
        """Whether Run is enabled."""
        return self.run_button.isEnabled()

    def error(self) -> str:
        """What keeps Run disabled ("" when nothing)."""
        return self.form.error() or self.options_error.text()

    def request(self) -> RunRequest:
        """The run as asked for."""
        verify = self._setup.verify
        options = replay_options(
            self._settings,
            trigger=RunTrigger.VERIFY if verify else RunTrigger.GUI,
            confirm=self.confirm.isChecked(),
            use_llm=self.use_llm.isChecked(),
            stop_before_irreversible=verify and not self.through.isChecked(),
        )
        return RunRequest(
            version=self._setup.version,
            values=self.form.values(),
            secrets=self.form.secrets(),
            options=options,
            base_url=self.base_url.text().strip() or None,
            headless=not self.show_browser.isChecked(),
            save_secrets=self.form.remember_secrets(),
        )

    def accept(self) -> None:
        """Start only with valid values."""
        if not self._update():
            self.form.focus_first()
            return
        super().accept()

    def _base_url_problem(self) -> str:
        text = self.base_url.text().strip()
        if not text:
            return ""
        try:
            check_base_url(text)
        except ProceduraError:
            return f"Base URL {text!r} is not an http(s) URL; write it like https://staging.example.com"
        return ""

    def _update(self) -> bool:
        problem = self._base_url_problem()
        self.options_error.setText(problem)
        self.options_error.setVisible(bool(problem))
        ready = self.form.is_valid() and not problem
        self.run_button.setEnabled(ready)
        self.run_button.setToolTip(
            "Start the run (Ctrl+Enter)" if ready else (self.form.error() or problem)
        )
        return ready

    def _on_form_validity_changed(self, _valid: bool) -> None:
        self._update()

    def _on_base_url_text_changed(self, _text: str) -> None:
        self._update()
