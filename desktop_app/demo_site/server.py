"""Acme CRM, the bundled demo web app: a standard-library HTTP server with in-memory state."""

from __future__ import annotations

import bisect
import copy
import errno
import hashlib
import html
import json
import math
import re
import secrets
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from string import Template
from types import FrameType, TracebackType
from typing import Any, Final
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from desktop_app.demo_site.variants import (
    HOSTILE_NOTICE,
    HOSTILE_URL,
    SLOW_DELAY_MS,
    DemoSiteError,
    Look,
    parse_variants,
)
from desktop_app.resources import resource_path

__all__ = ["DEMO_PASSWORD", "DEMO_USERNAME", "DemoSite", "serve_forever"]

DEMO_USERNAME: Final = "demo"
DEMO_PASSWORD: Final = "demo-pass"  # published: printed by serve_forever, in the docs

COMPANIES: Final = ("Acme", "Globex", "Initech", "Umbrella", "Hooli")
CATEGORIES: Final = ("Travel", "Meals", "Lodging", "Office supplies", "Software", "Training")
ORDER_STATUSES: Final = ("Open", "Shipped", "Cancelled")
ORDERS_PER_PAGE: Final = 10

_SESSION_COOKIE: Final = "acme_session"
_CONSENT_COOKIE: Final = "acme_consent"
_MAX_BODY: Final = 1_000_000
_MAX_ACTION_BODY: Final = 10_000  # one record for POST /__actions
_MAX_ACTIONS: Final = 10_000  # the action log keeps the most recent ones
_EMAIL: Final = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_PHONE: Final = re.compile(r"^[0-9+()./ -]{5,30}$")


# ── markup ───────────────────────────────────────────────────────────────────────────────────────


class Markup(str):
    """Trusted HTML: inserted into templates as it is, where any other value is escaped."""

    __slots__ = ()


def _attrs(**values: str | bool | None) -> Markup:
    """`` name="value"`` pairs (True → a bare attribute, False/None → left out); ``_`` → ``-``."""
    parts = []
    for name, value in values.items():
        attr = name.rstrip("_").replace("_", "-")
        if value is True:
            parts.append(f" {attr}")
        elif value:
            parts.append(f' {attr}="{html.escape(value)}"')
    return Markup("".join(parts))


class _Templates:
    """The page templates of ``resources/demo_site/templates``, read once."""

    def __init__(self, folder: Path, look: Look) -> None:
        self._folder = folder
        self._texts = look.texts()
        self._cache: dict[str, Template] = {}
        self._lock = threading.Lock()

    def render(self, template_name: str, /, **values: object) -> Markup:
        """Fill ``<template_name>.html``: ``Markup`` values go in as they are, others escaped."""
        with self._lock:
            template = self._cache.get(template_name)
            if template is None:
                path = self._folder / f"{template_name}.html"
                template = self._cache[template_name] = Template(path.read_text(encoding="utf-8"))
        filled: dict[str, str] = dict(self._texts)
        for key, value in values.items():
            if isinstance(value, Markup):
                filled[key] = value
            elif value is None:
                filled[key] = ""
            else:
                filled[key] = html.escape(str(value))
        return Markup(template.substitute(filled))

    def join(self, template_name: str, rows: Iterable[Mapping[str, object]], /) -> Markup:
        """``template_name`` rendered once per row, concatenated."""
        return Markup("".join(self.render(template_name, **row) for row in rows))


# ── seed data ────────────────────────────────────────────────────────────────────────────────────

# name | email | phone | company | birthday | tags
_SEED_CONTACTS: Final = """
Maria Garcia | maria.garcia@globex.example | +1 555 0142 | Globex | 1986-04-12 | customer vip
James Okafor | james.okafor@initech.example | +1 555 0178 | Initech |  | lead
Priya Raman | priya.raman@hooli.example | +1 555 0113 | Hooli | 1991-09-03 | customer
Lukas Schmidt | lukas.schmidt@umbrella.example | +49 30 5550 1234 | Umbrella |  | supplier
Chen Wei | chen.wei@acme.example | +1 555 0190 | Acme | 1979-01-27 | partner
Sofia Rossi | sofia.rossi@globex.example | +39 02 5550 7788 | Globex |  | lead events
Daniel Kim | daniel.kim@initech.example | +1 555 0167 | Initech | 1988-07-19 | customer
Amara Nwosu | amara.nwosu@hooli.example | +44 20 7946 0321 | Hooli |  | vip
Olivia Brown | olivia.brown@acme.example | +1 555 0125 | Acme | 1995-11-30 | internal
Mateo Fernández | mateo.fernandez@umbrella.example | +34 91 555 0456 | Umbrella |  | customer
Hannah Müller | hannah.mueller@globex.example | +49 89 5550 2211 | Globex | 1983-02-14 | partner
Noah Williams | noah.williams@initech.example | +1 555 0156 | Initech |  | lead
"""

_ORDER_CUSTOMERS: Final = (
    *COMPANIES,
    "Stark Industries",
    "Wayne Enterprises",
    "Vandelay Industries",
    "Soylent Corp",
    "Wonka Industries",
    "Cyberdyne Systems",
    "Tyrell Corporation",
)


def _seed_contacts() -> dict[int, dict[str, Any]]:
    contacts: dict[int, dict[str, Any]] = {}
    lines = _SEED_CONTACTS.strip().splitlines()
    for number, line in enumerate(lines, 1):
        name, email, phone, company, birthday, tags = (part.strip() for part in line.split("|"))
        contacts[number] = {
            "id": number,
            "full_name": name,
            "email": email,
            "phone": phone,
            "company": company,
            "birthday": birthday or None,
            "newsletter": number % 3 == 0,
            "notes": "",
            "tags": tags.split(),
        }
    contacts[1]["notes"] = "Prefers email. Renewal due in Q3."
    contacts[4]["notes"] = "Ships from the Hamburg warehouse."
    return contacts


def _seed_orders() -> list[dict[str, Any]]:
    """45 orders, oldest first: numbers SO-10001…SO-10045 from 6 Jan 2025, every third day."""
    orders = []
    for i in range(45):
        # Stable, random-looking choices (the same on every platform and Python version).
        noise = hashlib.sha256(f"acme-order-{i}".encode()).digest()
        if noise[5] % 7 == 0:
            status = "Cancelled"
        elif i >= 36 or noise[6] % 6 == 0:  # recent orders are still open
            status = "Open"
        else:
            status = "Shipped"
        cents = 1_900 + int.from_bytes(noise[1:4], "big") % 240_000
        orders.append(
            {
                "number": f"SO-{10_001 + i}",
                "customer": _ORDER_CUSTOMERS[noise[4] % len(_ORDER_CUSTOMERS)],
                "date": (date(2025, 1, 6) + timedelta(days=3 * i)).isoformat(),
                "status": status,
                "total": Decimal(cents) / 100,
            }
        )
    return orders


