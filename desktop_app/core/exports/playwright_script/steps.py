"""The script's ``run(page, args)``: each step a ``with Step(...)`` block with its action and
checks, and the workflow's success check as a last step."""

from __future__ import annotations

import keyword
from typing import Final

from desktop_app.core.exports.playwright_script.base import _ScriptBase
from desktop_app.core.exports.playwright_script.source import (
    _INDENT,
    _call,
    _comment,
    _literal,
    _Nested,
    _number,
    _regex_literal,
)
from desktop_app.core.exports.playwright_script.values import _Scope, _Value
from desktop_app.core.models.target import Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import (
    AgentStep,
    AssertStep,
    CallStep,
    CheckStep,
    ClickStep,
    Condition,
    DesktopClickStep,
    ElementHidden,
    ElementVisible,
    ExtractStep,
    FillStep,
    GotoStep,
    ImageVisible,
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
)
from desktop_app.core.step_kinds import kind_spec
from desktop_app.core.templating import pieces, placeholders

# What the package's other modules use; none of it is public API.
__all__ = ["_Steps"]

#: The title of the exported script's last step (as the run record names it).
_SUCCESS_TITLE: Final = "Check that the task was done"

#: Names run() defines or calls; a variable an ``extract`` step stores gets another name.
_RESERVED: Final = frozenset(
    {
        "args",
        "element",
        "origin",
        "page",
        "step",
        "text",
        "timeout",
        "l",  # ruff E741
        "By",
        "Step",
        "StepFailed",
        "cannot_run",
        "expect_element",
        "expect_text",
        "expect_title",
        "expect_url",
        "find",
        "matched",
        "print",
        "str",
        # the helpers blocks use
        "announce",
        "as_number",
        "at_most",
        "compare",
        "csv_rows",
        "element_holds",
        "failure",
        "holds",
        "lines",
        "page_items",
        "text_holds",
        "title_holds",
        "url_holds",
        "url_matches",
        "ListItems",
        "NUMBER",
        "READ_ITEMS",
    }
)


