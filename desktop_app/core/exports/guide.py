"""A workflow as a guide for people: numbered plain-language steps with their screenshots.

The guide is the standard operating procedure a team would file: title, description, the values
to have at hand, then each step as a sentence ("Type the *Full name* (parameter ``full_name``)
into **Full name**"), the screenshot recorded for it (the target outlined, sensitive fields
covered), and what you should see after it; it ends with the workflow's success check, "You are
done when: …". Secret values are never in a workflow, and the guide never names one: a secret is
"your password (kept secret)".

Both outputs are built from one :class:`Guide` of styled text runs, so Markdown and HTML say the
same thing and each escapes workflow text its own way.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from desktop_app.core.describe import item_noun
from desktop_app.core.models.target import LocatorStrategy, Target
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
    Expectation,
    ExtractStep,
    FillStep,
    GotoStep,
    HotkeyStep,
    ImageVisible,
    Parameter,
    ParameterType,
    PressStep,
    ScrollStep,
    SelectStep,
    Step,
    TextPresent,
    TitleMatches,
    UrlMatches,
    WaitForStep,
    WindowTitleMatches,
    Workflow,
)
from desktop_app.core.ports import MediaStore
from desktop_app.core.templating import placeholders, render

__all__ = [
    "Guide",
    "GuideStep",
    "Run",
    "build_guide",
    "describe_step",
    "render_html",
    "render_markdown",
]

_MIME: Final = {"png": "image/png", "jpg": "image/jpeg", "webp": "image/webp"}
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

_TYPE_WORDS: Final = {
    ParameterType.TEXT: "text",
    ParameterType.NUMBER: "number",
    ParameterType.DATE: "date",
    ParameterType.EMAIL: "email address",
    ParameterType.BOOL: "yes or no",
    ParameterType.SECRET: "secret",
}


# ── the guide, format-neutral ───────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class Run:
    """A piece of text and how it is set: plain, strong (an element), em (a value), code."""

    style: Literal["text", "strong", "em", "code"]
    text: str


Sentence = tuple[Run, ...]


@dataclass(frozen=True, slots=True)
class GuideStep:
    """One numbered step: what to do, what to check, and its screenshot (if one was recorded)."""

    number: int
    action: Sentence
    expectations: tuple[Sentence, ...]
    irreversible: bool
    optional: bool
    image_name: str | None = None
    image: bytes | None = None


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


def _readable_pattern(pattern: str, match: str) -> str:
    """A glob as a person reads it: ``*`` becomes "…"."""
    return pattern.replace("*", "…") if match == "glob" else pattern


class _Writer:
    """Turns one workflow's steps and expectations into sentences."""

    def __init__(self, workflow: Workflow) -> None:
        self._workflow = workflow
        self._noted: dict[str, int] = {}  # variable → the step number that notes it

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

    def _condition(self, expectation: Expectation) -> list[Run]:
        """An expectation as a clause: "the page shows “Saved”"."""
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

    def action(self, step: Step, number: int) -> Sentence:
        """What to do in this step, as one sentence for a person."""
        runs: list[Run]
        match step:
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


def _ending(runs: list[Run]) -> list[Run]:
    """*runs* ending a sentence: a full stop added unless there is one."""
    text = _plain(runs).rstrip()
    if not text or text[-1] in ".!?…":
        return runs
    return [*runs, _t(".")]


def _parameter_row(param: Parameter) -> tuple[Sentence, str, str, str]:
    name: Sentence = (_t(_human(param.name) + " ("), Run("code", param.name), _t(")"))
    kind = _TYPE_WORDS.get(param.type, param.type.value)
    if param.type is ParameterType.CHOICE:
        kind = "one of: " + ", ".join(param.choices)
    if param.type is ParameterType.SECRET or param.default is None:
        default = "—" if param.required or param.type is ParameterType.SECRET else "— (optional)"
    elif isinstance(param.default, bool):
        default = "yes" if param.default else "no"
    elif param.default == "":
        default = "(empty)"
    else:
        default = str(param.default)
    return name, param.description, kind, default


