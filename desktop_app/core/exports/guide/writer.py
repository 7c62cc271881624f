"""A workflow's steps and expectations as plain-language sentences of styled runs."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Final

from desktop_app.core.describe import item_noun
from desktop_app.core.exports.guide.model import (
    Run,
    Sentence,
    _ending,
    _human,
    _one_line,
    _plain,
    _t,
)
from desktop_app.core.models.target import LocatorStrategy, Target
from desktop_app.core.models.workflow import (
    COMPARISONS,
    AgentStep,
    AssertStep,
    CallStep,
    CheckStep,
    ClickStep,
    Condition,
    CsvRows,
    DesktopClickStep,
    DesktopTypeStep,
    ElementHidden,
    ElementPresent,
    ElementVisible,
    Expectation,
    ExtractStep,
    FillStep,
    ForEachStep,
    GotoStep,
    HotkeyStep,
    IfStep,
    ImageVisible,
    ListItems,
    PageItems,
    Parameter,
    ParameterType,
    PressStep,
    RepeatUntilStep,
    ScrollStep,
    SelectStep,
    Step,
    TextPresent,
    TitleMatches,
    TryStep,
    UrlMatches,
    ValueCompare,
    WaitForStep,
    WindowTitleMatches,
    Workflow,
    item_variables,
)
from desktop_app.core.templating import placeholders, render

__all__: list[str] = []

_SEP: Final = "\x00"  # marks placeholders while a template is split into runs
_MAX_LABEL: Final = 80
_CALL_TITLE = re.compile(r"^Run '(.+)'$")

_NOUNS: Final = {
    "button": "button",
    "link": "link",
    "textbox": "field",
    "searchbox": "search field",
    "spinbutton": "field",
    "combobox": "list",
    "listbox": "list",
    "checkbox": "checkbox",
    "radio": "option",
    "switch": "switch",
    "tab": "tab",
    "menuitem": "menu item",
    "option": "option",
    "img": "picture",
    "heading": "heading",
    "row": "row",
    "cell": "cell",
    "input": "field",
    "textarea": "field",
    "select": "list",
    "a": "link",
}

_KEYS: Final = {
    "control": "Ctrl",
    "ctrl": "Ctrl",
    "alt": "Alt",
    "shift": "Shift",
    "meta": "Meta",
    "cmd": "Cmd",
    "command": "Cmd",
    "super": "Super",
    "win": "Win",
    "enter": "Enter",
    "return": "Enter",
    "esc": "Esc",
    "escape": "Esc",
    "tab": "Tab",
    "space": "Space",
    " ": "Space",
    "backspace": "Backspace",
    "delete": "Delete",
    "del": "Delete",
    "arrowup": "Up arrow",
    "arrowdown": "Down arrow",
    "arrowleft": "Left arrow",
    "arrowright": "Right arrow",
    "up": "Up arrow",
    "down": "Down arrow",
    "left": "Left arrow",
    "right": "Right arrow",
    "pageup": "Page Up",
    "pagedown": "Page Down",
    "home": "Home",
    "end": "End",
}


def _readable_pattern(pattern: str, match: str) -> str:
    """A glob as a person reads it: ``*`` becomes "…"."""
    return pattern.replace("*", "…") if match == "glob" else pattern


class _Writer:
    """Turns one workflow's steps and expectations into sentences."""

    def __init__(self, workflow: Workflow) -> None:
        self._workflow = workflow
        self._noted: dict[str, str] = {}  # variable → the number of the step that notes it
        self._items: set[str] = set()  # the variables of the loops around the step written

    @contextmanager
    def inside(self, block: Step) -> Iterator[None]:
        """While the steps inside *block* are written: a loop's item and fields are known."""
        names = set(item_variables(block)) if isinstance(block, ForEachStep) else set()
        self._items |= names
        try:
            yield
        finally:
            self._items -= names

    # values ──────────────────────────────────────────────────────────────────────────────

    def _param(self, name: str) -> Parameter | None:
        return self._workflow.parameter(name)

    def _ref(self, name: str, *, standalone: bool) -> list[Run]:
        """A placeholder in words; never the value of a secret (the workflow has none)."""
        param = self._param(name)
        if param is not None and param.type is ParameterType.SECRET:
            return [_t(f"your {_human(name).lower()} (kept secret)")]
        if param is not None:
            if not standalone:
                return [Run("em", _human(name))]
            return [
                _t("the "),
                Run("em", _human(name)),
                _t(" (parameter "),
                Run("code", name),
                _t(")"),
            ]
        if not standalone:
            return [Run("em", _human(name))]
        if name in self._items:
            return [_t("the "), Run("em", _human(name))]
        step = self._noted.get(name)
        where = f" you noted in step {step}" if step is not None else " you noted"
        return [_t("the "), Run("em", _human(name)), _t(where)]

    def _template(self, value: str, *, quoted: bool = True) -> list[Run]:
        """A value: a parameter by its name, a constant as given, a mix of both in quotes."""
        names = placeholders(value)
        if len(names) == 1 and value == "{" + names[0] + "}":
            return self._ref(names[0], standalone=True)
        marked = render(value, {n: f"{_SEP}{n}{_SEP}" for n in names})
        runs: list[Run] = [_t("“")] if quoted else []
        for i, part in enumerate(marked.split(_SEP)):
            if i % 2:
                runs += self._ref(part, standalone=False)
            elif part:
                runs.append(_t(part))
        if quoted:
            runs.append(_t("”"))
        return runs

    def _code_template(self, value: str) -> list[Run]:
        """A URL or pattern as code, its placeholders kept as ``{name}`` and explained after."""
        names = list(dict.fromkeys(placeholders(value)))
        runs = [Run("code", render(value, {n: "{" + n + "}" for n in names}))]
        for i, name in enumerate(names):
            runs.append(_t(" (put " if i == 0 else "; put "))
            runs += self._ref(name, standalone=False)
            runs += [_t(" in place of "), Run("code", "{" + name + "}")]
        if names:
            runs.append(_t(")"))
        return runs

    # elements ────────────────────────────────────────────────────────────────────────────

    @staticmethod
    def _label(target: Target) -> tuple[str, bool] | None:
        """What a person calls the element, and whether that is a template.

        Locators are templates (``{placeholder}`` in them stands for a value); the fingerprint
        is the element as recorded and is taken literally.
        """
        fp = target.fingerprint
        by: dict[LocatorStrategy, str] = {}
        for loc in target.locators:
            value = loc.name if loc.strategy is LocatorStrategy.ROLE else loc.value
            if value and loc.strategy not in by:
                by[loc.strategy] = value
        candidates: list[tuple[str | None, bool]] = [
            (by.get(LocatorStrategy.ROLE), True),
            (by.get(LocatorStrategy.LABEL), True),
            (fp.name if fp else None, False),
            (by.get(LocatorStrategy.TEXT), True),
            (by.get(LocatorStrategy.PLACEHOLDER), True),
        ]
        if fp is not None:
            attributes = ("aria-label", "title", "placeholder")
            candidates += [(fp.attributes.get(a), False) for a in attributes]
            candidates.append((fp.text, False))
        test_id = by.get(LocatorStrategy.TEST_ID)  # a developer's name, better than none
        if test_id and not placeholders(test_id):
            candidates.append((_human(re.sub(r"[-_.]+", " ", test_id)), False))
        for candidate, templated in candidates:
            if candidate and (text := _one_line(candidate).rstrip(" *").strip()):
                short = text if len(text) <= _MAX_LABEL else text[: _MAX_LABEL - 1] + "…"
                return short, templated
        return None

    @staticmethod
    def _noun(target: Target | None) -> str:
        if target is None:
            return "place"
        fp = target.fingerprint
        roles = [loc.value for loc in target.locators if loc.strategy is LocatorStrategy.ROLE]
        for word in (fp.role if fp else None, *roles, fp.tag if fp else None):
            if word and word.lower() in _NOUNS:
                return _NOUNS[word.lower()]
        return "element"

    def _element(self, target: Target | None, *, acted_on: bool = True) -> list[Run]:
        """The element by its name, and the repeated item it is in when a locator looks inside
        one: "**Select** in the row showing the *Full name* (parameter ``full_name``)"."""
        if target is None:
            return [_t("the highlighted place")]
        runs = self._named(target, acted_on=acted_on)
        scope = next((loc.within for loc in target.locators if loc.within is not None), None)
        if scope is not None and scope.outer is not None:
            scope = scope.outer  # the line item a field is in, not the field's own wrapper
        if scope is None or _plain(runs) == scope.text:
            return runs
        return [*runs, _t(f" in the {item_noun(scope.css)} showing "), *self._template(scope.text)]

    def _named(self, target: Target, *, acted_on: bool) -> list[Run]:
        """The element by its name; one without a name is the one the screenshot outlines."""
        found = self._label(target)
        if found is None:
            return [_t(f"the {'highlighted' if acted_on else 'expected'} {self._noun(target)}")]
        label, templated = found
        if not templated:
            return [Run("strong", label)]
        if placeholders(label):
            return [_t(f"the {self._noun(target)} showing "), *self._template(label)]
        return [Run("strong", render(label, {}))]

    # expectations ────────────────────────────────────────────────────────────────────────

    def _condition(self, expectation: Condition) -> list[Run]:
        """An expectation (or a block's condition) as a clause: "the page shows “Saved”"."""
        match expectation:
            case UrlMatches(pattern=pattern, match="regex"):
                return [_t("the page address matches the pattern "), *self._code_template(pattern)]
            case UrlMatches(pattern=pattern, match=match):
                readable = _readable_pattern(pattern, match)
                return [_t("the page address is "), *self._code_template(readable)]
            case TitleMatches(text=text):
                return [_t("the page title contains "), *self._template(text, quoted=True)]
            case TextPresent(text=text):
                return [_t("the page shows "), *self._template(text, quoted=True)]
            case ElementVisible(target=target):
                return [*self._element(target, acted_on=False), _t(" is shown")]
            case ElementHidden(target=target):
                return [*self._element(target, acted_on=False), _t(" is gone")]
            case ElementPresent(target=target):
                return [*self._element(target, acted_on=False), _t(" is on the page")]
            case ValueCompare(value=value, op=op, to=to):
                said = [*self._template(value), _t(f" {COMPARISONS[op]}")]
                if op not in ("empty", "not_empty"):
                    said += [_t(" "), *self._template(to, quoted=True)]
                return said
            case WindowTitleMatches(pattern=pattern, match=match):
                readable = _readable_pattern(pattern, match)
                return [_t("a window titled "), *self._template(readable), _t(" is open")]
            case ImageVisible():
                return [_t("the picture recorded for this step is on screen")]

    def done_when(self, expectation: Expectation) -> Sentence:
        """A check of the success check as a clause: "the page shows “Contact *Full name*
        created”"."""
        return tuple(self._condition(expectation))

    def expectation(self, expectation: Expectation) -> Sentence:
        """What a person should see after a step: "You should see “Contact *Full name* created”"."""
        match expectation:
            case UrlMatches(pattern=pattern, match="regex"):
                runs = [_t("You should see an address matching "), *self._code_template(pattern)]
                runs.append(_t(" in the address bar"))
            case UrlMatches(pattern=pattern, match=match):
                readable = _readable_pattern(pattern, match)
                runs = [_t("You should see the address "), *self._code_template(readable)]
                runs.append(_t(" in the address bar"))
            case TitleMatches(text=text):
                runs = [_t("You should see a page whose title contains "), *self._template(text)]
            case TextPresent(text=text):
                runs = [_t("You should see "), *self._template(text)]
            case ElementVisible(target=target):
                runs = [_t("You should see "), *self._element(target, acted_on=False)]
            case ElementHidden(target=target):
                runs = [_t("You should no longer see "), *self._element(target, acted_on=False)]
            case WindowTitleMatches(pattern=pattern, match=match):
                readable = _readable_pattern(pattern, match)
                runs = [_t("You should see a window titled "), *self._template(readable)]
            case ImageVisible():
                runs = [_t("You should see the same picture as when this step was recorded")]
        return tuple(runs)

    # steps ───────────────────────────────────────────────────────────────────────────────

    @staticmethod
    def _keys(keys: Sequence[str]) -> str:
        return "+".join(_KEYS.get(k.lower(), k.upper() if len(k) == 1 else k) for k in keys)

    @staticmethod
    def _split_chord(key: str) -> list[str]:
        if key == "+" or "+" not in key:
            return [key]
        parts = [*key[:-1].split("+"), "+"] if key.endswith("++") else key.split("+")
        return [p for p in parts if p]

    def _window(self, window_title: str | None, app: str | None = None) -> list[Run]:
        if window_title:
            return [_t(" in the "), Run("strong", window_title.replace("*", "…")), _t(" window")]
        if app:
            return [_t(" in "), Run("strong", app)]
        return []

    @staticmethod
    def _click_verb(button: str, count: int, modifiers: Sequence[str] = ()) -> str:
        verb = {1: "click", 2: "double-click", 3: "triple-click"}[count]
        if button != "left":
            verb = f"{button}-click" if count == 1 else f"{verb} with the {button} button"
        if modifiers:
            held = "+".join(_KEYS.get(m.lower(), m) for m in modifiers)
            verb = f"hold {held} and {verb}"
        return verb[:1].upper() + verb[1:]

    def _procedure_name(self, step: CallStep) -> str:
        found = _CALL_TITLE.match(step.title)
        return found.group(1) if found else step.title

    def action(self, step: Step, number: str) -> Sentence:
        """What to do in this step, as one sentence for a person (a block's ends with a
        colon: its steps follow)."""
        runs: list[Run]
        match step:
            case IfStep() | ForEachStep() | RepeatUntilStep() | TryStep():
                return tuple(self._block(step))
            case GotoStep(url=url):
                runs = [_t("Go to "), *self._code_template(url)]
            case ClickStep(target=target, button=button, click_count=count, modifiers=mods):
                runs = [_t(self._click_verb(button, count, mods) + " "), *self._element(target)]
            case FillStep(target=target, value=""):
                runs = [_t("Clear "), *self._element(target)]
            case FillStep(target=target, value=value):
                runs = [_t("Type "), *self._template(value), _t(" into "), *self._element(target)]
            case SelectStep(target=target, value=value):
                runs = [_t("Choose "), *self._template(value), _t(" in "), *self._element(target)]
            case CheckStep(target=target, checked=checked):
                runs = self._check(target, checked)
            case PressStep(target=target, key=key):
                runs = [_t(f"Press {self._keys(self._split_chord(key))}")]
                if target is not None:
                    runs += [_t(" in "), *self._element(target)]
            case ScrollStep(target=target, dx=dx, dy=dy):
                runs = self._scroll(target, dx, dy)
            case WaitForStep(condition=condition):
                runs = [_t("Wait until "), *self._condition(condition)]
            case AssertStep(condition=condition):
                runs = [_t("Make sure "), *self._condition(condition)]
            case ExtractStep(target=target, variable=variable):
                runs = [_t("Read "), *self._element(target), _t(" and note it as ")]
                runs.append(Run("em", _human(variable)))
                self._noted[variable] = number
            case CallStep(version=version, arguments=arguments):
                runs = [_t("Do the procedure "), Run("strong", self._procedure_name(step))]
                if version is not None:
                    runs.append(_t(f" (version {version})"))
                for i, (name, value) in enumerate(arguments.items()):
                    runs.append(_t(", giving it " if i == 0 else ", and "))
                    runs += [*self._template(value), _t(" as its "), Run("em", _human(name))]
            case AgentStep(instruction=instruction, output_variable=output):
                runs = self._template(instruction, quoted=False)
                if output is not None:
                    runs = [*_ending(runs), _t(" Note the result as "), Run("em", _human(output))]
                    self._noted[output] = number
            case DesktopClickStep():
                runs = self._desktop_click(step)
            case DesktopTypeStep(text=text, window_title=window_title):
                runs = [_t("Type "), *self._template(text), *self._window(window_title)]
            case HotkeyStep(keys=keys, window_title=window_title):
                runs = [_t(f"Press {self._keys(keys)}"), *self._window(window_title)]
        return tuple(_ending(runs))

    # blocks ──────────────────────────────────────────────────────────────────────────────

    def _block(self, step: IfStep | ForEachStep | RepeatUntilStep | TryStep) -> list[Run]:
        match step:
            case IfStep(condition=condition, steps=()):
                return [_t("If "), *self._condition(condition), _t(", there is nothing to do.")]
            case IfStep(condition=condition):
                return [_t("If "), *self._condition(condition), _t(":")]
            case ForEachStep():
                return self._for_each(step)
            case RepeatUntilStep(condition=condition, max_rounds=rounds):
                return [
                    _t("Until "),
                    *self._condition(condition),
                    _t(f", repeat these steps (look before each round; give up after {rounds}):"),
                ]
            case TryStep():
                return [_t("Try these steps:")]

    def _for_each(self, step: ForEachStep) -> list[Run]:
        item = Run("em", _human(step.item))
        limit = _t(f" (at most {step.limit}; if there are more, stop before the first):")
        over = step.over
        if isinstance(over, ListItems):
            return [
                _t("For each line of "),
                *self._template(over.value),
                _t(", do these steps with the line as the "),
                item,
                limit,
            ]
        if isinstance(over, CsvRows):
            head = [_t("For each row of the file "), *self._template(over.path)]
            key = self._source_part(over, over.column)
        else:
            head = [_t(f"For each {item_noun(over.css)} on the page")]
            if over.contains:
                head += [_t(" showing "), *self._template(over.contains)]
            key = self._source_part(over, over.key) if over.key else [_t("text")]
        named = [_t(", do these steps with its "), *key, _t(" as the "), item]
        for variable, source in over.fields.items():
            named += [_t(" and its "), *self._source_part(over, source), _t(" as the ")]
            named.append(Run("em", _human(variable)))
        return [*head, *named, limit]

    @staticmethod
    def _source_part(over: CsvRows | PageItems, name: str) -> list[Run]:
        """A column of a CSV file ("“Amount” column"), or a part of a page's item by its
        selector (``td.amount``)."""
        if isinstance(over, CsvRows):
            return [_t(f"“{_one_line(name)}” column")]
        return [Run("code", name)]

    def otherwise_intro(self, step: Step) -> Sentence:
        """What comes before a block's ``otherwise`` steps."""
        if isinstance(step, TryStep):
            return (
                _t("If one of those steps fails, and nothing that cannot be undone was done, "),
                _t("do these steps instead:"),
            )
        return (_t("Otherwise:"),)

    def _check(self, target: Target, checked: bool | str) -> list[Run]:
        radio = self._noun(target) == "option"
        on, off = ("Select", "Clear") if radio else ("Tick", "Untick")
        element = self._element(target)
        if isinstance(checked, bool):
            return [_t(f"{on if checked else off} "), *element]
        name = placeholders(checked)[0]
        return [
            _t(f"{on} "),
            *element,
            _t(" if "),
            *self._ref(name, standalone=True),
            _t(" is yes; otherwise leave it unticked" if not radio else " is yes"),
        ]

    def _scroll(self, target: Target | None, dx: float, dy: float) -> list[Run]:
        where = [_t(" in "), *self._element(target)] if target is not None else [_t(" the page")]
        moves = [
            word
            for amount, word in (
                (dy, "down" if dy > 0 else "up"),
                (dx, "right" if dx > 0 else "left"),
            )
            if amount
        ]
        if not moves:
            if target is None:
                return [_t("Scroll the page")]
            return [_t("Scroll until "), *self._element(target), _t(" is in view")]
        return [_t("Scroll " + " and ".join(moves)), *where]

    def _desktop_click(self, step: DesktopClickStep) -> list[Run]:
        verb = self._click_verb(step.button, step.click_count)
        target = step.target
        if target is not None and self._label(target) is not None:
            what = self._element(target)
        elif target is not None and any(
            loc.strategy is LocatorStrategy.IMAGE_ANCHOR for loc in target.locators
        ):
            what = [_t("the place that looks like the recorded picture")]
        elif step.point is not None:
            what = [_t(f"at {step.point.x:g}, {step.point.y:g} from the window's top left corner")]
        else:
            what = [_t("the highlighted place")]
        return [_t(verb + " "), *what, *self._window(step.window_title, step.app)]
