"""Intent templates: "Create a contact for {full_name} at {company}" from a stated intent, and
the parameters a new sentence of the same shape binds, without an LLM."""

from __future__ import annotations

import re
from collections.abc import Mapping

from desktop_app.core.templating import escape, placeholders

__all__ = ["bind_intent", "make_intent_template"]


def make_intent_template(intent: str, values: Mapping[str, str]) -> str | None:
    """*intent* with each value that appears in it (as whole words, any case) made a slot.

    Args:
        intent: what the demonstrator said they were doing.
        values: parameter name → the value recorded for it (secrets must not be given).

    Returns:
        The template, or None when no value appears in the intent.
    """
    text = escape(intent.strip())
    used = False
    for name, value in sorted(values.items(), key=lambda item: -len(item[1])):
        value = value.strip()
        if len(value) < 2:
            continue
        pattern = re.compile(rf"(?<!\w){re.escape(escape(value))}(?!\w)", re.IGNORECASE)
        text, count = pattern.subn("{" + name + "}", text, count=1)
        used = used or count > 0
    return text if used else None


def bind_intent(template: str, sentence: str) -> dict[str, str] | None:
    """The parameter values *sentence* gives when it says what *template* says.

    ``bind_intent("Create a contact for {full_name} at {company}",
    "create a contact for Ann Lee at Initech")`` gives
    ``{"full_name": "Ann Lee", "company": "Initech"}``. Case and runs of spaces do not matter;
    None when the sentence does not have the template's shape.
    """
    names = placeholders(template)
    if not names:
        return None
    parts = re.split(r"(\{\{|\}\}|\{[a-z_][a-z0-9_]*\})", template)
    pattern = ""
    for part in parts:
        if part in ("{{", "}}"):
            pattern += re.escape(part[0])
        elif part.startswith("{") and part.endswith("}") and part[1:-1] in names:
            name = part[1:-1]
            group = f"(?P<{name}>.+?)" if f"(?P<{name}>" not in pattern else f"(?P={name})"
            pattern += group
        else:
            pattern += "".join(
                r"\s+" if token.isspace() else re.escape(token)
                for token in re.split(r"(\s+)", part)
                if token
            )
    match = re.fullmatch(pattern, sentence.strip().rstrip("."), re.IGNORECASE)
    if match is None:
        return None
    return {name: match.group(name).strip() for name in dict.fromkeys(names)}
