"""Rung 5 in the window: a run's questions to a person, as dialogs.

:class:`DialogPerson` implements the core :class:`~desktop_app.core.replay.person.Person`
protocol: each question opens a dialog over the run's window and the run waits for the answer.
``confirm`` questions (an irreversible step found by healing) get *Go ahead*, *Don't* and
*Abort run*; ``locate`` questions (the element was not found) list the likeliest elements to
pick from, or a CSS selector, with *Skip step* and *Abort run*. Closing a dialog gives the safe
answer: *Don't* for a confirmation, *Abort run* for a missing element. A stopped run closes its
open dialog.

Elements are named as a person sees them (``the "Delete" button``), with the recorded picture
of the element cut out of the step's screenshot when the recording has one; the locator is only
a tooltip. A locate question preselects an element only when it is a clear best (the core's
``suggested``); otherwise nothing is chosen and *Use this element* waits for the person.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Final

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QCloseEvent, QColor, QImage, QPixmap
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

from desktop_app.core.models.common import BoundingBox
from desktop_app.core.replay.browser import Handle
from desktop_app.core.replay.naming import likeness_words
from desktop_app.core.replay.person import PersonAnswer, Question
from desktop_app.ui.windows import bring_forward, fit_window

__all__ = [
    "ConfirmDialog",
    "DialogPerson",
    "LocateDialog",
    "PersonDialog",
    "PictureLoader",
    "element_picture",
]

#: Loads a recorded screenshot by its media ref, off the GUI thread (None when it is gone).
PictureLoader = Callable[[str], Awaitable[QImage | None]]

#: How large the element's picture is shown at most (logical pixels).
_PICTURE_SIZE: Final = (420, 180)
#: Page around the element kept in its picture (CSS pixels), for context.
_CONTEXT_PX: Final = 48.0
#: Scales a recorded screenshot may have against the page's CSS pixels (the screencast fits
#: the page into 1600 by 1200 device pixels).
_SCALES: Final = (1.0, 1.25, 1.5, 2.0, 0.8, 0.75, 2.5, 3.0)
#: The recorder outlines the element acted on in this colour (3 px, 2 px away from it).
_OUTLINE: Final = QColor(0xE8, 0x11, 0x2D)


def _outlined(image: QImage, rect: QRect) -> float:
    """How much of *rect*'s edge is drawn in the recorder's outline colour (0–1)."""
    hits = total = 0
    for i in range(17):
        t = i / 16
        x = rect.left() + round(t * rect.width())
        y = rect.top() + round(t * rect.height())
        for px, py in ((x, rect.top()), (x, rect.bottom()), (rect.left(), y), (rect.right(), y)):
            if not image.rect().contains(px, py):
                continue
            total += 1
            c = image.pixelColor(px, py)
            near = abs(c.red() - _OUTLINE.red()) + abs(c.green() - _OUTLINE.green())
            near += abs(c.blue() - _OUTLINE.blue())
            hits += near < 120
    return hits / total if total else 0.0


def element_picture(image: QImage, box: BoundingBox | None) -> QImage:
    """The part of a step's recorded screenshot *image* around the element in *box* (CSS
    pixels). The screenshot's scale is the one at which the recorder's outline is found around
    the box; without a box, or when no scale fits, the whole screenshot (the element is
    outlined in it)."""
    if box is None or box.width <= 0 or box.height <= 0:
        return image
    best: tuple[float, float] | None = None
    for scale in _SCALES:
        pad = 3.5 * scale
        rect = QRect(
            round(box.x * scale - pad),
            round(box.y * scale - pad),
            round(box.width * scale + 2 * pad),
            round(box.height * scale + 2 * pad),
        )
        if not image.rect().contains(rect.center()):
            continue
        seen = _outlined(image, rect)
        if best is None or seen > best[1]:
            best = (scale, seen)
    if best is None or best[1] < 0.5:
        return image
    scale = best[0]
    margin = _CONTEXT_PX * scale
    rect = QRect(
        round(box.x * scale - margin),
        round(box.y * scale - margin),
        round(box.width * scale + 2 * margin),
        round(box.height * scale + 2 * margin),
    ).intersected(image.rect())
    return image.copy(rect)


class PersonDialog(QDialog):
    """A question from a run; :attr:`answer` is set when a button is pressed."""

    def __init__(
        self, question: Question, parent: QWidget | None = None, picture: QImage | None = None
    ) -> None:
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
        self.element: QLabel | None = None
        if question.element:
            self.element = QLabel(question.element)
            self.element.setObjectName("person-element")
            self.element.setWordWrap(True)
            self.element.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            if question.locator:
                self.element.setToolTip(f"Found by: {question.locator}")
            form = QFormLayout()
            form.addRow("Element:" if question.kind == "confirm" else "Looking for:", self.element)
            self._layout.addLayout(form)
        self.picture: QLabel | None = None
        if picture is not None and not picture.isNull():
            self.picture = QLabel()
            self.picture.setObjectName("person-picture")
            self.picture.setAccessibleName("The element as recorded")
            self.picture.setToolTip("The element as it was recorded (outlined in red)")
            shown = QPixmap.fromImage(element_picture(picture, question.box))
            width, height = _PICTURE_SIZE
            if shown.width() > width or shown.height() > height:
                shown = shown.scaled(
                    width,
                    height,
                    Qt.AspectRatioMode.KeepAspectRatio,
                    Qt.TransformationMode.SmoothTransformation,
                )
            self.picture.setPixmap(shown)
            self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
            self._layout.addWidget(self.picture)
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

    def __init__(
        self, question: Question, parent: QWidget | None = None, picture: QImage | None = None
    ) -> None:
        super().__init__(question, parent, picture)
        self.setObjectName("person-confirm-dialog")
        self.setWindowTitle("Confirm an irreversible step")
        icon = QLabel()
        style = self.style()
        icon.setPixmap(
            style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning).pixmap(32, 32)
        )
        icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        self._header.insertWidget(0, icon)
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

    def __init__(
        self, question: Question, parent: QWidget | None = None, picture: QImage | None = None
    ) -> None:
        super().__init__(question, parent, picture)
        self.setObjectName("person-locate-dialog")
        self.setWindowTitle("Point at the element")
        self.setMinimumSize(520, 380)
        self.choices = QListWidget()
        self.choices.setObjectName("person-choices")
        self.choices.setAccessibleName("Elements to choose from")
        self.choices.setAlternatingRowColors(True)
        self.choices.setAccessibleName("Elements on the page")
        for choice in question.choices:
            item = QListWidgetItem(_choice_text(choice.label, choice.score))
            item.setToolTip(choice.detail or choice.handle.describe())
            self.choices.addItem(item)
        if not question.choices:
            said = "No likely element was found on the page."
        elif question.suggested is None:
            said = "The likeliest elements on the page (none stands out: pick one):"
        else:
            said = "The likeliest elements on the page:"
        hint = QLabel(said)
        hint.setObjectName("person-choices-hint")
        hint.setBuddy(self.choices)
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
        self.choices.itemSelectionChanged.connect(self._on_choices_item_selection_changed)
        self.selector.textChanged.connect(self._on_selector_text_changed)
        self._layout.addWidget(self.buttons)
        suggested = question.suggested
        if suggested is not None and 0 <= suggested < len(question.choices):
            self.choices.setCurrentRow(suggested)
        else:
            self.choices.setCurrentRow(-1)
        if question.choices:
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
        selected = self.choices.selectedIndexes()  # chosen, not merely under the focus
        row = selected[0].row() if selected else -1
        if 0 <= row < len(self.question.choices):
            return self.question.choices[row].handle
        return None

    def _update(self) -> None:
        self._buttons["pick"].setEnabled(self._chosen() is not None)

    def _on_choices_item_selection_changed(self) -> None:
        self._update()

    def _on_selector_text_changed(self, _text: str) -> None:
        self._update()

    def _on_pick_clicked(self) -> None:
        handle = self._chosen()
        if handle is not None:
            self.give(PersonAnswer(action="pick", handle=handle))


def _choice_text(label: str, score: float | None) -> str:
    """A choice as listed: ``the "Save" button — much like the recorded one (82%)``."""
    if score is None:
        return label
    return f"{label} — {likeness_words(score)} ({score:.0%})"


class DialogPerson:
    """A person answering a run's questions in dialogs over *parent*.

    Args:
        parent: the window the dialogs belong to (the run window, or the tray's).
        on_asked: called with each question as its dialog opens (to say "waiting for you").
        on_answered: called with each answer.
        pictures: loads a question's recorded screenshot (without it, no picture is shown).
    """

    def __init__(
        self,
        parent: QWidget | None,
        *,
        on_asked: Callable[[Question], object] | None = None,
        on_answered: Callable[[PersonAnswer], object] | None = None,
        pictures: PictureLoader | None = None,
    ) -> None:
        self._parent = parent
        self._pictures = pictures
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

        picture = None
        if question.picture is not None and self._pictures is not None:
            with contextlib.suppress(RuntimeError):  # the window is closing: no picture
                picture = await self._pictures(question.picture)
        kind = ConfirmDialog if question.kind == "confirm" else LocateDialog
        dialog = kind(question, self._parent, picture)
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
