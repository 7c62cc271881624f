"""The desktop replay adapter: key names, image helpers, and SystemDesktop driving a Tk form.

The image and key tests are pure. The others start an Xvfb display and the Tk contact form
(tests/desktop_form.py) and drive it the way replay does: windows, focus, clicks, typing,
hotkeys, screenshots and image anchors.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest
from desktop_support import Form, needs_xvfb, xvfb

from desktop_app.adapters.desktop.imaging import (
    crop,
    decode_png,
    encode_png,
    find_image,
    image_size,
    mask,
)
from desktop_app.adapters.desktop.keys import normalise_key_name
from desktop_app.adapters.desktop.port import SystemDesktop
from desktop_app.core.models.common import BoundingBox
from desktop_app.core.replay.desktop import DesktopUnavailable, ImageMatch, Window

_T = TypeVar("_T")

# Where things are in the form, relative to its window's top-left corner (its layout: 16 px of
# padding, the labels in column 0, the entries in column 1, Save below them on the right).
NAME_FIELD = (230, 29)
SAVE_BUTTON = (311, 143)
SCREEN = (1024, 768)


# ── key names ───────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("ctrl", "ctrl"),
        ("Control", "ctrl"),
        ("ctrl_r", "ctrl"),
        ("Key.ctrl_l", "ctrl"),
        ("<ctrl>", "ctrl"),
        ("alt", "alt"),
        ("AltGr", "alt_gr"),
        ("shift", "shift"),
        ("meta", "cmd"),
        ("super", "cmd"),
        ("Cmd", "cmd"),
        ("Return", "enter"),
        ("Escape", "esc"),
        ("esc", "esc"),
        ("F1", "f1"),
        ("f12", "f12"),
        ("ArrowLeft", "left"),
        ("down", "down"),
        ("PageUp", "page_up"),
        ("Page Down", "page_down"),
        ("page-up", "page_up"),
        ("Del", "delete"),
        ("backspace", "backspace"),
        (" ", "space"),
        ("space", "space"),
        ("home", "home"),
        ("a", "a"),
        ("A", "A"),
        ("/", "/"),
        ("+", "+"),
    ],
)
def test_key_names_normalise(name: str, canonical: str) -> None:
    assert normalise_key_name(name) == canonical


@pytest.mark.parametrize("name", ["", "ctrlx", "f25", "shift+a"])
def test_unknown_key_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="unknown key name"):
        normalise_key_name(name)


# ── images ──────────────────────────────────────────────────────────────────────────────────


def _pattern(colour: tuple[int, int, int] = (20, 20, 20)) -> np.ndarray:
    """A 24×24 mark: a filled square with a bar, in *colour* (BGR) on white."""
    mark = np.full((24, 24, 3), 255, dtype=np.uint8)
    mark[4:14, 4:14] = colour
    mark[17:20, 2:22] = colour
    return mark


def _screen(*places: tuple[int, int, np.ndarray]) -> np.ndarray:
    """A 200×300 light grey screen with *places* (x, y, image) pasted on it."""
    screen = np.full((200, 300, 3), 230, dtype=np.uint8)
    for x, y, image in places:
        screen[y : y + image.shape[0], x : x + image.shape[1]] = image
    return screen


def _overlap(a: BoundingBox, b: BoundingBox) -> bool:
    """Whether *a* and *b* are one place to find_image: they share a quarter of the smaller
    box or more (two rows of a compact form, whose anchors share their padding, are two)."""
    wide = min(a.x + a.width, b.x + b.width) - max(a.x, b.x)
    high = min(a.y + a.height, b.y + b.height) - max(a.y, b.y)
    smaller = min(a.width * a.height, b.width * b.height)
    return wide > 0 and high > 0 and wide * high >= smaller / 4


def test_find_image_gives_distinct_places_best_first() -> None:
    mark = _pattern()
    faded = (255 - (255 - mark) // 2).astype(np.uint8)  # the same mark at half contrast
    screen = _screen((10, 10, mark), (150, 40, mark), (60, 150, faded))
    found = find_image(encode_png(screen), encode_png(mark), limit=3)
    assert {(m.box.x, m.box.y) for m in found} == {(10, 10), (150, 40), (60, 150)}
    assert all(m.score > 0.99 for m in found)  # the faded one too: contrast does not matter
    assert found[0].box.width == 24 and found[0].box.height == 24
    assert not any(_overlap(a.box, b.box) for i, a in enumerate(found) for b in found[i + 1 :])
    assert len(find_image(screen, mark, limit=1)) == 1
    assert find_image(screen, mark, limit=0) == []


def test_find_image_tells_colours_apart() -> None:
    red, green = (0, 0, 255), (0, 130, 0)  # BGR; the same grey level (76)
    screen = _screen((20, 20, _pattern(green)), (200, 120, _pattern(red)))
    found = find_image(screen, _pattern(red), limit=2)
    assert (found[0].box.x, found[0].box.y, round(found[0].score, 3)) == (200, 120, 1.0)
    assert (found[1].box.x, found[1].box.y) == (20, 20)
    assert found[1].score < 0.8


def test_find_image_without_a_possible_match() -> None:
    screen = _screen((10, 10, _pattern()))
    assert find_image(screen, np.zeros((201, 20, 3), dtype=np.uint8)) == []  # taller than it
    assert find_image(screen, np.full((20, 20, 3), 230, dtype=np.uint8)) == []  # one flat colour
    assert find_image(screen, np.zeros((0, 0, 3), dtype=np.uint8)) == []


def test_crop_clips_at_the_edges_and_mask_paints_over() -> None:
    png = encode_png(_screen((10, 10, _pattern())))
    assert image_size(png) == (300, 200)
    cut = crop(png, BoundingBox(x=280, y=-10, width=40, height=30))
    assert cut is not None
    part, box = cut
    assert box == BoundingBox(x=280, y=0, width=20, height=20)
    assert image_size(part) == (20, 20)
    assert crop(png, BoundingBox(x=400, y=10, width=5, height=5)) is None

    hidden = decode_png(mask(png, [BoundingBox(x=9.5, y=9.5, width=25, height=25)], (255, 0, 0)))
    assert (hidden[9:35, 9:35] == (0, 0, 255)).all()  # rounded outwards; RGB red is BGR 0,0,255
    assert (hidden[36:, 36:] == 230).all()
    assert all(m.score < 0.5 for m in find_image(hidden, _pattern()))


def test_open_without_a_display(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with pytest.raises(DesktopUnavailable, match="DISPLAY is not set"):
        asyncio.run(SystemDesktop.open())


# ── driving the form ────────────────────────────────────────────────────────────────────────


@pytest.fixture(scope="module")
def display() -> Iterator[str]:
    with xvfb(*SCREEN) as name:
        yield name


def _run(session: Callable[[SystemDesktop], Awaitable[_T]]) -> _T:
    """Open the desktop, run *session* with it, close it."""

    async def main() -> _T:
        async with await SystemDesktop.open() as desktop:
            return await session(desktop)

    return asyncio.run(main())


async def _eventually(
    probe: Callable[[], Awaitable[_T | None]], what: str, timeout: float = 10.0
) -> _T:
    """Await *probe* until it returns something (not None, not False); that."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = await probe()
        if value is not None and value is not False:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def _form_window(desktop: SystemDesktop, title: str = "Contact form") -> Window:
    async def probe() -> Window | None:
        return next((w for w in await desktop.windows() if w.title == title), None)

    return await _eventually(probe, f"a window titled {title!r}")


