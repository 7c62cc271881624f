"""The kinds of step that act on a web page: open it, click, fill in, choose, tick, press a
key, scroll, read a value."""

from __future__ import annotations

from typing import Any, Final

from desktop_app.core.models.target import Target
from desktop_app.core.models.workflow import (
    CheckStep,
    ClickStep,
    ExtractStep,
    FillStep,
    GotoStep,
    PressStep,
    ScrollStep,
    SelectStep,
)
from desktop_app.core.step_kinds.spec import KindField, KindSpec, number, quote, where

__all__ = ["CLICK_FIELDS", "WEB_KINDS"]


def _to_choose() -> Target:
    # A target still to be given its locators: validation reports it until it has one.
    return Target.model_construct(locators=(), fingerprint=None)


# ── open a page ─────────────────────────────────────────────────────────────────────────────

GOTO: Final = KindSpec(
    kind="goto",
    model=GotoStep,
    label="Open a page",
    family="navigate",
    performer="browser",
    target="none",
    fields=(
        KindField(
            "url", "Address", "template", "The page to open; may use {placeholders}", noun="URL"
        ),
    ),
    describe=lambda step: f"open {step.url}",
    detail=lambda step: step.url,
    blank=lambda title: GotoStep.model_construct(title=title or "Open a page", url=""),
)


# ── click ───────────────────────────────────────────────────────────────────────────────────

#: How a click is made: which button, how many times (a desktop click has them too).
CLICK_FIELDS: Final = (
    KindField("button", "Button", "choice", options=("left", "right", "middle")),
    KindField(
        "click_count",
        "Clicks",
        "int",
        "2 for a double click, 3 for a triple",
        noun="clicks",
        low=1,
        high=3,
    ),
)


def _click_line(step: ClickStep) -> str:
    how = "double-click" if step.click_count == 2 else "click"
    if step.button != "left":
        how = f"{step.button}-{how}"
    held = "+".join(step.modifiers)
    return f"{how} {where(step.target)}" + (f" with {held}" if held else "")


CLICK: Final = KindSpec(
    kind="click",
    model=ClickStep,
    label="Click",
    family="act",
    performer="browser",
    target="required",
    fields=(*CLICK_FIELDS, KindField("modifiers")),
    describe=_click_line,
    detail=lambda step: "",
    blank=lambda title: ClickStep(title=title or "Click", target=_to_choose()),
)


# ── put data in: fill in, choose, tick ──────────────────────────────────────────────────────


def _given(value: str) -> str:
    return f"← {value}" if value else "← (empty)"


FILL: Final = KindSpec(
    kind="fill",
    model=FillStep,
    label="Fill in a field",
    family="input",
    performer="browser",
    target="required",
    fields=(KindField("value", "Value", "template", "What to type; type { to insert a parameter"),),
    describe=lambda step: f"fill {where(step.target)} with {quote(step.value)}",
    detail=lambda step: _given(step.value),
    blank=lambda title: FillStep(title=title or "Fill in a field", target=_to_choose(), value=""),
)

SELECT: Final = KindSpec(
    kind="select",
    model=SelectStep,
    label="Choose an option",
    family="input",
    performer="browser",
    target="required",
    fields=(KindField("value", "Option", "template", "The option's label or value"),),
    describe=lambda step: f"select {quote(step.value)} in {where(step.target)}",
    detail=lambda step: _given(step.value),
    blank=lambda title: SelectStep(
        title=title or "Choose an option", target=_to_choose(), value=""
    ),
)


def _check_line(step: CheckStep) -> str:
    if isinstance(step.checked, str):
        return f"set {where(step.target)} to {step.checked}"
    return f"{'check' if step.checked else 'uncheck'} {where(step.target)}"


CHECK: Final = KindSpec(
    kind="check",
    model=CheckStep,
    label="Tick a box",
    family="input",
    performer="browser",
    target="required",
    fields=(
        KindField("checked", "Set to", "checked", "Ticked (true), unticked (false) or a parameter"),
    ),
    describe=_check_line,
    detail=lambda step: f"= {str(step.checked).lower()}",
    blank=lambda title: CheckStep(title=title or "Tick a box", target=_to_choose()),
)


# ── keys and scrolling ──────────────────────────────────────────────────────────────────────

PRESS: Final = KindSpec(
    kind="press",
    model=PressStep,
    label="Press a key",
    family="act",
    performer="browser",
    target="optional",
    fields=(KindField("key", "Key", "text", "e.g. Enter, Tab, Control+S"),),
    describe=lambda step: (
        f"press {step.key}" + (f" on {where(step.target)}" if step.target is not None else "")
    ),
    detail=lambda step: step.key,
    blank=lambda title: PressStep(title=title or "Press Enter", key="Enter"),
)

SCROLL: Final = KindSpec(
    kind="scroll",
    model=ScrollStep,
    label="Scroll",
    family="act",
    performer="browser",
    target="optional",
    fields=(
        KindField("dx", "Across (px)", "float", noun="scroll x", low=-100_000, high=100_000),
        KindField("dy", "Down (px)", "float", noun="scroll y", low=-100_000, high=100_000),
    ),
    describe=lambda step: (
        f"scroll by ({number(step.dx)}, {number(step.dy)})"
        + (f" in {where(step.target)}" if step.target is not None else "")
    ),
    detail=lambda step: f"by {step.dx:g}, {step.dy:g}",
    blank=lambda title: ScrollStep(title=title or "Scroll down", dy=600),
)


# ── read a value ────────────────────────────────────────────────────────────────────────────

EXTRACT: Final = KindSpec(
    kind="extract",
    model=ExtractStep,
    label="Read a value",
    family="read",
    performer="browser",
    target="required",
    fields=(
        KindField("variable", "Store as", "text", "Later steps use it as {name}"),
        KindField(
            "attribute", "Attribute", "optional_text", "Read an attribute instead of the text"
        ),
        KindField("pattern", "Pattern", "optional_text", "A regular expression to keep part of it"),
    ),
    describe=lambda step: f"read {where(step.target)} into {{{step.variable}}}",
    detail=lambda step: f"→ {{{step.variable}}}",
    blank=lambda title: ExtractStep(
        title=title or "Read a value", target=_to_choose(), variable="value"
    ),
)

#: The web kinds.
WEB_KINDS: Final[tuple[KindSpec[Any], ...]] = (
    GOTO,
    CLICK,
    FILL,
    SELECT,
    CHECK,
    PRESS,
    SCROLL,
    EXTRACT,
)
