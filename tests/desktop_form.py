"""A small desktop application for the desktop capture and replay tests: a Tk contact form.

    python tests/desktop_form.py OUT.json [--x 40] [--y 40] [--shifted] [--title TITLE]

Name, Email and Password fields and a Save button. Save writes what the fields hold to OUT.json
(the password only as its length: a test checks the app got it without the file keeping it),
then the window title becomes "Contact saved". ``--shifted`` puts a banner above the fields and
Save on the left, so the form's layout differs from a recording made without it (each row keeps
its own layout: a label and its field stay side by side).
"""

from __future__ import annotations

import argparse
import json
import tkinter as tk
from pathlib import Path

FONT = ("DejaVu Sans", 12)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--x", type=int, default=40)
    parser.add_argument("--y", type=int, default=40)
    parser.add_argument("--shifted", action="store_true")
    parser.add_argument("--title", default="Contact form")
    args = parser.parse_args()

    root = tk.Tk(className="ContactForm")
    root.title(args.title)
    root.geometry(f"420x260+{args.x}+{args.y}")
    root.resizable(False, False)
    if args.shifted:  # a notice above the form: everything below it moves down
        banner = tk.Label(root, text="New: contacts sync every hour", bg="#ffe9a8", font=FONT)
        banner.pack(fill="x", padx=16, pady=(12, 6))
    frame = tk.Frame(root, padx=16, pady=12)
    frame.pack(fill="both", expand=True)
    row = 0
    fields: dict[str, tk.Entry] = {}
    for label, key, show in (("Name", "name", ""), ("Email", "email", ""), ("Password", "pw", "*")):
        tk.Label(frame, text=label, font=FONT).grid(row=row, column=0, sticky="w", pady=4)
        entry = tk.Entry(frame, font=FONT, width=24, show=show)
        entry.grid(row=row, column=1, pady=4)
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

    button = tk.Button(frame, text="Save", font=FONT, width=8, command=save)
    if args.shifted:  # Save on the left, under the labels (the rows keep their own layout)
        button.grid(row=row, column=0, columnspan=2, sticky="w", pady=12)
    else:
        button.grid(row=row, column=1, sticky="e", pady=12)
    fields["name"].focus_set()
    root.mainloop()


if __name__ == "__main__":
    main()
