"""Rung 4: ask an LLM which element of the current page a step means.

The model sees a pruned ARIA snapshot with element refs (secrets masked, quoted as data it must
not obey), the step and what must hold after it; it answers with one action on one ref, validated
against :class:`HealAnswer`. It never chooses values: the step's own action and value are used.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from desktop_app.core.describe import describe_condition as core_describe
from desktop_app.core.llm import LLMUsage, StructuredLLM, assert_no_secrets
from desktop_app.core.models.target import Fingerprint
from desktop_app.core.models.workflow import (
    Condition,
    ElementHidden,
    ElementPresent,
    ElementVisible,
    Expectation,
    ImageVisible,
    TextPresent,
    TitleMatches,
    UrlMatches,
    ValueCompare,
    WindowTitleMatches,
)
from desktop_app.core.redaction import redact_snapshot

__all__ = [
    "HealAnswer",
    "HealRequest",
    "ask_llm",
    "describe_expectation",
    "known_refs",
    "prune_snapshot",
]

#: The most snapshot characters a prompt carries.
MAX_SNAPSHOT_CHARS: Final = 14_000
_MAX_LINE: Final = 240
_REF = re.compile(r"\[ref=([a-z0-9]{1,20})\]")


class HealAnswer(BaseModel):
    """The model's answer: act on a ref, dismiss an overlay through a ref, or not found."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["act", "dismiss", "not_found"]
    ref: str | None = Field(default=None, pattern=r"^[a-z0-9]{1,20}$")
    reason: str = Field(default="", max_length=500)


@dataclass(frozen=True, slots=True)
class HealRequest:
    """Everything the model is told about the step (no secret values anywhere)."""

    procedure: str
    step_number: int
    step_count: int
    step_title: str
    action: str
    recorded: Fingerprint | None
    expectations: tuple[Expectation, ...]
    history: tuple[str, ...]
    url: str
    problem: str = ""


def describe_expectation(expectation: Expectation | Condition) -> str:
    """An expectation (or a condition) in words, for prompts and reports."""
    match expectation:
        case UrlMatches(pattern=pattern):
            return f"the page address matches {pattern}"
        case TitleMatches(text=text):
            return f"the page title contains {text!r}"
        case TextPresent(text=text):
            return f"the page shows the text {text!r}"
        case ElementVisible(target=target):
            return f"{target.locators[0].describe()} is visible"
        case ElementHidden(target=target):
            return f"{target.locators[0].describe()} is gone"
        case WindowTitleMatches(pattern=pattern):
            return f"the window title matches {pattern}"
        case ImageVisible():
            return "a recorded image is visible"
        case ElementPresent(target=target):
            return f"{target.locators[0].describe()} is on the page"
        case ValueCompare():
            return core_describe(expectation)


def _describe_recorded(fp: Fingerprint | None) -> str:
    if fp is None:
        return "(not recorded)"
    parts = []
    if fp.role:
        parts.append(f"role {fp.role}")
    if fp.name:
        parts.append(f"name {fp.name!r}")
    if fp.text and fp.text != fp.name:
        parts.append(f"text {fp.text[:80]!r}")
    if fp.tag:
        parts.append(f"tag <{fp.tag}>")
    keep = ("name", "type", "placeholder", "aria-label", "href", "data-testid")
    attrs = [f"{k}={v[:60]!r}" for k, v in fp.attributes.items() if k in keep]
    if attrs:
        parts.append("attributes " + ", ".join(attrs))
    if fp.nearby_text:
        parts.append("near " + ", ".join(repr(t[:40]) for t in fp.nearby_text[:3]))
    return "; ".join(parts) or "(nothing recorded)"


def prune_snapshot(snapshot: str, limit: int = MAX_SNAPSHOT_CHARS) -> str:
    """The snapshot cut down to fit a prompt: long lines shortened, then the tail dropped."""
    lines = [
        line if len(line) <= _MAX_LINE else line[: _MAX_LINE - 1] + "…"
        for line in snapshot.splitlines()
        if line.strip()
    ]
    text = "\n".join(lines)
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit("\n", 1)[0]
    return cut + "\n- (the rest of the page is left out)"


def known_refs(snapshot: str) -> set[str]:
    """The element refs a snapshot offers."""
    return set(_REF.findall(snapshot))


def _system_prompt() -> str:
    folder = resources.files(__package__).joinpath("prompts")
    return folder.joinpath("heal.txt").read_text(encoding="utf-8")


def _user_prompt(request: HealRequest, page: str) -> str:
    expected = "; ".join(describe_expectation(e) for e in request.expectations) or "(nothing)"
    history = "\n".join(f"  - {h}" for h in request.history[-5:]) or "  (none)"
    lines = [
        f"Procedure: {request.procedure}",
        f"Step {request.step_number} of {request.step_count}: {request.step_title}",
        f"Action: {request.action}",
        f"The element as recorded: {_describe_recorded(request.recorded)}",
        f"After the step: {expected}",
    ]
    if request.problem:
        lines.append(f"Problem so far: {request.problem}")
    lines += [
        f"Recent steps:\n{history}",
        f"Current page address: {request.url}",
        "<page>",
        page,
        "</page>",
    ]
    return "\n".join(lines)


async def ask_llm(
    llm: StructuredLLM,
    request: HealRequest,
    snapshot: str,
    *,
    secrets: Sequence[str],
    max_tokens: int = 300,
) -> tuple[HealAnswer, LLMUsage, str]:
    """Ask *llm* about *snapshot*; return its answer, usage and the page text it was shown.

    Secrets are masked in the snapshot and checked absent from the whole prompt.

    Raises:
        LLMError: the call failed (its usage says what was spent).
    """
    page = prune_snapshot(redact_snapshot(snapshot, secrets))
    user = _user_prompt(request, page)
    assert_no_secrets(user, secrets)
    answer, usage = await asyncio.to_thread(
        llm.complete, system=_system_prompt(), user=user, output=HealAnswer, max_tokens=max_tokens
    )
    return answer, usage, page
