"""The Review screen's own widgets: the diff browser and the review comment dialog."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, QUrl, Signal
from PySide6.QtGui import QImage, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from desktop_app.ui import theme
from desktop_app.ui.windows import fit_window

__all__ = ["CommentDialog", "DiffBrowser"]


class DiffBrowser(QTextBrowser):
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
        theme.set_tone(self.problem, "error")
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
        fit_window(self, QSize(460, 240))
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
