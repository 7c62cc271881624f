"""The offline inducer: one trajectory → a draft workflow, by rules a person can follow.

Every entered or chosen value becomes a typed parameter named after its field; a value that recurs
later (in a locator, a URL, an expectation) becomes that parameter there too; expectations come
from what the recording observed each step do (the message the page showed, the page it led to)
and the last step that changed the page also checks the outcome (the new item that holds an
entered value); irreversible steps are flagged; the stated intent becomes an intent template.
Nothing is invented: targets are the recorded ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import Final, Literal
from urllib.parse import quote, quote_plus, urlsplit

from desktop_app.core.induction.intent import make_intent_template
from desktop_app.core.induction.naming import label_of, snake_case, unique_name
from desktop_app.core.models.target import LocatorStrategy, Target
from desktop_app.core.models.trajectory import (
    ActionKind,
    Event,
    SecretPlaceholder,
    TextChange,
    Trajectory,
)
from desktop_app.core.models.workflow import (
    CheckStep,
    ClickStep,
    DesktopClickStep,
    DesktopTypeStep,
    Expectation,
    FillStep,
    GotoStep,
    HotkeyStep,
    Parameter,
    ParameterType,
    PressStep,
    ScrollStep,
    SelectStep,
    Step,
    TextPresent,
    TitleMatches,
    UrlMatches,
    WindowTitleMatches,
    Workflow,
)
from desktop_app.core.templating import escape
from desktop_app.core.urls import normal_url

__all__ = ["Induction", "induce"]

#: Words on a control that mean its effect cannot be taken back.
IRREVERSIBLE: Final = re.compile(
    r"\b(submit|send|pay|purchase|buy|place order|checkout|delete|remove|confirm|transfer|"
    r"approve|publish|book|order now|sign and send|wire)\b",
    re.IGNORECASE,
)
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_NUMBER = re.compile(r"^-?\d+(?:[.,]\d+)?$")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_STATUS_LINE = re.compile(r'^\s*- (?:status|alert)\b[^:\n]*:\s*"?(.+?)"?\s*$', re.MULTILINE)
_ID_SEGMENT = re.compile(r"/(\d+|[0-9a-f]{8,}|[0-9a-f-]{36})(?=/|$)")
_PLACEHOLDER = re.compile(r"\{[a-z_][a-z0-9_]*\}")
_DIGITS = re.compile(r"\d+")
#: A message part shorter than this, once the numbers that vary are cut out, checks nothing.
_MIN_MESSAGE: Final = 8
_DESKTOP_ACTIONS: Final = frozenset(
    {ActionKind.DESKTOP_CLICK, ActionKind.DESKTOP_TYPE, ActionKind.HOTKEY}
)
_PREPOSITIONS: Final = frozenset({"for", "at", "to", "with", "in", "of", "on", "from", "by", "as"})


@dataclass
class Induction:
    """An induced workflow and what the inducer decided, for the person reviewing it."""

    workflow: Workflow
    notes: list[str] = field(default_factory=list)


@dataclass
class _Slot:
    parameter: Parameter
    value: str | None  # the recorded value (None for a secret)


def _input_type(target: Target | None) -> str:
    fp = target.fingerprint if target else None
    return (fp.attributes.get("type", "") if fp else "").lower()


def _options(events: list[Event], index: int, label: str | None) -> tuple[str, ...]:
    """The options of the select *events[index]*: as it reported them, or (in recordings made
    before selects reported them) those of the select called *label* in the newest ARIA
    snapshot before it."""
    if events[index].options:
        return events[index].options
    if not label:
        return ()
    for event in reversed(events[: index + 1]):
        for observation in (event.after, event.before):
            snapshot = observation.aria_snapshot if observation else None
            if not snapshot:
                continue
            lines = snapshot.splitlines()
            for i, line in enumerate(lines):
                if re.match(rf'^\s*- (?:combobox|listbox) "{re.escape(label)}"', line):
                    indent = len(line) - len(line.lstrip())
                    options = []
                    for child in lines[i + 1 :]:
                        if len(child) - len(child.lstrip()) <= indent:
                            break
                        m = re.match(r'^\s*- option "(.*)"', child)
                        if m:
                            options.append(m.group(1))
                    return tuple(options)
    return ()


def _parameter_type(event: Event, value: str) -> ParameterType:
    kind = _input_type(event.target)
    if kind == "email" or _EMAIL.match(value):
        return ParameterType.EMAIL
    if kind == "date" or _ISO_DATE.match(value):
        return ParameterType.DATE
    if kind == "number" or (_NUMBER.match(value) and kind not in {"tel", "text"}):
        return ParameterType.NUMBER
    return ParameterType.TEXT


class _Builder:
    def __init__(self, trajectory: Trajectory) -> None:
        self.trajectory = trajectory
        self.events = list(trajectory.events)
        self.slots: list[_Slot] = []
        self._forms_cache: tuple[int, list[tuple[str, str]]] | None = None
        self.steps: list[Step] = []
        self.notes: list[str] = []

    # ── parameters ──────────────────────────────────────────────────────────────────────────

    def slot_for(self, event: Event, index: int) -> str:
        """The placeholder for the value *event* entered, creating its parameter."""
        label = label_of(event.target)
        fp = event.target.fingerprint if event.target else None
        typed = event.action is ActionKind.DESKTOP_TYPE
        base = snake_case(
            label or (fp.attributes.get("name") if fp else None) or ("text" if typed else "value"),
            fallback="value",
        )
        name = unique_name(base, (s.parameter.name for s in self.slots))
        window = event.before.window_title if event.before else None
        if typed:
            described = f"What to type in '{window}'" if window else "The text to type"
        else:
            described = f"What to enter in '{label}'" if label else "The value to enter"
        if isinstance(event.value, SecretPlaceholder):
            parameter = Parameter(
                name=name,
                type=ParameterType.SECRET,
                description=f"{described} (a secret: asked for at run time or kept in the keyring)",
            )
            self.slots.append(_Slot(parameter, None))
            return "{" + name + "}"
        value = event.value or ""
        if event.action is ActionKind.SELECT:
            options = _options(self.events, index, label)
            options = tuple(o for o in options if not o.lower().startswith("choose"))
            if value in options:
                parameter = Parameter(
                    name=name,
                    type=ParameterType.CHOICE,
                    choices=options,
                    default=value,
                    description=f"Which option to choose in '{label}'",
                )
            else:
                parameter = Parameter(name=name, default=value, description=described)
        elif event.action is ActionKind.UPLOAD:
            parameter = Parameter(name=name, description="The file to upload (a path)")
        else:
            kind = _parameter_type(event, value)
            default: str | float | None = value
            if kind is ParameterType.NUMBER:
                default = float(value.replace(",", "."))
                if default.is_integer():
                    default = int(default)
            if kind is ParameterType.DATE and not _ISO_DATE.match(value):
                kind = ParameterType.TEXT
            if kind is ParameterType.DATE:
                date.fromisoformat(value)  # a real date, or ValueError (caught by the caller)
            parameter = Parameter(name=name, type=kind, default=default, description=described)
        self.slots.append(_Slot(parameter, value))
        return "{" + name + "}"

    def flag_for(self, event: Event, checked: bool) -> str:
        """The placeholder of a bool parameter for a checkbox, its recorded state the default."""
        label = label_of(event.target)
        name = unique_name(snake_case(label or "option"), (s.parameter.name for s in self.slots))
        parameter = Parameter(
            name=name,
            type=ParameterType.BOOL,
            default=checked,
            description=f"Whether to check '{label}'" if label else "Whether to check the box",
        )
        self.slots.append(_Slot(parameter, None))  # "true" is no value to look for elsewhere
        return "{" + name + "}"

    def templated(self, text: str) -> str:
        """*text* as a template: every recorded value that appears in it becomes its slot."""
        out = escape(text)
        for escaped, placeholder in self._forms():
            if escaped in out:
                out = out.replace(escaped, placeholder)
        return out

    def _forms(self) -> list[tuple[str, str]]:
        """Every slot's recorded value as it may appear in a text (plain, URL-quoted), escaped,
        longest value first, with its placeholder; worked out again only when slots are added
        (slots are only ever appended)."""
        if self._forms_cache is None or self._forms_cache[0] != len(self.slots):
            forms = []
            for slot in sorted(self.slots, key=lambda s: -len(s.value or "")):
                value = slot.value
                if value is None or len(value) < 3:
                    continue
                for form in dict.fromkeys((value, quote(value), quote_plus(value))):
                    forms.append((escape(form), "{" + slot.parameter.name + "}"))
            self._forms_cache = (len(self.slots), forms)
        return self._forms_cache[1]

    def templated_target(self, target: Target) -> Target:
        """*target* with recurring values in its locator values and names made slots."""
        locators = []
        for loc in target.locators:
            image = loc.strategy is LocatorStrategy.IMAGE_ANCHOR
            value = loc.value if image else self.templated(loc.value)
            name = self.templated(loc.name) if loc.name is not None else None
            locators.append(loc.model_copy(update={"value": value, "name": name}))
        return target.model_copy(update={"locators": tuple(locators)})

    # ── steps ───────────────────────────────────────────────────────────────────────────────

    def expectations(self, event: Event, navigated: bool) -> tuple[Expectation, ...]:
        """What shows the step did its work: the message the page showed, the page it led to
        (or, for a navigation, its title when the address did not change)."""
        after = event.after
        if after is None:
            return ()
        found: list[Expectation] = []
        message = self._message(event)
        if message is not None:
            found.append(TextPresent(text=message))
        before_url = event.before.url if event.before else None
        if after.url and (
            navigated or (before_url and normal_url(after.url) != normal_url(before_url))
        ):
            found.append(UrlMatches(pattern=_url_pattern(self.templated(after.url))))
        elif navigated and after.title:
            found.append(TitleMatches(text=self.templated(after.title)))
        return tuple(found)

    def _message(self, event: Event) -> str | None:
        """The status or alert message the step made appear, templated: from what the page
        reported (recordings before it did: the newest status line of the ARIA snapshot)."""
        effects = event.effects
        if effects is not None:
            for change in effects.texts_added:
                if change.role in {"status", "alert"}:
                    text = self._checkable(change.text)
                    if text is not None:
                        return text
            return None
        after = event.after
        if after is None or not after.aria_snapshot:
            return None
        before_text = event.before.aria_snapshot if event.before else None
        for message in _STATUS_LINE.findall(after.aria_snapshot):
            if before_text and message in before_text:
                continue
            return self.templated(message.strip())
        return None

    def _checkable(self, text: str) -> str | None:
        """*text* templated, as a check that holds next time: numbers that are no entered
        value (a new record's number: "Ticket #12 created") are cut out, keeping the longest
        part between them; None when too little is left to check anything."""
        templated = self.templated(text.strip())
        if not _DIGITS.search(_PLACEHOLDER.sub("", templated)):
            return templated
        parts = [""]  # the text between numbers, placeholders kept whole
        for piece in re.split(f"({_PLACEHOLDER.pattern})", templated):
            if _PLACEHOLDER.fullmatch(piece):
                parts[-1] += piece
                continue
            literal = _DIGITS.split(piece)
            parts[-1] += literal[0]
            parts.extend(literal[1:])
        best = max((p.strip(" #:.,;-") for p in parts), key=len)
        return best if len(_PLACEHOLDER.sub("", best)) >= _MIN_MESSAGE else None

    def outcome(self, event: Event, already: tuple[Expectation, ...]) -> tuple[Expectation, ...]:
        """The workflow's success check, on the last step that changed the page: besides its
        own checks, the new item the step made appear that holds an entered value (the contact
        in the list, the task added), as the person saw it."""
        effects = event.effects
        if effects is None:
            return ()
        shown = {e.text for e in already if isinstance(e, TextPresent)}
        choices = {
            "{" + s.parameter.name + "}"
            for s in self.slots
            if s.parameter.type is ParameterType.CHOICE
        }
        for change in _lasting_first(effects.texts_added):
            text = self._checkable(change.text)
            if text is None or text in shown or not _PLACEHOLDER.search(text):
                continue
            if text in choices:
                continue  # an option's own label: its list shows it, whatever happened
            return (TextPresent(text=text),)
        return ()

    def desktop_expectations(self, index: int) -> tuple[Expectation, ...]:
        """A desktop action's check: the window the next action happens in, when the title
        changed (a dialog opened, the document was saved) and the next action is on the
        desktop too."""
        event = self.events[index]
        nxt = next((e for e in self.events[index + 1 :] if e.action is not ActionKind.NOTE), None)
        if nxt is None or nxt.action not in _DESKTOP_ACTIONS or nxt.before is None:
            return ()
        before = event.before.window_title if event.before else None
        after = nxt.before.window_title
        if not after or after == before:
            return ()
        return (WindowTitleMatches(pattern=self.templated(after), match="exact"),)

    def add(self, index: int, event: Event) -> None:
        action = event.action
        target = self.templated_target(event.target) if event.target is not None else None
        label = label_of(event.target)
        common: dict[str, object] = {
            "source_events": (index,),
            "screenshot": event.before.screenshot if event.before else None,
        }
        step: Step | None = None
        if action is ActionKind.NAVIGATE and event.url:
            page = event.after.title if event.after and event.after.title else event.url
            step = GotoStep(
                title=f"Open {page}",
                url=self.templated(event.url),
                expectations=self.expectations(event, navigated=True),
            )
        elif action in {ActionKind.CLICK, ActionKind.DOUBLE_CLICK} and target is not None:
            double = action is ActionKind.DOUBLE_CLICK
            name = self.templated(label) if label else "the element"
            step = ClickStep(
                title=f"{'Double-click' if double else 'Click'} '{name}'",
                target=target,
                click_count=2 if double else 1,
                modifiers=tuple(m.value for m in event.modifiers),
                irreversible=_irreversible(event),
                expectations=self.expectations(event, navigated=False),
            )
        elif action in {ActionKind.FILL, ActionKind.UPLOAD} and target is not None:
            placeholder = self.slot_for(event, index)
            step = FillStep(
                title=f"{'Upload into' if action is ActionKind.UPLOAD else 'Fill'} "
                f"'{label or 'the field'}' with {placeholder}",
                target=target,
                value=placeholder,
            )
        elif action is ActionKind.SELECT and target is not None:
            placeholder = self.slot_for(event, index)
            step = SelectStep(
                title=f"Select {placeholder} in '{label or 'the list'}'",
                target=target,
                value=placeholder,
                expectations=self.expectations(event, navigated=False),
            )
        elif action in {ActionKind.CHECK, ActionKind.UNCHECK} and target is not None:
            placeholder = self.flag_for(event, action is ActionKind.CHECK)
            step = CheckStep(
                title=f"Set '{label or 'the box'}' to {placeholder}",
                target=target,
                checked=placeholder,
            )
        elif action is ActionKind.PRESS and event.key:
            chord = "+".join([*(m.value for m in event.modifiers), event.key])
            where = f" in '{label}'" if label else ""
            step = PressStep(
                title=f"Press {chord}{where}",
                target=target,
                key=chord,
                irreversible=event.key == "Enter" and _irreversible(event),
                expectations=self.expectations(event, navigated=False),
            )
        elif action is ActionKind.SCROLL and event.scroll is not None:
            step = ScrollStep(
                title="Scroll down" if event.scroll.dy >= 0 else "Scroll up",
                target=target,
                dx=event.scroll.dx,
                dy=event.scroll.dy,
            )
        elif action is ActionKind.DESKTOP_CLICK:
            window = event.before.window_title if event.before else None
            fp = event.target.fingerprint if event.target else None
            attributes = fp.attributes if fp is not None else {}
            clicks = int(attributes["clicks"]) if attributes.get("clicks", "").isdigit() else 1
            clicks = min(max(clicks, 1), 3)
            button: Literal["left", "right", "middle"] = "left"
            if attributes.get("button") == "right":
                button = "right"
            elif attributes.get("button") == "middle":
                button = "middle"
            where = f"at {event.point.x:.0f}, {event.point.y:.0f}" if event.point else "the spot"
            verb = {1: "Click", 2: "Double-click", 3: "Triple-click"}[clicks]
            step = DesktopClickStep(
                title=f"{verb} {where} in '{window or 'the window'}'",
                window_title=window,
                app=event.before.app if event.before else None,
                point=event.point,
                target=event.target,  # an image anchor: never templated
                button=button,
                click_count=clicks,
                expectations=self.desktop_expectations(index),
            )
        elif action is ActionKind.DESKTOP_TYPE:
            placeholder = self.slot_for(event, index)
            window = event.before.window_title if event.before else None
            step = DesktopTypeStep(
                title=f"Type {placeholder} in '{window or 'the window'}'",
                window_title=window,
                text=placeholder,
                expectations=self.desktop_expectations(index),
            )
        elif action is ActionKind.HOTKEY and event.key:
            keys = tuple([*(m.value.lower() for m in event.modifiers), event.key.lower()])
            window = event.before.window_title if event.before else None
            step = HotkeyStep(
                title=f"Press {'+'.join(keys)} in '{window or 'the window'}'",
                window_title=window,
                keys=keys,
                expectations=self.desktop_expectations(index),
            )
        elif action is ActionKind.NOTE:  # the demonstrator's note: for the reviewer, not a step
            text = event.value.strip() if isinstance(event.value, str) else ""
            if text:
                self.notes.append(f"your note before step {len(self.steps) + 1}: {text}")
            return
        if step is None:
            self.notes.append(f"event {index} ({action.value}) has no step of its own; left out")
            return
        self.steps.append(step.model_copy(update=common))

    def add_outcome(self) -> None:
        """Give the last step that changed the page the workflow's success check."""
        for position in range(len(self.steps) - 1, -1, -1):
            step = self.steps[position]
            event = self.events[step.source_events[0]] if step.source_events else None
            if event is None or event.effects is None or not event.effects.visible:
                continue
            extra = self.outcome(event, step.expectations)
            if extra:
                expectations = (*step.expectations, *extra)
                self.steps[position] = step.model_copy(update={"expectations": expectations})
            return


def _lasting_first(changes: tuple[TextChange, ...]) -> list[TextChange]:
    """Texts that appeared, those still shown first, items of a list or table before others."""
    return sorted(changes, key=lambda c: (c.gone, c.role != "item"))


def _irreversible(event: Event) -> bool:
    target = event.target
    if target is None:
        return False
    words = [label_of(target) or ""]
    words += [loc.value for loc in target.locators if loc.strategy is LocatorStrategy.TEXT]
    if target.fingerprint is not None:
        words += [
            target.fingerprint.text or "",
            target.fingerprint.attributes.get("aria-label", ""),
        ]
    return any(IRREVERSIBLE.search(w) for w in words if w)


def _url_pattern(url: str) -> str:
    """A glob for *url* that tolerates what changes with other values: the ids a new record
    gets (``/contacts/13`` → ``/contacts/*``) and the query string (``?status=shipped`` → ``?*``).
    A route in the fragment stays (``#/active``); an empty one (``#``, ``#/``) goes.
    """
    parts = urlsplit(url)
    path = _ID_SEGMENT.sub("/*", parts.path)
    query = "?*" if parts.query else ""
    # A route inside the page (``#/active``) is where the step leads: kept.
    fragment = f"#{parts.fragment}" if parts.fragment.strip("/!") else ""
    return f"{parts.scheme}://{parts.netloc}{path}{query}{fragment}" if parts.netloc else url


def _domains(trajectory: Trajectory) -> tuple[str, ...]:
    hosts: list[str] = []
    for event in trajectory.events:
        for url in (event.url, event.before.url if event.before else None):
            host = urlsplit(url).hostname if url else None
            if host and host not in hosts:
                hosts.append(host)
    return tuple(hosts)


def _name(intent: str | None, template: str | None, trajectory: Trajectory) -> str:
    if template:
        head = template.split("{", 1)[0].split()
        while head and head[-1].lower() in _PREPOSITIONS:
            head.pop()
        return (" ".join(head) if len(head) >= 3 else template)[:200]
    if intent and intent.strip():
        return intent.strip()[:200]
    titles = [e.after.title for e in trajectory.events if e.after and e.after.title]
    if titles:
        return f"Task on {titles[0]}"[:200]
    domains = _domains(trajectory)
    return f"Task on {domains[0]}" if domains else "Recorded task"


def induce(trajectory: Trajectory, *, name: str | None = None) -> Induction:
    """A draft workflow from one recorded demonstration, without an LLM."""
    builder = _Builder(trajectory)
    for index, event in enumerate(builder.events):
        if event.injected:
            continue
        try:
            builder.add(index, event)
        except ValueError as exc:  # a value that does not fit its guessed type
            builder.notes.append(f"event {index}: {exc}; kept as text")
    builder.add_outcome()
    values = {s.parameter.name: s.value for s in builder.slots if s.value}
    template = make_intent_template(trajectory.intent, values) if trajectory.intent else None
    titles = list(
        dict.fromkeys(e.after.title for e in trajectory.events if e.after and e.after.title)
    )
    asks = ", ".join(s.parameter.name.replace("_", " ") for s in builder.slots)
    description = (
        (trajectory.intent.strip() + ". " if trajectory.intent.strip() else "")
        + (f"Goes through: {'; '.join(titles[:6])}. " if titles else "")
        + (f"Asks for: {asks}." if asks else "Needs no input.")
    ).strip()
    workflow = Workflow(
        name=name or _name(trajectory.intent, template, trajectory),
        description=description,
        domains=_domains(trajectory),
        parameters=tuple(s.parameter for s in builder.slots),
        intent_template=template,
        steps=tuple(builder.steps),
        source_trajectories=(trajectory.id,),
    )
    return Induction(workflow=workflow, notes=builder.notes)
