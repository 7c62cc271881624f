"""The offline inducer: one trajectory → a draft workflow, by rules a person can follow.

Every entered or chosen value becomes a typed parameter named after its field, and so does the
label of what was clicked when the stated intent names it ("Open the Reports tab"); a value that
recurs later (in a locator, a URL, an expectation) becomes that parameter there too, as a whole
value only (``slots``); expectations come from what the recording observed each step do (the
message the page showed, the page it led to); the workflow's success check comes from what the
end of the recording showed of the outcome (``outcome``); irreversible steps are flagged; the
stated intent becomes an intent template. Nothing is invented: targets are the recorded ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Final, Literal
from urllib.parse import urlsplit

from desktop_app.core.induction import labels
from desktop_app.core.induction.intent import make_intent_template
from desktop_app.core.induction.irreversible import irreversible_events
from desktop_app.core.induction.loops import drop_item_checks, fold_loop
from desktop_app.core.induction.naming import label_of, snake_case, unique_name
from desktop_app.core.induction.outcome import (
    NO_SUCCESS_NOTE,
    message,
    success_checks,
    url_pattern,
)
from desktop_app.core.induction.slots import MIN_VALUE, Slot, Templater, url_parts
from desktop_app.core.items import with_item_locator
from desktop_app.core.models.target import LocatorStrategy, Target
from desktop_app.core.models.trajectory import (
    ActionKind,
    Event,
    SecretPlaceholder,
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
from desktop_app.core.templating import escape, placeholders
from desktop_app.core.urls import normal_url

__all__ = ["Induction", "induce", "introduced_parameters"]

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_NUMBER = re.compile(r"^-?\d+(?:[.,]\d+)?$")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DESKTOP_ACTIONS: Final = frozenset(
    {ActionKind.DESKTOP_CLICK, ActionKind.DESKTOP_TYPE, ActionKind.HOTKEY}
)
_PREPOSITIONS: Final = frozenset({"for", "at", "to", "with", "in", "of", "on", "from", "by", "as"})

#: How a step title calls an element of a desktop role (AT-SPI's names are a screen reader's).
_DESKTOP_ROLE_WORDS: Final = {
    "text": "field",
    "password text": "password field",
    "entry": "field",
    "push button": "button",
    "toggle button": "button",
    "combo box": "list",
    "page tab": "tab",
}


@dataclass
class Induction:
    """An induced workflow and what the inducer decided, for the person reviewing it.

    ``values``: the value recorded for each parameter that has one (not secrets, not
    checkboxes): what was typed or chosen, or the label clicked.
    """

    workflow: Workflow
    notes: list[str] = field(default_factory=list)
    values: dict[str, str] = field(default_factory=dict)


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
        self.values = Templater()
        self.steps: list[Step] = []
        self.notes: list[str] = []
        self._url_seen = self._first_seen_in_urls()
        #: The events whose action cannot be undone, with why (``irreversible``).
        self.irreversible = irreversible_events(self.events)

    @property
    def slots(self) -> list[Slot]:
        return self.values.slots

    # ── parameters ──────────────────────────────────────────────────────────────────────────

    def _first_seen_in_urls(self) -> dict[str, int]:
        """Each segment and query value of a recorded address, with the first event it was
        there for: an address seen before event *i* (or as it began) has a number up to *i*."""
        seen: dict[str, int] = {}
        for part in url_parts(self.trajectory.start_url or ""):
            seen.setdefault(part, 0)
        for index, event in enumerate(self.events):
            before = event.before.url if event.before else None
            after = event.after.url if event.after else None
            for url, at in ((before, index), (event.url, index + 1), (after, index + 1)):
                for part in url_parts(url) if url else ():
                    seen[part] = min(seen.get(part, at), at)
        return seen

    def _slot(self, parameter: Parameter, value: str | None, index: int) -> str:
        """Add a slot for *parameter*, entered at event *index*; its placeholder. A value that
        was part of an address before it was entered is the site's own: never in addresses."""
        seen = self._url_seen.get(value.strip(), index + 1) if value is not None else index + 1
        slot = Slot(parameter, value, since=index, in_urls=seen > index)
        return self.values.add(slot)

    def _taken(self) -> list[str]:
        return [s.parameter.name for s in self.slots]

    def slot_for(self, event: Event, index: int) -> str:
        """The placeholder for the value *event* entered, creating its parameter."""
        label = label_of(event.target)
        fp = event.target.fingerprint if event.target else None
        typed = event.action is ActionKind.DESKTOP_TYPE
        base = snake_case(
            label or (fp.attributes.get("name") if fp else None) or ("text" if typed else "value"),
            fallback="value",
        )
        name = unique_name(base, self._taken())
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
            return self._slot(parameter, None, index)
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
        return self._slot(parameter, value, index)

    def flag_for(self, event: Event, index: int, checked: bool) -> str:
        """The placeholder of a bool parameter for a checkbox, its recorded state the default."""
        label = label_of(event.target)
        name = unique_name(snake_case(label or "option"), self._taken())
        parameter = Parameter(
            name=name,
            type=ParameterType.BOOL,
            default=checked,
            description=f"Whether to check '{label}'" if label else "Whether to check the box",
        )
        return self._slot(parameter, None, index)  # "true" is no value to look for elsewhere

    def own_label(self, event: Event, index: int, target: Target) -> str | None:
        """The placeholder of a parameter made of the element's own label (a button, a link, a
        tab, an option, a radio button) when the stated intent names it, else None."""
        label = label_of(target)
        if target.is_sensitive or not label or not self._nameable(label):
            return None
        verb = "choose" if _is_radio(target) else "click"
        return self._named_label(event, index, target, label, verb=verb)

    def chosen_option(self, event: Event, index: int, target: Target) -> str | None:
        """The placeholder of the parameter an option chosen is (a radio button, an option of a
        custom list): what was chosen is entered data, like a select's option, whether the
        intent names it or not; named after the intent, else its group or the list it opened
        from."""
        label = label_of(target)
        if target.is_sensitive or not label or not self._nameable(label):
            return None
        if self.trajectory.intent.strip():
            named = self._named_label(event, index, target, label, verb="choose")
            if named is not None:
                return named
        group = self._group_of(index, target)
        name = unique_name(snake_case(group, fallback="option"), self._taken())
        choices = labels.choices_for(event, target, label)
        described = f"Which option to choose in '{group}'"
        if choices and label in choices:
            parameter = Parameter(
                name=name,
                type=ParameterType.CHOICE,
                choices=choices,
                default=label,
                description=described,
            )
        else:
            parameter = Parameter(name=name, default=label, description=described)
        return self._slot(parameter, label, index)

    def _group_of(self, index: int, target: Target) -> str:
        """What a chosen option belongs to: its radio group's name, else the list it was
        picked from (the combobox clicked just before), else "option"."""
        fp = target.fingerprint
        if _is_radio(target) and fp is not None and fp.attributes.get("name"):
            return " ".join(fp.attributes["name"].replace("_", " ").replace("-", " ").split())
        for event in reversed(self.events[:index]):
            if event.action is not ActionKind.CLICK or event.target is None:
                continue
            opener = event.target.fingerprint
            if opener is not None and opener.role == "combobox" and opener.name:
                return opener.name.rstrip(" *:").strip()
            break
        return "option"

    def item_target(self, event: Event, index: int, target: Target) -> Target:
        """*target* looking inside the item it is in by the item's text that holds a recorded
        value ("{full_name}"), else by one the stated intent names (a parameter is made of
        it), that locator first: the person meant that item. Else as recorded."""
        if target.is_sensitive:
            return target
        fp = target.fingerprint
        item = fp.item if fp is not None and fp.item is not None and fp.item.inner else None
        scope = next((loc.within for loc in target.locators if loc.within is not None), None)
        texts = item.texts if item is not None else scope.texts[:1] if scope is not None else ()
        chosen = next((t for t in texts if _whole_placeholder(self.values.text(t))), None)
        chosen = chosen or next((t for t in texts if placeholders(self.values.text(t))), None)
        if chosen is None and self.trajectory.intent.strip():
            named = (t for t in texts if self._nameable(t))
            chosen = next(
                (t for t in named if self._named_label(event, index, target, t, verb="act on")),
                None,
            )
        if chosen is None or item is None:
            return target
        return with_item_locator(target, chosen, first=True)

    def _nameable(self, label: str) -> bool:
        """Long enough, and holding no value already (a name searched, then clicked)."""
        return len(label) >= MIN_VALUE and self.values.text(label) == escape(label)

    def _named_label(
        self, event: Event, index: int, target: Target, label: str, *, verb: str
    ) -> str | None:
        intent = self.trajectory.intent
        item = verb == "act on"
        navigation = not item and labels.is_navigation(self.events, target, label)
        found = labels.mention(intent, label, navigation=navigation)
        if found is None:
            return None
        base = labels.name_for(intent, found, target, item=item)
        name = unique_name(snake_case(base, fallback="label"), self._taken())
        described = f"Which {base.replace('_', ' ')} to {verb} (the intent names it)"
        choices = () if item else labels.choices_for(event, target, label)
        if choices:
            parameter = Parameter(
                name=name,
                type=ParameterType.CHOICE,
                choices=choices,
                default=label,
                description=described,
            )
        else:
            parameter = Parameter(name=name, default=label, description=described)
        return self._slot(parameter, label, index)

    # ── steps ───────────────────────────────────────────────────────────────────────────────

    def expectations(self, event: Event, navigated: bool) -> tuple[Expectation, ...]:
        """What shows the step did its work: the message the page showed, the page it led to
        (or, for a navigation, its title when the address did not change)."""
        after = event.after
        if after is None:
            return ()
        found: list[Expectation] = []
        said = message(event, self.values)
        if said is not None:
            found.append(TextPresent(text=said))
        before_url = event.before.url if event.before else None
        if after.url and (
            navigated or (before_url and normal_url(after.url) != normal_url(before_url))
        ):
            found.append(UrlMatches(pattern=url_pattern(self.values.url(after.url))))
        elif navigated and after.title:
            found.append(TitleMatches(text=self.values.text(after.title)))
        return tuple(found)

    def desktop_element(self, event: Event) -> str | None:
        """The desktop element *event* acted on, as its title names it ("the push button
        'Save'"), when it was recorded by accessibility with a name; recorded values in the
        name are placeholders."""
        locator = next(
            (
                loc
                for loc in (event.target.locators if event.target else ())
                if loc.strategy is LocatorStrategy.ACCESSIBLE
            ),
            None,
        )
        if locator is None or not locator.name:
            return None
        what = _DESKTOP_ROLE_WORDS.get(locator.value, locator.value)
        return f"the {what} '{self.values.text(locator.name)}'"

    def desktop_expectations(self, index: int) -> tuple[Expectation, ...]:
        """A desktop action's check: the window the next action happens in, when the title
        changed (a dialog opened, the document was saved) and the next action is on the
        desktop too; for the last action, its window's title once it was over."""
        event = self.events[index]
        nxt = next((e for e in self.events[index + 1 :] if e.action is not ActionKind.NOTE), None)
        before = event.before.window_title if event.before else None
        if nxt is None and event.after is not None:
            after = event.after.window_title
        elif nxt is None or nxt.action not in _DESKTOP_ACTIONS or nxt.before is None:
            return ()
        else:
            after = nxt.before.window_title
        if not after or after == before:
            return ()
        return (WindowTitleMatches(pattern=self.values.text(after), match="exact"),)

    def click(self, event: Event, target: Target) -> ClickStep:
        """A click: its title names the element (and the item it is in)."""
        label = label_of(event.target)
        double = event.action is ActionKind.DOUBLE_CLICK
        fp = target.fingerprint
        what = fp.role if fp is not None and fp.role and fp.role != "generic" else "element"
        name = f"'{self.values.text(label)}'" if label else f"the {what}"
        return ClickStep(
            title=f"{'Double-click' if double else 'Click'} {name}{_in_item(target)}",
            target=target,
            click_count=2 if double else 1,
            modifiers=tuple(m.value for m in event.modifiers),
            expectations=self.expectations(event, navigated=False),
        )

    def add(self, index: int, event: Event) -> None:
        action = event.action
        clicked = action in {ActionKind.CLICK, ActionKind.DOUBLE_CLICK}
        checked = action in {ActionKind.CHECK, ActionKind.UNCHECK}
        radio = action is ActionKind.CHECK and _is_radio(event.target)
        chosen = None
        recorded = event.target
        if recorded is not None and (radio or (clicked and _is_option(recorded))):
            chosen = self.chosen_option(event, index, recorded)
        elif recorded is not None and clicked and self.trajectory.intent.strip():
            chosen = self.own_label(event, index, recorded)
        if recorded is not None and (clicked or checked):
            recorded = self.item_target(event, index, recorded)
        target = self.values.target(recorded) if recorded is not None else None
        label = label_of(event.target)
        common: dict[str, object] = {
            "source_events": (index,),
            "screenshot": event.before.screenshot if event.before else None,
            "reacts": action in _REACTING and _page_reacted(event),
            "irreversible": index in self.irreversible,
        }
        step: Step | None = None
        if action is ActionKind.NAVIGATE and event.url:
            page = event.after.title if event.after and event.after.title else event.url
            step = GotoStep(
                title=f"Open {page}",
                url=self.values.url(event.url),
                expectations=self.expectations(event, navigated=True),
            )
        elif clicked and target is not None:
            step = self.click(event, target)
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
        elif checked and target is not None and chosen is not None:
            # a radio button the intent names: which one is the value, not its state
            step = CheckStep(
                title=f"Choose '{chosen}'{_in_item(target)}", target=target, checked=True
            )
        elif checked and target is not None:
            placeholder = self.flag_for(event, index, action is ActionKind.CHECK)
            step = CheckStep(
                title=f"Set '{label or 'the box'}'{_in_item(target)} to {placeholder}",
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
            where = self.desktop_element(event) or (
                f"at {event.point.x:.0f}, {event.point.y:.0f}" if event.point else "the spot"
            )
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
            into = self.desktop_element(event)
            step = DesktopTypeStep(
                title=f"Type {placeholder}{f' into {into}' if into else ''} in "
                f"'{window or 'the window'}'",
                window_title=window,
                text=placeholder,
                target=event.target,  # the field typed into, by accessibility
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
        self.steps.append(
            _answering_dialogs(step.model_copy(update=common), event, self.values.text)
        )
        evidence = self.irreversible.get(index)
        if evidence is not None and not evidence.own_words:
            self.notes.append(
                f"step {len(self.steps)} ({self.steps[-1].title}) is irreversible: {evidence.why}"
            )


#: The web actions whose reaction a replay must see again (a fill's reaction depends on the
#: value typed; a scroll's on where the page stood).
_REACTING: Final = frozenset(
    {
        ActionKind.CLICK,
        ActionKind.DOUBLE_CLICK,
        ActionKind.PRESS,
        ActionKind.CHECK,
        ActionKind.UNCHECK,
        ActionKind.SELECT,
    }
)


def _page_reacted(event: Event) -> bool:
    """Whether the page reacted to *event* when it was recorded so that a person would see it
    (text, items, dialogs, another page) or the server would (a request). A change of style
    alone, or an unknown, counts as no (a replay is held to it); so does a change of values,
    which is the control's own (a box ticked) or one a replay cannot see as a reaction (a
    script setting another field's value changes no markup)."""
    effects = event.effects
    if effects is None:
        return False
    return bool(
        effects.texts_added
        or effects.texts_removed
        or effects.items_added
        or effects.items_removed
        or effects.dialogs_opened
        or effects.dialogs_closed
        or effects.browser_dialogs
        or effects.left_page
        or effects.requests
    )


def _in_item(target: Target) -> str:
    """`` in '{item}'`` for a target inside the item a parameter names (the row of
    "{full_name}": what the step is about), else "" (a recorded row's other text would only
    mislead the next run's reader)."""
    scope = next((loc.within for loc in target.locators if loc.within is not None), None)
    text = scope.texts[0] if scope is not None else ""  # the outermost item's
    return f" in '{text}'" if placeholders(text) else ""


def _is_option(target: Target | None) -> bool:
    """An option of a list (a custom dropdown's ``option`` or ``menuitemradio``)."""
    fp = target.fingerprint if target is not None else None
    roles = (
        {loc.value for loc in target.locators if loc.strategy is LocatorStrategy.ROLE}
        if (target is not None)
        else set()
    )
    if fp is not None and fp.role:
        roles.add(fp.role)
    return bool(roles & {"option", "menuitemradio"})


def _is_radio(target: Target | None) -> bool:
    if target is None:
        return False
    fp = target.fingerprint
    roles = {loc.value for loc in target.locators if loc.strategy is LocatorStrategy.ROLE}
    if fp is not None:
        roles |= {fp.role or "", fp.attributes.get("type", "").lower()}
    return "radio" in roles


def _answering_dialogs(step: Step, event: Event, templated: Callable[[str], str]) -> Step:
    """*step* answering the browser's own question its action led to as the person did (OK or
    Cancel), said in its title (a question answered OK is evidence of an irreversible step:
    ``irreversible``)."""
    asked = [
        d for d in (event.effects.browser_dialogs if event.effects else ()) if d.kind != "alert"
    ]
    if not asked:
        return step
    last = asked[-1]
    answer = "OK" if last.accepted else "Cancel"
    said = templated(last.message)
    quoted = said if len(said) <= 80 else said[:79] + "…"
    return step.model_copy(
        update={
            "dialog": "accept" if last.accepted else "dismiss",
            "title": f"{step.title}, then {answer} to '{quoted}'"[:500],
        }
    )


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


def induce(trajectory: Trajectory, *, name: str | None = None, loops: bool = True) -> Induction:
    """A draft workflow from one recorded demonstration, without an LLM.

    With *loops*, the same steps done to several items of one list become a ``for_each``
    (see :mod:`desktop_app.core.induction.loops`); without, they stay one after another.
    """
    builder = _Builder(trajectory)
    for index, event in enumerate(builder.events):
        if event.injected:
            continue
        try:
            builder.add(index, event)
        except ValueError as exc:  # a value that does not fit its guessed type
            builder.notes.append(f"event {index}: {exc}; kept as text")
    success = success_checks(builder.events, builder.values)
    steps = tuple(builder.steps)
    parameters = [s.parameter for s in builder.slots]
    gone: set[str] = set()
    folded = fold_loop(steps, builder.slots, trajectory.intent) if loops else None
    if folded is not None:
        builder.notes.extend(folded.notes)
        if folded.steps != steps:
            steps, gone = folded.steps, folded.dropped
            parameters = [p for p in parameters if p.name not in gone]
            if folded.added is not None:
                parameters.append(folded.added)
            success, dropped_checks = drop_item_checks(success, folded)
            builder.notes.extend(dropped_checks)
    if not success:
        builder.notes.append(NO_SUCCESS_NOTE)
    values = {
        s.parameter.name: s.value for s in builder.slots if s.value and s.parameter.name not in gone
    }
    template = make_intent_template(trajectory.intent, values) if trajectory.intent else None
    titles = list(
        dict.fromkeys(e.after.title for e in trajectory.events if e.after and e.after.title)
    )
    asks = ", ".join(p.name.replace("_", " ") for p in parameters)
    description = (
        (trajectory.intent.strip() + ". " if trajectory.intent.strip() else "")
        + (f"Goes through: {'; '.join(titles[:6])}. " if titles else "")
        + (f"Asks for: {asks}." if asks else "Needs no input.")
    ).strip()
    workflow = Workflow(
        name=name or _name(trajectory.intent, template, trajectory),
        description=description,
        domains=_domains(trajectory),
        parameters=tuple(parameters),
        intent_template=template,
        steps=steps,
        success=success,
        source_trajectories=(trajectory.id,),
    )
    return Induction(workflow=workflow, notes=builder.notes, values=values)


def _entered(step: Step) -> str | None:
    """The parameter whose value *step* enters (fill, select, typed text, a checkbox's state)."""
    text: str | bool | None = None
    if isinstance(step, FillStep | SelectStep):
        text = step.value
    elif isinstance(step, DesktopTypeStep):
        text = step.text
    elif isinstance(step, CheckStep):
        text = step.checked
    return _whole_placeholder(text)


def _found_by(step: Step) -> list[str]:
    """The parameters the element a click or check acts on is found by: its name or text, and
    its item's text."""
    if not isinstance(step, ClickStep | CheckStep):
        return []
    found: list[str] = []
    for loc in step.target.locators:
        for text in (loc.name, loc.value, *(loc.within.texts if loc.within else ())):
            name = _whole_placeholder(text)
            if name is not None and name not in found:
                found.append(name)
    return found


def _whole_placeholder(text: str | bool | None) -> str | None:
    names = placeholders(text) if isinstance(text, str) else []
    return names[0] if len(names) == 1 and text == "{" + names[0] + "}" else None


def introduced_parameters(steps: Sequence[Step]) -> dict[int, tuple[str, ...]]:
    """Which step introduces which parameters: step position → parameter names, for the step
    that enters a value (fill, select, typed text, a checkbox's state) and for the first step
    that acts on an element found by one (a label the intent names: ``Click '{tab}'``,
    ``Choose '{status}'``, the row of ``{contact}``); the entered value first."""
    introduced: dict[int, tuple[str, ...]] = {}
    seen: set[str] = set()
    for position, step in enumerate(steps):
        entered = _entered(step)
        names = [n for n in [entered, *_found_by(step)] if n is not None and n not in seen]
        if names:
            introduced[position] = tuple(dict.fromkeys(names))
            seen.update(names)
    return introduced
