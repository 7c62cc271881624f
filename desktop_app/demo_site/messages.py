"""Requests and responses as the demo site's pages see them, and the cookies it sets."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Final

from desktop_app.demo_site.store import Session

__all__ = [
    "CONSENT_COOKIE",
    "SESSION_COOKIE",
    "Request",
    "Response",
    "redirect",
    "safe_next",
    "text_response",
]

SESSION_COOKIE: Final = "acme_session"
CONSENT_COOKIE: Final = "acme_consent"


@dataclass(slots=True)
class Request:
    method: str
    path: str
    target: str  # path and query, as requested
    query: dict[str, list[str]]
    form: dict[str, list[str]]
    cookies: dict[str, str]
    headers: Mapping[str, str]
    body: bytes = b""
    token: str | None = None
    session: Session | None = None

    def arg(self, name: str) -> str:
        return self.query.get(name, [""])[0]

    def field(self, name: str) -> str:
        return self.form.get(name, [""])[0]


@dataclass(slots=True)
class Response:
    status: int = 200
    body: bytes = b""
    content_type: str = "text/html; charset=utf-8"
    headers: list[tuple[str, str]] = field(default_factory=list)


def redirect(location: str, *cookies: str) -> Response:
    headers = [("Location", location)] + [("Set-Cookie", c) for c in cookies]
    return Response(HTTPStatus.SEE_OTHER, headers=headers)


def text_response(status: int, text: str) -> Response:
    return Response(status, text.encode(), "text/plain; charset=utf-8")


def safe_next(target: str) -> str:
    """A local path to go back to after sign-in (never another site)."""
    if target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/contacts"
