"""A small invoices page of our own for loop induction tests: a table whose rows each have a
"Remind" button that tells the server (a JSON endpoint) and marks the row reminded, and an
invoice page with a "Disputed" box and a Save button. The server's data is the judge."""

from __future__ import annotations

import html
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from replay_support import PageHandler, serving


@dataclass
class Invoice:
    number: str
    customer: str
    amount: int
    status: str
    disputed: bool = False


@dataclass
class InvoiceData:
    """The server's data: the invoices, the reminders it was sent (in order), a cookie banner
    that shows until it is accepted (when ``banner`` is set)."""

    invoices: list[Invoice]
    reminded: list[str] = field(default_factory=list)
    banner: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def numbers(self, status: str) -> list[str]:
        return [i.number for i in self.invoices if i.status == status]

    def get(self, number: str) -> Invoice:
        return next(i for i in self.invoices if i.number == number)


def invoices(statuses: list[str], start: int = 101) -> list[Invoice]:
    customers = ["Acme", "Globex", "Initech", "Hooli", "Umbrella", "Stark", "Wayne"]
    return [
        Invoice(f"INV-{start + n}", customers[n % len(customers)], 100 + 10 * n, status)
        for n, status in enumerate(statuses)
    ]


_LIST_SCRIPT = """
for (const button of document.querySelectorAll("button.remind")) {
  button.addEventListener("click", async () => {
    const row = button.closest("tr");
    const number = row.querySelector("td.number").textContent;
    const answer = await fetch("/api/remind", {method: "POST", body: number});
    if (!answer.ok) return;
    row.querySelector("td.status").textContent = "Reminded";
    document.getElementById("out").textContent = "Reminder sent for " + number;
  });
}
"""


def _list_page(data: InvoiceData) -> str:
    rows = "".join(
        f"<tr><td class='number'><a href='/invoice/{html.escape(i.number)}'>"
        f"{html.escape(i.number)}</a></td><td>{html.escape(i.customer)}</td>"
        f"<td>${i.amount}.00</td><td class='status'>{html.escape(i.status)}</td>"
        "<td><button class='remind'>Remind</button></td></tr>"
        for i in data.invoices
    )
    banner = (
        "<div role='dialog' aria-label='Cookies' class='cookie-banner'><p>We use cookies.</p>"
        "<button id='accept' onclick=\"fetch('/api/accept',{method:'POST'})"
        '.then(()=>this.parentElement.remove())">Accept cookies</button></div>'
        if data.banner
        else ""
    )
    return (
        "<!doctype html><title>Invoices</title><h1>Invoices</h1>"
        f"{banner}<p id='out' role='status'></p>"
        "<table id='invoices'><thead><tr><th>Number</th><th>Customer</th><th>Amount</th>"
        f"<th>Status</th><th></th></tr></thead><tbody>{rows}</tbody></table>"
        f"<script>{_LIST_SCRIPT}</script>"
    )


def _invoice_page(invoice: Invoice) -> str:
    checked = " checked" if invoice.disputed else ""
    return (
        f"<!doctype html><title>Invoice {html.escape(invoice.number)}</title>"
        f"<h1>Invoice {html.escape(invoice.number)}</h1>"
        f"<form method='post' action='/invoice/{html.escape(invoice.number)}'>"
        f"<label><input type='checkbox' name='disputed' value='yes'{checked}> Disputed</label>"
        "<button>Save</button></form><p><a href='/invoices'>Back to the invoices</a></p>"
    )


@contextmanager
def invoice_site(data: InvoiceData) -> Iterator[str]:
    """The site over *data*, on a free port of 127.0.0.1; its URL."""

    class Handler(PageHandler):
        def do_GET(self) -> None:
            if self.path.startswith("/api/data"):
                body = json.dumps(
                    {
                        "reminded": data.reminded,
                        "disputed": [i.number for i in data.invoices if i.disputed],
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            elif self.path.startswith("/invoice/"):
                self.send_page(_invoice_page(data.get(self.path.rsplit("/", 1)[1])))
            else:
                self.send_page(_list_page(data))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode()
            with data.lock:
                if self.path == "/api/remind":
                    data.reminded.append(raw)
                elif self.path == "/api/accept":
                    data.banner = False
                elif self.path.startswith("/invoice/"):
                    invoice = data.get(self.path.rsplit("/", 1)[1])
                    invoice.disputed = "disputed=yes" in raw
                    self.redirect(self.path)
                    return
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    with serving(Handler) as url:
        yield url
