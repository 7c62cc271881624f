"""Elements named as a person sees them, for the questions a run asks a person.

A question names an element by its role and accessible name as recorded (``the "Delete"
button``, ``the "Email" field``), else by its step's title; never by a locator
(``aria-ref=f2e55``, ``#save``), which only the run record keeps. The likeliest elements a
person may point at are ranked by the fingerprint score, and one is suggested only when it is a
clear best: as likely as :data:`PLAUSIBLE` and ahead of the runner-up by the ladder's own
:data:`~desktop_app.core.replay.fingerprint.DEFAULT_MARGIN`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from desktop_app.core.models.run import Resolution
from desktop_app.core.models.target import Fingerprint, Target
from desktop_app.core.replay.browser import Candidate
from desktop_app.core.replay.fingerprint import DEFAULT_MARGIN, score, text_similarity
from desktop_app.core.replay.person import Choice
from desktop_app.core.replay.safety import label_of

__all__ = [
    "PLAUSIBLE",
    "clear_best",
    "element_words",
    "found_by_words",
    "likely_choices",
    "likeness_words",
]

#: A fingerprint score below this means an element is not the recorded one (a recorded locator
#: that now finds it is not used; a person is not steered towards it).
PLAUSIBLE: Final = 0.45

#: What a person calls an element of each role (or tag, when it has no role).
_NOUNS: Final[dict[str, str]] = {
    "button": "button",
    "link": "link",
    "textbox": "field",
    "searchbox": "search field",
    "spinbutton": "number field",
    "combobox": "list",
    "listbox": "list",
    "option": "option",
    "checkbox": "checkbox",
    "switch": "switch",
    "radio": "option",
    "menuitem": "menu item",
    "menuitemcheckbox": "menu item",
    "menuitemradio": "menu item",
    "tab": "tab",
    "row": "row",
    "cell": "cell",
    "gridcell": "cell",
    "heading": "heading",
    "img": "picture",
    "image": "picture",
    "dialog": "dialog",
    "slider": "slider",
    # tags
    "a": "link",
    "input": "field",
    "textarea": "field",
    "select": "list",
    "tr": "row",
    "td": "cell",
    "li": "item",
}

_NAME_LIMIT: Final = 60


def _name_of(fp: Fingerprint) -> str:
    attributes = fp.attributes
    for name in (
        fp.name,
        fp.text,
        attributes.get("aria-label"),
        attributes.get("placeholder"),
        attributes.get("title"),
        attributes.get("alt"),
    ):
        if name and name.strip():
            text = " ".join(name.split())
            return text if len(text) <= _NAME_LIMIT else text[: _NAME_LIMIT - 1] + "…"
    return ""


def element_words(fp: Fingerprint | None, *, fallback: str | None = None) -> str | None:
    """How a person names the element *fp* describes: ``the "Delete" button``; ``the field
    of step "Type the email"`` when it has no name; *fallback* (a step's title) put that way
    when there is no fingerprint at all; None without either."""
    if fp is None:
        return f'the element of step "{fallback}"' if fallback else None
    kind = (fp.role or "").lower()
    noun = _NOUNS.get(kind) or _NOUNS.get((fp.tag or "").lower()) or "element"
    name = _name_of(fp)
    if name:
        return f'the "{name}" {noun}'
    if fallback:
        return f'the {noun} of step "{fallback}"'
    return f"a {noun} without a name"


#: How a rung found an element, in a question to a person.
_FOUND_BY: Final[dict[Resolution, str]] = {
    Resolution.DIRECT: "its first recorded locator",
    Resolution.ALTERNATE: "another of its recorded locators",
    Resolution.FINGERPRINT: "its likeness to the recorded element",
    Resolution.EXPERIENCE: "a repair remembered from an earlier run",
    Resolution.LLM: "the LLM",
    Resolution.PERSON: "a person",
    Resolution.NOT_NEEDED: "no search",
}


def found_by_words(resolution: Resolution) -> str:
    """How *resolution*'s rung found an element, in words: ``its likeness to the recorded
    element`` for the fingerprint."""
    return _FOUND_BY[resolution]


def likeness_words(similarity: float) -> str:
    """How much an element looks like the recorded one, in words a person reads."""
    if similarity >= 0.9:
        return "the same as recorded"
    if similarity >= 0.7:
        return "much like the recorded one"
    if similarity >= PLAUSIBLE:
        return "somewhat like the recorded one"
    if similarity >= 0.2:
        return "little like the recorded one"
    return "not like the recorded one"


def clear_best(similarities: Sequence[float]) -> int | None:
    """The index of the clear best of *similarities* (best first): plausible, and ahead of the
    runner-up by the ladder's margin; None when no element stands out."""
    if not similarities or similarities[0] < PLAUSIBLE:
        return None
    runner_up = similarities[1] if len(similarities) > 1 else 0.0
    return 0 if similarities[0] - runner_up >= DEFAULT_MARGIN else None


def likely_choices(
    candidates: Sequence[Candidate], target: Target, title: str, *, limit: int = 8
) -> tuple[tuple[Choice, ...], int | None]:
    """The page's elements most like the recorded one, best first, and the index of the one
    to suggest (:func:`clear_best`). Without a recorded fingerprint they are ranked by how
    like the step's title they read, and none is suggested: a title is not a fingerprint."""
    fp = target.fingerprint
    if fp is None:
        scored = [(text_similarity(title, label_of(c.fingerprint)), c) for c in candidates]
    else:
        scored = [(score(fp, c.fingerprint).score, c) for c in candidates]
    scored.sort(key=lambda item: -item[0])
    scored = scored[:limit]
    choices = tuple(
        Choice(
            label=element_words(c.fingerprint) or "an element without a name",
            handle=c.handle,
            score=s,
            detail=c.handle.describe(),
        )
        for s, c in scored
    )
    suggested = clear_best([s for s, _c in scored]) if fp is not None else None
    return choices, suggested
