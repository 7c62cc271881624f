"""The Settings screen: the sections in a column, and loading, changing and applying them."""

from __future__ import annotations

import asyncio
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.errors import ProceduraError
from desktop_app.ops.changes import Changes, Origin
from desktop_app.ops.library import Reindexed
from desktop_app.settings import (
    Settings,
    SettingsError,
    environment_overrides,
    platform_home,
    read_data_dir_pointer,
)
from desktop_app.ui import theme
from desktop_app.ui.backend import TeamJoined, TeamJoinRequest, TeamState
from desktop_app.ui.host import Host
from desktop_app.ui.settings_page.fields import (
    _explain,
    _Field,
    _WheelGuard,
)
from desktop_app.ui.settings_page.sections import SettingsSections
from desktop_app.ui.settings_page.state import SettingsState
from desktop_app.ui.settings_page.team import TeamJoinDialog
from desktop_app.ui.tasks import describe_error

__all__ = ["SettingsPage"]


class SettingsPage(SettingsSections):
    """Settings, grouped in sections with what each one does.

    Signals:
        settings_saved(): Apply wrote the settings (after ``settings_changed``).
        team_shown(): the Team section shows what the team's server said (or personal mode).
        connection_tested(bool, str): a connection test ended: whether it worked, and its line.
    """

    settings_saved = Signal()
    connection_tested = Signal(bool, str)
    team_shown = Signal()

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
        self._team: TeamState | None = None
        self._team_asked = 0
        self.join_dialog: TeamJoinDialog | None = None
        # The search index keeps the embeddings it was opened with until the next start.
        self._started_with = _embedding_identity(host.backend.settings)

        content = QWidget()
        content.setObjectName("settings-content")
        column = QVBoxLayout(content)
        column.setContentsMargins(16, 12, 16, 12)
        column.setSpacing(14)
        title = QLabel("Settings")
        theme.set_role(title, "heading")
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
        column.addWidget(self._team_section())
        column.addStretch(1)

        scroll = QScrollArea()
        scroll.setObjectName("settings-scroll")
        scroll.setAccessibleName("Settings")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(content)
        scroll.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        content.setMaximumWidth(1080)

        self.message = QLabel()
        self.message.setObjectName("settings-message")
        self.message.setAccessibleName("Settings status")
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
        self._refresh_team()

    def _fill(self, state: SettingsState) -> None:
        self._state = state
        settings = state.settings
        for name, item in self._fields.items():
            item.put(getattr(settings, name))
            theme.set_invalid(item.editor, False)
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
        theme.set_invalid(self.home_edit, False)
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
        theme.set_invalid(item.editor, False)
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
        theme.set_tone(self.home_note, "muted")

    def _overrides(self) -> dict[str, str]:
        return self._state.overrides if self._state is not None else {}

    def _say(self, text: str, ok: bool | None) -> None:
        """One line in the bar: green when *ok*, red when not, muted when None."""
        self.message.setText(text)
        self._pending_shown = False
        theme.set_tone(self.message, "muted" if ok is None else "ok" if ok else "error")

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
            done = Changes(Origin.WINDOW)
            if home is not None:
                done |= await self._host.tasks.call(backend.set_data_dir, home or None)
            if changes:
                done |= await self._host.tasks.call(backend.save_settings, changes)
            self._host.events.announce(done)
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
            theme.set_invalid(editor, True)
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
        done = await self._host.tasks.call(backend.set_api_key, key)
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
            self._host.events.announce(done)
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
        theme.set_tone(self.test_result, "muted" if ok is None else "ok" if ok else "error")
        self.test_details.setPlainText(details)
        self.test_details_button.setVisible(bool(details))
        if not details:
            self.test_details_button.setChecked(False)

    # ── search index ────────────────────────────────────────────────────────────────────────

    def _on_reindex_button_clicked(self) -> None:
        self.reindex_button.setEnabled(False)

        def done(rebuilt: Reindexed) -> None:
            self.reindex_button.setEnabled(True)
            self._say(
                f"The search index was rebuilt: {_count(rebuilt.workflows, 'workflow')}, "
                f"{_count(rebuilt.experiences, 'remembered repair')}.",
                True,
            )
            self._host.events.announce(rebuilt.changes)

        def failed(exc: BaseException) -> bool:
            self.reindex_button.setEnabled(True)
            return self._on_failed(exc)

        self._host.tasks.run(
            self._host.backend.reindex,
            label="Rebuilding the search index…",
            on_done=done,
            on_error=failed,
        )

    # ── team ────────────────────────────────────────────────────────────────────────────────

    @property
    def team(self) -> TeamState | None:
        """What the Team section shows (None until the first answer)."""
        return self._team

    def _refresh_team(self) -> None:
        """Ask the team's server who this machine is there, on a thread of its own (a server
        far away, or gone, must not hold up the stores' thread)."""
        self._team_asked += 1
        asked = self._team_asked
        backend = self._host.backend

        async def load() -> TeamState:
            return await asyncio.to_thread(backend.team_state)

        def done(state: TeamState) -> None:
            if asked == self._team_asked:  # an older answer never overwrites a newer one
                self._show_team(state)

        self._host.tasks.start(load(), label="Asking the team's server…", on_done=done)

    def _show_team(self, state: TeamState) -> None:
        self._team = state
        variable = self._overrides().get("team_database")
        if not state.team:
            self.team_mode.setText(f"Personal: your own library, in {state.database}")
        else:
            self.team_mode.setText(f"Team: {state.database}")
        for caption, label in self._team_rows:
            caption.setVisible(state.team)
            label.setVisible(state.team)
        if state.user is None:
            self.team_user.setText("not known (the server did not answer)")
        else:
            self.team_user.setText(
                state.user + (" (the owner of the team's database)" if state.owner else "")
            )
        if state.roles:
            self.team_roles.setText("\n".join(f"{role}: {rights}" for role, rights in state.roles))
        elif state.owner:
            self.team_roles.setText("everything (you own the team's database)")
        elif state.user is not None:
            self.team_roles.setText(
                "nothing yet: ask an admin to give you a role (procedura team add-member)"
            )
        else:
            self.team_roles.setText("not known")
        self.team_index.setText(state.index or "none: this computer keeps its own index")
        self.team_queue.setText(state.queue or "none: no runner fleet")
        self.team_problem.setText(state.problem or "")
        self.team_problem.setVisible(state.problem is not None)
        theme.set_tone(self.team_problem, "error")
        notes: list[str] = []
        if state.restart_needed:
            notes.append(
                "Procedura opens this library when it next starts: quit it and start it again."
            )
        if variable is not None:
            notes.append(f"{variable} sets the team's database: unset it to change the mode here.")
        self.team_note.setText(" ".join(notes))
        self.team_note.setVisible(bool(notes))
        theme.set_tone(self.team_note, "warning" if state.restart_needed else "muted")
        self.team_join_button.setEnabled(variable is None)
        self.team_leave_button.setEnabled(variable is None and state.team)
        self.team_shown.emit()

    def _on_team_join_button_clicked(self) -> None:
        if self.join_dialog is not None:
            self.join_dialog.deleteLater()
        dialog = TeamJoinDialog(self)
        dialog.join_requested.connect(self._on_join_dialog_join_requested)
        self.join_dialog = dialog
        dialog.open()

    def _on_join_dialog_join_requested(self, request: TeamJoinRequest) -> None:
        dialog = self.join_dialog
        if dialog is None:
            return
        dialog.set_busy(True)
        backend = self._host.backend

        async def join() -> TeamJoined:
            return await self._host.tasks.call(backend.join_team, request)

        def failed(exc: BaseException) -> bool:
            if dialog is self.join_dialog and dialog.isVisible():
                dialog.show_error(describe_error(exc))
            else:
                self._say(describe_error(exc), False)
            return isinstance(exc, ProceduraError)  # a bug is reported as well

        self._host.tasks.start(
            join(), label="Joining the team…", on_done=self._on_team_joined, on_error=failed
        )

    def _on_team_joined(self, joined: TeamJoined) -> None:
        if self.join_dialog is not None and self.join_dialog.isVisible():
            self.join_dialog.accept()
        self._say(joined.message, True)
        self._host.show_status("Joined the team: restart Procedura to open its library")
        self._announce(joined.changes)
        self._refresh_team()

    def _on_team_leave_button_clicked(self) -> None:
        team = self._team
        where = f" {team.database}" if team is not None and team.team else ""
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Leave the team",
            f"Leave the team{where} and go back to your own library? The team's password is "
            "removed from this computer; the team's library stays on its server.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setObjectName("settings-team-leave-confirm")
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.finished.connect(self._on_leave_confirm_finished)
        box.open()

    def _on_leave_confirm_finished(self, result: int) -> None:
        if result != QMessageBox.StandardButton.Yes:
            return

        def done(changes: Changes) -> None:
            self._say(
                "Back to personal mode: Procedura opens your own library when it next starts.",
                True,
            )
            self._announce(changes)
            self._refresh_team()

        self._host.tasks.run(
            self._host.backend.leave_team,
            label="Leaving the team…",
            on_done=done,
            on_error=self._on_failed,
        )

    def _announce(self, changes: Changes) -> None:
        """Tell the other screens, without reloading this one's fields (nothing is lost)."""
        self._saving = True
        try:
            self._host.events.announce(changes)
        finally:
            self._saving = False

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
