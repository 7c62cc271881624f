"""A GTK 3 twin of tests/desktop_form.py, for replay through the accessibility tree (AT-SPI).

    /usr/bin/python3 tests/desktop_gtk_form.py OUT.json [--x 40] [--y 40] [--relayout]
        [--title TITLE] [--layout-out LAYOUT.json]

Run by the system Python (PyGObject and GTK 3 from Debian; the project's venv has neither).
Name, Email and Password (hidden) entries with their labels in a grid, and a Save button. Save
writes ``{"name", "email", "password_length"}`` to OUT.json (atomically; the password only as
its length), then the window title becomes "Contact saved".

The Name label is tied to its entry (``set_mnemonic_widget``: a labelled-by relation over
AT-SPI); the Email label is not, as in many real apps, so both kinds are exercised.
``--relayout`` puts a banner above the form, spaces the rows differently, uses a larger font and
moves Save to the left column. ``--twins`` adds a second field labelled "Email" below the first
(Save does not save it): a form where "the Email field" is two fields. Twice the scale is the
environment's (``GDK_SCALE=2``).

With ``--layout-out``, once the window is drawn (and whenever its layout changes) the app writes
where its parts are: for each of ``name``, ``email``, ``password``, ``save``, ``name_label``,
``email_label``, ``password_label`` and ``password_row`` a box ``{"x", "y", "width",
"height"}`` in screen pixels relative to the window's top-left corner (``GDK_SCALE``
included), and ``window`` for the window's own size.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

PLAIN_CSS = b"* { font-family: 'DejaVu Sans'; font-size: 12px; }"
RELAYOUT_CSS = b"""
* { font-family: 'DejaVu Sans'; font-size: 15px; }
.banner { background-color: #ffe9a8; padding: 6px; }
"""


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _box(widget: Gtk.Widget, window: Gtk.Window, scale: int) -> dict[str, int]:
    x, y = widget.translate_coordinates(window, 0, 0)
    allocation = widget.get_allocation()
    return {
        "x": x * scale,
        "y": y * scale,
        "width": allocation.width * scale,
        "height": allocation.height * scale,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--x", type=int, default=40)
    parser.add_argument("--y", type=int, default=40)
    parser.add_argument("--relayout", action="store_true")
    parser.add_argument("--twins", action="store_true")
    parser.add_argument("--title", default="Contact form")
    parser.add_argument("--layout-out", type=Path, default=None)
    args = parser.parse_args()

    GLib.set_prgname("procedura-contact-form")  # the application's name over AT-SPI
    css = Gtk.CssProvider()
    css.load_from_data(RELAYOUT_CSS if args.relayout else PLAIN_CSS)
    screen = Gdk.Screen.get_default()
    Gtk.StyleContext.add_provider_for_screen(screen, css, Gtk.STYLE_PROVIDER_PRIORITY_APPLICATION)

    window = Gtk.Window(title=args.title)
    window.set_resizable(False)
    # No window manager under Xvfb: the position asked is the one (in screen pixels; GTK's
    # are GDK_SCALE times as large).
    scale = int(os.environ.get("GDK_SCALE", "1") or 1)
    window.move(args.x // scale, args.y // scale)
    window.connect("destroy", Gtk.main_quit)

    outer = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=0)
    outer.set_border_width(16)
    window.add(outer)
    if args.relayout:  # a notice above the form: everything below it moves down
        banner = Gtk.Label(label="New: contacts sync every hour")
        banner.get_style_context().add_class("banner")
        outer.pack_start(banner, False, False, 6)

    grid = Gtk.Grid()
    grid.set_row_spacing(18 if args.relayout else 8)
    grid.set_column_spacing(24 if args.relayout else 12)
    outer.pack_start(grid, False, False, 0)

    labels: dict[str, Gtk.Label] = {}
    fields: dict[str, Gtk.Entry] = {}
    rows = [("Name", "name"), ("Email", "email"), ("Password", "password")]
    if args.twins:  # a second field labelled "Email" (a work and a home address, say)
        rows.insert(2, ("Email", "email2"))
    for row, (text, key) in enumerate(rows):
        label = Gtk.Label(label=text, xalign=0)
        entry = Gtk.Entry(width_chars=24)
        if key == "name":
            label.set_mnemonic_widget(entry)  # labelled-by: the accessible name comes from it
        if key == "password":
            entry.set_visibility(False)  # a password text over AT-SPI
            entry.set_input_purpose(Gtk.InputPurpose.PASSWORD)
        grid.attach(label, 0, row, 1, 1)
        grid.attach(entry, 1, row, 1, 1)
        labels[key] = label
        fields[key] = entry

    button = Gtk.Button(label="Save")
    button.set_size_request(96, -1)
    if args.relayout:  # Save on the left, under the labels
        button.set_halign(Gtk.Align.START)
        grid.attach(button, 0, len(rows), 1, 1)
    else:
        button.set_halign(Gtk.Align.END)
        grid.attach(button, 1, len(rows), 1, 1)
    button.set_margin_top(8)

    def save(_button: Gtk.Button) -> None:
        data = {
            "name": fields["name"].get_text(),
            "email": fields["email"].get_text(),
            "password_length": len(fields["password"].get_text()),
        }
        _write_atomically(args.out, json.dumps(data))
        window.set_title("Contact saved")

    button.connect("clicked", save)

    written: list[str] = []

    def layout() -> dict[str, Any]:
        scale = window.get_scale_factor()
        boxes: dict[str, Any] = {key: _box(entry, window, scale) for key, entry in fields.items()}
        boxes["save"] = _box(button, window, scale)
        for key, label in labels.items():
            boxes[f"{key}_label"] = _box(label, window, scale)
        label, entry = boxes["password_label"], boxes["password"]
        top = min(label["y"], entry["y"])
        bottom = max(label["y"] + label["height"], entry["y"] + entry["height"])
        boxes["password_row"] = {
            "x": label["x"],
            "y": top,
            "width": entry["x"] + entry["width"] - label["x"],
            "height": bottom - top,
        }
        size = window.get_allocation()
        boxes["window"] = {
            "x": 0,
            "y": 0,
            "width": size.width * scale,
            "height": size.height * scale,
        }
        boxes["scale"] = scale
        return boxes

    def write_layout() -> bool:
        if args.layout_out is not None and window.get_mapped():
            text = json.dumps(layout())
            if not written or written[-1] != text:
                written.append(text)
                _write_atomically(args.layout_out, text)
        return False  # once (GLib.idle_add calls again while this returns True)

    # Once shown, and whenever the layout changes: after the children got their places.
    window.connect_after("map-event", lambda *_: GLib.idle_add(write_layout) and False)
    window.connect_after("size-allocate", lambda *_: GLib.idle_add(write_layout) and None)
    window.show_all()
    fields["name"].grab_focus()
    Gtk.main()


if __name__ == "__main__":
    main()
