"""The Settings screen's "Join a team" dialog: the team's server, the login, and its secrets."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from desktop_app.ui import theme
from desktop_app.ui.backend import TeamJoinRequest

__all__ = ["TeamJoinDialog"]


class TeamJoinDialog(QDialog):
    """Asks for the team's database URL and password, and optionally its search index (with its
    token) and its runner fleet's queue. Join does not close it: the page joins on a worker
    thread, then closes it (:meth:`accept`) or shows why it failed (:meth:`show_error`).

    Signals:
        join_requested(TeamJoinRequest): the person pressed Join with a database URL given.
    """

    join_requested = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("team-join-dialog")
        self.setWindowTitle("Join a team")
        self.setMinimumWidth(560)

        intro = QLabel(
            "Your team's admin gives you the database's address and your login. The password "
            "and the index's token are kept in the OS keyring, never in a file. Your personal "
            "library stays in the data folder: leaving the team brings it back."
        )
        intro.setWordWrap(True)
        theme.set_tone(intro, "muted")

        def field(name: str, placeholder: str, *, secret: bool = False) -> QLineEdit:
            editor = QLineEdit()
            editor.setObjectName(f"team-join-{name}")
            editor.setPlaceholderText(placeholder)
            editor.setClearButtonEnabled(not secret)
            if secret:
                editor.setEchoMode(QLineEdit.EchoMode.Password)
            editor.textChanged.connect(self._on_field_text_changed)
            return editor

        self.database = field("database", "postgresql://you@db.example.com:5432/team")
        self.password = field("password", "your database password", secret=True)
        self.index = field("index", "optional: https://index.example.com")
        self.token = field("token", "the index's token, if it has one", secret=True)
        self.queue = field("queue", "optional: redis://queue.example.com:6379/0")
        form = QFormLayout()
        for caption, editor in (
            ("&Database URL:", self.database),
            ("&Password:", self.password),
            ("Search &index:", self.index),
            ("Index &token:", self.token),
            ("Runner fleet &queue:", self.queue),
        ):
            label = QLabel(caption)
            label.setBuddy(editor)
            editor.setAccessibleName(caption.replace("&", "").rstrip(":"))
            form.addRow(label, editor)

        self.error = QLabel()
        self.error.setObjectName("team-join-error")
        self.error.setAccessibleName("Why joining failed")
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error.hide()

        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.join_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.join_button.setText("&Join")
        self.join_button.setObjectName("team-join-ok")
        self.buttons.accepted.connect(self._on_buttons_accepted)
        self.buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(self.buttons)
        self._busy = False
        self._update_button()

    def request(self) -> TeamJoinRequest:
        """What the fields say."""
        return TeamJoinRequest(
            database=self.database.text().strip(),
            password=self.password.text(),
            index=self.index.text().strip() or None,
            token=self.token.text() or None,
            queue=self.queue.text().strip() or None,
        )

    def set_busy(self, busy: bool) -> None:
        """While joining: the fields wait, and the dialog says so."""
        self._busy = busy
        for editor in (self.database, self.password, self.index, self.token, self.queue):
            editor.setEnabled(not busy)
        if busy:
            self._show("Checking your login with the team's server…", None)
        self._update_button()

    def show_error(self, line: str) -> None:
        """Say in one line why joining failed (nothing was changed)."""
        self.set_busy(False)
        self._show(line, False)

    def _show(self, text: str, ok: bool | None) -> None:
        self.error.setText(text)
        self.error.setVisible(bool(text))
        theme.set_tone(self.error, "muted" if ok is None else "ok" if ok else "error")

    def _update_button(self) -> None:
        self.join_button.setEnabled(not self._busy and bool(self.database.text().strip()))

    def _on_field_text_changed(self, _text: str) -> None:
        self._update_button()

    def _on_buttons_accepted(self) -> None:
        if not self.join_button.isEnabled():
            return
        self.join_requested.emit(self.request())
