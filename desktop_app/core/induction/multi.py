"""Induction from several demonstrations of the same task.

Each demonstration is induced on its own (``heuristic.induce``, without loops), then their
steps are aligned: the first demonstration is the spine and every other one is merged in turn with
``difflib.SequenceMatcher`` over *step keys*. A key says "the same action on the same element",
regardless of the values entered: the step's kind, plus

* for an element: its most stable locator — ``test_id`` (set by the developers for this very
  purpose, so it survives copy and layout changes), else ``role`` + accessible name, else
  ``label``, ``placeholder``, ``css`` and finally whatever locator comes first; with ``nth``
  when the locator needs it (the second "Description" field is not the first), and every
  ``{placeholder}`` written as ``{}`` so "Click '{search}'" is the same step whatever the value
  is called or was;
* for a ``goto``: the URL without its query string, with record ids as ``*``;
* whether a box is checked or unchecked, the key pressed, the window of a desktop step.

Then, per aligned step:

* a value entered (fill, select, typed text, or a label clicked that the intent names) that is
  the same in every demonstration that has the step (two at least) becomes a constant: the
  parameter goes and the literal, escaped, takes its place everywhere it was used (the step,
  locators, expectations); values that differ make a parameter whose default is the first
  demonstration's value (a choice keeps its choices); secrets stay secret parameters, always:
  their values were never recorded;
* steps some demonstrations lack because a dialog came in the others (a cookie banner, a
  confirmation: ``branches``) become an ``if`` that does them only when the dialog's element
  shows, however few demonstrations had them;
* another step in at least half of the demonstrations is kept (``optional`` when some lack
  it), one in fewer is dropped;
* its expectations are the ones every demonstration that has the step observed.

The success check is made of the checks every demonstration's own success check has (after
renaming their parameters). The intent template is rebuilt from the parameters that remain, from
the first stated intent, and checked against the others with ``bind_intent``. Recordings of
different tasks are refused: when fewer than half of the steps of one line up with the first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any, Final
from urllib.parse import urlsplit

from pydantic import TypeAdapter

from desktop_app.core.errors import DocumentError
from desktop_app.core.induction.branches import IF_WAIT_S, came_with_a_dialog, shown_condition
from desktop_app.core.induction.heuristic import Induction, induce, introduced_parameters
from desktop_app.core.induction.heuristic import _name as workflow_name
from desktop_app.core.induction.intent import bind_intent, make_intent_template
from desktop_app.core.induction.naming import unique_name
from desktop_app.core.induction.outcome import NO_SUCCESS_NOTE
from desktop_app.core.models.common import FrozenModel
from desktop_app.core.models.target import LocatorStrategy, Target
from desktop_app.core.models.trajectory import ActionKind, SecretPlaceholder, Trajectory
from desktop_app.core.models.workflow import (
    NON_TEMPLATE_FIELDS,
    CheckStep,
    ElementVisible,
    Expectation,
    GotoStep,
    HotkeyStep,
    IfStep,
    Parameter,
    ParameterType,
    PressStep,
    ScrollStep,
    Step,
    UrlMatches,
    Workflow,
)
from desktop_app.core.step_kinds import kind_spec
from desktop_app.core.templating import escape

__all__ = [
    "AlignedStep",
    "Alignment",
    "MultiInduction",
    "NotTheSameTaskError",
    "induce_many",
    "step_key",
]

_TOKEN: Final = re.compile(r"\{\{|\}\}|\{([a-z_][a-z0-9_]*)\}")
_SLOT: Final = re.compile(r"\{[a-z_][a-z0-9_]*\}")
_ID_SEGMENT: Final = re.compile(r"/(\d+|[0-9a-f]{8,}|[0-9a-f-]{36})(?=/|$)")
#: Locator strategies from the most to the least stable, for step keys.
_KEY_STRATEGIES: Final = (
    LocatorStrategy.TEST_ID,
    LocatorStrategy.ROLE,
    LocatorStrategy.LABEL,
    LocatorStrategy.PLACEHOLDER,
    LocatorStrategy.CSS,
)
_STEP: Final[TypeAdapter[Step]] = TypeAdapter(Step)
_EXPECTATION: Final[TypeAdapter[Expectation]] = TypeAdapter(Expectation)


class NotTheSameTaskError(DocumentError):
    """The recordings given together are not demonstrations of one task."""


class AlignedStep(FrozenModel):
    """One step of the merged workflow and where it came from in each demonstration."""

    title: str
    step_id: str | None = None  # the workflow step's id; None for a dropped step
    events: tuple[int | None, ...]  # per demonstration: the event index, None where absent
    optional: bool = False


class Alignment(FrozenModel):
    """How the demonstrations lined up: per final step, the event of each demonstration."""

    trajectories: tuple[str, ...]
    steps: tuple[AlignedStep, ...]  # the workflow's steps, in order
    dropped: tuple[AlignedStep, ...] = ()
    #: Per demonstration, whether its stated intent binds the intent template (None: no intent
    #: or no template).
    intent_binds: tuple[bool | None, ...] = ()


@dataclass(frozen=True)
class MultiInduction:
    """A workflow induced from several demonstrations, what was decided, and the alignment."""

    workflow: Workflow
    notes: tuple[str, ...]
    alignment: Alignment


# ── keys ────────────────────────────────────────────────────────────────────────────────────


def _target_key(target: Target) -> str:
    for strategy in _KEY_STRATEGIES:
        loc = next((loc for loc in target.locators if loc.strategy is strategy), None)
        if loc is not None:
            return _SLOT.sub("{}", loc.describe())
    return _SLOT.sub("{}", target.locators[0].describe())


def _url_key(url: str) -> str:
    parts = urlsplit(_SLOT.sub("{}", url))
    return f"{parts.scheme}://{parts.netloc}{_ID_SEGMENT.sub('/*', parts.path)}"


def step_key(step: Step) -> str:
    """What *step* does to which element, whatever the values it is given."""
    parts: list[str] = [step.kind]
    target = step.target_or_none
    if target is not None:
        parts.append(_target_key(target))
    if isinstance(step, GotoStep):
        parts.append(_url_key(step.url))
    elif isinstance(step, CheckStep):
        checked = step.checked
        parts.append(("on" if checked else "off") if isinstance(checked, bool) else "{}")
    elif isinstance(step, PressStep):
        parts.append(step.key)
    elif isinstance(step, ScrollStep):
        parts.append("down" if step.dy >= 0 else "up")
    elif isinstance(step, HotkeyStep):
        parts.append("+".join(step.keys))
    if kind_spec(step.kind).performer == "desktop":
        parts.append(_SLOT.sub("{}", getattr(step, "window_title", None) or ""))
    return " | ".join(parts)


# ── the demonstrations, one by one ──────────────────────────────────────────────────────────


@dataclass
class _Demo:
    index: int
    trajectory: Trajectory
    induction: Induction
    keys: list[str] = field(default_factory=list)
    #: parameter name → the value recorded for it (a secret placeholder for a secret)
    values: dict[str, str | SecretPlaceholder | None] = field(default_factory=dict)
    #: step position → the parameters that step introduces (enters, or finds its element by)
    entered: dict[int, tuple[str, ...]] = field(default_factory=dict)

    @property
    def steps(self) -> tuple[Step, ...]:
        return self.induction.workflow.steps

    def event_of(self, step: Step) -> int | None:
        return step.source_events[0] if step.source_events else None


def _demo(index: int, trajectory: Trajectory) -> _Demo:
    # Each on its own without loops: a loop's steps would not line up with another's.
    demo = _Demo(index, trajectory, induce(trajectory, loops=False))
    demo.keys = [step_key(s) for s in demo.steps]
    demo.entered = introduced_parameters(demo.steps)
    for position, names in demo.entered.items():
        step = demo.steps[position]
        event = demo.event_of(step)
        if event is None:
            continue
        recorded = trajectory.events[event]
        for name in names:
            if name in demo.induction.values:  # what was typed or chosen, or a label named
                demo.values[name] = demo.induction.values[name]
            elif isinstance(step, CheckStep):  # a checkbox's value is its state
                demo.values[name] = "true" if recorded.action is ActionKind.CHECK else "false"
            else:
                demo.values[name] = recorded.value  # a secret's placeholder
    return demo


# ── alignment ───────────────────────────────────────────────────────────────────────────────


@dataclass
class _Column:
    key: str
    cells: list[int | None]  # per demonstration: the index of its step, None where absent

    def present(self) -> list[int]:
        return [d for d, cell in enumerate(self.cells) if cell is not None]


def _check_same_task(demos: Sequence[_Demo]) -> None:
    spine = demos[0].keys
    for demo in demos[1:]:
        matcher = SequenceMatcher(None, spine, demo.keys, autojunk=False)
        lined_up = sum(block.size for block in matcher.get_matching_blocks())
        total = max(len(spine), len(demo.keys))
        if 2 * lined_up < total:
            raise NotTheSameTaskError(
                "these recordings do not look like the same task: only "
                f"{lined_up} of {total} steps line up (recording {demo.trajectory.id[:8]} "
                f"against {demos[0].trajectory.id[:8]})"
            )


def _align(demos: Sequence[_Demo]) -> list[_Column]:
    n = len(demos)
    columns = [_Column(key, [i] + [None] * (n - 1)) for i, key in enumerate(demos[0].keys)]
    for d, demo in enumerate(demos[1:], start=1):
        matcher = SequenceMatcher(None, [c.key for c in columns], demo.keys, autojunk=False)
        merged: list[_Column] = []
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                for offset in range(i2 - i1):
                    columns[i1 + offset].cells[d] = j1 + offset
            merged.extend(columns[i1:i2])
            if tag in ("replace", "insert"):
                for j in range(j1, j2):
                    cells: list[int | None] = [None] * n
                    cells[d] = j
                    merged.append(_Column(demo.keys[j], cells))
        columns = merged
    return columns


# ── rewriting templates ─────────────────────────────────────────────────────────────────────


def _rewrite(text: str, mapping: Mapping[str, str]) -> str:
    """*text* with each ``{name}`` in *mapping* replaced by its template text."""

    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        return mapping.get(name, match.group(0)) if name is not None else match.group(0)

    return _TOKEN.sub(sub, text)


def _rewrite_dumped(value: Any, mapping: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return _rewrite(value, mapping)
    if isinstance(value, dict):
        return {
            k: v if k in NON_TEMPLATE_FIELDS else _rewrite_dumped(v, mapping)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_rewrite_dumped(item, mapping) for item in value]
    return value


@dataclass
class _Renaming:
    """How one demonstration's parameters appear in the merged workflow."""

    templates: dict[str, str] = field(default_factory=dict)  # in templates: {final} or literal
    titles: dict[str, str] = field(default_factory=dict)  # in titles, which are never rendered

    def step(self, step: Step) -> Step:
        dumped = _rewrite_dumped(step.model_dump(mode="json"), self.templates)
        dumped["title"] = _rewrite(step.title, self.titles)
        return _STEP.validate_python(dumped)

    def expectation(self, expectation: Expectation) -> Expectation:
        dumped = _rewrite_dumped(expectation.model_dump(mode="json"), self.templates)
        return _EXPECTATION.validate_python(dumped)

    def literal(self, name: str, value: str) -> None:
        self.templates[name] = escape(value)
        self.titles[name] = value

    def parameter(self, name: str, final: str) -> None:
        self.templates[name] = self.titles[name] = "{" + final + "}"


