"""What a registry entry says about one kind of step (:class:`KindSpec`), and its fields."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Generic, Literal, TypeVar

from desktop_app.core.describe import describe_locator
from desktop_app.core.models.target import Target

__all__ = [
    "Family",
    "FieldInput",
    "KindField",
    "KindSpec",
    "Performer",
    "TargetUse",
    "number",
    "quote",
    "where",
]

#: Who performs a step: the browser backend, the desktop backend, or Procedura itself (running
#: another workflow, asking the LLM).
Performer = Literal["browser", "desktop", "procedura"]

#: What a step is for, as the editor colours its card: open a page, act on the page, put data
#: into it, read from it, check it, hand work to something else, act on a desktop window, or
#: hold other steps (a condition, a loop).
Family = Literal["navigate", "act", "input", "read", "check", "delegate", "desktop", "control"]

#: Whether a step's element is required (it cannot run without a locator), optional (without
#: one it acts on the page or the window), or not part of the kind at all.
TargetUse = Literal["required", "optional", "none"]

#: How the step form edits a field: a text that may hold ``{placeholders}``, plain text, text
#: that may be empty (None), a whole or decimal number, one of a few choices, ticked/unticked
#: or a parameter, a key chord, a condition, what a loop goes over, the called workflow's
#: arguments, or shown only.
FieldInput = Literal[
    "template",
    "text",
    "optional_text",
    "int",
    "float",
    "choice",
    "checked",
    "keys",
    "condition",
    "source",
    "arguments",
    "readonly",
]

_S = TypeVar("_S")

#: The most characters of quoted text a one-line description carries.
QUOTE_LIMIT: Final = 120


@dataclass(frozen=True, slots=True)
class KindField:
    """One field of a kind of step, beyond those every step has (title, timeout, checks…).

    ``label`` is its name on the step form; a field without one is kept but not shown there
    (the modifiers held for a click, the point of a desktop click). ``noun`` is its name in a
    diff line ("URL changed"); by default the field's name in words.
    """

    name: str
    label: str = ""
    input: FieldInput = "text"
    tip: str = ""
    noun: str = ""
    options: tuple[str, ...] = ()
    low: float = 0
    high: float = 0
    suffix: str = ""

    @property
    def on_form(self) -> bool:
        """Whether the step form shows this field."""
        return bool(self.label)

    @property
    def in_words(self) -> str:
        """The field's name in a diff line."""
        return self.noun or self.name.replace("_", " ")


@dataclass(frozen=True, slots=True)
class KindSpec(Generic[_S]):
    """Everything Procedura says about one kind of step, outside performing it.

    ``describe`` says what a step does in one line (diffs, logs, the command line);
    ``detail`` is the short note its card shows beside the element it acts on; ``blank``
    makes a new one for the editor to fill in (None: this kind comes from recordings only).
    """

    kind: str
    model: type[_S]
    label: str
    family: Family
    performer: Performer
    target: TargetUse
    fields: tuple[KindField, ...]
    describe: Callable[[_S], str]
    detail: Callable[[_S], str]
    blank: Callable[[str | None], _S] | None = None

    @property
    def insertable(self) -> bool:
        """Whether the editor can insert a step of this kind from scratch."""
        return self.blank is not None

    @property
    def form_fields(self) -> tuple[KindField, ...]:
        """The fields the step form shows, in order."""
        return tuple(f for f in self.fields if f.on_form)


# ── words the entries share ─────────────────────────────────────────────────────────────────


def quote(text: str, limit: int = QUOTE_LIMIT) -> str:
    """*text* in double quotes on one line, cut to *limit* characters."""
    text = text.replace("\n", "⏎")
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f'"{text}"'


def number(value: float) -> str:
    """A number without a needless ``.0``: ``600``, ``1.5``."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def where(target: Target | None) -> str:
    """The element a step acts on, by its best locator ("the page" when it has none)."""
    if target is None:
        return "the page"
    return describe_locator(target.locators[0]) if target.locators else "an element not chosen yet"
