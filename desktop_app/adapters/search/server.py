"""Where a shared search index lives in team mode: a Chroma server, and how to reach it.

:class:`ChromaServer` is the address (and token) that a
:class:`~desktop_app.adapters.search.chroma_index.ChromaSearchIndex` takes in place of a
directory. :func:`probe` runs in the index's worker process: when a call to the server fails it
tells a person why, in one line (not reachable, token refused, an unexpected answer).

``chroma run`` has no authentication of its own (chromadb 1.5); a team puts it behind a reverse
proxy that asks for ``Authorization: Bearer <token>`` (docs/team.md). The token is sent with
chromadb's own client setting (:meth:`ChromaServer.client_settings`), which sends that header.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

from desktop_app.core.errors import StoreError

__all__ = [
    "DEFAULT_DATABASE",
    "DEFAULT_TENANT",
    "ChromaServer",
    "ensure_database",
    "page_title",
    "probe",
]

#: chromadb's defaults (``chromadb.config.DEFAULT_TENANT`` / ``DEFAULT_DATABASE``), spelled out
#: here so that naming a server does not import chromadb.
DEFAULT_TENANT: Final = "default_tenant"
DEFAULT_DATABASE: Final = "default_database"

#: What chromadb's token client accepts (``chromadb.auth.token_authn._check_token``).
_TOKEN_CHARS: Final = frozenset(string.digits + string.ascii_letters + string.punctuation)
_TOKEN_PROVIDER: Final = "chromadb.auth.token_authn.TokenAuthClientProvider"
_PROBE_TIMEOUT_S: Final = 10.0
_CHECK: Final = "check it with `procedura team status`"
_TITLE: Final = re.compile(r"<title>(.*?)</title>", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True, slots=True)
class ChromaServer:
    """A Chroma server reached over HTTP(S), with the token its proxy asks for.

    The token is left out of :func:`repr` and of :attr:`url`, so logging the server never shows
    it. Host names and IPv4 addresses are supported (chromadb's client takes no IPv6 literal).

    Args:
        host: the server's host name or address.
        port: its port.
        ssl: ``https`` rather than ``http``.
        token: sent as ``Authorization: Bearer <token>``; ``None`` sends no such header.
        tenant: the Chroma tenant.
        database: the Chroma database in that tenant.
    """

    host: str
    port: int
    ssl: bool = False
    token: str | None = field(default=None, repr=False)
    tenant: str = DEFAULT_TENANT
    database: str = DEFAULT_DATABASE

    def __post_init__(self) -> None:
        if not self.host or any(c in self.host for c in "/:@[] ") or not self.host.isascii():
            raise ValueError(f"not a Chroma server host name: {self.host!r}")
        if not 0 < self.port < 65536:
            raise ValueError(f"not a port number: {self.port}")
        if self.token is not None and (
            not self.token or not set(self.token) <= _TOKEN_CHARS
        ):  # the token is never echoed
            raise ValueError(
                "the Chroma token must be ASCII letters, digits and punctuation, with no spaces"
            )
        if not self.tenant or not self.database:
            raise ValueError("the Chroma tenant and database must not be empty")

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        token: str | None = None,
        tenant: str = DEFAULT_TENANT,
        database: str = DEFAULT_DATABASE,
    ) -> ChromaServer:
        """The server at *url*: ``http://host:8000`` or ``https://host`` (port 80 / 443).

        Raises:
            ValueError: *url* is not of that form (a path, a query or a user name in it included:
                the token goes in *token*, never in the address).
        """
        parts = urlsplit(url.strip())
        if parts.username is not None or parts.password is not None:
            # Not echoed: what stands before the "@" may be a token.
            raise ValueError(
                "the Chroma server address must not hold a user name or token; "
                "give the token separately"
            )
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not a Chroma server address (http://host:port): {url!r}")
        if parts.path not in ("", "/") or parts.query or parts.fragment:
            raise ValueError(
                f"a Chroma server address is scheme, host and port only (no path): {url!r}"
            )
        try:
            port = parts.port
        except ValueError:
            raise ValueError(f"not a Chroma server address (bad port): {url!r}") from None
        ssl = parts.scheme == "https"
        return cls(
            host=parts.hostname,
            port=port if port is not None else (443 if ssl else 80),
            ssl=ssl,
            token=token,
            tenant=tenant,
            database=database,
        )

    @property
    def url(self) -> str:
        """``http(s)://host:port``, without the token."""
        return f"{'https' if self.ssl else 'http'}://{self.host}:{self.port}"

    def describe(self) -> str:
        """Where the index is, for messages: ``the Chroma server at http://host:port``, with the
        tenant and database when they are not the defaults."""
        where = f"the Chroma server at {self.url}"
        if (self.tenant, self.database) != (DEFAULT_TENANT, DEFAULT_DATABASE):
            where += f" (tenant {self.tenant}, database {self.database})"
        return where

    def client_settings(self) -> dict[str, Any]:
        """Keyword arguments for ``chromadb.config.Settings``: the token through chromadb's own
        token client, which sends ``Authorization: Bearer <token>``."""
        settings: dict[str, Any] = {"anonymized_telemetry": False, "allow_reset": False}
        if self.token is not None:
            settings["chroma_client_auth_provider"] = _TOKEN_PROVIDER
            settings["chroma_client_auth_credentials"] = self.token
        return settings

    def to_wire(self) -> dict[str, Any]:
        """Every field, the token included: only for the worker's stdin, never for a log."""
        return {
            "host": self.host,
            "port": self.port,
            "ssl": self.ssl,
            "token": self.token,
            "tenant": self.tenant,
            "database": self.database,
        }

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> ChromaServer:
        """The server :meth:`to_wire` described."""
        return cls(
            host=str(data["host"]),
            port=int(data["port"]),
            ssl=bool(data["ssl"]),
            token=None if data.get("token") is None else str(data["token"]),
            tenant=str(data["tenant"]),
            database=str(data["database"]),
        )


def probe(server: ChromaServer, timeout: float = _PROBE_TIMEOUT_S) -> str | None:
    """Why *server* cannot be used, in a few words, or ``None`` if its heartbeat answers.

    Run after a call failed, to tell "not reachable" and "token refused" from the rest (chromadb
    reports a proxy's 401 as a bare ``Exception`` holding the proxy's HTML page). The message
    never holds the token.
    """
    import httpx

    headers = {"Authorization": f"Bearer {server.token}"} if server.token is not None else {}
    try:
        reply = httpx.get(f"{server.url}/api/v2/heartbeat", headers=headers, timeout=timeout)
    except httpx.ConnectError as exc:
        return f"the server cannot be reached ({_reason(exc)})"
    except httpx.TimeoutException:
        return f"the server did not answer within {timeout:g} s"
    except httpx.HTTPError as exc:
        return f"the server cannot be reached ({_reason(exc)})"
    status = reply.status_code
    if status in (401, 403):
        if server.token is None:
            return f"the server asks for a token (HTTP {status}) and none is set; {_CHECK}"
        return f"the server refused the token (HTTP {status}); {_CHECK}"
    if status >= 400:
        return f"the server answered HTTP {status} {reply.reason_phrase} to a heartbeat"
    return None


def ensure_database(server: ChromaServer, timeout: float = _PROBE_TIMEOUT_S) -> bool:
    """Create *server*'s database in its tenant unless it exists; whether it was created
    (``procedura team init``: one Chroma server can hold several teams, a database each).

    Raises:
        StoreError: the server cannot be used (the reason in one line, never the token).
    """
    import httpx

    headers = {"Authorization": f"Bearer {server.token}"} if server.token is not None else {}
    base = f"{server.url}/api/v2/tenants/{server.tenant}/databases"
    try:
        found = httpx.get(f"{base}/{server.database}", headers=headers, timeout=timeout)
        if found.status_code == 200:
            return False
        made = httpx.post(base, json={"name": server.database}, headers=headers, timeout=timeout)
    except httpx.HTTPError:
        made = None
    if made is not None and made.status_code == 200:
        return True
    reason = probe(server, timeout) or (
        f"HTTP {made.status_code}: {page_title(made.text)[:200]}" if made is not None else "?"
    )
    raise StoreError(
        f"cannot create the database {server.database!r} on {server.describe()}: {reason}"
    )


def page_title(text: str) -> str:
    """The ``<title>`` of an HTML error page (what a proxy answers), else *text* unchanged;
    with what to do for a request the proxy found too large."""
    found = _TITLE.search(text)
    if not found:
        return text
    title = " ".join(found.group(1).split())
    if title.startswith("413"):
        title += (
            " from the proxy in front of the server; raise its limit"
            " (nginx: client_max_body_size 64m)"
        )
    return title


def _reason(exc: Exception) -> str:
    """``connection refused`` from ``[Errno 111] Connection refused``, and the like."""
    text = " ".join(str(exc).split())
    if text.startswith("[Errno"):
        text = text.split("]", 1)[-1].strip()
    text = text[:200] or type(exc).__name__
    return text[0].lower() + text[1:]