def _seed_reports() -> dict[int, dict[str, Any]]:
    reports: list[dict[str, Any]] = [
        {
            "number": 999,
            "title": "Client visit — Globex, Berlin",
            "date": "2025-05-14",
            "category": "Travel",
            "items": [
                {"description": "Flight LHR–BER", "amount": Decimal("212.40")},
                {"description": "Taxi to Globex office", "amount": Decimal("38.00")},
            ],
            "submitted_by": DEMO_USERNAME,
            "submitted_at": "2025-05-16T09:12:00+00:00",
        },
        {
            "number": 1000,
            "title": "Team lunch after the launch",
            "date": "2025-06-02",
            "category": "Meals",
            "items": [{"description": "Lunch for six", "amount": Decimal("186.75")}],
            "submitted_by": DEMO_USERNAME,
            "submitted_at": "2025-06-03T14:40:00+00:00",
        },
    ]
    return {r["number"]: r for r in reports}


def _reference(number: int) -> str:
    return f"EXP-{number:04d}"


def _total(items: Sequence[Mapping[str, Any]]) -> Decimal:
    return sum((item["amount"] for item in items), Decimal("0.00"))


def _money(amount: Decimal) -> str:
    return f"${amount:,.2f}"


_MONTHS: Final = (
    "Jan",
    "Feb",
    "Mar",
    "Apr",
    "May",
    "Jun",
    "Jul",
    "Aug",
    "Sep",
    "Oct",
    "Nov",
    "Dec",
)


def _date_text(iso: str) -> str:
    """``2025-03-07`` → ``7 Mar 2025`` (the same in every locale)."""
    day = date.fromisoformat(iso)
    return f"{day.day} {_MONTHS[day.month - 1]} {day.year}"


# ── state ────────────────────────────────────────────────────────────────────────────────────────


@dataclass(slots=True)
class _Session:
    username: str
    flashes: list[tuple[str, str]] = field(default_factory=list)
    wizard: dict[str, Any] | None = None
    announcement_pending: bool = True


