"""One theme: readable in light and dark, following the system's switch, sharp at scale 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QLineEdit, QVBoxLayout, QWidget

from desktop_app.ui import theme

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
_TONES: tuple[theme.Tone, ...] = ("error", "warning", "ok", "unverified", "muted", "info")


def _luminance(color: QColor) -> float:
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return (
        0.2126 * channel(color.redF())
        + 0.7152 * channel(color.greenF())
        + 0.0722 * channel(color.blueF())
    )


def contrast(a: QColor, b: QColor) -> float:
    """WCAG's contrast ratio of two colours (1 to 21)."""
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.fixture
def scheme(qapp: QApplication) -> Iterator[Any]:
    """Switch the app's scheme in a test; the system's comes back after it."""
    yield lambda which: theme.apply(qapp, which)
    theme.apply(qapp)


def _shown(qtbot: Any) -> tuple[QWidget, dict[str, QLabel], QLabel, QLineEdit]:
    window = QWidget()
    qtbot.addWidget(window)
    layout = QVBoxLayout(window)
    labels = {}
    for tone in _TONES:
        label = QLabel(f"A message in the {tone} tone")
        theme.set_tone(label, tone)
        layout.addWidget(label)
        labels[tone] = label
    banner = QLabel("⚠ Version 2 is not approved.")
    theme.set_role(banner, "banner", "warning")
    layout.addWidget(banner)
    field = QLineEdit("localhost:11434")
    theme.set_invalid(field, True)
    layout.addWidget(field)
    window.show()
    qtbot.waitExposed(window)
    return window, labels, banner, field


@pytest.mark.parametrize("which", [Qt.ColorScheme.Light, Qt.ColorScheme.Dark])
def test_every_tone_reads_on_the_window_in_light_and_dark(
    qtbot: Any, scheme: Any, which: Qt.ColorScheme
) -> None:
    scheme(which)
    window, labels, banner, field = _shown(qtbot)
    background = window.palette().color(QPalette.ColorRole.Window)
    assert (background.lightness() < 128) == (which == Qt.ColorScheme.Dark)
    for tone, label in labels.items():
        text = label.palette().color(QPalette.ColorRole.WindowText)
        assert text == theme.color(tone), tone  # the style sheet coloured it
        assert contrast(text, background) >= 4.5, (tone, text.name(), background.name())
    # Colours written into HTML (the Library's details, the review page) read on a text view.
    base = window.palette().color(QPalette.ColorRole.Base)
    for tone in _TONES:
        assert contrast(theme.color(tone), base) >= 4.5, (tone, base.name())
    banner_text = banner.palette().color(QPalette.ColorRole.WindowText)
    assert contrast(banner_text, theme.color("warning_bg")) >= 4.5
    assert field.property("invalid") is True
    theme.set_invalid(field, False)
    assert field.property("invalid") is False


def test_the_theme_follows_the_system_switching_to_dark_and_back(qtbot: Any, scheme: Any) -> None:
    scheme(Qt.ColorScheme.Light)
    _window, labels, _banner, _field = _shown(qtbot)
    error = labels["error"]
    light = error.palette().color(QPalette.ColorRole.WindowText)
    hints = QGuiApplication.styleHints()

    hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)  # as the desktop does on a switch
    qtbot.waitUntil(lambda: error.palette().color(QPalette.ColorRole.WindowText) != light)
    assert theme.is_dark()
    dark_text = error.palette().color(QPalette.ColorRole.WindowText)
    window = error.window().palette().color(QPalette.ColorRole.Window)
    assert contrast(dark_text, window) >= 4.5

    hints.colorSchemeChanged.emit(Qt.ColorScheme.Light)
    qtbot.waitUntil(lambda: error.palette().color(QPalette.ColorRole.WindowText) == light)
    assert not theme.is_dark()


def test_no_screen_sets_its_own_style_or_colour() -> None:
    """Colours live in the theme: a widget's style sheet or a hex colour elsewhere would not
    follow dark mode."""
    offenders = []
    for path in sorted((REPO / "desktop_app" / "ui").rglob("*.py")):
        if path.name == "theme.py":
            continue
        text = path.read_text(encoding="utf-8")
        for needle in (".setStyleSheet(", "#b3261e", "color:gray", "color: gray"):
            if needle in text:
                offenders.append(f"{path.relative_to(REPO)}: {needle}")
    assert not offenders


_AT_SCALE_2 = textwrap.dedent(
    """
    import json
    from PySide6.QtCore import QSize
    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QApplication, QLabel, QListWidget, QVBoxLayout, QWidget

    app = QApplication(["procedura"])
    from desktop_app.ui import theme
    from desktop_app.ui.main_window import _record_icon

    theme.apply(app)
    window = QWidget()
    layout = QVBoxLayout(window)
    heading = QLabel("Settings")
    theme.set_role(heading, "heading")
    plain = QLabel("Plain text")
    error = QLabel("Something went wrong")
    theme.set_tone(error, "error")
    nav = QListWidget()
    nav.setObjectName("navigation")
    nav.addItems(["Library", "Runs"])
    for widget in (heading, plain, error, nav):
        layout.addWidget(widget)
    window.resize(400, 300)
    window.show()
    app.processEvents()
    shot = window.grab()
    icon = _record_icon().pixmap(QSize(24, 24), window.devicePixelRatio())
    print(json.dumps({
        "ratio": window.devicePixelRatio(),
        "shot_ratio": shot.devicePixelRatio(),
        "shot": [shot.width(), shot.height()],
        "logical": [window.width(), window.height()],
        "heading_pt": heading.font().pointSizeF(),
        "plain_pt": plain.font().pointSizeF(),
        "error": error.palette().color(QPalette.ColorRole.WindowText).name(),
        "expected_error": theme.colours().error,
        "icon": [icon.width(), icon.height()],
    }))
    """
)


def test_at_scale_2_windows_are_drawn_at_twice_the_pixels_and_keep_their_styling() -> None:
    env = {**os.environ, "QT_SCALE_FACTOR": "2", "QT_QPA_PLATFORM": "offscreen"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", _AT_SCALE_2],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["ratio"] == 2 and seen["shot_ratio"] == 2
    assert seen["shot"] == [2 * seen["logical"][0], 2 * seen["logical"][1]]
    assert seen["heading_pt"] > seen["plain_pt"]  # the heading rule applies
    assert seen["error"] == seen["expected_error"]
    assert seen["icon"] == [48, 48]  # drawn from the SVG at 2x, not a 24-pixel image blown up
