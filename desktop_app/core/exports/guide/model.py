"""The guide, format-neutral: styled text runs, numbered steps, and the whole guide."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

__all__ = ["Guide", "GuideStep", "Run", "Sentence"]


@dataclass(frozen=True, slots=True)
class Run:
    """A piece of text and how it is set: plain, strong (an element), em (a value), code."""

    style: Literal["text", "strong", "em", "code"]
    text: str


Sentence = tuple[Run, ...]


@dataclass(frozen=True, slots=True)
class GuideStep:
    """One numbered step: what to do, what to check, and its screenshot (if one was recorded).

    A block (if, for each, repeat until, try) holds its own steps: ``steps`` (what is done when
    its condition holds, for each item, each round, or first), then ``otherwise`` after the
    words ``otherwise_intro`` ("Otherwise:", "If that fails:"). Steps inside are numbered under
    the block: ``label`` is ``4.2`` where ``number`` is the step's place in its own list.
    """

    number: int
    action: Sentence
    expectations: tuple[Sentence, ...]
    irreversible: bool
    optional: bool
    image_name: str | None = None
    image: bytes | None = None
    label: str = ""
    steps: tuple[GuideStep, ...] = ()
    otherwise: tuple[GuideStep, ...] = ()
    otherwise_intro: Sentence = ()

    @property
    def shown_number(self) -> str:
        """The number a person reads: ``4``, or ``4.2`` inside a block."""
        return self.label or str(self.number)

    @property
    def depth(self) -> int:
        """How many blocks hold the step (0 at the top)."""
        return self.shown_number.count(".")


@dataclass(frozen=True, slots=True)
class Guide:
    """A whole guide: the workflow's text, its parameters as table rows, its steps, and what
    shows it is done (its success check as clauses, e.g. "the page shows “Saved”")."""

    title: str
    description: str
    domains: tuple[str, ...]
    parameters: tuple[tuple[Sentence, str, str, str], ...]
    steps: tuple[GuideStep, ...]
    version: int
    workflow_id: str
    done_when: tuple[Sentence, ...] = ()


def _t(text: str) -> Run:
    return Run("text", text)


def _plain(sentence: Iterable[Run]) -> str:
    return "".join(run.text for run in sentence)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _human(name: str) -> str:
    """``full_name`` → "Full name"."""
    words = name.replace("_", " ").strip()
    return words[:1].upper() + words[1:]


def _ending(runs: list[Run]) -> list[Run]:
    """*runs* ending a sentence: a full stop added unless there is one."""
    text = _plain(runs).rstrip()
    if not text or text[-1] in ".!?…":
        return runs
    return [*runs, _t(".")]
