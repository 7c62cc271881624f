"""Rung 5 in the window: a run's questions to a person, as dialogs.

:class:`DialogPerson` implements the core :class:`~desktop_app.core.replay.person.Person`
protocol: each question opens a dialog over the run's window and the run waits for the answer.
``confirm`` questions (an irreversible step found by healing) get *Go ahead*, *Don't* and
*Abort run*; ``locate`` questions (the element was not found) list the likeliest elements to
pick from, or a CSS selector, with *Skip step* and *Abort run*. Closing a dialog gives the safe
answer: *Don't* for a confirmation, *Abort run* for a missing element. A stopped run closes its
open dialog.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.replay.browser import Handle
from desktop_app.core.replay.person import PersonAnswer, Question
from desktop_app.ui import theme
from desktop_app.ui.windows import bring_forward, fit_window

__all__ = ["ConfirmDialog", "DialogPerson", "LocateDialog", "PersonDialog"]


class PersonDialog(QDialog):
    """A question from a run; :attr:`answer` is set when a button is pressed."""

    def __init__(self, question: Question, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.question = question
        self.answer: PersonAnswer | None = None
        self._on_answer: Callable[[PersonAnswer], None] | None = None
        # Modeless: the run window's Stop button stays usable while a question waits.
        self.setWindowModality(Qt.WindowModality.NonModal)
        self.setMinimumWidth(460)
        self._layout = QVBoxLayout(self)
        title = QLabel(question.step_title)
        title.setObjectName("person-step")
        bold = title.font()
        bold.setBold(True)
        bold.setPointSizeF(bold.pointSizeF() * 1.1)
        title.setFont(bold)
        title.setWordWrap(True)
        message = QLabel(question.message)
        message.setObjectName("person-message")
        message.setWordWrap(True)
        text = QVBoxLayout()
        text.addWidget(title)
        text.addWidget(message)
        self._header = QHBoxLayout()
        self._header.addLayout(text, 1)
        self._layout.addLayout(self._header)
        self.buttons = QDialogButtonBox()
        self._buttons: dict[str, QPushButton] = {}

    def on_answer(self, callback: Callable[[PersonAnswer], None]) -> None:
        """Call *callback* once with the answer."""
        self._on_answer = callback

    def button(self, action: str) -> QPushButton:
        """The button giving *action* (``confirm``, ``decline``, ``pick``, ``skip``, ``abort``)."""
        return self._buttons[action]

    def give(self, answer: PersonAnswer) -> None:
        """Answer with *answer* and close."""
        if self.answer is not None:
            return
        self.answer = answer
        if self._on_answer is not None:
            self._on_answer(answer)
        self.done(
            QDialog.DialogCode.Accepted if answer.action != "abort" else QDialog.DialogCode.Rejected
        )

    def safe_answer(self) -> PersonAnswer:
        """What closing the dialog means."""
        raise NotImplementedError

    def reject(self) -> None:
        """Escape or the close button: the safe answer."""
        if self.answer is None:
            self.give(self.safe_answer())
            return
        super().reject()

    def closeEvent(self, event: QCloseEvent) -> None:
        """Closing the window gives the safe answer."""
        if self.answer is None:
            self.answer = self.safe_answer()
            if self._on_answer is not None:
                self._on_answer(self.answer)
        super().closeEvent(event)

    def _add_button(
        self, action: str, text: str, role: QDialogButtonBox.ButtonRole, tip: str
    ) -> QPushButton:
        button = self.buttons.addButton(text, role)
        assert button is not None
        button.setObjectName(f"{action}-button")
        button.setToolTip(tip)
        button.setAutoDefault(False)
        self._buttons[action] = button
        return button


class ConfirmDialog(PersonDialog):
    """May this irreversible step act on the element healing found?"""

    def __init__(self, question: Question, parent: QWidget | None = None) -> None:
        super().__init__(question, parent)
        self.setObjectName("person-confirm-dialog")
        self.setWindowTitle("Confirm an irreversible step")
        icon = QLabel()
        style = self.style()
        icon.setPixmap(
            style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning).pixmap(32, 32)
        )
        icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        self._header.insertWidget(0, icon)
        if question.element:
            element = QLabel(question.element)
            element.setObjectName("person-element")
            element.setWordWrap(True)
            element.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            theme.set_role(element, "code")
            form = QFormLayout()
            form.addRow("Element:", element)
            self._layout.addLayout(form)
        go = self._add_button(
            "confirm",
            "&Go ahead",
            QDialogButtonBox.ButtonRole.AcceptRole,
            "Do the step on this element",
        )
        no = self._add_button(
            "decline",
            "&Don't",
            QDialogButtonBox.ButtonRole.RejectRole,
            "Do not do it: the step fails and the run stops there (Esc)",
        )
        abort = self._add_button(
            "abort",
            "&Abort run",
            QDialogButtonBox.ButtonRole.DestructiveRole,
            "Stop the whole run now",
        )
        go.clicked.connect(lambda: self.give(PersonAnswer(action="confirm")))
        no.clicked.connect(lambda: self.give(PersonAnswer(action="decline")))
        abort.clicked.connect(lambda: self.give(PersonAnswer(action="abort")))
        no.setDefault(True)  # Enter on a surprise dialog must not do the irreversible thing
        no.setFocus()
        self._layout.addWidget(self.buttons)

    def safe_answer(self) -> PersonAnswer:
        """Closing means no."""
        return PersonAnswer(action="decline", note="the dialog was closed")


class LocateDialog(PersonDialog):
    """Which element does this step mean?"""

    def __init__(self, question: Question, parent: QWidget | None = None) -> None:
        super().__init__(question, parent)
        self.setObjectName("person-locate-dialog")
        self.setWindowTitle("Point at the element")
        self.setMinimumSize(520, 380)
        self.choices = QListWidget()
        self.choices.setObjectName("person-choices")
        self.choices.setAccessibleName("Elements to choose from")
        self.choices.setAlternatingRowColors(True)
        for choice in question.choices:
            score = f"   ({choice.score:.0%} alike)" if choice.score is not None else ""
            item = QListWidgetItem(f"{choice.label}{score}")
            item.setToolTip(choice.handle.describe())
            self.choices.addItem(item)
        hint = QLabel(
            "The likeliest elements on the page:"
            if question.choices
            else "No likely element was found on the page."
        )
        self._layout.addWidget(hint)
        self._layout.addWidget(self.choices, 1)
        self.selector = QLineEdit()
        self.selector.setObjectName("person-selector")
        self.selector.setAccessibleName("CSS selector")
        self.selector.setPlaceholderText("or a CSS selector, e.g. #save or button.primary")
        self.selector.setClearButtonEnabled(True)
        self._layout.addWidget(self.selector)
        pick = self._add_button(
            "pick",
            "&Use this element",
            QDialogButtonBox.ButtonRole.AcceptRole,
            "Act on the chosen element (it is remembered for the next run)",
        )
        skip = self._add_button(
            "skip",
            "&Skip step",
            QDialogButtonBox.ButtonRole.ActionRole,
            "Leave this step out and go on with the next one",
        )
        abort = self._add_button(
            "abort",
            "&Abort run",
            QDialogButtonBox.ButtonRole.RejectRole,
            "Stop the whole run now (Esc)",
        )
        pick.setDefault(True)
        pick.clicked.connect(self._on_pick_clicked)
        skip.clicked.connect(lambda: self.give(PersonAnswer(action="skip")))
        abort.clicked.connect(lambda: self.give(PersonAnswer(action="abort")))
        self.choices.itemDoubleClicked.connect(lambda _item: self._on_pick_clicked())
        self.choices.currentRowChanged.connect(self._on_choices_current_row_changed)
        self.selector.textChanged.connect(self._on_selector_text_changed)
        self._layout.addWidget(self.buttons)
        if question.choices:
            self.choices.setCurrentRow(0)
            self.choices.setFocus()
        else:
            self.selector.setFocus()
        self._update()

    def pick(self, row: int) -> None:
        """Answer with the element on *row* of the list."""
        self.choices.setCurrentRow(row)
        self._on_pick_clicked()

    def safe_answer(self) -> PersonAnswer:
        """Closing means abort (as on the command line)."""
        return PersonAnswer(action="abort", note="the dialog was closed")

    def _chosen(self) -> Handle | None:
        selector = self.selector.text().strip()
        if selector:
            return Handle(selector=selector)
        row = self.choices.currentRow()
        if 0 <= row < len(self.question.choices):
            return self.question.choices[row].handle
        return None

    def _update(self) -> None:
        self._buttons["pick"].setEnabled(self._chosen() is not None)

    def _on_choices_current_row_changed(self, _row: int) -> None:
        self._update()

    def _on_selector_text_changed(self, _text: str) -> None:
        self._update()

    def _on_pick_clicked(self) -> None:
        handle = self._chosen()
        if handle is not None:
            self.give(PersonAnswer(action="pick", handle=handle))


class DialogPerson:
    """A person answering a run's questions in dialogs over *parent*.

    Args:
        parent: the window the dialogs belong to (the run window, or the tray's).
        on_asked: called with each question as its dialog opens (to say "waiting for you").
        on_answered: called with each answer.
    """

    def __init__(
        self,
        parent: QWidget | None,
        *,
        on_asked: Callable[[Question], object] | None = None,
        on_answered: Callable[[PersonAnswer], object] | None = None,
    ) -> None:
        self._parent = parent
        self._on_asked = on_asked
        self._on_answered = on_answered
        self.dialog: PersonDialog | None = None
        self.asked: list[Question] = []

    async def ask(self, question: Question) -> PersonAnswer:
        """Show the question; the answer (a stopped run closes the dialog)."""
        future: asyncio.Future[PersonAnswer] = asyncio.get_running_loop().create_future()

        def answered(answer: PersonAnswer) -> None:
            if not future.done():
                future.set_result(answer)

        kind = ConfirmDialog if question.kind == "confirm" else LocateDialog
        dialog = kind(question, self._parent)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.on_answer(answered)
        self.dialog = dialog
        self.asked.append(question)
        if self._on_asked is not None:
            self._on_asked(question)
        fit_window(dialog, dialog.sizeHint())
        bring_forward(dialog)
        QApplication.alert(dialog)
        try:
            answer = await future
        finally:
            self.dialog = None
            if dialog.answer is None:  # cancelled while waiting: the run was stopped
                dialog.answer = PersonAnswer(action="abort", note="the run was stopped")
                with contextlib.suppress(RuntimeError):
                    dialog.close()
        if self._on_answered is not None:
            self._on_answered(answer)
        return answer