# ── parameters ──────────────────────────────────────────────────────────────────────────────


def _merged_parameter(
    final: str, entries: Sequence[tuple[Parameter, str | SecretPlaceholder | None]]
) -> Parameter:
    first, first_value = entries[0]
    types = {p.type for p, _ in entries}
    if len(types) == 1:
        update: dict[str, object] = {"name": final}
        if first.type is ParameterType.CHOICE:
            update["choices"] = tuple(dict.fromkeys(c for p, _ in entries for c in p.choices))
        return first.model_copy(update=update)
    default = first_value if isinstance(first_value, str) else None
    return Parameter(name=final, description=first.description, default=default)


def _quoted(values: Sequence[str], limit: int = 4) -> str:
    shown = ", ".join(repr(v) for v in values[:limit])
    return shown + (", …" if len(values) > limit else "")


# ── the whole ───────────────────────────────────────────────────────────────────────────────


def induce_many(trajectories: Sequence[Trajectory], *, name: str | None = None) -> MultiInduction:
    """A draft workflow from several demonstrations of the same task, without an LLM.

    Raises:
        ValueError: no trajectory given.
        DocumentError: the same recording given twice.
        NotTheSameTaskError: fewer than half of the steps of a recording line up with the first.
    """
    if not trajectories:
        raise ValueError("induce_many needs at least one trajectory")
    seen: set[str] = set()
    for trajectory in trajectories:
        if trajectory.id in seen:
            raise DocumentError(f"recording {trajectory.id[:8]} is given twice")
        seen.add(trajectory.id)

    demos = [_demo(i, t) for i, t in enumerate(trajectories)]
    n = len(demos)
    _check_same_task(demos)
    columns = _align(demos)
    keep = [2 * len(c.present()) >= n for c in columns]
    notes: list[str] = []
    guards = _guards(columns, demos)
    for begin, (end, _condition) in guards.items():
        keep[begin:end] = [True] * (end - begin)

    # Parameters: one per kept step that enters a value; names of the first demonstration win.
    renamings = [_Renaming() for _ in demos]
    for demo, renaming in zip(demos, renamings, strict=True):
        for pname, value in demo.values.items():  # dropped steps' values become literals
            if isinstance(value, str):
                renaming.literal(pname, value)
    taken: list[str] = []
    # (column position, which of the step's parameters) → its parameter
    finals: dict[tuple[int, int], Parameter] = {}
    recorded: list[dict[str, str]] = [{} for _ in demos]  # per demo: final name → value
    order = sorted(
        (k for k in range(len(columns)) if keep[k]), key=lambda k: (columns[k].present()[0], k)
    )
    for k, j in [(c, j) for c in order for j in range(_width(columns[c], demos))]:
        column = columns[k]
        entries: list[tuple[int, str, Parameter, str | SecretPlaceholder | None]] = []
        for d in column.present():
            cell = column.cells[d]
            assert cell is not None
            names = demos[d].entered.get(cell, ())
            entered = names[j] if j < len(names) else None
            parameter = demos[d].induction.workflow.parameter(entered) if entered else None
            if entered is not None and parameter is not None:
                entries.append((d, entered, parameter, demos[d].values.get(entered)))
        if not entries:
            continue
        label = entries[0][1]
        values = [v for *_, v in entries]
        secret = any(
            p.type is ParameterType.SECRET or isinstance(v, SecretPlaceholder)
            for _, _, p, v in entries
        )
        strings = [v for v in values if isinstance(v, str)]
        if secret:
            final = unique_name(label, taken)
            taken.append(final)
            finals[k, j] = entries[0][2].model_copy(update={"name": final})
            for d, pname, _, _ in entries:
                renamings[d].parameter(pname, final)
            if n > 1:
                notes.append(f"{final!r} is a secret: it stays a secret parameter")
        elif len(entries) >= 2 and len(strings) == len(values) and len(set(strings)) == 1:
            for d, pname, _, _ in entries:
                renamings[d].literal(pname, strings[0])
            notes.append(
                f"{label!r} is the same in {_all(len(entries))} demonstrations"
                + ("" if len(entries) == n else f" that have it ({len(entries)} of {n})")
                + f": kept as the constant {strings[0]!r}"
            )
        else:
            final = unique_name(label, taken)
            taken.append(final)
            finals[k, j] = _merged_parameter(final, [(p, v) for _, _, p, v in entries])
            for d, pname, _, value in entries:
                renamings[d].parameter(pname, final)
                if isinstance(value, str):
                    recorded[d][final] = value
            default = finals[k, j].default
            if n == 1:
                pass  # one demonstration: nothing to compare, nothing to say
            elif len(entries) == 1:
                notes.append(
                    f"{final!r} was entered in only 1 of {n} demonstrations: "
                    f"a parameter, default {default!r}"
                )
            else:
                notes.append(
                    f"{final!r} differs across the demonstrations ({_quoted(strings)}): "
                    f"a parameter, default {default!r}"
                )

    # Steps: the first demonstration that has each one gives it; the others vote.
    steps: list[Step] = []
    aligned: list[AlignedStep] = []
    dropped: list[AlignedStep] = []
    branch: tuple[int, ElementVisible, list[Step]] | None = None  # (end, condition, steps)
    for k, (column, kept) in enumerate(zip(columns, keep, strict=True)):
        if k in guards:
            branch = (guards[k][0], guards[k][1], [])
        present = column.present()
        versions: list[tuple[int, Step]] = []
        for d in present:
            cell = column.cells[d]
            assert cell is not None
            versions.append((d, renamings[d].step(demos[d].steps[cell])))
        events = tuple(
            demos[d].event_of(demos[d].steps[cell]) if cell is not None else None
            for d, cell in enumerate(column.cells)
        )
        _, step = versions[0]
        if not kept:
            dropped.append(AlignedStep(title=step.title, events=events))
            notes.append(
                f'step "{step.title}" appears in {len(present)} of {n} demonstrations: dropped'
            )
            continue
        optional = len(present) < n and branch is None
        if optional:
            notes.append(
                f'step "{step.title}" appears in {len(present)} of {n} demonstrations: '
                "kept, optional"
            )
        seen_by_all = [
            e
            for e in step.expectations
            if all(e in version.expectations for _, version in versions[1:])
        ]
        for expectation in step.expectations:
            if expectation not in seen_by_all:
                notes.append(
                    f'step "{step.title}": not every demonstration saw '
                    f"{_describe(expectation)}; that expectation is left out"
                )
        step = step.model_copy(
            update={
                "optional": optional,
                "irreversible": any(version.irreversible for _, version in versions),
                "expectations": tuple(seen_by_all),
                "source_events": (events[0],) if events[0] is not None else (),
            }
        )
        aligned.append(
            AlignedStep(title=step.title, step_id=step.id, events=events, optional=optional)
        )
        if branch is None:
            steps.append(step)
            continue
        branch[2].append(step)
        if k + 1 == branch[0]:
            guarded = _guarded(branch[1], tuple(branch[2]))
            steps.append(guarded)
            notes.append(
                f'{len(branch[2])} step(s) from "{branch[2][0].title}" on appear in '
                f"{len(present)} of {n} demonstrations, after a dialog: done only when "
                f"{_describe(branch[1])} shows ({guarded.title!r})"
            )
            branch = None
    parameters = tuple(finals[k] for k in sorted(finals))
    success, success_notes = _agreed_success(demos, renamings)
    notes += success_notes

    # The intent template: from the first stated intent, checked against the others.
    speaker = next((d for d in demos if d.trajectory.intent.strip()), None)
    template: str | None = None
    binds: list[bool | None] = [None] * n
    if speaker is not None:
        values_said = {
            p.name: recorded[speaker.index][p.name]
            for p in parameters
            if p.type is not ParameterType.SECRET and p.name in recorded[speaker.index]
        }
        template = make_intent_template(speaker.trajectory.intent, values_said)
    if template is not None and speaker is not None:
        binds[speaker.index] = True
        for demo in demos:
            if demo is speaker or not demo.trajectory.intent.strip():
                continue
            bound = bind_intent(template, demo.trajectory.intent)
            binds[demo.index] = bound is not None
            said = f"the intent of demonstration {demo.index + 1} ({demo.trajectory.intent!r})"
            if bound is None:
                notes.append(f"{said} does not fit the template {template!r}")
                continue
            off = [
                f"{k}={v!r} where it entered {recorded[demo.index][k]!r}"
                for k, v in bound.items()
                if k in recorded[demo.index] and v.casefold() != recorded[demo.index][k].casefold()
            ]
            if off:
                notes.append(f"{said} binds the template but gives {'; '.join(off)}")
            else:
                pairs = ", ".join(f"{k}={v!r}" for k, v in bound.items())
                notes.append(f"{said} binds the template: {pairs}")

    for demo in demos:
        notes.extend(
            f"demonstration {demo.index + 1}: {note}"
            for note in demo.induction.notes
            if note != NO_SUCCESS_NOTE  # said once, of the whole, above
        )

    first = demos[0].trajectory
    intent = speaker.trajectory.intent.strip() if speaker is not None else ""
    titles = list(dict.fromkeys(e.after.title for e in first.events if e.after and e.after.title))
    asks = ", ".join(p.name.replace("_", " ") for p in parameters)
    description = (
        (intent + ". " if intent else "")
        + (f"Goes through: {'; '.join(titles[:6])}. " if titles else "")
        + (f"Asks for: {asks}." if asks else "Needs no input.")
        + (f" Induced from {n} demonstrations." if n > 1 else "")
    ).strip()
    workflow = Workflow(
        name=name or workflow_name(intent or None, template, (speaker or demos[0]).trajectory),
        description=description,
        domains=tuple(dict.fromkeys(h for d in demos for h in d.induction.workflow.domains)),
        parameters=parameters,
        intent_template=template,
        steps=tuple(steps),
        success=success,
        source_trajectories=tuple(t.id for t in trajectories),
    )
    alignment = Alignment(
        trajectories=tuple(t.id for t in trajectories),
        steps=tuple(aligned),
        dropped=tuple(dropped),
        intent_binds=tuple(binds),
    )
    return MultiInduction(workflow=workflow, notes=tuple(notes), alignment=alignment)


