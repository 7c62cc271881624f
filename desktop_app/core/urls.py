"""Addresses as a person reads them: the forms an app rewrites its own URL between are one.

Apps normalise their addresses as they load: a router rewrites ``/`` to ``/#/``, a server
adds or drops a trailing slash, a link spells the host in capitals or names the default port.
A recorded address and the one replay finds are compared in that normal form, so a URL
expectation holds on the page the recording saw, however the app spells it this time.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Final, Literal
from urllib.parse import urlsplit, urlunsplit

__all__ = ["normal_url", "page_shape", "url_matches"]

_DEFAULT_PORTS: Final = {"http": 80, "https": 443}
#: Fragments that name no place in the page: empty, or a router's root.
_EMPTY_FRAGMENTS: Final = frozenset({"", "/", "!", "!/"})
#: A path segment that names a record, not a place: a number, a long hex string, a UUID.
_ID_SEGMENT: Final = re.compile(
    r"^(?:\d+|[0-9a-f]{12,}|[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})$", re.IGNORECASE
)


def normal_url(url: str) -> str:
    """*url* in normal form: scheme and host in lower case, no default port, no trailing slash
    on the path, no fragment that names nothing (``#``, ``#/``, ``#!/``). Anything that is not
    an absolute URL comes back as it is."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return url
    if not parts.scheme or not parts.netloc:
        return url
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    if parts.username or parts.password:
        credentials = parts.username or ""
        if parts.password:
            credentials += ":" + parts.password
        host = f"{credentials}@{host}"
    if port is not None and port != _DEFAULT_PORTS.get(scheme):
        host = f"{host}:{port}"
    path = parts.path.rstrip("/")
    fragment = "" if parts.fragment in _EMPTY_FRAGMENTS else parts.fragment.rstrip("/")
    return urlunsplit((scheme, host, path, parts.query, fragment))


def url_matches(url: str, pattern: str, match: Literal["glob", "regex", "exact"]) -> bool:
    """Whether *url* matches *pattern*: a glob (``*`` matches anything), a regular expression
    (searched), or an exact address; globs and exact addresses compared in normal form."""
    if match == "regex":
        return re.search(pattern, url) is not None
    if match == "exact":
        return url == pattern or normal_url(url) == normal_url(pattern)
    if fnmatch.fnmatchcase(url, pattern):
        return True
    return fnmatch.fnmatchcase(normal_url(url), normal_url(pattern))


def page_shape(url: str) -> str:
    """Which page of its app *url* is, whatever record it shows and wherever the app is served:
    its path and router fragment in normal form, with segments that name a record (numbers,
    long hex strings, UUIDs) as ``*``; no host, no query. ``http://h/contacts/42#/edit`` and
    ``https://other/contacts/7#/edit`` are both ``/contacts/*#/edit``."""
    parts = urlsplit(normal_url(url))

    def shaped(path: str) -> str:
        return "/".join("*" if _ID_SEGMENT.match(seg) else seg for seg in path.split("/"))

    fragment = parts.fragment.split("?", 1)[0]
    return shaped(parts.path) + (f"#{shaped(fragment)}" if fragment else "")
