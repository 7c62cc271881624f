"""Which requests the domain guard has to see.

The guard (``PlaywrightPage._guard``) stops a navigation that leaves the workflow's domains.
Every request it is shown makes a round trip from the browser to Python and back, which a page
loading twenty files pays twenty times, so it is shown only what may leave: the browser matches
the pattern itself, and a request it lets by is one whose URL is, by its very spelling, on one of
the domains or a subdomain. The pattern may show the guard more than that (an address spelled
oddly still goes to the guard, which judges it with :func:`domain_allowed`), never less.
"""

from __future__ import annotations

import re

__all__ = ["guarded"]


def guarded(domains: tuple[str, ...]) -> str | re.Pattern[str]:
    """The URL pattern (a Playwright route matcher) of the requests the guard must see for
    *domains*: every one, or every one but those plainly on the domains."""
    if not domains:
        return "**/*"
    names = "|".join(re.escape(d.lower()) for d in sorted(set(domains)))
    # scheme://, any subdomain labels, one of the domains, a port, then the end of the host:
    # anything else there (a user name's "@", more of a host name) is not plainly on them.
    on_domains = rf"https?://(?:[a-z0-9-]+\.)*(?:{names})(?::\d+)?(?:[/?#]|$)"
    return re.compile(rf"^(?!{on_domains})", re.IGNORECASE)
