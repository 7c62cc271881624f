"""HTML for the demo site's pages: trusted markup, attributes, and the page templates."""

from __future__ import annotations

import html
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from string import Template

from desktop_app.demo_site.variants import Look

__all__ = ["Markup", "Templates", "html_attrs"]


class Markup(str):
    """Trusted HTML: inserted into templates as it is, where any other value is escaped."""

    __slots__ = ()


def html_attrs(**values: str | bool | None) -> Markup:
    """`` name="value"`` pairs (True → a bare attribute, False/None → left out); ``_`` → ``-``."""
    parts = []
    for name, value in values.items():
        attr = name.rstrip("_").replace("_", "-")
        if value is True:
            parts.append(f" {attr}")
        elif value:
            parts.append(f' {attr}="{html.escape(value)}"')
    return Markup("".join(parts))


class Templates:
    """The page templates of ``resources/demo_site/templates``, read once."""

    def __init__(self, folder: Path, look: Look) -> None:
        self._folder = folder
        self._texts = look.texts()
        self._cache: dict[str, Template] = {}
        self._lock = threading.Lock()

    def render(self, template_name: str, /, **values: object) -> Markup:
        """Fill ``<template_name>.html``: ``Markup`` values go in as they are, others escaped."""
        with self._lock:
            template = self._cache.get(template_name)
            if template is None:
                path = self._folder / f"{template_name}.html"
                template = self._cache[template_name] = Template(path.read_text(encoding="utf-8"))
        filled: dict[str, str] = dict(self._texts)
        for key, value in values.items():
            if isinstance(value, Markup):
                filled[key] = value
            elif value is None:
                filled[key] = ""
            else:
                filled[key] = html.escape(str(value))
        return Markup(template.substitute(filled))

    def join(self, template_name: str, rows: Iterable[Mapping[str, object]], /) -> Markup:
        """``template_name`` rendered once per row, concatenated."""
        return Markup("".join(self.render(template_name, **row) for row in rows))
