"""Render resources/icons/procedura-256.png from the shapes in procedura.svg, without Qt or Pillow.

Run it after changing the SVG (and change the shapes below to match):
``python scripts/render_icon.py``. Pure Python with 4x4 supersampling; takes a few seconds.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

SIZE = 256
SAMPLES = 4
OUT = Path(__file__).resolve().parents[1] / "resources" / "icons" / "procedura-256.png"

BLUE = (0x2F, 0x6F, 0xDE)
WHITE = (0xFF, 0xFF, 0xFF)
YELLOW = (0xFF, 0xC8, 0x3D)
LINE = ((76.0, 80.0), (180.0, 128.0), (76.0, 176.0))
CIRCLES = (((76.0, 80.0), WHITE), ((180.0, 128.0), WHITE), ((76.0, 176.0), YELLOW))


def _in_rounded_rect(x: float, y: float) -> bool:
    left, top, right, bottom, r = 16.0, 16.0, 240.0, 240.0, 48.0
    if not (left <= x <= right and top <= y <= bottom):
        return False
    cx = min(max(x, left + r), right - r)
    cy = min(max(y, top + r), bottom - r)
    return (x - cx) ** 2 + (y - cy) ** 2 <= r * r


def _near_segment(x: float, y: float, a: tuple[float, float], b: tuple[float, float]) -> bool:
    ax, ay = a
    dx, dy = b[0] - ax, b[1] - ay
    t = max(0.0, min(1.0, ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)))
    px, py = ax + t * dx, ay + t * dy
    return (x - px) ** 2 + (y - py) ** 2 <= 8.0**2


def _sample(x: float, y: float) -> tuple[int, int, int, int]:
    """The colour (RGBA) of the icon at one point, topmost shape first."""
    for (cx, cy), colour in reversed(CIRCLES):
        if (x - cx) ** 2 + (y - cy) ** 2 <= 22.0**2:
            return (*colour, 255)
    if _near_segment(x, y, LINE[0], LINE[1]) or _near_segment(x, y, LINE[1], LINE[2]):
        return (*WHITE, 255)
    if _in_rounded_rect(x, y):
        return (*BLUE, 255)
    return (0, 0, 0, 0)


def render() -> bytes:
    """The PNG file's bytes."""
    rows = bytearray()
    n = SAMPLES * SAMPLES
    for py in range(SIZE):
        rows.append(0)  # filter: none
        for px in range(SIZE):
            r = g = b = a = 0
            for sy in range(SAMPLES):
                for sx in range(SAMPLES):
                    cr, cg, cb, ca = _sample(px + (sx + 0.5) / SAMPLES, py + (sy + 0.5) / SAMPLES)
                    r, g, b, a = r + cr * ca, g + cg * ca, b + cb * ca, a + ca
            if a:
                rows += bytes((r // a, g // a, b // a, a // n))
            else:
                rows += b"\0\0\0\0"

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(bytes(rows), 9))
        + chunk(b"IEND", b"")
    )


if __name__ == "__main__":
    OUT.write_bytes(render())
    print(f"wrote {OUT}")