def build_guide(workflow: Workflow, media: MediaStore) -> Guide:
    """The guide of *workflow*, with the screenshots *media* holds (a missing one is left out)."""
    writer = _Writer(workflow)
    steps = []
    for number, step in enumerate(workflow.steps, start=1):
        image_name = image = None
        ref = step.screenshot
        if ref is not None and media.exists(ref):
            image_name = f"step-{number:02d}.{ref.rsplit('.', 1)[-1]}"
            image = media.get(ref)
        steps.append(
            GuideStep(
                number=number,
                action=writer.action(step, number),
                expectations=tuple(
                    tuple(_ending(list(writer.expectation(e)))) for e in step.expectations
                ),
                irreversible=step.irreversible,
                optional=step.optional,
                image_name=image_name,
                image=image,
            )
        )
    return Guide(
        title=workflow.name,
        description=workflow.description,
        domains=workflow.domains,
        parameters=tuple(_parameter_row(p) for p in workflow.parameters),
        steps=tuple(steps),
        version=workflow.version,
        workflow_id=workflow.id,
        done_when=tuple(writer.done_when(e) for e in workflow.success),
    )


def describe_step(workflow: Workflow, index: int) -> str:
    """Step *index* (from 0) of *workflow* in plain words, e.g. "Click Save."."""
    step = workflow.steps[index]
    writer = _Writer(workflow)
    for number, earlier in enumerate(workflow.steps[:index], start=1):
        writer.action(earlier, number)  # so a noted variable knows its step
    return _plain(writer.action(step, index + 1))


# ── Markdown ────────────────────────────────────────────────────────────────────────────────

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")
_MD_ENTITY = re.compile(r"&(?=#?[A-Za-z0-9]+;)")
_MD_BLOCK_START = re.compile(r"(^|\n)([ \t]*)([-+=#]|\d+(?=[.)]))")


def _md_text(text: str, *, at_line_start: bool = False) -> str:
    """*text* escaped so Markdown shows it as written: no markup, no HTML, no new blocks.

    A line that would start a list, heading or quote gets its first mark escaped: every line
    after a newline, and the first one too when *text* begins a line.
    """
    escaped = _MD_ENTITY.sub(r"\\&", _MD_SPECIAL.sub(r"\\\1", text))

    def _block(m: re.Match[str]) -> str:
        if m.start() == 0 and not m.group(1) and not at_line_start:
            return m.group(0)
        mark = m.group(3)
        return m.group(1) + m.group(2) + (mark + "\\" if mark[0].isdigit() else "\\" + mark)

    return _MD_BLOCK_START.sub(_block, escaped)


def _md_code(text: str) -> str:
    text = _one_line(text)
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or longest else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _md_runs(runs: Iterable[Run], *, at_line_start: bool = False) -> str:
    out = []
    for i, run in enumerate(runs):
        if run.style == "code":
            out.append(_md_code(run.text))
        elif run.style in ("strong", "em") and _one_line(run.text):
            mark = "**" if run.style == "strong" else "*"
            out.append(f"{mark}{_md_text(_one_line(run.text))}{mark}")
        else:
            out.append(_md_text(run.text, at_line_start=at_line_start and i == 0))
    return "".join(out)


def _md_cell(text: str) -> str:
    return _md_text(_one_line(text)) or "—"


def _md_link_target(path: str) -> str:
    return f"<{path}>" if re.search(r"[\s()<>]", path) else path


