"""One look for every window: the colour table, the style sheet, light and dark.

The style sheet is ``resources/theme/procedura.qss``. :func:`apply` loads it once when the app
starts, with the current scheme's colours put in for its ``${name}`` placeholders, and again when
the system switches between light and dark. Widgets say what they are (:func:`set_tone`,
:func:`set_role`, :func:`set_invalid`) and the style sheet decides how that looks; code that
paints or writes HTML takes its colours from :func:`colours` (or :func:`color`), so both follow
the scheme.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from string import Template
from typing import Final, Literal

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QWidget

from desktop_app.resources import resource_path

__all__ = [
    "DARK",
    "LIGHT",
    "Colours",
    "Role",
    "Tone",
    "apply",
    "color",
    "colours",
    "is_dark",
    "set_invalid",
    "set_role",
    "set_tone",
    "style_sheet",
]

#: What a message is; the style sheet gives each its colour (``QLabel[tone="error"]``).
Tone = Literal["error", "warning", "ok", "unverified", "muted", "busy", "info", "recording"]
#: What a label is: a screen's title, a coloured banner, a small badge, code or an id.
Role = Literal["heading", "banner", "badge", "code"]


@dataclass(frozen=True, slots=True)
class Colours:
    """The theme's colours for one scheme, as ``#rrggbb``.

    Text colours (``error`` … ``recording``) read on the window's and the base's background
    (contrast at least 4.5:1); ``*_bg``/``*_fg`` pairs are a tinted box and the text on it.
    """

    error: str
    warning: str
    ok: str
    unverified: str  # done, unverified: neither the green of success nor the red of failure
    muted: str
    info: str
    recording: str
    error_bg: str
    error_fg: str
    error_border: str
    warning_bg: str
    warning_fg: str
    warning_border: str
    ok_bg: str
    ok_fg: str
    info_bg: str
    info_fg: str
    info_border: str
    plain_bg: str
    plain_fg: str
    line: str  # a table's or a box's thin border in HTML


LIGHT: Final = Colours(
    error="#b3261e",
    warning="#8a5a00",
    ok="#18753a",
    unverified="#a34f00",
    muted="#5f6368",
    info="#1c4b96",
    recording="#c62828",
    error_bg="#fde7e7",
    error_fg="#7f1d1d",
    error_border="#c0392b",
    warning_bg="#fff4ce",
    warning_fg="#5c4400",
    warning_border="#e0c060",
    ok_bg="#e3f4e6",
    ok_fg="#14532d",
    info_bg="#e6ecfb",
    info_fg="#1e3a8a",
    info_border="#9db4e8",
    plain_bg="#f3f4f6",
    plain_fg="#1f2937",
    line="#d1d5db",
)

DARK: Final = Colours(
    error="#ff8a80",
    warning="#f2c14e",
    ok="#6fcf8a",
    unverified="#ffab6e",
    muted="#a8adb3",
    info="#8ab4f8",
    recording="#ff6b6b",
    error_bg="#4a1c1c",
    error_fg="#ffd6d6",
    error_border="#e06c60",
    warning_bg="#43360f",
    warning_fg="#ffe8a3",
    warning_border="#8a6d1f",
    ok_bg="#173a24",
    ok_fg="#c8f0d4",
    info_bg="#1d2b4f",
    info_fg="#c9d8ff",
    info_border="#4a6aa8",
    plain_bg="#2d3036",
    plain_fg="#e5e7eb",
    line="#4b5563",
)

_SCHEME_PROPERTY: Final = "procedura_color_scheme"
_OWN_PALETTE_PROPERTY: Final = "procedura_dark_palette"
_CONNECTED_PROPERTY: Final = "procedura_theme_connected"

_current: Colours = LIGHT
#: Tones that have no colour of their own.
_SAME_AS: Final = {"busy": "muted"}


def colours() -> Colours:
    """The colours of the scheme in force (light until :func:`apply` says otherwise)."""
    return _current


def is_dark() -> bool:
    """Whether the dark scheme is in force."""
    return _current is DARK


def color(name: str) -> QColor:
    """One of the current colours by its field name or a :data:`Tone`, e.g. ``color("error")``.

    Raises:
        KeyError: no such colour.
    """
    value = asdict(_current).get(_SAME_AS.get(name, name))
    if not isinstance(value, str):
        known = ", ".join(asdict(_current))
        raise KeyError(f"no theme colour {name!r} (known: {known})")
    return QColor(value)


def style_sheet(palette: Colours) -> str:
    """The application's style sheet with *palette*'s colours put in."""
    text = resource_path("theme", "procedura.qss").read_text(encoding="utf-8")
    return Template(text).substitute(asdict(palette))


def apply(app: QApplication, scheme: Qt.ColorScheme | None = None) -> None:
    """Give *app* the theme for *scheme* (None: the system's), and follow the system's changes.

    Where the platform keeps a light palette in the dark scheme (no desktop portal, the
    offscreen platform), a dark palette is set too, so ``palette(...)`` in the style sheet and
    the table's colours agree.
    """
    global _current
    if scheme is None:
        scheme = QGuiApplication.styleHints().colorScheme()
    own = bool(app.property(_OWN_PALETTE_PROPERTY))
    dark = scheme == Qt.ColorScheme.Dark or (
        scheme == Qt.ColorScheme.Unknown and not own and _is_dark_palette(app.palette())
    )
    if dark and not _is_dark_palette(app.palette()):
        app.setPalette(_dark_palette())
        app.setProperty(_OWN_PALETTE_PROPERTY, True)
    elif not dark and own:
        app.setPalette(QPalette())  # back to the platform's
        app.setProperty(_OWN_PALETTE_PROPERTY, False)
    _current = DARK if dark else LIGHT
    app.setProperty(_SCHEME_PROPERTY, "dark" if dark else "light")
    app.setStyleSheet(style_sheet(_current))
    if not app.property(_CONNECTED_PROPERTY):
        app.setProperty(_CONNECTED_PROPERTY, True)
        QGuiApplication.styleHints().colorSchemeChanged.connect(
            lambda new: apply(app, Qt.ColorScheme(new))
        )


def set_tone(widget: QWidget, tone: Tone | None, *, strong: bool = False) -> None:
    """Colour *widget*'s text as a message of *tone* (None: plain), bold if *strong*."""
    if widget.property("tone") == (tone or "") and bool(widget.property("strong")) == strong:
        return
    widget.setProperty("tone", tone or "")
    widget.setProperty("strong", strong)
    _repolish(widget)


def set_role(widget: QWidget, role: Role, tone: Tone | None = None) -> None:
    """Say what *widget* is (a heading, a banner…), and its tone for a banner."""
    widget.setProperty("role", role)
    if tone is not None:
        widget.setProperty("tone", tone)
    _repolish(widget)


def set_invalid(widget: QWidget, invalid: bool) -> None:
    """Frame *widget* in the error colour while its value is wrong."""
    if bool(widget.property("invalid")) == invalid:
        return
    widget.setProperty("invalid", invalid)
    _repolish(widget)


def _repolish(widget: QWidget) -> None:
    """Re-read the style sheet for *widget* and what it holds (Qt does not when only a
    property changed; rules like ``*[invalid="true"] QLineEdit`` reach its children)."""
    for each in (widget, *widget.findChildren(QWidget)):
        style = each.style()
        style.unpolish(each)
        style.polish(each)
        each.update()


def _is_dark_palette(palette: QPalette) -> bool:
    window = palette.color(QPalette.ColorRole.Window)
    text = palette.color(QPalette.ColorRole.WindowText)
    return window.lightness() < text.lightness()


def _dark_palette() -> QPalette:
    """A dark palette in Fusion's spirit, for platforms that have none of their own."""
    palette = QPalette()
    roles = QPalette.ColorRole
    for role, value in (
        (roles.Window, "#2b2b2b"),
        (roles.WindowText, "#e8e8e8"),
        (roles.Base, "#1f1f1f"),
        (roles.AlternateBase, "#2f2f2f"),
        (roles.Text, "#e8e8e8"),
        (roles.Button, "#353535"),
        (roles.ButtonText, "#e8e8e8"),
        (roles.BrightText, "#ffffff"),
        (roles.Highlight, "#3d6fb6"),
        (roles.HighlightedText, "#ffffff"),
        (roles.Light, "#4a4a4a"),
        (roles.Midlight, "#3c3c3c"),
        (roles.Mid, "#5c5c5c"),
        (roles.Dark, "#1a1a1a"),
        (roles.Shadow, "#0f0f0f"),
        (roles.ToolTipBase, "#3a3a3a"),
        (roles.ToolTipText, "#e8e8e8"),
        (roles.PlaceholderText, "#9a9a9a"),
        (roles.Link, "#8ab4f8"),
        (roles.LinkVisited, "#c58af9"),
    ):
        palette.setColor(role, QColor(value))
    disabled = QPalette.ColorGroup.Disabled
    for role in (roles.WindowText, roles.Text, roles.ButtonText):
        palette.setColor(disabled, role, QColor("#7a7a7a"))
    return palette
