"""The script's values: each parameter's command-line option, and ``{placeholders}`` as the
Python expressions that stand for them at a step."""

from __future__ import annotations

import keyword
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from desktop_app.core.exports.playwright_script.source import _escape, _literal, _quote_for
from desktop_app.core.models.workflow import Parameter, ParameterType
from desktop_app.core.templating import pieces

# What the package's other modules use; none of it is public API.
__all__ = ["_Option", "_Scope", "_Value", "_options"]

#: The runner's own options and where argparse keeps them.
_RUNNER_OPTIONS: Final = ("--help", "-h", "--base-url", "--headless", "--browser", "--timeout")
_RUNNER_DESTS: Final = ("help", "base_url", "headless", "browser", "timeout")


@dataclass(frozen=True, slots=True)
class _Value:
    """What a ``{placeholder}`` stands for in the script: a Python expression and its kind."""

    expr: str
    is_bool: bool = False
    secret: bool = False


@dataclass(frozen=True, slots=True)
class _Option:
    """A parameter's command-line option."""

    parameter: Parameter
    flag: str
    dest: str


class _Scope:
    """Placeholders → expressions, as they stand at one step (extract steps add variables)."""

    def __init__(self, origin: str | None) -> None:
        self.origin = origin
        self.values: dict[str, _Value] = {}
        self.uses_origin = False
        self.read: set[str] = set()  # the placeholders rendered as expressions

    def expr(self, template: str, *, titles: bool = False) -> str:
        """*template* as a Python expression: a literal, a name, or an f-string.

        A template on the recorded origin starts with ``origin`` (the ``--base-url``). For a
        title (``titles``), secrets stay ``{placeholders}`` and the origin is not moved.
        """
        parts: list[tuple[str, str | None]] = []  # (literal text, or None with an expression)
        rest = template
        if not titles and self.origin is not None and template.startswith(self.origin):
            self.uses_origin = True
            parts.append(("origin", None))
            rest = template[len(self.origin) :]
        for text, is_name in pieces(rest):
            value = self.values.get(text) if is_name else None
            if not is_name:
                parts.append((text, ""))
            elif value is None or (titles and value.secret):
                parts.append(("{" + text + "}", ""))
            else:
                self.read.add(text)
                expr = f"str({value.expr}).lower()" if value.is_bool else value.expr
                parts.append((expr, None))
        if all(kind is not None for _, kind in parts):
            return _literal("".join(text for text, _ in parts))
        if len(parts) == 1:
            return parts[0][0]
        literal = "".join(text for text, kind in parts if kind is not None)
        quote = _quote_for(literal)
        body = "".join(
            _escape(text, quote, braces=True) if kind is not None else "{" + text + "}"
            for text, kind in parts
        )
        return f"f{quote}{body}{quote}"


def _options(parameters: Iterable[Parameter], *, has_origin: bool) -> list[_Option]:
    """Each parameter's option and argparse destination, clear of the runner's and each
    other's (a clash gets ``--param-`` in front)."""
    flags = set(_RUNNER_OPTIONS)
    dests = set(_RUNNER_DESTS)
    if not has_origin:
        flags.discard("--base-url")
        dests.discard("base_url")
    result = []
    for param in parameters:
        flag = "--" + param.name.replace("_", "-")
        dest = param.name + "_" if keyword.iskeyword(param.name) else param.name
        own = {flag, f"{flag}-env"} if param.type is ParameterType.SECRET else {flag}
        mine = {dest, f"{dest}_env"} if param.type is ParameterType.SECRET else {dest}
        if own & flags or mine & dests:
            flag = "--param-" + param.name.replace("_", "-")
            dest = "param_" + param.name
            own = {flag, f"{flag}-env"}
            mine = {dest, f"{dest}_env"}
        flags |= own
        dests |= mine
        result.append(_Option(param, flag, dest))
    return result
