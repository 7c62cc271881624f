"""Every app of the real-apps corpus, in the order the benchmark runs them."""

from __future__ import annotations

from typing import Final

from realapps import django_admin, flask_admin_app, nicegui_app, sqladmin_app, todomvc_app
from realapps.harness import App

__all__ = ["APPS"]

APPS: Final[tuple[App, ...]] = (
    django_admin.APP,
    flask_admin_app.APP,
    sqladmin_app.APP,
    todomvc_app.APP,
    nicegui_app.APP,
)
