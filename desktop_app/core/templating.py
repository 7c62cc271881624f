"""``{placeholder}`` templates in step values, locators and intent templates.

A placeholder is ``{name}`` where *name* is a snake_case identifier (a parameter or a variable an
earlier ``extract`` step stored). ``{{`` and ``}}`` stand for literal braces; any other brace is
literal text, so a recorded value such as ``a{b c}`` needs no escaping to survive.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["escape", "pieces", "placeholders", "render", "templated"]

_TOKEN = re.compile(r"\{\{|\}\}|\{([a-z_][a-z0-9_]*)\}")


def placeholders(template: str) -> list[str]:
    """The placeholder names in *template*, in order of appearance, repeats included."""
    return [m.group(1) for m in _TOKEN.finditer(template) if m.group(1) is not None]


def pieces(template: str) -> list[tuple[str, bool]]:
    """*template* split into ``(text, False)`` for literal text (``{{`` and ``}}`` already
    unescaped) and ``(name, True)`` for each placeholder, in order; adjacent text is joined."""
    result: list[tuple[str, bool]] = []
    at = 0
    for match in _TOKEN.finditer(template):
        literal = template[at : match.start()]
        name = match.group(1)
        if name is None:
            literal += match.group(0)[0]
        if literal:
            if result and not result[-1][1]:
                literal = result.pop()[0] + literal
            result.append((literal, False))
        if name is not None:
            result.append((name, True))
        at = match.end()
    tail = template[at:]
    if tail:
        if result and not result[-1][1]:
            tail = result.pop()[0] + tail
        result.append((tail, False))
    return result


def render(template: str, values: Mapping[str, str]) -> str:
    """*template* with every placeholder replaced by its value.

    Raises:
        KeyError: a placeholder has no value (the key is the placeholder's name).
    """

    def _sub(match: re.Match[str]) -> str:
        name = match.group(1)
        if name is None:
            return match.group(0)[0]
        return values[name]

    return _TOKEN.sub(_sub, template)


def escape(text: str) -> str:
    """*text* as a template that renders to itself (braces doubled where they could mislead)."""
    return _TOKEN.sub(lambda m: m.group(0).replace("{", "{{").replace("}", "}}"), text)


def templated(text: str, values: Mapping[str, str]) -> str:
    """*text* as a template with each of *values* (name → value) put back as its
    ``{name}``, longest value first; values shorter than 2 characters are left as text (they
    would match by chance)."""
    text = escape(text)
    for name, value in sorted(values.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        if len(value) >= 2:
            text = text.replace(escape(value), "{" + name + "}")
    return text
