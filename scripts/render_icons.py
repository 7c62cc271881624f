"""Render the app icon's raster forms from resources/icons/procedura.svg (the one source).

    resources/icons/procedura-256.png   the Linux menu entry, the tray, the window
    resources/icons/procedura.ico       Windows: 16 to 256 px (the shortcut, the built .exe)
    resources/icons/procedura.icns      macOS: 16 to 1024 px (the app bundle)

Qt's SVG renderer draws each size from the vector shapes; Pillow writes the .ico and .icns
containers (Qt's own writers put one image per file). Run it after changing the SVG:
``make icons`` (installs Pillow into .venv on demand), or ``python scripts/render_icons.py``
where Pillow is installed. The outputs are committed; nothing renders them at run time.
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

ICONS = Path(__file__).resolve().parents[1] / "resources" / "icons"
ICO_SIZES = (16, 20, 24, 32, 40, 48, 64, 128, 256)
ICNS_SIZE = 1024  # Pillow derives 16 ... 512@2x from the largest image


def render_png(svg: Path, size: int) -> bytes:
    """*svg* drawn at *size* × *size* pixels, as PNG bytes (transparent background)."""
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    if QGuiApplication.instance() is None:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        QGuiApplication([])
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"render_icons: {svg} is not an SVG Qt can draw")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(data.data())


def main() -> int:
    try:
        from PIL import Image
    except ImportError:
        print("render_icons: needs Pillow; `make icons` installs it into .venv", file=sys.stderr)
        return 1
    svg = ICONS / "procedura.svg"
    (ICONS / "procedura-256.png").write_bytes(render_png(svg, 256))
    images = {size: Image.open(io.BytesIO(render_png(svg, size))) for size in ICO_SIZES}
    largest = images[max(ICO_SIZES)]
    # Each size is drawn by Qt at that size (crisper than scaling one picture down).
    largest.save(
        ICONS / "procedura.ico",
        format="ICO",
        sizes=[(s, s) for s in ICO_SIZES],
        append_images=[images[s] for s in ICO_SIZES if s != max(ICO_SIZES)],
    )
    big = Image.open(io.BytesIO(render_png(svg, ICNS_SIZE)))
    big.save(ICONS / "procedura.icns", format="ICNS")
    for name in ("procedura-256.png", "procedura.ico", "procedura.icns"):
        print(f"wrote {ICONS / name} ({(ICONS / name).stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
