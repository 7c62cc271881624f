"""A small desktop application for the desktop capture and replay tests: a Tk contact form.

    python tests/desktop_form.py OUT.json [--x 40] [--y 40] [--shifted] [--relayout]
        [--scale 2] [--title TITLE] [--layout-out LAYOUT.json]

Name, Email and Password fields and a Save button. Save writes what the fields hold to OUT.json
(the password only as its length: a test checks the app got it without the file keeping it),
then the window title becomes "Contact saved". ``--shifted`` puts a banner above the fields and
Save on the left, so the form's layout differs from a recording made without it (each row keeps
its own layout: a label and its field stay side by side). ``--relayout`` does that and also
spaces the rows differently and uses a larger font (15 points, not 12). ``--scale 2`` draws the
whole form at twice the size (Tk's scaling, paddings and the window doubled), as on a screen
set to 200%.

With ``--layout-out``, once the window is shown the app writes where its parts are: for each of
``name``, ``email``, ``password``, ``save``, ``name_label``, ``email_label``, ``password_label``
and ``password_row`` a box ``{"x", "y", "width", "height"}`` in screen pixels relative to the
window's top-left corner, and ``window`` for the window's own size.
"""

from __future__ import annotations

import argparse
import json
import os
import tkinter as tk
from pathlib import Path
from typing import Any


def _box(widget: tk.Misc, root: tk.Tk) -> dict[str, int]:
    return {
        "x": widget.winfo_rootx() - root.winfo_rootx(),
        "y": widget.winfo_rooty() - root.winfo_rooty(),
        "width": widget.winfo_width(),
        "height": widget.winfo_height(),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--x", type=int, default=40)
    parser.add_argument("--y", type=int, default=40)
    parser.add_argument("--shifted", action="store_true")
    parser.add_argument("--relayout", action="store_true")
    parser.add_argument("--scale", type=int, default=1, choices=(1, 2))
    parser.add_argument("--title", default="Contact form")
    parser.add_argument("--layout-out", type=Path, default=None)
    args = parser.parse_args()
    s = args.scale
    shifted = args.shifted or args.relayout
    font = ("DejaVu Sans", 15 if args.relayout else 12)  # points: they follow Tk's scaling
    row_pady = (10 if args.relayout else 4) * s

    root = tk.Tk(className="ContactForm")
    if s != 1:
        root.tk.call("tk", "scaling", s * float(root.tk.call("tk", "scaling")))
    root.title(args.title)
    if args.relayout:  # the rows need the room they take
        root.geometry(f"+{args.x}+{args.y}")
    else:
        root.geometry(f"{420 * s}x{260 * s}+{args.x}+{args.y}")
    root.resizable(False, False)
    if shifted:  # a notice above the form: everything below it moves down
        banner = tk.Label(root, text="New: contacts sync every hour", bg="#ffe9a8", font=font)
        banner.pack(fill="x", padx=16 * s, pady=(12 * s, 6 * s))
    frame = tk.Frame(root, padx=16 * s, pady=12 * s)
    frame.pack(fill="both", expand=True)
    row = 0
    labels: dict[str, tk.Label] = {}
    fields: dict[str, tk.Entry] = {}
    for text, key, show in (("Name", "name", ""), ("Email", "email", ""), ("Password", "pw", "*")):
        label = tk.Label(frame, text=text, font=font)
        label.grid(row=row, column=0, sticky="w", pady=row_pady)
        entry = tk.Entry(frame, font=font, width=24, show=show)
        entry.grid(row=row, column=1, pady=row_pady)
        labels[key] = label
        fields[key] = entry
        row += 1

    def save() -> None:
        data = {
            "name": fields["name"].get(),
            "email": fields["email"].get(),
            "password_length": len(fields["pw"].get()),
        }
        tmp = args.out.with_suffix(".tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        tmp.replace(args.out)
        root.title("Contact saved")

    button = tk.Button(frame, text="Save", font=font, width=8, command=save)
    if shifted:  # Save on the left, under the labels (the rows keep their own layout)
        button.grid(row=row, column=0, columnspan=2, sticky="w", pady=12 * s)
    else:
        button.grid(row=row, column=1, sticky="e", pady=12 * s)

    def layout() -> dict[str, Any]:
        boxes: dict[str, Any] = {
            "name": _box(fields["name"], root),
            "email": _box(fields["email"], root),
            "password": _box(fields["pw"], root),
            "save": _box(button, root),
            "name_label": _box(labels["name"], root),
            "email_label": _box(labels["email"], root),
            "password_label": _box(labels["pw"], root),
        }
        label, entry = boxes["password_label"], boxes["password"]
        top = min(label["y"], entry["y"])
        bottom = max(label["y"] + label["height"], entry["y"] + entry["height"])
        boxes["password_row"] = {
            "x": label["x"],
            "y": top,
            "width": entry["x"] + entry["width"] - label["x"],
            "height": bottom - top,
        }
        boxes["window"] = {
            "x": 0,
            "y": 0,
            "width": root.winfo_width(),
            "height": root.winfo_height(),
        }
        boxes["scale"] = s
        return boxes

    def shown(_event: object = None) -> None:
        if args.layout_out is not None:
            root.update_idletasks()
            tmp = args.layout_out.with_name(args.layout_out.name + ".tmp")
            tmp.write_text(json.dumps(layout()), encoding="utf-8")
            os.replace(tmp, args.layout_out)

    if args.layout_out is not None:
        root.bind("<Map>", lambda event: root.after_idle(shown) if event.widget is root else None)
    fields["name"].focus_set()
    root.mainloop()


if __name__ == "__main__":
    main()
