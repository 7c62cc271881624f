"""The demo site's sign-in and sign-out, and the overlays (consent banner, announcement)."""

from __future__ import annotations

import secrets
from http import HTTPStatus

from desktop_app.demo_site.data import DEMO_PASSWORD, DEMO_USERNAME
from desktop_app.demo_site.markup import Markup, html_attrs
from desktop_app.demo_site.messages import (
    CONSENT_COOKIE,
    SESSION_COOKIE,
    Request,
    Response,
    redirect,
    safe_next,
)
from desktop_app.demo_site.pages import Pages
from desktop_app.demo_site.store import Session

__all__ = ["SignInPages"]


class SignInPages(Pages):
    """Signing in and out, and dismissing the overlays."""

    def _home(self, req: Request) -> Response:
        return redirect("/contacts")

    def _login_form(
        self, req: Request, *, error: str = "", username: str = "", status: int = 200
    ) -> Response:
        if req.session is not None and req.method == "GET":
            return redirect(safe_next(req.arg("next") or "/contacts"))
        notice = Markup("")
        if error:
            notice = self.templates.render("alert", kind="error", id="login-error", message=error)
        elif req.arg("signed_out"):
            notice = self.templates.render(
                "alert", kind="info", id="login-notice", message="You have been signed out."
            )
        invalid = html_attrs(aria_invalid="true", aria_describedby="login-error") if error else ""
        body = self.templates.render(
            "login",
            notice=notice,
            next=req.field("next") or req.arg("next"),
            username=username,
            invalid=Markup(invalid),
        )
        return self._page(req, "Sign in", body, status=status)

    def _login(self, req: Request) -> Response:
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
        self.state.sessions[token] = Session(username=username)
        cookie = f"{SESSION_COOKIE}={token}; Path=/; HttpOnly; SameSite=Lax"
        return redirect(safe_next(req.field("next")), cookie)

    def _logout(self, req: Request) -> Response:
        if req.token is not None:
            self.state.sessions.pop(req.token, None)
        expired = f"{SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax"
        return redirect("/login?signed_out=1", expired)

    def _consent(self, req: Request) -> Response:
        cookie = f"{CONSENT_COOKIE}=accepted; Path=/; Max-Age=31536000; SameSite=Lax"
        if req.headers.get("X-Requested-With") == "fetch":
            return Response(HTTPStatus.NO_CONTENT, headers=[("Set-Cookie", cookie)])
        return redirect(safe_next(req.field("next")), cookie)

    def _dismiss_announcement(self, req: Request) -> Response:
        assert req.session is not None
        req.session.announcement_pending = False
        if req.headers.get("X-Requested-With") == "fetch":
            return Response(HTTPStatus.NO_CONTENT)
        return redirect(safe_next(req.field("next")))
