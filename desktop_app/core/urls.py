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

__all__ = ["normal_url", "url_matches"]

_DEFAULT_PORTS: Final = {"http": 80, "https": 443}
#: Fragments that name no place in the page: empty, or a router's root.
_EMPTY_FRAGMENTS: Final = frozenset({"", "/", "!", "!/"})


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
