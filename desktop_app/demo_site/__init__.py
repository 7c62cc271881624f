"""Acme CRM: the demo web app that recording, induction and replay are tested against."""

from __future__ import annotations

from desktop_app.demo_site.server import DEMO_PASSWORD, DEMO_USERNAME, DemoSite, serve_forever
from desktop_app.demo_site.variants import VARIANTS, DemoSiteError, parse_variants

__all__ = [
    "DEMO_PASSWORD",
    "DEMO_USERNAME",
    "VARIANTS",
    "DemoSite",
    "DemoSiteError",
    "parse_variants",
    "serve_forever",
]