def _guards(
    columns: Sequence[_Column], demos: Sequence[_Demo]
) -> dict[int, tuple[int, ElementVisible]]:
    """The runs of steps some demonstrations lack because a dialog came in the others: first
    column → (the column after the run, the condition the run is done under)."""
    n = len(demos)
    found: dict[int, tuple[int, ElementVisible]] = {}
    k = 0
    while k < len(columns):
        present = columns[k].present()
        end = k + 1
        while end < len(columns) and columns[end].present() == present:
            end += 1
        if len(present) < n:
            d = present[0]
            cell = columns[k].cells[d]
            assert cell is not None
            step = demos[d].steps[cell]
            event = demos[d].event_of(step)
            events = demos[d].trajectory.events
            condition = shown_condition(step)
            if condition is not None and event is not None and came_with_a_dialog(events, event):
                found[k] = (end, condition)
        k = end
    return found


def _guarded(condition: ElementVisible, steps: tuple[Step, ...]) -> IfStep:
    label = condition.target.locators[0]
    said = label.name or label.value
    return IfStep(
        title=f"If '{said}' shows",
        condition=condition,
        timeout_s=IF_WAIT_S,
        steps=steps,
    )


def _width(column: _Column, demos: Sequence[_Demo]) -> int:
    """How many parameters the step of *column* introduces, at most, in a demonstration."""
    cells = [(d, cell) for d, cell in enumerate(column.cells) if cell is not None]
    return max((len(demos[d].entered.get(cell, ())) for d, cell in cells), default=0)


