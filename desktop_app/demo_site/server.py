"""Acme CRM, the bundled demo web app: a standard-library HTTP server with in-memory state."""

from __future__ import annotations

import copy
import errno
import signal
import sys
import threading
import traceback
from collections.abc import Sequence
from decimal import Decimal
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType, TracebackType
from typing import Any, Final
from urllib.parse import parse_qs, quote, urlsplit

from desktop_app.demo_site.data import DEMO_PASSWORD, DEMO_USERNAME, reference, total
from desktop_app.demo_site.messages import Request, Response, text_response
from desktop_app.demo_site.routes import App
from desktop_app.demo_site.variants import DemoSiteError, Look, parse_variants

__all__ = ["DemoSite", "serve_forever"]

_MAX_BODY: Final = 1_000_000
_MAX_ACTION_BODY: Final = 10_000  # one record for POST /__actions


# ── HTTP ─────────────────────────────────────────────────────────────────────────────────────────


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # SO_REUSEADDR lets a restarted server take its port back on POSIX; on Windows it would let
    # two servers share a port, which must fail instead.
    allow_reuse_address = sys.platform != "win32"
    allow_reuse_port = False

    def __init__(self, address: tuple[str, int], app: App, log_requests: bool) -> None:
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
            response = text_response(exc.status, exc.message)
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
            response = Response(500, page.encode())
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        for name, value in response.headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(response.body)

    def _request(self, method: str) -> Request:
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
        return Request(
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
        self._app = App(Look(self.variants))
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
                _plain({**r, "reference": reference(r["number"]), "total": total(r["items"])})
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
