"""Acme CRM: the demo web app that recording, induction and replay are tested against."""

from __future__ import annotations

from desktop_app.demo_site.data import DEMO_PASSWORD, DEMO_USERNAME
from desktop_app.demo_site.server import DemoSite, serve_forever
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
