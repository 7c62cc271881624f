"""Workflow parts in words as a diff shows them (a step, a value), and how alike two texts are."""

from __future__ import annotations

import difflib
from typing import Any

from pydantic import BaseModel

from desktop_app.core.describe import describe_expectation, describe_locator
from desktop_app.core.models.target import Target
from desktop_app.core.models.workflow import (
    AgentStep,
    AssertStep,
    CallStep,
    CheckStep,
    ClickStep,
    DesktopClickStep,
    DesktopTypeStep,
    ElementHidden,
    ElementVisible,
    ExtractStep,
    FillStep,
    GotoStep,
    HotkeyStep,
    ImageVisible,
    PressStep,
    ScrollStep,
    SelectStep,
    Step,
    TextPresent,
    TitleMatches,
    UrlMatches,
    WaitForStep,
    WindowTitleMatches,
)

__all__ = [
    "describe_step",
]


def _quote(text: str, limit: int = 120) -> str:
    text = text.replace("\n", "⏎")
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f'"{text}"'


def _primary(target: Target | None) -> str:
    return describe_locator(target.locators[0]) if target is not None else "the page"


def describe_step(step: Step) -> str:
    """What *step* does, in one line: ``fill label=Email with "{email}"``."""
    match step:
        case GotoStep():
            return f"open {step.url}"
        case ClickStep():
            how = "double-click" if step.click_count == 2 else "click"
            if step.button != "left":
                how = f"{step.button}-{how}"
            mods = "+".join(step.modifiers)
            return f"{how} {_primary(step.target)}" + (f" with {mods}" if mods else "")
        case FillStep():
            return f"fill {_primary(step.target)} with {_quote(step.value)}"
        case SelectStep():
            return f"select {_quote(step.value)} in {_primary(step.target)}"
        case CheckStep():
            if isinstance(step.checked, str):
                return f"set {_primary(step.target)} to {step.checked}"
            return f"{'check' if step.checked else 'uncheck'} {_primary(step.target)}"
        case PressStep():
            where = f" on {_primary(step.target)}" if step.target is not None else ""
            return f"press {step.key}{where}"
        case ScrollStep():
            where = f" in {_primary(step.target)}" if step.target is not None else ""
            return f"scroll by ({_number(step.dx)}, {_number(step.dy)}){where}"
        case WaitForStep():
            return f"wait until {describe_expectation(step.condition)}"
        case AssertStep():
            return f"make sure {describe_expectation(step.condition)}"
        case ExtractStep():
            return f"read {_primary(step.target)} into {{{step.variable}}}"
        case CallStep():
            version = f" v{step.version}" if step.version is not None else ""
            args = ", ".join(f"{k}={v}" for k, v in step.arguments.items())
            return f"run workflow {step.workflow_id[:8]}{version}" + (
                f" with {args}" if args else ""
            )
        case AgentStep():
            return f"let the agent {_quote(step.instruction, 80)}"
        case DesktopClickStep():
            where = f" in {_quote(step.window_title)}" if step.window_title else ""
            at = f" at ({_number(step.point.x)}, {_number(step.point.y)})" if step.point else ""
            return f"click{where}{at}"
        case DesktopTypeStep():
            where = f" in {_quote(step.window_title)}" if step.window_title else ""
            return f"type {_quote(step.text)}{where}"
        case HotkeyStep():
            return f"press {'+'.join(step.keys)}"
    raise AssertionError(f"unknown step kind {step.kind}")  # pragma: no cover


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _show(name: str, value: Any) -> str:
    """A field value in words."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if name == "timeout_s" and isinstance(value, int | float):
        return f"{_number(value)} s"
    if name == "screenshot":
        return "recorded"
    if isinstance(value, int | float):
        return _number(value)
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, UrlMatches | TitleMatches | TextPresent | WindowTitleMatches):
        return describe_expectation(value)
    if isinstance(value, ElementVisible | ElementHidden | ImageVisible):
        return describe_expectation(value)
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "none"
    if isinstance(value, tuple | list):
        return ", ".join(str(v) for v in value) or "none"
    if isinstance(value, BaseModel):
        return ", ".join(f"{k}={_show(k, v)}" for k, v in value.model_dump().items())
    return str(value)


def _similarity(a: str, b: str) -> float:
    if a == b:
        return 1.0
    return difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio()