def render_markdown(
    workflow: Workflow, media: MediaStore, *, image_dir: str = "images"
) -> tuple[str, dict[str, bytes]]:
    """*workflow* as a Markdown guide, and its screenshots by file name.

    Images are referenced as ``<image_dir>/step-03.jpg``; the caller writes the returned bytes
    there. Steps without a screenshot get no image line.
    """
    guide = build_guide(workflow, media)
    lines = [f"# {_md_text(_one_line(guide.title))}", ""]
    if guide.description.strip():
        lines += [_md_text(guide.description.strip(), at_line_start=True), ""]
    if guide.domains:
        lines += ["Where: " + ", ".join(_md_text(d) for d in guide.domains), ""]
    lines += ["## Before you start", ""]
    if guide.parameters:
        lines += [
            "Have these at hand. In the steps, a value in *italics* stands for the one you use;",
            "secrets are asked for when the procedure runs and are never written here.",
            "",
            "| Name | What it is | Type | Default |",
            "|---|---|---|---|",
        ]
        for name, what, kind, default in guide.parameters:
            cells = (_md_runs(name), _md_cell(what), _md_cell(kind), _md_cell(default))
            lines.append("| " + " | ".join(cells) + " |")
    else:
        lines.append("This procedure needs no values from you.")
    lines += ["", "## Steps", ""]
    images: dict[str, bytes] = {}
    for step in guide.steps:
        lines += [f"### Step {step.number}", "", _md_runs(step.action, at_line_start=True), ""]
        if step.optional:
            lines += ["*This step is optional: skip it if it does not apply.*", ""]
        if step.irreversible:
            lines += ["> ⚠ **This cannot be undone.** Check everything before you do it.", ""]
        if step.image_name is not None and step.image is not None:
            images[step.image_name] = step.image
            target = _md_link_target(f"{image_dir}/{step.image_name}")
            lines += [f"![Step {step.number}]({target})", ""]
        if step.expectations:
            lines += [f"- {_md_runs(e)}" for e in step.expectations] + [""]
    if guide.done_when:
        lines += ["## Check that it worked", "", "You are done when:", ""]
        lines += [f"- {_md_runs(e)}" for e in guide.done_when] + [""]
    lines += [
        "---",
        "",
        f"*{_md_text(_one_line(guide.title))}, version {guide.version} "
        f"(workflow {guide.workflow_id[:8]}). Generated by Procedura.*",
        "",
    ]
    return "\n".join(lines), images


# ── HTML ────────────────────────────────────────────────────────────────────────────────────

_CSS: Final = """
:root { color-scheme: light; }
body { font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: #1d232a; background: #fff; margin: 0; }
main { max-width: 52rem; margin: 0 auto; padding: 2rem 1.25rem 3rem; }
h1 { font-size: 1.9rem; line-height: 1.2; margin: 0 0 .75rem; }
h2 { font-size: 1.3rem; margin: 2.2rem 0 .8rem; padding-bottom: .3rem;
  border-bottom: 1px solid #dde2e7; }
.description p { margin: .4rem 0; }
.where { color: #56606b; }
table { border-collapse: collapse; width: 100%; font-size: .95rem; }
th, td { text-align: left; vertical-align: top; padding: .45rem .6rem;
  border-bottom: 1px solid #e4e8ec; }
th { background: #f4f6f8; font-weight: 600; }
code { font: .9em/1.4 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace;
  background: #f1f3f5; padding: .05em .3em; border-radius: 4px; overflow-wrap: anywhere; }
ol.steps { padding-left: 0; list-style: none; counter-reset: step; }
li.step { counter-increment: step; margin: 0 0 1.6rem; padding: 1rem 1.1rem;
  border: 1px solid #e1e5ea; border-radius: 10px; break-inside: avoid;
  page-break-inside: avoid; }
li.step > .action { margin: 0; font-size: 1.05rem; }
li.step > .action::before { content: "Step " counter(step) ". "; font-weight: 700;
  color: #2f5d8a; }
.optional { color: #56606b; font-style: italic; margin: .4rem 0 0; }
.irreversible { margin: .6rem 0 0; padding: .45rem .7rem; border-left: 4px solid #c0392b;
  background: #fdf0ee; color: #8e2a1f; font-weight: 600; }
ul.expect { margin: .7rem 0 0; padding-left: 1.2rem; color: #2c5132; }
figure { margin: .8rem 0 0; }
figure img { display: block; max-width: 100%; height: auto; border: 1px solid #d5dae0;
  border-radius: 6px; }
footer { margin-top: 2.5rem; padding-top: .8rem; border-top: 1px solid #dde2e7;
  color: #6a737d; font-size: .85rem; }
@media print {
  body { font-size: 11pt; }
  main { max-width: none; padding: 0; }
  li.step { border-color: #bbb; }
  figure img { max-height: 14cm; width: auto; }
  h2 { break-after: avoid; page-break-after: avoid; }
}
"""


