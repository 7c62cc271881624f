"""A one-line editor for ``{placeholder}`` templates: placeholders shown as chips, and completion.

Typing ``{`` lists the parameters and the variables steps store; a known placeholder is drawn as
a blue chip, an unknown one in red with a wavy underline.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from PySide6.QtCore import QMimeData, QStringListModel, Qt, Signal
from PySide6.QtGui import (
    QFocusEvent,
    QFont,
    QKeyEvent,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import QAbstractItemView, QCompleter, QFrame, QPlainTextEdit, QWidget

from desktop_app.core.editing import placeholder_spans
from desktop_app.ui import theme

__all__ = ["PlaceholderHighlighter", "TemplateEdit"]

#: A placeholder being typed just before the cursor: ``{`` and the start of a name.
_TYPING = re.compile(r"(?<!\{)\{([a-z0-9_]*)$")


class PlaceholderHighlighter(QSyntaxHighlighter):
    """Draws each ``{placeholder}`` of a document as a chip (red when the name is unknown)."""

    def __init__(self, document: QTextDocument, names: Callable[[], Sequence[str]]) -> None:
        super().__init__(document)
        self._names = names
        self._known = QTextCharFormat()
        self._known.setBackground(theme.color("info_bg"))
        self._known.setForeground(theme.color("info_fg"))
        self._known.setFontWeight(QFont.Weight.DemiBold)
        self._unknown = QTextCharFormat()
        self._unknown.setBackground(theme.color("error_bg"))
        self._unknown.setForeground(theme.color("error_fg"))
        self._unknown.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
        self._unknown.setUnderlineColor(theme.color("error_fg"))
        self._unknown.setToolTip("Not a parameter nor a stored variable")

    def highlightBlock(self, text: str) -> None:
        known = set(self._names())
        for start, end, name in placeholder_spans(text):
            self.setFormat(start, end - start, self._known if name in known else self._unknown)


class TemplateEdit(QPlainTextEdit):
    """A single-line text field for templates such as ``Contact {full_name} created``.

    Enter or leaving the field commits (``editing_finished``); Escape puts back the committed
    text. The field's own Ctrl+Z undoes typing that is not committed yet.

    Signals:
        editing_finished(): the text was committed and differs from what was set.
    """

    editing_finished = Signal()

    def __init__(self, parent: QWidget | None = None, *, placeholder_text: str = "") -> None:
        super().__init__(parent)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setTabChangesFocus(True)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setPlaceholderText(placeholder_text)
        self.document().setDocumentMargin(3)
        height = self.fontMetrics().lineSpacing() + 2 * 3 + 2 * self.frameWidth() + 4
        self.setFixedHeight(height)
        self._names: list[str] = []
        self._committed = ""
        self._highlighter = PlaceholderHighlighter(self.document(), lambda: self._names)
        self._model = QStringListModel(self)
        self._completer = QCompleter(self._model, self)
        self._completer.setWidget(self)
        self._completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        self._completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self._completer.setFilterMode(Qt.MatchFlag.MatchContains)
        # The text overload of the signal (PySide6's stubs cannot index a signal by type).
        self._completer.activated[str].connect(self._on_completer_activated)  # type: ignore[index]

    # ── content ─────────────────────────────────────────────────────────────────────────────

    def text(self) -> str:
        """The text as typed."""
        return self.toPlainText()

    def set_text(self, text: str) -> None:
        """Show *text* as the committed value (the cursor stays put when nothing changed)."""
        self._committed = text
        if text != self.toPlainText():
            self.setPlainText(text)
            self.moveCursor(QTextCursor.MoveOperation.End)

    def set_names(self, names: Sequence[str]) -> None:
        """The names completion offers and the highlighter knows."""
        if list(names) == self._names:
            return
        self._names = list(names)
        self._model.setStringList(self._names)
        self._highlighter.rehighlight()

    def completer(self) -> QCompleter:
        """The ``{`` completer (tests and screenshots reach its popup through it)."""
        return self._completer

    def commit(self) -> None:
        """Commit the text now (as Enter does)."""
        if self.toPlainText() != self._committed:
            self._committed = self.toPlainText()
            self.editing_finished.emit()

    # ── events ──────────────────────────────────────────────────────────────────────────────

    def keyPressEvent(self, event: QKeyEvent) -> None:
        popup = self._popup()
        key = event.key()
        if popup.isVisible() and key in (
            Qt.Key.Key_Enter,
            Qt.Key.Key_Return,
            Qt.Key.Key_Escape,
            Qt.Key.Key_Tab,
            Qt.Key.Key_Backtab,
        ):
            event.ignore()  # the completer handles these
            return
        if key in (Qt.Key.Key_Enter, Qt.Key.Key_Return):
            self.commit()
            return
        if key == Qt.Key.Key_Escape and self.toPlainText() != self._committed:
            self.setPlainText(self._committed)
            self.moveCursor(QTextCursor.MoveOperation.End)
            return
        super().keyPressEvent(event)
        self.update_completion()

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        if event.reason() != Qt.FocusReason.PopupFocusReason:
            self.commit()

    def insertFromMimeData(self, source: QMimeData) -> None:
        # One line only: pasted line breaks become spaces.
        self.insertPlainText(source.text().replace("\r\n", " ").replace("\n", " "))

    # ── completion ──────────────────────────────────────────────────────────────────────────

    def update_completion(self) -> None:
        """Offer the names matching the placeholder being typed, or hide the list."""
        popup = self._popup()
        before = self.toPlainText()[: self.textCursor().position()]
        typing = _TYPING.search(before)
        if typing is None or not self._names:
            popup.hide()
            return
        self._completer.setCompletionPrefix(typing.group(1))
        if self._completer.completionCount() == 0:
            popup.hide()
            return
        popup.setCurrentIndex(self._completer.completionModel().index(0, 0))
        rect = self.cursorRect()
        rect.setWidth(popup.sizeHintForColumn(0) + popup.verticalScrollBar().sizeHint().width())
        self._completer.complete(rect)

    def _popup(self) -> QAbstractItemView:
        popup = self._completer.popup()  # the completer makes its list when first asked
        assert popup is not None
        return popup

    def _on_completer_activated(self, name: str) -> None:
        cursor = self.textCursor()
        before = self.toPlainText()[: cursor.position()]
        typing = _TYPING.search(before)
        if typing is not None:
            cursor.movePosition(
                QTextCursor.MoveOperation.Left,
                QTextCursor.MoveMode.KeepAnchor,
                len(typing.group(0)),
            )
        after = self.toPlainText()[cursor.selectionEnd() :]
        cursor.insertText("{" + name + ("" if after.startswith("}") else "}"))
        if after.startswith("}"):
            cursor.movePosition(QTextCursor.MoveOperation.Right)
        self.setTextCursor(cursor)
