"""The domain guard is shown every request that may leave the workflow's domains, and only
those: a page's own files on its own domain load without a round trip through Python."""

from __future__ import annotations

import re

import pytest

from desktop_app.adapters.browser.guard_pattern import guarded
from desktop_app.core.replay.render import domain_allowed

DOMAINS = ("127.0.0.1", "shop.example")

# Addresses that are not on the domains, some of them spelled to look as if they were.
AWAY = (
    "http://localhost:8000/elsewhere",
    "http://127.0.0.1.evil.test/",
    "http://127.0.0.1@evil.test/collect",
    "http://user:pw@shop.example@evil.test/",
    "http://evil.test/?next=http://127.0.0.1/",
    "http://evil.test/#shop.example/",
    "http://notshop.example/",
    "http://shop.example.evil.test:80/",
    "https://shop-example.test/",
    "ftp://shop.example/file",
    "file:///etc/passwd",
    "javascript:alert(1)",
    "http://127.0.0.10/",
    "http://shop.examplex/",
)
# On the domains: loaded with no round trip.
HOME = (
    "http://127.0.0.1:8000/admin/",
    "http://127.0.0.1/static/admin/css/base.css?v=2",
    "https://shop.example",
    "https://shop.example#top",
    "https://cdn.shop.example/app.js",
    "HTTPS://SHOP.EXAMPLE/Cart",
)


def _shown(url: str) -> bool:
    pattern = guarded(DOMAINS)
    assert isinstance(pattern, re.Pattern)
    return pattern.search(url) is not None


@pytest.mark.parametrize("url", AWAY)
def test_every_address_off_the_domains_is_shown_to_the_guard(url: str) -> None:
    assert not domain_allowed(url, DOMAINS)
    assert _shown(url)


@pytest.mark.parametrize("url", HOME)
def test_the_domains_own_addresses_pass_by_the_guard(url: str) -> None:
    assert domain_allowed(url, DOMAINS)
    assert not _shown(url)


def test_a_workflow_with_no_domains_has_every_request_guarded() -> None:
    assert guarded(()) == "**/*"
