"""The colours and the error style the batch dialog and the batch window share."""

from __future__ import annotations

from typing import Final

from PySide6.QtGui import QColor

__all__ = ["_AMBER", "_ERROR_STYLE", "_GREY", "_RED"]

_RED: Final = QColor("#b3261e")
_AMBER: Final = QColor("#9a6700")
_GREY: Final = QColor("#6e6e6e")
_ERROR_STYLE: Final = "color: #b3261e;"
