"""Python source text for the generated script: literals, comments, and calls laid out as
ruff format lays them out (line length 88)."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

# What the package's other modules use; none of it is public API.
__all__ = [
    "_INDENT",
    "_WIDTH",
    "_Nested",
    "_call",
    "_comment",
    "_docstring_text",
    "_escape",
    "_literal",
    "_number",
    "_quote_for",
    "_regex_literal",
    "_slug",
]

_WIDTH: Final = 88
_INDENT: Final = "    "


def _quote_for(text: str) -> str:
    """The quote ruff format would pick: double, unless that takes more escapes."""
    return "'" if text.count('"') > text.count("'") else '"'


def _escape(text: str, quote: str, *, braces: bool = False) -> str:
    out = []
    for char in text:
        if char == "\\":
            out.append("\\\\")
        elif char == quote:
            out.append("\\" + quote)
        elif char == "\n":
            out.append("\\n")
        elif char == "\r":
            out.append("\\r")
        elif char == "\t":
            out.append("\\t")
        elif not char.isprintable():
            code = ord(char)
            out.append(
                f"\\x{code:02x}"
                if code < 0x100
                else f"\\u{code:04x}"
                if code < 0x10000
                else f"\\U{code:08x}"
            )
        elif braces and char in "{}":
            out.append(char * 2)
        else:
            out.append(char)
    return "".join(out)


def _literal(text: str) -> str:
    """*text* as a Python string literal."""
    quote = _quote_for(text)
    return quote + _escape(text, quote) + quote


def _regex_literal(pattern: str) -> str:
    """A regular expression as a raw string where it can be one."""
    quote = _quote_for(pattern)
    trailing = len(pattern) - len(pattern.rstrip("\\"))
    if (
        "\\" in pattern
        and quote not in pattern
        and trailing % 2 == 0
        and all(c.isprintable() for c in pattern)
    ):
        return f"r{quote}{pattern}{quote}"
    return _literal(pattern)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _comment(text: str, indent: str) -> list[str]:
    """*text* on one or more ``#`` lines (whitespace, newlines included, collapsed)."""
    words = " ".join(text.split())
    return textwrap.wrap(
        words,
        width=_WIDTH,
        initial_indent=f"{indent}# ",
        subsequent_indent=f"{indent}# ",
        break_long_words=False,
        break_on_hyphens=False,
    ) or [f"{indent}#"]


def _docstring_text(text: str) -> str:
    """*text* safe inside a triple-quoted docstring."""
    cleaned = "".join(c if c.isprintable() or c == "\n" else " " for c in text)
    return cleaned.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


@dataclass(frozen=True, slots=True)
class _Nested:
    """A call inside a call's arguments, laid out on its own lines when it has to be."""

    head: str
    args: Sequence[str | _Nested]

    def __str__(self) -> str:
        return f"{self.head}({', '.join(str(a) for a in self.args)})"


def _call(
    indent: str,
    head: str,
    args: Sequence[str | _Nested],
    tail: str = "",
    *,
    explode: bool = False,
) -> list[str]:
    """``head(args)tail`` laid out as ruff format lays it out: on one line if it fits, else the
    arguments on one indented line, else one argument a line with a trailing comma."""
    joined = ", ".join(str(a) for a in args)
    one = f"{indent}{head}({joined}){tail}"
    if not explode and len(one) <= _WIDTH:
        return [one]
    inner = indent + _INDENT
    if not explode and args and len(inner + joined) <= _WIDTH:
        return [f"{indent}{head}(", inner + joined, f"{indent}){tail}"]
    lines = [f"{indent}{head}("]
    for arg in args:
        if isinstance(arg, _Nested):
            lines += _call(inner, arg.head, arg.args, ",")
        else:
            lines.append(f"{inner}{arg},")
    lines.append(f"{indent}){tail}")
    return lines


def _slug(name: str) -> str:
    """The default file name ``procedura export`` gives the script, without ``.py``."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:60] or "workflow"