class _Steps(_ScriptBase):
    """The parts of the script that make ``run()``."""

    # ── the steps ───────────────────────────────────────────────────────────────────────────

    def _run(self) -> str:
        """run(): rendered twice, the second time knowing which variables are read."""
        self._steps_body(read=None)
        return self._steps_body(read=self.read)

    def _steps_body(self, read: set[str] | None) -> str:
        self.cannot = []
        scope = _Scope(self.origin)
        for option in self.options:
            param = option.parameter
            scope.values[param.name] = _Value(
                f"args.{option.dest}",
                is_bool=param.type is ParameterType.BOOL,
                secret=param.type is ParameterType.SECRET,
            )
        taken = set(_RESERVED)
        body: list[str] = []
        steps = self.workflow.steps
        self.uses_timeout = False
        self.hoisted = {}
        for number, step in enumerate(steps, start=1):
            if body:
                body.append("")
            body += self._one(str(number), step, scope, taken, read, _INDENT)
        if self.workflow.success:
            body += ["", *self._success(len(steps) + 1, scope)]
        self.read = scope.read
        head = [
            "async def run(page: Page, args: argparse.Namespace) -> None:",
            '    """Do the workflow\'s steps in order; a step that fails raises StepFailed."""',
        ]
        if scope.uses_origin:
            head.append(f"    origin = args.base_url  # {self.origin} unless --base-url says")
        if self.uses_timeout:
            head.append(f"    timeout = args.timeout or {float(self.timeout_s)!r}")
        for local in self.hoisted.values():
            head.append(f'    {local} = ""  # set inside a block: empty when that way is not taken')
        if len(head) > 2 and body:
            head.append("")
        return "\n".join(head + body)

    def _one(
        self,
        label: str,
        step: Step,
        scope: _Scope,
        taken: set[str],
        read: set[str] | None,
        ind: str,
    ) -> list[str]:
        """Step *label* (``6``, ``17.2``), indented *ind*; blocks are written by the subclass."""
        return self._step(label, step, scope, taken, read, ind)

    def _step(
        self,
        label: str,
        step: Step,
        scope: _Scope,
        taken: set[str],
        read: set[str] | None,
        ind: str,
    ) -> list[str]:
        inner = ind + _INDENT
        lines = _comment(f"{label}. {_shown(step.title)}", ind)
        if step.irreversible:
            lines += _comment("Irreversible: this step cannot be undone.", ind)
        if step.timeout_s == self.timeout_s:
            timeout = "timeout"
            self.uses_timeout = True
        else:
            timeout = f"args.timeout or {float(step.timeout_s)!r}"
        args = ["page", _number_arg(label), scope.expr(step.title, titles=True), timeout]
        if step.optional:
            args.append("optional=True")
        pre: list[str] = []
        body: list[str] = []
        stored: tuple[str, str] | None = None  # (placeholder name, local name)
        cannot = _cannot(step)
        if cannot is not None:
            self.helpers.add("cannot_run")
            self._need(typing="NoReturn")
            self.cannot.append((label, cannot[0]))
            body += _comment(cannot[1], inner)
            call = _call(inner, "cannot_run", ["step", _literal(cannot[2])])
            output = step.output_variable if isinstance(step, AgentStep) else None
            if output is not None and (read is None or output in read):
                local = _local_name(output, taken)
                call[0] = call[0].replace(inner, f"{inner}{local} = ", 1)
                stored = (output, local)
            body += call
        else:
            target = step.target_or_none
            element = None
            if target is not None and not isinstance(step, DesktopClickStep):
                element, skipped = self._candidates(target, scope)
                if skipped:
                    body += _comment(
                        f"{skipped} image-anchor locator(s) left out: only Procedura's "
                        "desktop backend resolves them.",
                        inner,
                    )
                if element is not None:
                    body += _call(
                        inner, "element = await find", ["page", "step", *element], explode=True
                    )
                else:
                    self.helpers.add("cannot_run")
                    self._need(typing="NoReturn")
                    body += _call(
                        inner,
                        "cannot_run",
                        ["step", _literal("its element has only image-anchor locators")],
                    )
            action, stored = self._action(step, scope, taken, inner)
            if step.dialog is not None:
                self.helpers.add("answer_next_dialog")
                self._need(playwright__async_api="Dialog")
                accept = "True" if step.dialog == "accept" else "False"
                body += [f"{inner}answer_next_dialog(page, accept={accept})"]
            if element is not None or target is None:
                if step.irreversible and self.try_flags:
                    # Done, or maybe done: a try around it must not fall back any more.
                    body.append(f"{inner}{' = '.join(self.try_flags)} = True")
                body += action
            if isinstance(step, WaitForStep | AssertStep):
                body += self._check(step.condition, scope, inner)
            for expectation in step.expectations:
                body += self._check(expectation, scope, inner)
        if stored is not None and self.depth > 0:
            self.hoisted[stored[0]] = stored[1]
        elif stored is not None and step.optional:
            pre.append(f'{ind}{stored[1]} = ""  # stays empty if the optional step fails')
        lines += pre
        lines += _call(ind, "with Step", args, " as step:")
        lines += body or [f"{inner}pass"]
        if stored is not None:
            scope.values[stored[0]] = _Value(stored[1])
        return lines

    def _candidates(self, target: Target, scope: _Scope) -> tuple[list[str | _Nested] | None, int]:
        usable = [
            loc for loc in target.locators if loc.strategy is not LocatorStrategy.IMAGE_ANCHOR
        ]
        skipped = len(target.locators) - len(usable)
        if not usable:
            return None, skipped
        return [self._by(loc, scope) for loc in usable], skipped

    def _by(self, locator: Locator, scope: _Scope) -> _Nested:
        args: list[str | _Nested] = [_literal(locator.strategy.value), scope.expr(locator.value)]
        if locator.name is not None:
            args.append(f"name={scope.expr(locator.name)}")
        if not locator.exact:
            args.append("exact=False")
        if locator.nth is not None:
            args.append(f"nth={locator.nth}")
        if locator.within is not None:
            own, outer = locator.within, locator.within.outer
            args.append(f"within=({_literal(own.css)}, {scope.expr(own.text)})")
            if outer is not None:
                args.append(f"outer=({_literal(outer.css)}, {scope.expr(outer.text)})")
        return _Nested("By", args)

    def _action(
        self, step: Step, scope: _Scope, taken: set[str], ind: str
    ) -> tuple[list[str], tuple[str, str] | None]:
        match step:
            case GotoStep(url=url):
                return _call(
                    ind, "await page.goto", [scope.expr(url), 'wait_until="domcontentloaded"']
                ), None
            case ClickStep():
                kwargs = []
                if step.button != "left":
                    kwargs.append(f"button={_literal(step.button)}")
                if step.click_count != 1:
                    kwargs.append(f"click_count={step.click_count}")
                if step.modifiers:
                    kwargs.append(f"modifiers=[{', '.join(_literal(m) for m in step.modifiers)}]")
                return _call(ind, "await element.click", kwargs), None
            case FillStep(value=value):
                return _call(ind, "await element.fill", [scope.expr(value)]), None
            case SelectStep(value=value):
                return _call(ind, "await element.select_option", [scope.expr(value)]), None
            case CheckStep(checked=checked):
                if checked is True:
                    return [f"{ind}await element.check()"], None
                if checked is False:
                    return [f"{ind}await element.uncheck()"], None
                bound = scope.values.get(placeholders(checked)[0])
                flag = "False" if bound is None else bound.expr
                if bound is not None and not bound.is_bool:
                    flag = f'{bound.expr}.strip().lower() == "true"'
                return _call(ind, "await element.set_checked", [flag]), None
            case PressStep(key=key, target=None):
                return _call(ind, "await page.keyboard.press", [scope.expr(key)]), None
            case PressStep(key=key):
                return _call(ind, "await element.press", [scope.expr(key)]), None
            case ScrollStep(target=target, dx=dx, dy=dy):
                lines = (
                    [] if target is None else [f"{ind}await element.scroll_into_view_if_needed()"]
                )
                if dx or dy or target is None:
                    lines.append(f"{ind}await page.mouse.wheel({_number(dx)}, {_number(dy)})")
                return lines, None
            case ExtractStep():
                return self._extract(step, scope, taken, ind)
        return [], None

    def _extract(
        self, step: ExtractStep, scope: _Scope, taken: set[str], ind: str
    ) -> tuple[list[str], tuple[str, str]]:
        if step.attribute is None:
            read = "await element.inner_text()"
        elif step.attribute == "value":
            read = "await element.input_value()"
        else:
            read = f'await element.get_attribute({_literal(step.attribute)}) or ""'
        local = _local_name(step.variable, taken)
        lines = [f"{ind}text = {read}"]
        if step.pattern is None:
            lines.append(f"{ind}{local} = text.strip()")
        else:
            self.helpers.add("matched")
            self._need("re")
            pattern = (
                scope.expr(step.pattern)
                if placeholders(step.pattern)
                else _regex_literal(step.pattern)
            )
            lines += _call(ind, f"{local} = matched", ["step", pattern, "text"])
        lines += _call(ind, "print", [f'f"{step.variable}={{{local}}}"'])
        return lines, (step.variable, local)

    def _success(self, number: int, scope: _Scope) -> list[str]:
        """The workflow's success check, as a last step: the task was done only if it holds."""
        ind, inner = _INDENT, _INDENT * 2
        lines = _comment(f"{number}. {_SUCCESS_TITLE}: the task was done only if this holds.", ind)
        self.uses_timeout = True
        lines += _call(
            ind,
            "with Step",
            ["page", str(number), _literal(_SUCCESS_TITLE), "timeout"],
            " as step:",
        )
        for expectation in self.workflow.success:
            lines += self._check(expectation, scope, inner)
        return lines

    def _check(self, expectation: Condition, scope: _Scope, ind: str) -> list[str]:
        match expectation:
            case UrlMatches(pattern=pattern, match=match):
                self.helpers.add("expect_url")
                self._need("re", fnmatch="fnmatchcase")
                url_args = ["page", "step", scope.expr(pattern)]
                if match != "glob":
                    url_args.append(f"match={_literal(match)}")
                return _call(ind, "await expect_url", url_args)
            case TitleMatches(text=text):
                self.helpers.add("expect_title")
                return _call(ind, "await expect_title", ["page", "step", scope.expr(text)])
            case TextPresent(text=text):
                self.helpers.add("expect_text")
                return _call(ind, "await expect_text", ["page", "step", scope.expr(text)])
            case ElementVisible(target=target) | ElementHidden(target=target):
                usable = [
                    loc
                    for loc in target.locators
                    if loc.strategy is not LocatorStrategy.IMAGE_ANCHOR
                ]
                if not usable:
                    return self._cannot_check("an image anchor is visible", ind)
                self.helpers.add("expect_element")
                args: list[str | _Nested] = ["page", "step", self._by(usable[0], scope)]
                if isinstance(expectation, ElementHidden):
                    args.append("visible=False")
                return _call(ind, "await expect_element", args)
            case WindowTitleMatches(pattern=pattern):
                return self._cannot_check(f"the window title matches {pattern}", ind)
            case ImageVisible():
                return self._cannot_check("a recorded image is visible", ind)
        return []

    def _cannot_check(self, what: str, ind: str) -> list[str]:
        self.helpers.add("cannot_run")
        self._need(typing="NoReturn")
        why = f"it checks that {what}, which only Procedura's desktop backend can check"
        return _call(ind, "cannot_run", ["step", _literal(why)])


