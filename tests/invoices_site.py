"""A test's own site of invoices: a table of rows with a "Remind" button each, a cookie dialog
that comes or not, "Load more", a note form; its server keeps what was done (the data tests
judge a replay by)."""

from __future__ import annotations

import html
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar

from replay_support import PageHandler, serving

__all__ = ["Invoices", "invoices_site"]


class Invoices:
    """The server's data: invoices (number → status, amount), the reminders sent, the cookie
    choice, how many rows are shown."""

    def __init__(self, count: int = 12, *, unpaid_every: int = 2) -> None:
        self.rows = [
            (f"INV-{n:03d}", "Unpaid" if n % unpaid_every == 0 else "Paid", 100 + n)
            for n in range(1, count + 1)
        ]
        self.reminded: list[str] = []
        self.notes: list[str] = []
        self.dialog = False
        self.accepted = False
        self.shown = count
        self.button = "Remind"
        self.lock = threading.Lock()

    def unpaid(self) -> list[str]:
        return [n for n, status, _ in self.rows if status == "Unpaid"]


def _page(data: Invoices) -> str:
    rows = "".join(
        f"<tr class='invoice'><td class='number'>{html.escape(n)}</td>"
        f"<td class='status'>{status}</td><td class='amount'>{amount}.00</td>"
        f"<td><form method='post' action='/remind'><input type='hidden' name='number' "
        f"value='{html.escape(n)}'><button>{data.button}</button></form></td></tr>"
        for n, status, amount in data.rows[: data.shown]
    )
    more = (
        "<form method='post' action='/more'><button>Load more</button></form>"
        if data.shown < len(data.rows)
        else "<p>No more invoices</p>"
    )
    dialog = (
        "<div role='dialog' aria-label='Cookies' id='cookies'><p>We use cookies.</p>"
        "<form method='post' action='/accept'><button>Accept cookies</button></form></div>"
        if data.dialog and not data.accepted
        else ""
    )
    return (
        f"<!doctype html><title>Invoices</title><h1>Invoices</h1>{dialog}"
        f"<table><tbody>{rows}</tbody></table>{more}"
        "<form method='post' action='/note'><label>Note <input name='note'></label>"
        "<button>Add note</button></form>"
        f"<p id='count'>{len(data.reminded)} reminded</p>"
    )


@contextmanager
def invoices_site(data: Invoices | None = None) -> Iterator[tuple[Invoices, str]]:
    """The invoices site on a free port: its data and its URL."""
    data = data or Invoices()

    class Handler(PageHandler):
        store: ClassVar[Invoices] = data

        def do_GET(self) -> None:
            if self.path.startswith("/data"):
                body = json.dumps({"reminded": data.reminded}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self.send_page(_page(data))

        def do_POST(self) -> None:
            form = self.form()
            with data.lock:
                if self.path == "/remind":
                    data.reminded.append(form["number"][0])
                elif self.path == "/accept":
                    data.accepted = True
                elif self.path == "/more":
                    data.shown = min(data.shown + 5, len(data.rows))
                elif self.path == "/note":
                    data.notes.append(form.get("note", [""])[0])
            self.redirect("/")

    with serving(Handler) as url:
        yield data, url
