"""The demo site's routes, and the app that hands each request to its page."""

from __future__ import annotations

import re
from collections.abc import Callable
from http import HTTPStatus
from typing import Final
from urllib.parse import urlencode

from desktop_app.demo_site.contacts import ContactPages
from desktop_app.demo_site.expenses import ExpensePages
from desktop_app.demo_site.messages import (
    SESSION_COOKIE,
    Request,
    Response,
    redirect,
    text_response,
)
from desktop_app.demo_site.orders import OrderPages
from desktop_app.demo_site.signin import SignInPages
from desktop_app.demo_site.store import parse_action

__all__ = ["App"]

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


class App(SignInPages, ContactPages, ExpensePages, OrderPages):
    """Routes a request to a page; one per ``DemoSite``, shared by the server's threads."""

    # ── dispatch ──

    def handle(self, req: Request) -> Response:
        if req.path == "/__health":
            return (
                text_response(200, "ok")
                if req.method == "GET"
                else text_response(405, "method not allowed")
            )
        if req.path == "/__reset":
            if req.method != "POST":
                return text_response(405, "POST /__reset restores the seed data")
            self.state.reset()
            return text_response(200, "reset")
        if req.path == "/__actions":
            if req.method != "POST":
                return text_response(405, "POST /__actions logs one user action")
            return self._log_action(req)
        if req.path.startswith("/static/"):
            return self._static(req)
        with self.state.lock:
            token = req.cookies.get(SESSION_COOKIE, "")
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
                        return redirect("/login?" + urlencode({"next": req.target}))
                    return redirect("/login")
                handler: Callable[..., Response] = getattr(self, f"_{name}")
                return handler(req, *(int(g) for g in match.groups()))
            if allowed:
                return text_response(405, "method not allowed")
            body = self.templates.render("not_found", path=req.path)
            return self._page(req, "Page not found", body, status=404)

    def _log_action(self, req: Request) -> Response:
        """``POST /__actions``: one record of the action log, a JSON object from ``app.js``."""
        record = parse_action(req.body)
        if record is None:
            return text_response(400, "send one action record as a JSON object (see app.js)")
        self.state.add_action(record)
        return Response(HTTPStatus.NO_CONTENT)

    def _static(self, req: Request) -> Response:
        kinds = {"app.css": "text/css; charset=utf-8", "app.js": "text/javascript; charset=utf-8"}
        name = req.path.removeprefix("/static/")
        if req.method != "GET" or name not in kinds:
            return text_response(404, "not found")
        text = (self.static / name).read_text(encoding="utf-8")
        if name == "app.css":
            text = self.look.css(text)
        return Response(200, text.encode(), kinds[name])
