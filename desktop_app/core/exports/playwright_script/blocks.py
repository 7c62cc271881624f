"""Blocks in the script's ``run()``: an ``if``/``else`` on the condition, a ``for`` over the
loop's items, a bounded ``while`` that looks at its condition before each round, and a
``try``/``except StepFailed`` that falls back only while no irreversible step inside was done.

A block's steps are numbered under it (``17.1``, ``17.2``; an ``if`` or a ``try`` counts on
through ``otherwise``) and indented under the Python statement they belong to; the loop's item
and fields are local variables there, put into the steps' values as any parameter is.
"""

from __future__ import annotations

from desktop_app.core.describe import describe_condition, describe_source
from desktop_app.core.exports.playwright_script.source import (
    _INDENT,
    _call,
    _comment,
    _escape,
    _literal,
    _Nested,
    _number,
    _quote_for,
)
from desktop_app.core.exports.playwright_script.steps import (
    _local_name,
    _number_arg,
    _shown,
    _Steps,
)
from desktop_app.core.exports.playwright_script.values import _Scope, _Value
from desktop_app.core.models.target import LocatorStrategy
from desktop_app.core.models.workflow import (
    Condition,
    CsvRows,
    ElementHidden,
    ElementPresent,
    ElementVisible,
    ForEachStep,
    IfStep,
    ImageVisible,
    ListItems,
    PageItems,
    RepeatUntilStep,
    Step,
    TextPresent,
    TitleMatches,
    TryStep,
    UrlMatches,
    ValueCompare,
    WindowTitleMatches,
    branches,
    item_variables,
)

# What the package's other modules use; none of it is public API.
__all__ = ["_Blocks"]