class _State:
    """Everything the app remembers; callers hold ``lock`` while they read or change it."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.contacts: dict[int, dict[str, Any]] = {}
        self.orders: list[dict[str, Any]] = []
        self.reports: dict[int, dict[str, Any]] = {}
        self.sessions: dict[str, _Session] = {}
        self.actions: list[dict[str, Any]] = []
        self.next_contact_id = 1
        self.next_report_number = 1
        self.reset()

    def reset(self) -> None:
        with self.lock:
            self.contacts = _seed_contacts()
            self.orders = _seed_orders()
            self.reports = _seed_reports()
            self.sessions = {}
            self.actions = []
            self.next_contact_id = max(self.contacts) + 1
            self.next_report_number = max(self.reports) + 1

    def add_action(self, record: dict[str, Any]) -> None:
        """Log one user action in the order it happened (the page's clock), not of arrival."""
        with self.lock:
            bisect.insort(self.actions, record, key=_action_order)
            del self.actions[:-_MAX_ACTIONS]


# ── the action log ───────────────────────────────────────────────────────────────────────────────


def _action_order(record: Mapping[str, Any]) -> tuple[float, int]:
    """When an action happened: the page's time in ms, then its number on that page."""
    return record["t"], record["seq"]


def _is_number(value: object) -> bool:
    """A finite JSON number (not a boolean)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


# Every field of an action record, and the check its value must pass.
_ACTION_FIELDS: Final[dict[str, Callable[[Any], bool]]] = {
    "kind": lambda v: isinstance(v, str) and v in {"click", "change", "submit"},
    "element": lambda v: isinstance(v, str) and 0 < len(v) <= 500,
    "decoy": lambda v: isinstance(v, bool),
    "path": lambda v: isinstance(v, str) and v.startswith("/"),
    "value": lambda v: v is None or isinstance(v, bool | str),
    "seq": lambda v: isinstance(v, int) and not isinstance(v, bool) and v > 0,
    "page": _is_number,
    "t": _is_number,
}


def _parse_action(body: bytes) -> dict[str, Any] | None:
    """The record a page sent to ``POST /__actions`` (see ``app.js``), or None if malformed."""
    try:
        data = json.loads(body)
    except ValueError:  # not JSON, or not UTF-8
        return None
    if not isinstance(data, dict):
        return None
    if not all(key in data and valid(data[key]) for key, valid in _ACTION_FIELDS.items()):
        return None
    return {key: data[key] for key in _ACTION_FIELDS}


# ── requests and responses ───────────────────────────────────────────────────────────────────────


@dataclass(slots=True)
class _Request:
    method: str
    path: str
    target: str  # path and query, as requested
    query: dict[str, list[str]]
    form: dict[str, list[str]]
    cookies: dict[str, str]
    headers: Mapping[str, str]
    body: bytes = b""
    token: str | None = None
    session: _Session | None = None

    def arg(self, name: str) -> str:
        return self.query.get(name, [""])[0]

    def field(self, name: str) -> str:
        return self.form.get(name, [""])[0]


@dataclass(slots=True)
class _Response:
    status: int = 200
    body: bytes = b""
    content_type: str = "text/html; charset=utf-8"
    headers: list[tuple[str, str]] = field(default_factory=list)


def _redirect(location: str, *cookies: str) -> _Response:
    headers = [("Location", location)] + [("Set-Cookie", c) for c in cookies]
    return _Response(HTTPStatus.SEE_OTHER, headers=headers)


def _text(status: int, text: str) -> _Response:
    return _Response(status, text.encode(), "text/plain; charset=utf-8")


def _safe_next(target: str) -> str:
    """A local path to go back to after sign-in (never another site)."""
    if target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/contacts"


# ── the application ──────────────────────────────────────────────────────────────────────────────

_Route = tuple[str, re.Pattern[str], str]
_ROUTES: Final[tuple[_Route, ...]] = tuple(
    (method, re.compile(f"^{pattern}$"), handler)
    for method, pattern, handler in (
        ("GET", "/", "home"),
        ("GET", "/login", "login_form"),
        ("POST", "/login", "login"),
        ("GET", "/logout", "logout"),
        ("POST", "/logout", "logout"),
        ("POST", "/consent", "consent"),
        ("POST", "/announcement/dismiss", "dismiss_announcement"),
        ("GET", "/contacts", "contacts"),
        ("GET", "/contacts/new", "contact_new"),
        ("POST", "/contacts/new", "contact_create"),
        ("GET", r"/contacts/(\d+)", "contact_detail"),
        ("GET", r"/contacts/(\d+)/edit", "contact_edit"),
        ("POST", r"/contacts/(\d+)/edit", "contact_update"),
        ("POST", r"/contacts/(\d+)/delete", "contact_delete"),
        ("GET", "/expenses", "expenses"),
        ("GET", "/expenses/new", "wizard_details"),
        ("POST", "/expenses/new", "wizard_details_post"),
        ("GET", "/expenses/new/items", "wizard_items"),
        ("POST", "/expenses/new/items", "wizard_items_post"),
        ("GET", "/expenses/new/review", "wizard_review"),
        ("POST", "/expenses/new/review", "wizard_review_post"),
        ("GET", r"/expenses/(\d+)", "expense_detail"),
        ("GET", r"/expenses/(\d+)/submitted", "expense_submitted"),
        ("GET", "/orders", "orders"),
    )
)
_PUBLIC: Final = frozenset({"login_form", "login", "logout", "consent"})

_CONTACT_FIELDS: Final = (
    "full_name",
    "email",
    "phone",
    "company",
    "birthday",
    "newsletter",
    "notes",
)
# The ``reordered`` variant: (legend, fields) for each of two fieldset columns.
_CONTACT_COLUMNS: Final = (
    ("Organisation", ("company", "email", "phone")),
    ("The person", ("birthday", "full_name", "notes", "newsletter")),
)
_WIZARD_FIELDS: Final = ("title", "date", "category")


class _App:
    """Routes a request to a page; one per ``DemoSite``, shared by the server's threads."""

    def __init__(self, look: Look) -> None:
        self.look = look
        self.state = _State()
        self.templates = _Templates(resource_path("demo_site", "templates"), look)
        self.static = resource_path("demo_site", "static")

    # ── dispatch ──

    def handle(self, req: _Request) -> _Response:
        if req.path == "/__health":
            return _text(200, "ok") if req.method == "GET" else _text(405, "method not allowed")
        if req.path == "/__reset":
            if req.method != "POST":
                return _text(405, "POST /__reset restores the seed data")
            self.state.reset()
            return _text(200, "reset")
        if req.path == "/__actions":
            if req.method != "POST":
                return _text(405, "POST /__actions logs one user action")
            return self._log_action(req)
        if req.path.startswith("/static/"):
            return self._static(req)
        with self.state.lock:
            token = req.cookies.get(_SESSION_COOKIE, "")
            req.session = self.state.sessions.get(token)
            req.token = token if req.session is not None else None
            allowed = False
            for method, pattern, name in _ROUTES:
                match = pattern.match(req.path)
                if match is None:
                    continue
                allowed = True
                if method != req.method:
                    continue
                if req.session is None and name not in _PUBLIC:
                    if req.method == "GET":
                        return _redirect("/login?" + urlencode({"next": req.target}))
                    return _redirect("/login")
                handler: Callable[..., _Response] = getattr(self, f"_{name}")
                return handler(req, *(int(g) for g in match.groups()))
            if allowed:
                return _text(405, "method not allowed")
            body = self.templates.render("not_found", path=req.path)
            return self._page(req, "Page not found", body, status=404)

    def _log_action(self, req: _Request) -> _Response:
        """``POST /__actions``: one record of the action log, a JSON object from ``app.js``."""
        record = _parse_action(req.body)
        if record is None:
            return _text(400, "send one action record as a JSON object (see app.js)")
        self.state.add_action(record)
        return _Response(HTTPStatus.NO_CONTENT)

    def _static(self, req: _Request) -> _Response:
        kinds = {"app.css": "text/css; charset=utf-8", "app.js": "text/javascript; charset=utf-8"}
        name = req.path.removeprefix("/static/")
        if req.method != "GET" or name not in kinds:
            return _text(404, "not found")
        text = (self.static / name).read_text(encoding="utf-8")
        if name == "app.css":
            text = self.look.css(text)
        return _Response(200, text.encode(), kinds[name])

    # ── page frame ──

    def _page(
        self, req: _Request, title: str, body: Markup, *, status: int = 200, active: str = ""
    ) -> _Response:
        render = self.templates.render
        session = req.session
        if session is not None:
            current = {
                f"current_{key}": _attrs(aria_current="page" if key == active else None)
                for key in ("contacts", "new_contact", "expenses", "orders")
            }
            header = render(
                "header_signed_in",
                username=session.username,
                hostile=self._hostile(),
                **current,
            )
            flashes = Markup(
                "".join(render("flash", kind=k, message=m) for k, m in session.flashes)
            )
            session.flashes.clear()
            body = Markup(flashes + body)
        else:
            header = render("header_signed_out")
        overlays = ""
        if self.look.has("announcement") and session is not None and session.announcement_pending:
            overlays += render("announcement", next=req.target)
        if self.look.has("consent-banner") and req.cookies.get(_CONSENT_COOKIE) != "accepted":
            overlays += render("consent_banner", next=req.target)
        main = body
        if self.look.has("slow"):
            main = render("deferred", content=body, delay_ms=SLOW_DELAY_MS)
        page = render("layout", title=title, header=header, main=main, overlays=Markup(overlays))
        return _Response(status, self.look.html(page).encode())

    def _hostile(self) -> Markup:
        """The ``hostile`` variant's bait in the top bar: hidden orders and an off-site link."""
        if not self.look.has("hostile"):
            return Markup("")
        return self.templates.render("hostile", notice=HOSTILE_NOTICE, url=HOSTILE_URL)

    def _flash(self, req: _Request, message: str, kind: str = "success") -> None:
        assert req.session is not None
        req.session.flashes.append((kind, message))

    # ── sign in and out, overlays ──

    def _home(self, req: _Request) -> _Response:
        return _redirect("/contacts")

    def _login_form(
        self, req: _Request, *, error: str = "", username: str = "", status: int = 200
    ) -> _Response:
        if req.session is not None and req.method == "GET":
            return _redirect(_safe_next(req.arg("next") or "/contacts"))
        notice = Markup("")
        if error:
            notice = self.templates.render("alert", kind="error", id="login-error", message=error)
        elif req.arg("signed_out"):
            notice = self.templates.render(
                "alert", kind="info", id="login-notice", message="You have been signed out."
            )
        invalid = _attrs(aria_invalid="true", aria_describedby="login-error") if error else ""
        body = self.templates.render(
            "login",
            notice=notice,
            next=req.field("next") or req.arg("next"),
            username=username,
            invalid=Markup(invalid),
        )
        return self._page(req, "Sign in", body, status=status)

    def _login(self, req: _Request) -> _Response:
        username = req.field("username").strip()
        password = req.field("password")
        ok = secrets.compare_digest(username.encode(), DEMO_USERNAME.encode()) and (
            secrets.compare_digest(password.encode(), DEMO_PASSWORD.encode())
        )
        if not ok:
            req.session = None
            return self._login_form(
                req, error="Incorrect username or password.", username=username, status=422
            )
        if req.token is not None:
            self.state.sessions.pop(req.token, None)
        token = secrets.token_urlsafe(24)
        self.state.sessions[token] = _Session(username=username)
        cookie = f"{_SESSION_COOKIE}={token}; Path=/; HttpOnly; SameSite=Lax"
        return _redirect(_safe_next(req.field("next")), cookie)

    def _logout(self, req: _Request) -> _Response:
        if req.token is not None:
            self.state.sessions.pop(req.token, None)
        expired = f"{_SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax"
        return _redirect("/login?signed_out=1", expired)

    def _consent(self, req: _Request) -> _Response:
        cookie = f"{_CONSENT_COOKIE}=accepted; Path=/; Max-Age=31536000; SameSite=Lax"
        if req.headers.get("X-Requested-With") == "fetch":
            return _Response(HTTPStatus.NO_CONTENT, headers=[("Set-Cookie", cookie)])
        return _redirect(_safe_next(req.field("next")), cookie)

    def _dismiss_announcement(self, req: _Request) -> _Response:
        assert req.session is not None
        req.session.announcement_pending = False
        if req.headers.get("X-Requested-With") == "fetch":
            return _Response(HTTPStatus.NO_CONTENT)
        return _redirect(_safe_next(req.field("next")))

    # ── contacts ──

    def _contacts(self, req: _Request) -> _Response:
        render = self.templates.render
        query = req.arg("q").strip()
        needle = query.casefold()
        found = [
            c
            for c in sorted(self.state.contacts.values(), key=lambda c: c["full_name"].casefold())
            if not needle
            or any(needle in (c[k] or "").casefold() for k in ("full_name", "email", "company"))
        ]
        rows = [
            {
                "id": c["id"],
                "full_name": c["full_name"],
                "email": c["email"],
                "company": c["company"] or "—",
                "phone": c["phone"] or "—",
                "tags": self._tags(c["tags"]),
            }
            for c in found
        ]
        if not found:
            what = f"No contacts match “{query}”." if query else "No contacts yet."
            listing = render("empty", message=what)
        elif self.look.has("list-layout"):
            listing = render("contacts_cards", cards=self.templates.join("contact_card", rows))
        else:
            listing = render("contacts_table", rows=self.templates.join("contact_row", rows))
        noun = "contact" if len(found) == 1 else "contacts"
        count = f"{len(found)} {noun}" + (f" matching “{query}”" if query else "")
        clear = render("clear_search") if query else None
        decoy = render("decoy_new_list") if self.look.has("similar-sibling") else None
        body = render(
            "contacts", q=query, count=count, listing=listing, clear=clear, decoy_action=decoy
        )
        return self._page(req, "Contacts", body, active="contacts")

    def _tags(self, tags: Sequence[str]) -> Markup:
        if not tags:
            return Markup("")
        items = self.templates.join("tag", ({"tag": t} for t in tags))
        return self.templates.render("tags", items=items)

    def _draft_notice(self, what: str) -> Markup:
        """The notice a "Save draft" decoy (similar-sibling variant) leaves on the form."""
        return self.templates.render(
            "alert", kind="info", id="draft-notice", message=f"Draft kept on this page. {what}"
        )

    def _contact_new(self, req: _Request) -> _Response:
        return self._contact_form_page(req, {}, {}, contact_id=None)

    def _contact_create(self, req: _Request) -> _Response:
        values, errors = self._read_contact(req)
        if req.field("action") == "draft":
            notice = self._draft_notice("The contact has not been created yet.")
            return self._contact_form_page(req, values, {}, contact_id=None, notice=notice)
        if errors:
            return self._contact_form_page(req, values, errors, contact_id=None, status=422)
        contact_id = self.state.next_contact_id
        self.state.next_contact_id += 1
        self.state.contacts[contact_id] = {"id": contact_id, **values, "tags": []}
        self._flash(req, f"Contact {values['full_name']} created")
        return _redirect(f"/contacts/{contact_id}")

    def _contact_edit(self, req: _Request, contact_id: int) -> _Response:
        contact = self.state.contacts.get(contact_id)
        if contact is None:
            return self._missing_contact(req)
        return self._contact_form_page(req, contact, {}, contact_id=contact_id)

    def _contact_update(self, req: _Request, contact_id: int) -> _Response:
        contact = self.state.contacts.get(contact_id)
        if contact is None:
            return self._missing_contact(req)
        values, errors = self._read_contact(req)
        if req.field("action") == "draft":
            notice = self._draft_notice("The changes have not been saved yet.")
            return self._contact_form_page(req, values, {}, contact_id=contact_id, notice=notice)
        if errors:
            return self._contact_form_page(req, values, errors, contact_id=contact_id, status=422)
        contact.update(values)
        self._flash(req, f"Contact {values['full_name']} updated")
        return _redirect(f"/contacts/{contact_id}")

    def _read_contact(self, req: _Request) -> tuple[dict[str, Any], dict[str, str]]:
        values: dict[str, Any] = {
            "full_name": " ".join(req.field("full_name").split()),
            "email": req.field("email").strip(),
            "phone": req.field("phone").strip(),
            "company": req.field("company").strip() or None,
            "birthday": req.field("birthday").strip() or None,
            "newsletter": req.field("newsletter") == "yes",
            "notes": req.field("notes").replace("\r\n", "\n").strip(),
        }
        errors: dict[str, str] = {}
        if not values["full_name"]:
            errors["full_name"] = "Enter the contact's full name."
        elif len(values["full_name"]) > 100:
            errors["full_name"] = "Use at most 100 characters."
        if not values["email"]:
            errors["email"] = "Enter an email address."
        elif not _EMAIL.match(values["email"]):
            errors["email"] = "Enter an email address like name@company.com."
        if values["phone"] and not _PHONE.match(values["phone"]):
            errors["phone"] = "Use digits, spaces and + ( ) - only."
        if values["company"] is not None and values["company"] not in COMPANIES:
            errors["company"] = "Choose one of the listed companies."
        if values["birthday"] is not None:
            try:
                born = date.fromisoformat(values["birthday"])
            except ValueError:
                errors["birthday"] = "Enter a date like 1990-05-31."
            else:
                if born > date.today():
                    errors["birthday"] = "A birthday cannot be in the future."
        if len(values["notes"]) > 2000:
            errors["notes"] = "Use at most 2000 characters."
        return values, errors

    def _contact_form_page(
        self,
        req: _Request,
        values: Mapping[str, Any],
        errors: Mapping[str, str],
        *,
        contact_id: int | None,
        notice: Markup | None = None,
        status: int = 200,
    ) -> _Response:
        look = self.look
        render = self.templates.render
        fields = {name: self._contact_field(name, values, errors) for name in _CONTACT_FIELDS}
        if look.has("similar-sibling"):
            legal = req.field("legal_name")
            decoy = self._input(
                "legal_name", "legal_name", "text", legal, {}, autocomplete="off", data_decoy=True
            )
            fields["full_name"] = Markup(decoy + fields["full_name"])
        if look.has("reordered"):
            columns: dict[str, str] = {}
            for (legend, names), key in zip(_CONTACT_COLUMNS, ("first", "second"), strict=True):
                columns[key] = Markup("".join(fields[n] for n in names))
                columns[f"{key}_legend"] = legend
            body_fields = render("form_columns", **columns)
        else:
            body_fields = render("form_stack", fields=Markup("".join(fields.values())))
        draft = None
        if look.has("similar-sibling"):
            draft = render("draft_button", label=look.text("save_draft"), test_id="save-draft")
        if contact_id is None:
            title = heading = "New contact"
            action, cancel, active = "/contacts/new", "/contacts", "new_contact"
        else:
            heading = f"Edit {values.get('full_name') or 'contact'}"
            title = heading
            action, cancel, active = f"/contacts/{contact_id}/edit", f"/contacts/{contact_id}", ""
        body = render(
            "contact_form",
            heading=heading,
            notice=notice,
            action=action,
            summary=self._error_summary(errors),
            fields=body_fields,
            draft_button=draft,
            cancel_url=cancel,
        )
        return self._page(req, title, body, status=status, active=active)

    def _contact_field(
        self, name: str, values: Mapping[str, Any], errors: Mapping[str, str]
    ) -> Markup:
        value = values.get(name)
        if name == "full_name":
            return self._input(
                name, name, "text", value, errors, required=True, autocomplete="name"
            )
        if name == "email":
            return self._input(
                name,
                name,
                "email",
                value,
                errors,
                required=True,
                autocomplete="email",
                placeholder="name@company.com",
            )
        if name == "phone":
            return self._input(
                name, name, "tel", value, errors, autocomplete="tel", placeholder="+1 555 0100"
            )
        if name == "birthday":
            return self._input(name, name, "date", value, errors)
        if name == "company":
            choices = [("", self.look.text("choose_company")), *((c, c) for c in COMPANIES)]
            return self._select(name, name, choices, value or "", errors)
        if name == "newsletter":
            return self.templates.render(
                "field_checkbox",
                id=name,
                name=name,
                label=self.look.text(name),
                attrs=self._field_attrs(name, errors, checked=bool(value)),
                invalid=" field-invalid" if name in errors else "",
                error=self._field_error(name, errors),
            )
        if name == "notes":
            return self.templates.render(
                "field_textarea",
                id=name,
                name=name,
                label=self.look.text(name),
                required="",
                value=value or "",
                attrs=self._field_attrs(name, errors),
                invalid=" field-invalid" if name in errors else "",
                error=self._field_error(name, errors),
            )
        raise KeyError(name)

    def _field_attrs(
        self, name: str, errors: Mapping[str, str], **extra: str | bool | None
    ) -> Markup:
        invalid = name in errors
        return _attrs(
            **extra,
            aria_invalid="true" if invalid else None,
            aria_describedby=f"{name}-error" if invalid else None,
        )

    def _field_error(self, name: str, errors: Mapping[str, str]) -> Markup:
        if name not in errors:
            return Markup("")
        return self.templates.render("field_error", id=name, message=errors[name])

    def _required_mark(self, required: bool) -> Markup:
        return self.templates.render("required_mark") if required else Markup("")

    def _input(
        self,
        name: str,
        text_key: str,
        kind: str,
        value: object,
        errors: Mapping[str, str],
        *,
        required: bool = False,
        **extra: str | bool | None,
    ) -> Markup:
        attrs = self._field_attrs(
            name, errors, required=required, aria_required="true" if required else None, **extra
        )
        return self.templates.render(
            "field_input",
            id=name,
            name=name,
            type=kind,
            label=self.look.text(text_key),
            required=self._required_mark(required),
            value="" if value is None else value,
            attrs=attrs,
            invalid=" field-invalid" if name in errors else "",
            error=self._field_error(name, errors),
        )

    def _select(
        self,
        name: str,
        text_key: str,
        choices: Sequence[tuple[str, str]],
        selected: str,
        errors: Mapping[str, str],
        *,
        required: bool = False,
    ) -> Markup:
        options = self.templates.join(
            "option",
            (
                {"value": v, "label": label, "selected": _attrs(selected=v == selected)}
                for v, label in choices
            ),
        )
        attrs = self._field_attrs(
            name, errors, required=required, aria_required="true" if required else None
        )
        return self.templates.render(
            "field_select",
            id=name,
            name=name,
            label=self.look.text(text_key),
            required=self._required_mark(required),
            options=options,
            attrs=attrs,
            invalid=" field-invalid" if name in errors else "",
            error=self._field_error(name, errors),
        )

    def _error_summary(self, errors: Mapping[str, str]) -> Markup:
        if not errors:
            return Markup("")
        items = self.templates.join(
            "error_summary_item", ({"id": k, "message": m} for k, m in errors.items())
        )
        return self.templates.render("error_summary", items=items)

    def _contact_detail(self, req: _Request, contact_id: int) -> _Response:
        contact = self.state.contacts.get(contact_id)
        if contact is None:
            return self._missing_contact(req)
        confirm = Markup("")
        if req.arg("confirm") == "delete":
            confirm = self.templates.render(
                "contact_confirm_delete", id=contact_id, full_name=contact["full_name"]
            )
        birthday = contact["birthday"]
        body = self.templates.render(
            "contact_detail",
            id=contact_id,
            full_name=contact["full_name"],
            email=contact["email"],
            phone=contact["phone"] or "—",
            company=contact["company"] or "—",
            birthday=_date_text(birthday) if birthday else "—",
            newsletter="Subscribed" if contact["newsletter"] else "Not subscribed",
            tags=self._tags(contact["tags"]) or "—",
            notes=contact["notes"] or "—",
            confirm=confirm,
        )
        title = f"Delete {contact['full_name']}?" if confirm else contact["full_name"]
        return self._page(req, title, body, active="contacts")

    def _contact_delete(self, req: _Request, contact_id: int) -> _Response:
        contact = self.state.contacts.pop(contact_id, None)
        if contact is None:
            return self._missing_contact(req)
        self._flash(req, f"Contact {contact['full_name']} deleted")
        return _redirect("/contacts")

    def _missing_contact(self, req: _Request) -> _Response:
        body = self.templates.render("not_found", path=req.path)
        return self._page(req, "Contact not found", body, status=404, active="contacts")

    # ── expenses ──

    def _expenses(self, req: _Request) -> _Response:
        render = self.templates.render
        reports = sorted(self.state.reports.values(), key=lambda r: r["number"], reverse=True)
        rows = [
            {
                "number": r["number"],
                "reference": _reference(r["number"]),
                "title": r["title"],
                "date": r["date"],
                "date_text": _date_text(r["date"]),
                "category": r["category"],
                "total": _money(_total(r["items"])),
                "submitted_by": r["submitted_by"],
            }
            for r in reports
        ]
        if rows:
            listing = render("expenses_table", rows=self.templates.join("expense_row", rows))
        else:
            listing = render("empty", message="No expense reports yet.")
        assert req.session is not None
        wizard = req.session.wizard
        resume = render("resume_notice") if wizard and wizard["details_done"] else None
        body = render("expenses", listing=listing, resume=resume)
        return self._page(req, "Expense reports", body, active="expenses")

    def _wizard(self, req: _Request) -> dict[str, Any]:
        assert req.session is not None
        if req.session.wizard is None:
            req.session.wizard = {
                "title": "",
                "date": "",
                "category": "",
                "items": [],
                "details_done": False,
                "items_done": False,
            }
        return req.session.wizard

    def _existing_wizard(self, req: _Request) -> dict[str, Any] | None:
        assert req.session is not None
        return req.session.wizard

    def _steps(self, current: int) -> Markup:
        labels = ("Details", "Items", "Review")
        rows = []
        for number, label in enumerate(labels, 1):
            state = "current" if number == current else "done" if number < current else "todo"
            rows.append(
                {
                    "number": number,
                    "label": label,
                    "state": f" wizard-step-{state}",
                    "current": _attrs(aria_current="step" if number == current else None),
                }
            )
        return self.templates.render("wizard_steps", items=self.templates.join("wizard_step", rows))

    def _wizard_details(
        self, req: _Request, errors: Mapping[str, str] | None = None, status: int = 200
    ) -> _Response:
        wizard = self._wizard(req)
        errors = errors or {}
        fields = {
            "title": self._input(
                "title", "report_title", "text", wizard["title"], errors, required=True
            ),
            "date": self._input(
                "date", "report_date", "date", wizard["date"], errors, required=True
            ),
            "category": self._select(
                "category",
                "category",
                [("", self.look.text("choose_category")), *((c, c) for c in CATEGORIES)],
                wizard["category"],
                errors,
                required=True,
            ),
        }
        if self.look.has("reordered"):
            body_fields = self.templates.render(
                "form_columns",
                first_legend="Classification",
                first=Markup(fields["category"] + fields["date"]),
                second_legend="Name",
                second=fields["title"],
            )
        else:
            body_fields = self.templates.render(
                "form_stack", fields=Markup("".join(fields[n] for n in _WIZARD_FIELDS))
            )
        body = self.templates.render(
            "expense_step1",
            steps=self._steps(1),
            summary=self._error_summary(errors),
            fields=body_fields,
        )
        title = "New expense report: details (step 1 of 3)"
        return self._page(req, title, body, status=status, active="expenses")

    def _wizard_details_post(self, req: _Request) -> _Response:
        wizard = self._wizard(req)
        wizard["title"] = " ".join(req.field("title").split())
        wizard["date"] = req.field("date").strip()
        wizard["category"] = req.field("category").strip()
        errors: dict[str, str] = {}
        if not wizard["title"]:
            errors["title"] = "Give the report a title."
        if not wizard["date"]:
            errors["date"] = "Enter the date of the expenses."
        else:
            try:
                date.fromisoformat(wizard["date"])
            except ValueError:
                errors["date"] = "Enter a date like 2025-05-31."
        if wizard["category"] not in CATEGORIES:
            errors["category"] = "Choose a category."
        if errors:
            wizard["details_done"] = False
            return self._wizard_details(req, errors, status=422)
        wizard["details_done"] = True
        return _redirect("/expenses/new/items")

    def _wizard_items(
        self,
        req: _Request,
        row_errors: Mapping[int, str] | None = None,
        summary: str = "",
        status: int = 200,
    ) -> _Response:
        wizard = self._existing_wizard(req)
        if wizard is None or not wizard["details_done"]:
            return _redirect("/expenses/new")
        row_errors = row_errors or {}
        items = wizard["items"] or [{"description": "", "amount": ""}]
        rows = []
        for index, item in enumerate(items):
            error = row_errors.get(index)
            described = f"item-{index}-error" if error else None
            rows.append(
                {
                    "index": index,
                    "number": index + 1,
                    "description": item["description"],
                    "amount": item["amount"],
                    "description_attrs": _attrs(
                        aria_invalid="true" if error else None, aria_describedby=described
                    ),
                    "amount_attrs": _attrs(
                        aria_invalid="true" if error else None, aria_describedby=described
                    ),
                    "invalid": " field-invalid" if error else "",
                    "error": self._field_error(f"item-{index}", {f"item-{index}": error})
                    if error
                    else "",
                }
            )
        summary_html = Markup("")
        if summary:
            summary_html = self.templates.render(
                "alert", kind="error", id="items-error", message=summary
            )
        body = self.templates.render(
            "expense_step2",
            steps=self._steps(2),
            title=wizard["title"],
            summary=summary_html,
            rows=self.templates.join("expense_item_row", rows),
        )
        title = "New expense report: items (step 2 of 3)"
        return self._page(req, title, body, status=status, active="expenses")

    def _wizard_items_post(self, req: _Request) -> _Response:
        wizard = self._existing_wizard(req)
        if wizard is None or not wizard["details_done"]:
            return _redirect("/expenses/new")
        descriptions = req.form.get("description", [])
        amounts = req.form.get("amount", [])
        count = max(len(descriptions), len(amounts))
        items = [
            {
                "description": " ".join((descriptions[i] if i < len(descriptions) else "").split()),
                "amount": (amounts[i] if i < len(amounts) else "").strip(),
            }
            for i in range(count)
        ]
        wizard["items_done"] = False
        remove = req.field("remove")
        if remove.isdigit():
            index = int(remove)
            if index < len(items):
                del items[index]
            wizard["items"] = items
            return _redirect("/expenses/new/items")
        action = req.field("action")
        if action == "add":
            wizard["items"] = [*items, {"description": "", "amount": ""}]
            return _redirect("/expenses/new/items")
        if action == "back":
            wizard["items"] = items
            return _redirect("/expenses/new")
        items = [i for i in items if i["description"] or i["amount"]]
        wizard["items"] = items
        row_errors: dict[int, str] = {}
        for index, item in enumerate(items):
            if not item["description"]:
                row_errors[index] = "Describe the item."
                continue
            amount = _parse_amount(item["amount"])
            if amount is None:
                row_errors[index] = "Enter an amount like 12.50 (more than 0, at most 2 decimals)."
            else:
                item["amount"] = f"{amount:.2f}"
        if not items:
            return self._wizard_items(req, {}, "Add at least one item.", status=422)
        if row_errors:
            return self._wizard_items(req, row_errors, "Correct the highlighted items.", status=422)
        wizard["items_done"] = True
        return _redirect("/expenses/new/review")

    def _wizard_review(self, req: _Request) -> _Response:
        wizard = self._existing_wizard(req)
        if wizard is None or not wizard["details_done"]:
            return _redirect("/expenses/new")
        if not wizard["items_done"]:
            return _redirect("/expenses/new/items")
        items = [
            {"description": i["description"], "amount": Decimal(i["amount"])}
            for i in wizard["items"]
        ]
        draft = None
        if self.look.has("similar-sibling"):
            draft = self.templates.render(
                "draft_button",
                label=self.look.text("save_report_draft"),
                test_id="save-report-draft",
            )
        body = self.templates.render(
            "expense_review",
            steps=self._steps(3),
            title=wizard["title"],
            date=wizard["date"],
            date_text=_date_text(wizard["date"]),
            category=wizard["category"],
            items=self._items_table(items),
            draft_button=draft,
        )
        title = "New expense report: review (step 3 of 3)"
        return self._page(req, title, body, active="expenses")

    def _items_table(self, items: Sequence[Mapping[str, Any]]) -> Markup:
        rows = self.templates.join(
            "expense_item_line",
            ({"description": i["description"], "amount": _money(i["amount"])} for i in items),
        )
        return self.templates.render("expense_items_table", rows=rows, total=_money(_total(items)))

    def _wizard_review_post(self, req: _Request) -> _Response:
        wizard = self._existing_wizard(req)
        if wizard is None or not (wizard["details_done"] and wizard["items_done"]):
            return _redirect("/expenses/new")
        action = req.field("action")
        if action == "back":
            return _redirect("/expenses/new/items")
        if action == "draft":
            self._flash(req, "Draft saved. The report has not been submitted yet.", "info")
            return _redirect("/expenses/new/review")
        if action != "submit":
            return _redirect("/expenses/new/review")
        number = self.state.next_report_number
        self.state.next_report_number += 1
        assert req.session is not None
        self.state.reports[number] = {
            "number": number,
            "title": wizard["title"],
            "date": wizard["date"],
            "category": wizard["category"],
            "items": [
                {"description": i["description"], "amount": Decimal(i["amount"])}
                for i in wizard["items"]
            ],
            "submitted_by": req.session.username,
            "submitted_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        req.session.wizard = None
        return _redirect(f"/expenses/{number}/submitted")

    def _missing_report(self, req: _Request) -> _Response:
        body = self.templates.render("not_found", path=req.path)
        return self._page(req, "Report not found", body, status=404)

    def _expense_submitted(self, req: _Request, number: int) -> _Response:
        report = self.state.reports.get(number)
        if report is None:
            return self._missing_report(req)
        body = self.templates.render(
            "expense_submitted",
            number=number,
            reference=_reference(number),
            title=report["title"],
            total=_money(_total(report["items"])),
        )
        return self._page(req, f"Report {_reference(number)} submitted", body, active="expenses")

    def _expense_detail(self, req: _Request, number: int) -> _Response:
        report = self.state.reports.get(number)
        if report is None:
            return self._missing_report(req)
        body = self.templates.render(
            "expense_detail",
            reference=_reference(number),
            title=report["title"],
            date=report["date"],
            date_text=_date_text(report["date"]),
            category=report["category"],
            submitted_by=report["submitted_by"],
            items=self._items_table(report["items"]),
        )
        return self._page(req, f"{_reference(number)}: {report['title']}", body, active="expenses")

    # ── orders ──

    def _orders(self, req: _Request) -> _Response:
        render = self.templates.render
        status = req.arg("status").strip().lower()
        if status not in {s.lower() for s in ORDER_STATUSES}:
            status = "all"
        matching = [
            o
            for o in reversed(self.state.orders)
            if status == "all" or o["status"].lower() == status
        ]
        pages = max(1, math.ceil(len(matching) / ORDERS_PER_PAGE))
        try:
            page = min(max(1, int(req.arg("page") or "1")), pages)
        except ValueError:
            page = 1
        shown = matching[(page - 1) * ORDERS_PER_PAGE : page * ORDERS_PER_PAGE]
        rows = [
            {
                "number": o["number"],
                "customer": o["customer"],
                "date": o["date"],
                "date_text": _date_text(o["date"]),
                "status": o["status"],
                "status_key": o["status"].lower(),
                "total": _money(o["total"]),
            }
            for o in shown
        ]
        if rows:
            listing = render("orders_table", rows=self.templates.join("order_row", rows))
            first = (page - 1) * ORDERS_PER_PAGE + 1
            summary = f"Showing {first}–{first + len(rows) - 1} of {len(matching)} orders"
        else:
            listing = render("empty", message="No orders with this status.")
            summary = "No orders"
        choices = [("all", "All"), *((s.lower(), s) for s in ORDER_STATUSES)]
        options = self.templates.join(
            "option",
            (
                {"value": v, "label": t, "selected": _attrs(selected=v == status)}
                for v, t in choices
            ),
        )
        decoy = Markup("")
        if self.look.has("similar-sibling"):
            payment = req.arg("payment")
            decoy_options = self.templates.join(
                "option",
                (
                    {"value": v, "label": t, "selected": _attrs(selected=v == payment)}
                    for v, t in (("", "Any"), ("paid", "Paid"), ("unpaid", "Unpaid"))
                ),
            )
            decoy = render("decoy_payment_filter", options=decoy_options)
        body = render(
            "orders",
            options=options,
            decoy_filter=decoy,
            summary=summary,
            listing=listing,
            pagination=self._pagination(status, page, pages),
        )
        title = "Orders" if page == 1 else f"Orders (page {page} of {pages})"
        return self._page(req, title, body, active="orders")

    def _pagination(self, status: str, page: int, pages: int) -> Markup:
        def href(number: int) -> str:
            query = {"page": str(number)}
            if status != "all":
                query = {"status": status, **query}
            return "/orders?" + urlencode(query)

        def link(
            number: int, label: str, test_id: str, rel: str = "", disabled: bool = False
        ) -> Markup:
            if disabled:
                return self.templates.render(
                    "page_disabled", label=label, test_id=test_id, extra_class=""
                )
            current = number == page and not rel
            attrs = _attrs(rel=rel or None, aria_current="page" if current else None)
            if not rel:
                attrs = Markup(attrs + _attrs(aria_label=f"Page {number}"))
            return self.templates.render(
                "page_link",
                href=href(number),
                label=label,
                test_id=test_id,
                attrs=attrs,
                extra_class="",
            )

        items = [
            link(page - 1, self.look.text("previous_page"), "page-prev", "prev", disabled=page == 1)
        ]
        items += [link(n, str(n), f"page-{n}") for n in range(1, pages + 1)]
        items.append(
            link(page + 1, self.look.text("next_page"), "page-next", "next", disabled=page == pages)
        )
        return self.templates.render("pagination", items=Markup("".join(items)))


def _parse_amount(text: str) -> Decimal | None:
    cleaned = text.replace(",", "").replace("$", "").strip()
    try:
        amount = Decimal(cleaned)
    except InvalidOperation:
        return None
    if not amount.is_finite() or amount <= 0 or amount > 1_000_000:
        return None
    exponent = amount.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -2:
        return None
    return amount.quantize(Decimal("0.01"))


# ── HTTP ─────────────────────────────────────────────────────────────────────────────────────────


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # SO_REUSEADDR lets a restarted server take its port back on POSIX; on Windows it would let
    # two servers share a port, which must fail instead.
    allow_reuse_address = sys.platform != "win32"
    allow_reuse_port = False

    def __init__(self, address: tuple[str, int], app: _App, log_requests: bool) -> None:
        self.app = app
        self.log_requests = log_requests
        super().__init__(address, _Handler)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    server_version = "AcmeCRM/1.0"
    sys_version = ""

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.log_requests:
            sys.stderr.write(f"{self.address_string()} {format % args}\n")

    def _dispatch(self, method: str) -> None:
        try:
            response = self.server.app.handle(self._request(method))
        except _BadRequest as exc:
            response = _text(exc.status, exc.message)
        except Exception:  # a bug in a page: a 500 page, the traceback in the log
            sys.stderr.write(f"demo site error on {method} {self.path}:\n{traceback.format_exc()}")
            app = self.server.app
            body = app.templates.render("error")
            page = app.templates.render(
                "layout",
                title="Error",
                header=app.templates.render("header_signed_out"),
                main=body,
                overlays="",
            )
            response = _Response(500, page.encode())
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        for name, value in response.headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(response.body)

    def _request(self, method: str) -> _Request:
        parts = urlsplit(self.path)
        path = parts.path.rstrip("/") or "/"
        body = self._body(path) if method == "POST" else b""
        form: dict[str, list[str]] = {}
        if body and path != "/__actions":  # the action log takes JSON; every other POST a form
            kind = self.headers.get("Content-Type", "")
            if not kind.startswith("application/x-www-form-urlencoded"):
                raise _BadRequest(415, "send forms as application/x-www-form-urlencoded")
            form = parse_qs(body.decode("utf-8", errors="replace"), keep_blank_values=True)
        cookies: dict[str, str] = {}
        try:
            jar = SimpleCookie(self.headers.get("Cookie", ""))
        except CookieError:
            jar = SimpleCookie()
        for name, morsel in jar.items():
            cookies[name] = morsel.value
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        return _Request(
            method=method,
            path=path,
            target=quote(target, safe="/?=&%+:@!$'()*,;~-._"),
            query=parse_qs(parts.query, keep_blank_values=True),
            form=form,
            cookies=cookies,
            headers={k: v for k, v in self.headers.items()},
            body=body,
        )

    def _body(self, path: str) -> bytes:
        """The request body, refused unread when it is larger than ``path`` takes."""
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            raise _BadRequest(400, "bad Content-Length") from None
        if length < 0:
            raise _BadRequest(400, "bad Content-Length")
        if path == "/__actions" and length > _MAX_ACTION_BODY:
            raise _BadRequest(400, "an action record is at most 10 kB")
        if length > _MAX_BODY:
            raise _BadRequest(413, "request body too large")
        return self.rfile.read(length)


class _BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


# ── public API ───────────────────────────────────────────────────────────────────────────────────


def _plain(value: Any) -> Any:
    """A deep copy with decimals as strings ("12.50"), safe to hand out."""
    if isinstance(value, Decimal):
        return f"{value:.2f}"
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return copy.copy(value)


class DemoSite:
    """Acme CRM on ``127.0.0.1``, served from a background thread; a context manager.

    Args:
        port: the port to listen on; 0 picks a free one (see ``url`` once started).
        variants: drift variants to apply (names from ``VARIANTS``; an item may be ``"a,b"``).
        log_requests: write one line per request to standard error.

    Raises:
        DemoSiteError: an unknown variant (here), or the port is in use (from ``start``).
    """

    def __init__(
        self, *, port: int = 0, variants: Sequence[str] = (), log_requests: bool = False
    ) -> None:
        self.variants = parse_variants(variants)
        self._port = port
        self._log_requests = log_requests
        self._app = _App(Look(self.variants))
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> DemoSite:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> None:
        """Listen and serve in a daemon thread; returns once the port is bound."""
        if self._server is not None:
            return
        try:
            server = _Server(("127.0.0.1", self._port), self._app, self._log_requests)
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES, getattr(errno, "WSAEADDRINUSE", -1)):
                what = "is already in use" if exc.errno != errno.EACCES else "is not allowed"
                raise DemoSiteError(
                    f"cannot serve the demo site: port {self._port} on 127.0.0.1 {what}; "
                    "choose another with --port, or --port 0 for any free port"
                ) from exc
            raise DemoSiteError(f"cannot serve the demo site on port {self._port}: {exc}") from exc
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.1},
            name=f"demo-site-{server.server_address[1]}",
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and close the port (idempotent)."""
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5)

    @property
    def port(self) -> int:
        """The port it listens on (only while started)."""
        if self._server is None:
            raise DemoSiteError("the demo site is not running; call start() first")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``, without a trailing slash."""
        return f"http://127.0.0.1:{self.port}"

    def reset(self) -> None:
        """Restore the seed data, sign everyone out, empty the action log (``POST /__reset``)."""
        self._app.state.reset()

    def contacts(self) -> list[dict[str, Any]]:
        """Every contact, by id: id, full_name, email, phone, company, birthday, newsletter…"""
        with self._app.state.lock:
            return [_plain(c) for _, c in sorted(self._app.state.contacts.items())]

    def expense_reports(self) -> list[dict[str, Any]]:
        """Every submitted report, oldest first, with ``reference`` and ``total`` added."""
        with self._app.state.lock:
            reports = sorted(self._app.state.reports.values(), key=lambda r: r["number"])
            return [
                _plain({**r, "reference": _reference(r["number"]), "total": _total(r["items"])})
                for r in reports
            ]

    def orders(self) -> list[dict[str, Any]]:
        """Every order, oldest first: number, customer, date, status, total."""
        with self._app.state.lock:
            return [_plain(o) for o in self._app.state.orders]

    def sessions(self) -> int:
        """How many people are signed in."""
        with self._app.state.lock:
            return len(self._app.state.sessions)

    def actions(self) -> list[dict[str, Any]]:
        """The action log, oldest first: which element each click, change and submit reached.

        Each record: ``kind`` ("click", "change" or "submit"), ``element`` (a key that no
        variant changes, e.g. ``"testid:save"``, ``"name:email"``, ``"link:/orders"``),
        ``decoy`` (a look-alike decoy, or the hostile link), ``path`` (the page's path),
        ``value`` (a change's new value, never a password's; a submit's submit button), ``seq``
        (its number on the page), ``page`` and ``t`` (when the page loaded and when the action
        happened, in ms since the epoch). Pages send records as they happen: poll for them.
        """
        with self._app.state.lock:
            return [dict(record) for record in self._app.state.actions]

    def clear_actions(self) -> None:
        """Empty the action log (``reset`` does too)."""
        with self._app.state.lock:
            self._app.state.actions = []


def serve_forever(port: int, variants: Sequence[str]) -> None:
    """Serve the demo site until Ctrl+C or SIGTERM, printing its address and the credentials.

    Raises:
        DemoSiteError: an unknown variant, or the port is in use.
    """
    site = DemoSite(port=port, variants=variants, log_requests=True)
    site.start()
    stop = threading.Event()
    previous: Any = None
    in_main = threading.current_thread() is threading.main_thread()

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        stop.set()

    if in_main:
        previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        shown = ", ".join(site.variants) or "none"
        print(f"Acme CRM demo site: {site.url}/  (variants: {shown})", flush=True)
        print(f"Sign in as {DEMO_USERNAME} / {DEMO_PASSWORD}. Press Ctrl+C to stop.", flush=True)
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)
        site.stop()
        print("Demo site stopped.", flush=True)