async def _best(desktop: SystemDesktop, anchor: bytes, *, above: float) -> ImageMatch:
    """The best place of *anchor* once it scores above *above* (the window may be unpainted)."""

    async def probe() -> ImageMatch | None:
        found = await desktop.find_image(anchor)
        return found[0] if found and found[0].score > above else None

    return await _eventually(probe, "the anchor to show")


@contextlib.contextmanager
def _form(out: Path, **options: Any) -> Iterator[Form]:
    """The contact form running, stopped after (its stderr pipe closed too)."""
    with Form(out, **options) as running:
        try:
            yield running
        finally:
            running.process.stderr.close()  # type: ignore[union-attr]


@pytest.fixture
def form(display: str, tmp_path: Path) -> Iterator[Form]:
    with _form(tmp_path / "saved.json") as running:
        yield running


@pytest.mark.slow
@needs_xvfb
def test_windows_focus_and_screenshots(form: Form, tmp_path: Path) -> None:
    async def session(desktop: SystemDesktop) -> tuple[list[Window], list[int], list[bytes]]:
        async def two() -> list[Window] | None:
            found = [w for w in await desktop.windows() if w.title == "Contact form"]
            return found if len(found) == 2 else None

        windows = await _eventually(two, "both forms")
        active = []
        for window in (*windows, *windows):  # each in turn, twice
            await desktop.focus(window)
            now = await desktop.active_window()
            active.append(now.handle if now else 0)
        shots = [
            await desktop.screenshot(),
            await desktop.screenshot(BoundingBox(x=10, y=20, width=30, height=40)),
            await desktop.screenshot(BoundingBox(x=1000, y=700, width=100, height=100)),
        ]
        with pytest.raises(ValueError, match="off the screen"):
            await desktop.screenshot(BoundingBox(x=2000, y=0, width=10, height=10))
        other.close()
        closed = next(w for w in windows if w.box.x == 500)
        with pytest.raises(DesktopUnavailable, match="not shown any more"):
            await desktop.focus(closed)
        return windows, active, shots

    with _form(tmp_path / "other.json", x=500, y=300) as other:
        windows, active, shots = _run(session)
    x, y, width, height = form.geometry()
    assert BoundingBox(x=x, y=y, width=width, height=height) in [w.box for w in windows]
    assert BoundingBox(x=500, y=300, width=width, height=height) in [w.box for w in windows]
    assert {w.app for w in windows} == {"Contactform"}
    assert active == [w.handle for w in (*windows, *windows)]
    assert [image_size(shot) for shot in shots] == [SCREEN, (30, 40), (24, 68)]