def _h(text: str) -> str:
    return html.escape(text, quote=True)


def _html_runs(runs: Iterable[Run]) -> str:
    tags = {"strong": "strong", "em": "em", "code": "code"}
    out = []
    for run in runs:
        tag = tags.get(run.style)
        text = _h(run.text).replace("\n", "<br>")
        out.append(f"<{tag}>{text}</{tag}>" if tag else text)
    return "".join(out)


def _html_description(text: str) -> str:
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    return "".join(f"<p>{_h(p).replace(chr(10), '<br>')}</p>" for p in paragraphs)


def render_html(workflow: Workflow, media: MediaStore) -> str:
    """*workflow* as one self-contained HTML guide: styles inline, screenshots as data: URIs."""
    guide = build_guide(workflow, media)
    title = _h(_one_line(guide.title))
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="generator" content="Procedura">',
        f"<title>{title}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        "<main>",
        f"<h1>{title}</h1>",
    ]
    if guide.description.strip():
        out.append(f'<div class="description">{_html_description(guide.description)}</div>')
    if guide.domains:
        out.append(f'<p class="where">Where: {_h(", ".join(guide.domains))}</p>')
    out.append('<section class="before"><h2>Before you start</h2>')
    if guide.parameters:
        out += [
            "<p>Have these at hand. In the steps, a value in <em>italics</em> stands for the "
            "one you use; secrets are asked for when the procedure runs and are never written "
            "here.</p>",
            "<table><thead><tr><th>Name</th><th>What it is</th><th>Type</th><th>Default</th>"
            "</tr></thead><tbody>",
        ]
        for name, what, kind, default in guide.parameters:
            cells = (_html_runs(name), _h(what) or "—", _h(kind), _h(default))
            out.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        out.append("</tbody></table>")
    else:
        out.append("<p>This procedure needs no values from you.</p>")
    out += ["</section>", "<section><h2>Steps</h2>", '<ol class="steps">']
    for step in guide.steps:
        out.append(f'<li class="step" id="step-{step.number}">')
        out.append(f'<p class="action">{_html_runs(step.action)}</p>')
        if step.optional:
            out.append(
                '<p class="optional">This step is optional: skip it if it does not apply.</p>'
            )
        if step.irreversible:
            out.append(
                '<p class="irreversible">⚠ This cannot be undone. '
                "Check everything before you do it.</p>"
            )
        if step.image_name is not None and step.image is not None:
            mime = _MIME[step.image_name.rsplit(".", 1)[-1]]
            data = base64.b64encode(step.image).decode("ascii")
            alt = _h(f"Step {step.number}: {_plain(step.action)}")
            out.append(f'<figure><img src="data:{mime};base64,{data}" alt="{alt}"></figure>')
        if step.expectations:
            items = "".join(f"<li>{_html_runs(e)}</li>" for e in step.expectations)
            out.append(f'<ul class="expect">{items}</ul>')
        out.append("</li>")
    out += ["</ol>", "</section>"]
    if guide.done_when:
        items = "".join(f"<li>{_html_runs(e)}</li>" for e in guide.done_when)
        out.append(
            '<section class="done"><h2>Check that it worked</h2><p>You are done when:</p>'
            f'<ul class="expect">{items}</ul></section>'
        )
    out += [
        f"<footer>{title}, version {guide.version} (workflow {_h(guide.workflow_id[:8])}). "
        "Generated by Procedura.</footer>",
        "</main>",
        "</body>",
        "</html>",
        "",
    ]
    return "\n".join(out)
