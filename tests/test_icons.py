"""The app icon in the forms each platform's installer uses, all rendered from the one SVG."""

from __future__ import annotations

import pytest
from conftest import REPO
from PySide6.QtGui import QImageReader
from PySide6.QtWidgets import QApplication

ICONS = REPO / "resources" / "icons"


def _sizes(name: str) -> set[int]:
    """The square sizes of every picture in an icon file, as Qt reads them."""
    if QApplication.instance() is None:
        # A widgets application, as pytest-qt's qapp would make: a later test in this process
        # finds the kind it expects.
        QApplication([])
    reader = QImageReader(str(ICONS / name))
    found = set()
    for index in range(max(reader.imageCount(), 1)):
        assert reader.jumpToImage(index) or index == 0
        image = reader.read()
        assert not image.isNull(), f"{name} image {index}: {reader.errorString()}"
        assert image.width() == image.height()
        found.add(image.width())
    return found


# Qt's ICNS reader warns about the table of contents Pillow writes (it lists the retina
# variants ic11 to ic14 too), then reads each image from the file itself: what this test checks
# is that every size the platform shows is there.
@pytest.mark.qt_log_ignore(r"QICNSHandler::scanDevice\(\): Warning! Table of contents", extend=True)
@pytest.mark.parametrize(
    ("name", "needed"),
    [
        ("procedura-256.png", {256}),  # Linux menu entry, tray, window
        ("procedura.ico", {16, 24, 32, 48, 256}),  # Windows shortcut and .exe
        ("procedura.icns", {32, 128, 256, 512, 1024}),  # macOS app bundle
    ],
)
def test_every_installer_finds_its_icon_with_the_sizes_its_platform_shows(
    name: str, needed: set[int]
) -> None:
    assert needed <= _sizes(name)