class _Blocks(_Steps):
    """The parts of the script that write blocks (and the steps inside them)."""

    def _one(
        self,
        label: str,
        step: Step,
        scope: _Scope,
        taken: set[str],
        read: set[str] | None,
        ind: str,
    ) -> list[str]:
        if not branches(step):
            return self._step(label, step, scope, taken, read, ind)
        self.depth += 1
        try:
            match step:
                case IfStep():
                    return self._if(label, step, scope, taken, read, ind)
                case ForEachStep():
                    return self._for_each(label, step, scope, taken, read, ind)
                case RepeatUntilStep():
                    return self._repeat(label, step, scope, taken, read, ind)
                case TryStep():
                    return self._try(label, step, scope, taken, read, ind)
        finally:
            self.depth -= 1
        raise AssertionError(f"no script for a {step.kind} block")  # pragma: no cover

    def _body(
        self,
        steps: tuple[Step, ...],
        label: str,
        start: int,
        scope: _Scope,
        taken: set[str],
        read: set[str] | None,
        ind: str,
    ) -> list[str]:
        """*steps* inside block *label*, numbered from *start* (``label.start``) on."""
        lines: list[str] = []
        for n, step in enumerate(steps, start=start):
            if lines:
                lines.append("")
            lines += self._one(f"{label}.{n}", step, scope, taken, read, ind)
        return lines or [f"{ind}pass"]

    def _opening(self, label: str, step: Step, scope: _Scope, ind: str, timeout: str) -> list[str]:
        """The ``with Step(...)`` line a block's own check is made in."""
        args = ["page", _number_arg(label), scope.expr(step.title, titles=True), timeout]
        return _call(ind, "with Step", args, " as step:")

    def _timeout(self, step: Step) -> str:
        if step.timeout_s == self.timeout_s:
            self.uses_timeout = True
            return "timeout"
        return f"args.timeout or {float(step.timeout_s)!r}"

    # ── the kinds of block ────────────────────────────────────────────────────────────────

    def _if(
        self,
        label: str,
        step: IfStep,
        scope: _Scope,
        taken: set[str],
        read: set[str] | None,
        ind: str,
    ) -> list[str]:
        inner = ind + _INDENT
        said = describe_condition(step.condition)
        lines = _comment(f"{label}. {_shown(step.title)}: if {said}", ind)
        lines += _comment(f"(the condition may take {_number(step.timeout_s)} s to hold)", ind)
        # The wait is the if's own: --timeout is how long a step may wait for its element.
        lines += self._opening(label, step, scope, ind, repr(float(step.timeout_s)))
        lines += self._holds(step.condition, scope, inner, "holds = ")
        lines.append(f"{ind}if holds:")
        lines += self._body(step.steps, label, 1, scope, taken, read, inner)
        if step.otherwise:
            lines.append(f"{ind}else:")
            start = 1 + len(step.steps)
            lines += self._body(step.otherwise, label, start, scope, taken, read, inner)
        return lines

    def _for_each(
        self,
        label: str,
        step: ForEachStep,
        scope: _Scope,
        taken: set[str],
        read: set[str] | None,
        ind: str,
    ) -> list[str]:
        inner = ind + _INDENT
        names = item_variables(step)
        locals_ = [_local_name(name, taken) for name in names]
        every = _local_name(f"{step.item}s", taken)
        over = describe_source(step.over)
        lines = _comment(
            f"{label}. {_shown(step.title)}: for each {{{step.item}}} in {over}, "
            f"at most {step.limit}",
            ind,
        )
        if any(s.irreversible for s in _inside(step)):
            lines += _comment(
                "Irreversible steps inside: the script asks nothing before them.", ind
            )
        lines += self._opening(label, step, scope, ind, self._timeout(step))
        lines += self._items(step, scope, inner, every)
        self.helpers.add("at_most")
        self._need(typing="Any")
        lines.append(f"{inner}at_most(step, {every}, {step.limit})")
        if len(locals_) == 1:
            lines.append(f"{ind}for {locals_[0]} in {every}:")
        else:
            lines.append(f"{ind}for {', '.join(locals_)} in {every}:")
        before = {name: scope.values.get(name) for name in names}
        for name, local in zip(names, locals_, strict=True):
            scope.values[name] = _Value(local)
        try:
            lines += self._body(step.steps, label, 1, scope, taken, read, inner)
        finally:
            for name, value in before.items():
                if value is None:
                    scope.values.pop(name, None)
                else:
                    scope.values[name] = value
        return lines

    def _items(self, step: ForEachStep, scope: _Scope, ind: str, every: str) -> list[str]:
        """``every = …``: the loop's items, read once before the first."""
        match step.over:
            case ListItems(value=value):
                self.helpers.add("lines")
                return _call(ind, f"{every} = lines", [scope.expr(value)])
            case CsvRows(path=path, column=column, fields=fields):
                self.helpers.add("csv_rows")
                self._need("csv", "os")
                args = ["step", scope.expr(path), scope.expr(column)]
                if fields:
                    args.append(_tuple([_literal(header) for header in fields.values()]))
                lines = _call(ind, f"{every} = csv_rows", args)
                return lines if fields else [*lines, *_single(every, ind)]
            case PageItems(css=css, contains=contains, key=key, fields=fields):
                self.helpers.add("page_items")
                page_args: list[str | _Nested] = ["page", "step", _literal(css)]
                if contains is not None:
                    page_args.append(f"contains={scope.expr(contains)}")
                if key is not None:
                    page_args.append(f"key={_literal(key)}")
                if fields:
                    page_args.append(f"fields={_tuple([_literal(c) for c in fields.values()])}")
                lines = _call(ind, f"{every} = await page_items", page_args)
                return lines if fields else [*lines, *_single(every, ind)]

    def _repeat(
        self,
        label: str,
        step: RepeatUntilStep,
        scope: _Scope,
        taken: set[str],
        read: set[str] | None,
        ind: str,
    ) -> list[str]:
        inner, deeper = ind + _INDENT, ind + _INDENT * 2
        rounds = _local_name("rounds", taken)
        said = describe_condition(step.condition)
        lines = _comment(
            f"{label}. {_shown(step.title)}: repeat until {said} (looked at before each "
            f"round), at most {step.max_rounds} rounds",
            ind,
        )
        lines.append(f"{ind}{rounds} = 0")
        lines.append(f"{ind}while True:")
        lines += self._opening(label, step, scope, inner, self._timeout(step))
        lines += self._holds(step.condition, scope, deeper, "if ", ":")
        lines.append(f"{deeper}{_INDENT}break")
        lines.append(f"{deeper}if {rounds} == {step.max_rounds}:")
        message = f"{said} still did not hold after {step.max_rounds} rounds"
        quote = _quote_for(message)
        text = f"f{quote}{{step}}: {_escape(message, quote, braces=True)}{quote}"
        lines += _call(deeper + _INDENT, "raise StepFailed", [text])
        lines.append(f"{inner}{rounds} += 1")
        lines += self._body(step.steps, label, 1, scope, taken, read, inner)
        return lines

    def _try(
        self,
        label: str,
        step: TryStep,
        scope: _Scope,
        taken: set[str],
        read: set[str] | None,
        ind: str,
    ) -> list[str]:
        inner = ind + _INDENT
        lines = _comment(
            f"{label}. {_shown(step.title)}: if a step fails, do what follows except (never "
            "once an irreversible step was done)",
            ind,
        )
        self.helpers.add("announce")
        lines += _call(ind, "announce", [_number_arg(label), scope.expr(step.title, titles=True)])
        flag = None
        if any(s.irreversible for s in _walk(step.steps)):
            flag = _local_name("irreversible_done", taken)
            lines.append(f"{ind}{flag} = False")
            self.try_flags.append(flag)
        lines.append(f"{ind}try:")
        try:
            lines += self._body(step.steps, label, 1, scope, taken, read, inner)
        finally:
            if flag is not None:
                self.try_flags.remove(flag)
        lines.append(f"{ind}except StepFailed as failure:")
        if flag is not None:
            lines += [f"{inner}if {flag}:", f"{inner}{_INDENT}raise"]
        start = 1 + len(step.steps)
        lines += _call(
            inner,
            "print",
            [f'f"      {{failure}}; falling back to step {label}.{start}"', "file=sys.stderr"],
        )
        lines += self._body(step.otherwise, label, start, scope, taken, read, inner)
        return lines

    # ── conditions ────────────────────────────────────────────────────────────────────────

    def _check(self, expectation: Condition, scope: _Scope, ind: str) -> list[str]:
        """A check that fails the step: those a step's expectations can be, and the two only a
        condition can be (an element merely present, a value compared)."""
        if not isinstance(expectation, ElementPresent | ValueCompare):
            return super()._check(expectation, scope, ind)
        message = f"expected {describe_condition(expectation)}; it was not so"
        quote = _quote_for(message)
        text = f"f{quote}{{step}}: {_escape(message, quote, braces=True)}{quote}"
        lines = self._holds(expectation, scope, ind, "if not ", ":")
        return [*lines, *_call(ind + _INDENT, "raise StepFailed", [text])]

    def _holds(
        self, condition: Condition, scope: _Scope, ind: str, head: str, tail: str = ""
    ) -> list[str]:
        """``<head>`` + whether *condition* holds + ``<tail>``, at *ind*, inside the block's
        ``with Step`` (its timeout is ``step.timeout_s``)."""
        match condition:
            case UrlMatches(pattern=pattern, match=match):
                self.helpers.update({"url_holds", "url_matches"})
                self._need("re", fnmatch="fnmatchcase")
                args = ["page", scope.expr(pattern), _literal(match), "step.timeout_s"]
                return _call(ind, f"{head}await url_holds", args, tail)
            case TitleMatches(text=text):
                self.helpers.add("title_holds")
                args = ["page", scope.expr(text), "step.timeout_s"]
                return _call(ind, f"{head}await title_holds", args, tail)
            case TextPresent(text=text):
                self.helpers.add("text_holds")
                args = ["page", scope.expr(text), "step.timeout_s"]
                return _call(ind, f"{head}await text_holds", args, tail)
            case (
                ElementVisible(target=target)
                | ElementHidden(target=target)
                | ElementPresent(target=target)
            ):
                usable = [
                    loc
                    for loc in target.locators
                    if loc.strategy is not LocatorStrategy.IMAGE_ANCHOR
                ]
                if not usable:
                    return self._cannot_decide("an image anchor is on the page", ind, head, tail)
                self.helpers.add("element_holds")
                state = {"visible": "visible", "hidden": "hidden"}.get(condition.kind, "attached")
                by = self._by(usable[0], scope)
                element_args: list[str | _Nested] = [
                    "page",
                    by,
                    _literal(state),
                    "step.timeout_s",
                ]
                return _call(ind, f"{head}await element_holds", element_args, tail)
            case ValueCompare(value=value, op=op, to=to):
                self.helpers.add("compare")
                self._need("re")
                compare_args = [scope.expr(value), _literal(op)]
                if op not in ("empty", "not_empty"):
                    compare_args.append(scope.expr(to))
                return _call(ind, f"{head}compare", compare_args, tail)
            case WindowTitleMatches(pattern=pattern):
                what = f"the window title matches {pattern}"
                return self._cannot_decide(what, ind, head, tail)
            case ImageVisible():
                return self._cannot_decide("a recorded image is visible", ind, head, tail)

    def _cannot_decide(self, what: str, ind: str, head: str, tail: str) -> list[str]:
        self.helpers.add("cannot_run")
        self._need(typing="NoReturn")
        why = f"it decides by whether {what}, which only Procedura's desktop backend can tell"
        return _call(ind, f"{head}cannot_run", ["step", _literal(why)], tail)


def _walk(steps: tuple[Step, ...]) -> list[Step]:
    out: list[Step] = []
    for step in steps:
        out.append(step)
        for _name, inner in branches(step):
            out += _walk(inner)
    return out


def _inside(block: Step) -> list[Step]:
    return [s for _name, inner in branches(block) for s in _walk(inner)]


def _tuple(items: list[str]) -> str:
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def _single(every: str, ind: str) -> list[str]:
    """The items as their keys alone (a loop with no fields goes over plain texts)."""
    return [f"{ind}{every} = [row[0] for row in {every}]"]