@pytest.mark.slow
@needs_xvfb
def test_click_type_hotkeys_and_save(form: Form) -> None:
    async def session(desktop: SystemDesktop) -> str:
        window = await _form_window(desktop)
        await desktop.focus(window)
        left, top = window.box.x, window.box.y
        await desktop.click(left + NAME_FIELD[0], top + NAME_FIELD[1])
        await desktop.type_text("Ann Lee")
        await desktop.hotkey(["/", "Control"])  # Tk's select-all; modifiers go first anyway
        await desktop.type_text("Bo Chen")  # replaces the selection
        await desktop.hotkey(["tab"])
        await desktop.type_text("bo@example.org")
        await desktop.hotkey(["Tab"])
        await desktop.type_text("sécret")
        with pytest.raises(ValueError, match="unknown key name"):
            await desktop.hotkey(["ctrl", "nope"])
        await desktop.click(left + SAVE_BUTTON[0], top + SAVE_BUTTON[1])
        saved = await _form_window(desktop, "Contact saved")
        return saved.title

    assert _run(session) == "Contact saved"
    assert form.saved() == {"name": "Bo Chen", "email": "bo@example.org", "password_length": 6}


@pytest.mark.slow
@needs_xvfb
def test_image_anchor_found_after_the_window_moved_and_the_layout_shifted(
    display: str, tmp_path: Path
) -> None:
    """Scores seen: the Save anchor 1.0 at its new place, then 0.44 and 0.27 for other places;
    the typed name, absent from the new form, at most 0.51 (on the banner's text)."""

    async def record(desktop: SystemDesktop) -> tuple[bytes, bytes]:
        window = await _form_window(desktop)
        await desktop.focus(window)
        left, top = window.box.x, window.box.y
        await desktop.click(left + NAME_FIELD[0], top + NAME_FIELD[1])
        await desktop.type_text("Ann Lee")
        # Inside the name field, clear of the insertion cursor before and after typing.
        text = BoundingBox(x=left + 108, y=top + 20, width=52, height=18)

        async def typed() -> bytes | None:
            shot = await desktop.screenshot(text)
            return shot if _not_blank(shot) else None

        name = await _eventually(typed, "the typed name to show")  # the form is drawn by now
        x, y = left + SAVE_BUTTON[0], top + SAVE_BUTTON[1]
        save = await desktop.screenshot(BoundingBox(x=x - 32, y=y - 32, width=64, height=64))
        return save, name

    with _form(tmp_path / "first.json"):
        save_anchor, name_anchor = _run(record)

    async def replay(
        desktop: SystemDesktop,
    ) -> tuple[ImageMatch, list[ImageMatch], list[ImageMatch]]:
        window = await _form_window(desktop)
        best = await _best(desktop, save_anchor, above=0.9)
        inside = await desktop.find_image(save_anchor, box=window.box, limit=3)
        absent = await desktop.find_image(name_anchor, limit=3)
        await desktop.focus(window)
        await desktop.click(best.box.center.x, best.box.center.y)
        await _form_window(desktop, "Contact saved")
        return best, inside, absent

    with _form(tmp_path / "second.json", x=300, y=200, shifted=True):
        best, inside, absent = _run(replay)
        assert json.loads((tmp_path / "second.json").read_text())["name"] == ""

    assert best.score > 0.9
    assert inside[0] == best
    assert all(m.score < 0.8 for m in inside[1:])
    assert not any(_overlap(a.box, b.box) for i, a in enumerate(inside) for b in inside[i + 1 :])
    assert absent and all(m.score < 0.8 for m in absent)


def _not_blank(png: bytes) -> bool:
    """Whether *png* shows more than one colour."""
    pixels = decode_png(png)
    return bool((pixels != pixels[0, 0]).any())


@pytest.mark.slow
@needs_xvfb
def test_once_the_focused_window_closes_keys_go_to_the_window_under_the_pointer() -> None:
    from Xlib import X
    from Xlib import display as xdisplay

    from desktop_app.adapters.desktop.x11 import X11

    with xvfb():
        connection = xdisplay.Display()
        screen = connection.screen()

        def window(x: int, title: str) -> Any:
            made = screen.root.create_window(x, 100, 200, 150, 0, screen.root_depth)
            made.set_wm_name(title)
            made.map()
            return made

        dialog, editor = window(50, "Dialog"), window(400, "Editor")
        connection.sync()
        dialog.set_input_focus(X.RevertToParent, X.CurrentTime)
        dialog.destroy()  # X puts the focus back on the root window
        screen.root.warp_pointer(500, 170)
        connection.sync()
        try:
            with X11() as x11:
                active = x11.active_window()
            assert active is not None and active.handle == editor.id  # never the root, untitled
        finally:
            connection.close()
