"""Building blocks of the Settings screen, private to this package: a field, a form, colours."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import annotated_types
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QGridLayout, QLabel, QLineEdit, QWidget

from desktop_app.settings import Settings
from desktop_app.ui import theme

__all__: list[str] = []

_FIELD_WIDTH = 420
_CAPTION_WIDTH = 170


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
        theme.set_role(self.env_badge, "badge")
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
    theme.set_tone(label, "muted")
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def _caption(text: str, buddy: QWidget | None = None) -> QLabel:
    """A form label; every section's labels share one width, so the fields line up."""
    label = QLabel(text)
    label.setMinimumWidth(_CAPTION_WIDTH)
    label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    if buddy is not None:
        label.setBuddy(buddy)
        if not buddy.accessibleName():  # the caption is in another row widget: say it here
            buddy.setAccessibleName(text.replace("&", "").rstrip(":"))
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
