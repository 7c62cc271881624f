"""Every kind of step in one registry: what it is called, what it acts on, its fields, how it is
described, and who performs it.

A kind of step is a model in :mod:`desktop_app.core.models.workflow` (what a workflow document
stores) plus one :class:`KindSpec` here; every part of Procedura that treats kinds differently
outside performing them reads the spec, not a table of its own:

- the editor: the card's label and colour (``label``, ``family``), the form's fields
  (``fields``), the insert menu (``blank``), which steps need a locator (``target``);
- the diff and the command line: :func:`describe_step`, and each field's name in words;
- the card's note: :func:`step_summary`;
- replay and export: who can perform it (``performer``): a Playwright script does only browser
  steps, the desktop backend only desktop ones.

Performing a step (the replay engine) and writing it for a person (the guide) or as code (the
Playwright script) are per kind in their own modules; ``tests/test_step_kinds.py`` fails when
one of them, or this registry, misses a kind.

One module per group: :mod:`.web` (open, click, fill, choose, tick, press, scroll, read),
:mod:`.flow` (wait, check, call, agent), :mod:`.desktop` and :mod:`.blocks` (if, for each,
repeat until, try); :mod:`.spec` defines the entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final, get_args

from desktop_app.core.describe import describe_locator
from desktop_app.core.models.workflow import Step, StepKind
from desktop_app.core.step_kinds.blocks import BLOCK_SPECS
from desktop_app.core.step_kinds.desktop import DESKTOP_KINDS
from desktop_app.core.step_kinds.flow import FLOW_KINDS
from desktop_app.core.step_kinds.spec import (
    Family,
    FieldInput,
    KindField,
    KindSpec,
    Performer,
    TargetUse,
)
from desktop_app.core.step_kinds.web import WEB_KINDS

__all__ = [
    "INSERTABLE_KINDS",
    "KINDS",
    "TARGETED_KINDS",
    "Family",
    "FieldInput",
    "KindField",
    "KindSpec",
    "Performer",
    "TargetUse",
    "describe_step",
    "kind_spec",
    "step_summary",
]


def _registry() -> Mapping[str, KindSpec[Any]]:
    specs = {spec.kind: spec for spec in (*WEB_KINDS, *FLOW_KINDS, *DESKTOP_KINDS, *BLOCK_SPECS)}
    declared: tuple[str, ...] = get_args(StepKind)
    if set(specs) != set(declared):
        missing = sorted(set(declared) - set(specs))
        extra = sorted(set(specs) - set(declared))
        raise RuntimeError(f"step kinds without a spec: {missing}; specs without a kind: {extra}")
    return MappingProxyType({kind: specs[kind] for kind in declared})


#: Every kind of step, in the order of :data:`~desktop_app.core.models.workflow.StepKind`.
KINDS: Final = _registry()

#: Step kinds that act on an element and cannot run without a locator.
TARGETED_KINDS: Final = frozenset(k for k, spec in KINDS.items() if spec.target == "required")

#: Step kinds the editor can insert from scratch, in the insert menu's order (a call needs a
#: workflow, desktop kinds a recording of the window: those come from elsewhere).
INSERTABLE_KINDS: Final[tuple[StepKind, ...]] = tuple(
    k for k in get_args(StepKind) if KINDS[k].insertable
)


def kind_spec(kind: str) -> KindSpec[Any]:
    """The registry's entry for *kind*.

    Raises:
        KeyError: no such kind of step.
    """
    return KINDS[kind]


def describe_step(step: Step) -> str:
    """What *step* does, in one line: ``fill label=Email with "{email}"``."""
    return str(KINDS[step.kind].describe(step))


def step_summary(step: Step) -> str:
    """One short line about what a step acts on, for its card (its title says what it does)."""
    target = step.target_or_none
    element = describe_locator(target.locators[0]) if target is not None and target.locators else ""
    detail = str(KINDS[step.kind].detail(step))
    return "  ".join(part for part in (element, detail) if part)