def _agreed_success(
    demos: Sequence[_Demo], renamings: Sequence[_Renaming]
) -> tuple[tuple[Expectation, ...], list[str]]:
    """The success checks every demonstration's own success check has, and notes on the rest."""
    checks = [
        [renaming.expectation(e) for e in demo.induction.workflow.success]
        for demo, renaming in zip(demos, renamings, strict=True)
    ]
    agreed = [e for e in checks[0] if all(e in other for other in checks[1:])]
    notes = [
        f"not every demonstration ended showing {_describe(e)}; that success check is left out"
        for e in checks[0]
        if e not in agreed
    ]
    if all(isinstance(e, UrlMatches) for e in agreed) and any(
        not isinstance(e, UrlMatches) for demo in checks for e in demo
    ):
        agreed = []  # where a task led shows its outcome only for a task that looks something up
    if not agreed:
        notes.append(NO_SUCCESS_NOTE)
    return tuple(agreed), notes


def _all(count: int) -> str:
    return "both" if count == 2 else f"all {count}"


def _describe(expectation: Expectation) -> str:
    kind = getattr(expectation, "kind", "")
    text = getattr(expectation, "text", None) or getattr(expectation, "pattern", None) or ""
    target = getattr(expectation, "target", None)
    if isinstance(target, Target):
        text = target.locators[0].describe()
    return f"{kind} {text!r}".strip()
