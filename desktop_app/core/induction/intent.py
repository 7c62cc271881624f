"""Intent templates: "Create a contact for {full_name} at {company}" from a stated intent, and
the parameters a new sentence of the same shape binds, without an LLM.

A sentence fits a template whatever its case, its runs of spaces and the punctuation around its
words: "create a contact for  Ann Lee, at Initech" fits "Create a contact for {full_name} at
{company}." The values keep their own case and the punctuation inside them ("O'Brien",
"Ann-Marie", "a.b@c.test"); punctuation around them (a comma, quotes) is not part of them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from desktop_app.core.templating import escape, pieces, placeholders

__all__ = ["PUNCTUATION", "bind_intent", "make_intent_template", "strip_punctuation"]

#: Punctuation that may stand next to a word without being part of it: sentence marks, commas,
#: brackets and quotes, straight or curly.
PUNCTUATION: Final = ".,;:!?…()[]\"'‘’“”«»"
_SEPARATOR: Final = "[\\s" + re.escape(PUNCTUATION) + "]*"
_GAP: Final = "[\\s" + re.escape(PUNCTUATION) + "]+"
_MARK: Final = "[" + re.escape(PUNCTUATION) + "]+"
#: Punctuation between two values, with a space on one side at least (not the dot of an email).
_MARKED_GAP: Final = f"(?:\\s+{_MARK}|{_MARK}\\s+){_SEPARATOR}"
_RUNS: Final = re.compile(
    "\\s+|[" + re.escape(PUNCTUATION) + "]|[^\\s" + re.escape(PUNCTUATION) + "]+"
)
_QUOTES: Final = "\"'‘’“”«»"
_QUOTE: Final = "[" + re.escape(_QUOTES) + "]"
_WORD_EDGE: Final = re.compile(r"\w")


def strip_punctuation(text: str) -> str:
    """*text* without the spaces and punctuation around it, inner runs of spaces made one."""
    return " ".join(text.split()).strip(PUNCTUATION + " ")


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


def _word(word: str, *, left: bool, right: bool) -> str:
    """A pattern for a literal *word*, kept apart from the words around it where the template
    has a space or punctuation on that side (*left*, *right*)."""
    pattern = re.escape(word)
    if left and _WORD_EDGE.match(word[0]):
        pattern = r"(?<!\w)" + pattern
    if right and _WORD_EDGE.match(word[-1]):
        pattern += r"(?!\w)"
    return pattern


def _literal(text: str, *, first: bool, last: bool, strict: bool) -> list[str]:
    """Patterns for a literal part of a template: its words; strictly, also its punctuation
    between words and slots (any quote for a quote; the template's own leading and trailing
    punctuation stays optional); else, where it has no word between two slots, some
    punctuation if it has some there (else some space)."""
    runs = _RUNS.findall(text)
    words = [i for i, run in enumerate(runs) if not run.isspace() and run not in PUNCTUATION]
    patterns = []
    for i, run in enumerate(runs):
        if run.isspace():
            if strict and ((i == 0 and not first) or (i == len(runs) - 1 and not last)):
                patterns.append(r"\s+")  # a space next to a slot: values end there
            continue
        if run in PUNCTUATION:
            outside = (first and (not words or i < words[0])) or (
                last and (not words or i > words[-1])
            )
            if strict and not outside:
                patterns.append(_QUOTE if run in _QUOTES else re.escape(run))
            continue
        patterns.append(_word(run, left=i > 0 or first, right=i < len(runs) - 1 or last))
    if not strict and not words and text and not (first or last):
        patterns.append(_GAP if text.isspace() else _MARKED_GAP)
    return patterns


def _pattern(template: str, *, strict: bool) -> re.Pattern[str]:
    parts = pieces(template)
    tokens: list[str] = []
    seen: set[str] = set()
    for i, (text, is_slot) in enumerate(parts):
        if is_slot:
            tokens.append(f"(?P={text})" if text in seen else f"(?P<{text}>.+?)")
            seen.add(text)
        else:
            first, last = i == 0, i == len(parts) - 1
            tokens.extend(_literal(text, first=first, last=last, strict=strict))
    between = r"\s*" if strict else _SEPARATOR
    return re.compile(_SEPARATOR + between.join(tokens) + _SEPARATOR, re.IGNORECASE)


def bind_intent(template: str, sentence: str) -> dict[str, str] | None:
    """The parameter values *sentence* gives when it says what *template* says.

    ``bind_intent("Create a contact for {full_name} at {company}.",
    "create a contact for  Ann Lee, at Initech")`` gives
    ``{"full_name": "Ann Lee", "company": "Initech"}``. Case, runs of spaces and punctuation
    around words (commas, sentence marks, quotes straight or curly) do not matter; values keep
    their own case and inner punctuation. None when the sentence does not have the template's
    shape, or leaves a slot empty.
    """
    names = list(dict.fromkeys(placeholders(template)))
    if not names:
        return None
    for strict in (True, False):  # the template's punctuation tells adjacent values apart
        match = _pattern(template, strict=strict).fullmatch(sentence.strip())
        if match is not None:
            values = {name: strip_punctuation(match.group(name)) for name in names}
            return values if all(values.values()) else None
    return None