def _shown(title: str) -> str:
    """A title as a comment shows it: placeholders as ``{name}``."""
    return "".join("{" + text + "}" if name else text for text, name in pieces(title))


def _number_arg(label: str) -> str:
    """A step's number as Step() takes it: ``6``, or ``"17.2"`` for one inside a block."""
    return label if label.isdigit() else f'"{label}"'


def _local_name(variable: str, taken: set[str]) -> str:
    """A local variable name for an extracted *variable*, clear of run()'s own names."""
    name = variable
    while name in taken or keyword.iskeyword(name):
        name += "_"
    taken.add(name)
    return name


def _cannot(step: Step) -> tuple[str, str, str] | None:
    """For a step a script cannot do: (a short reason, a comment, the run-time message).

    A script does what the browser performs (:attr:`KindSpec.performer`); nothing else.
    """
    performer = kind_spec(step.kind).performer
    if performer == "browser":
        return None
    if performer == "desktop":
        return (
            "a desktop step",
            "A desktop step: it acts on a window outside the browser, which only "
            "Procedura's desktop backend can do.",
            "a desktop step needs Procedura's desktop backend",
        )
    match step:
        case CallStep(workflow_id=workflow_id, version=version):
            which = f"workflow {workflow_id}" + (f" version {version}" if version else "")
            return (
                "it runs another workflow",
                f"This step runs {which}, which is not part of this script. Export that "
                "workflow too and run it first, or paste its steps here.",
                f"it runs {which}, which is not in this script; export and run that first",
            )
        case AgentStep(instruction=instruction):
            return (
                "an agent step",
                f"An agent step: Procedura's LLM does it at run time ({instruction}). A script "
                "cannot; replace the next line with code that does it.",
                "an agent step needs Procedura's LLM; replace this line with code",
            )
    raise AssertionError(f"no script note for a {step.kind} step")  # pragma: no cover
