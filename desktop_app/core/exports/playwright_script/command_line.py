"""The script's command line: the converters its values need, ``build_parser`` and
``read_secrets``."""

from __future__ import annotations

from desktop_app.core.exports.playwright_script.base import _ScriptBase
from desktop_app.core.exports.playwright_script.fixed_parts import (
    _CONVERTERS,
    _LIST_ITEMS,
    _RUNNER_CONVERTERS,
    _SECONDS,
)
from desktop_app.core.exports.playwright_script.source import _call, _literal, _Nested, _number
from desktop_app.core.exports.playwright_script.values import _Option
from desktop_app.core.models.workflow import IfStep, Parameter, ParameterType, walk

# What the package's other modules use; none of it is public API.
__all__ = ["_CommandLine", "_metavar"]


class _CommandLine(_ScriptBase):
    """The parts of the script that make its command line."""

    # ── the command line ────────────────────────────────────────────────────────────────────

    def _converters(self) -> list[str]:
        used = {o.parameter.type for o in self.options}
        out = [_CONVERTERS[t].strip("\n") for t in _CONVERTERS if t in used]
        if ParameterType.DATE in used:
            self._need("datetime")
        if used & {ParameterType.NUMBER, ParameterType.DATE, ParameterType.EMAIL}:
            self._need("re")
        if ParameterType.CHOICE in used:
            self._need(collections__abc="Callable")
        if ParameterType.LIST in used:
            out.append(_LIST_ITEMS.strip("\n"))
        if self.origin is not None:
            self._need(urllib__parse="urlsplit")
            out.append(_RUNNER_CONVERTERS.strip("\n"))
        out.append(_SECONDS.strip("\n"))
        return out

    def _parser(self) -> str:
        w = self.workflow
        description = f"{' '.join(w.name.split())} (a Procedura workflow, version {w.version})."
        lines = [
            "def build_parser() -> argparse.ArgumentParser:",
            '    """The command line: the workflow\'s values, then how to run the browser."""',
            *_call(
                "    ",
                "parser = argparse.ArgumentParser",
                [f"description={_literal(_percent(description))}", "allow_abbrev=False"],
            ),
        ]
        if self.options:
            lines.append('    values = parser.add_argument_group("values")')
            for option in self.options:
                lines += _call("    ", "values.add_argument", self._option_args(option))
        lines.append('    browser = parser.add_argument_group("browser")')
        runner: list[list[str]] = []
        if self.origin is not None:
            help_text = (
                f"run against another origin (default: {self.origin}, where it was recorded)"
            )
            runner.append(
                [
                    '"--base-url"',
                    "type=http_origin",
                    "default=RECORDED_ORIGIN",
                    'metavar="URL"',
                    f"help={_literal(_percent(help_text))}",
                ]
            )
        runner.append(['"--headless"', 'action="store_true"', 'help="no browser window"'])
        runner.append(
            [
                '"--browser"',
                'metavar="PATH"',
                'help="a Chromium-family browser to use (default: Playwright\'s Chromium)"',
            ]
        )
        timeout = _number(self.timeout_s)
        runner.append(
            [
                '"--timeout"',
                "type=seconds",
                'metavar="SECONDS"',
                f'help="how long each step may wait (default: its recorded timeout, {timeout} s'
                + (' for most)"' if len(self._step_timeouts()) > 1 else ')"'),
            ]
        )
        for option_args in runner:
            lines += _call("    ", "browser.add_argument", option_args)
        lines.append("    return parser")
        return "\n".join(lines)

    def _step_timeouts(self) -> set[float]:
        """The timeouts of the steps that wait (an if's is how long its condition may take)."""
        return {s.timeout_s for s in walk(self.workflow.steps) if not isinstance(s, IfStep)}

    def _option_args(self, option: _Option) -> list[str | _Nested]:
        param = option.parameter
        args: list[str | _Nested] = []
        if param.type is ParameterType.SECRET:
            help_text = (
                f"the environment variable holding {param.name}, a secret; "
                "without this option it is asked for at a hidden prompt"
            )
            args.append(_literal(f"{option.flag}-env"))
            if option.dest != option.flag[2:].replace("-", "_"):
                args.append(f"dest={_literal(f'{option.dest}_env')}")
            return [*args, 'metavar="VAR"', f"help={_literal(_percent(help_text))}"]
        about = " ".join(param.description.split()) or f"the value of {param.name}"
        args.append(_literal(option.flag))
        extras = []
        if option.dest != option.flag[2:].replace("-", "_"):
            args.append(f"dest={_literal(option.dest)}")
        converter: str | _Nested | None = {
            ParameterType.NUMBER: "number",
            ParameterType.DATE: "iso_date",
            ParameterType.EMAIL: "email",
            ParameterType.BOOL: "true_or_false",
        }.get(param.type)
        if param.type is ParameterType.CHOICE:
            converter = _Nested("type=one_of", [_literal(c) for c in param.choices])
            extras.append(f"one of: {', '.join(param.choices)}")
        if converter is not None:
            args.append(converter if isinstance(converter, _Nested) else f"type={converter}")
        if param.type is ParameterType.LIST:
            # Every value after the option is an item, and each line of one; the option
            # given again adds more. The value is kept one item a line, as Procedura keeps it.
            args += ["action=ListItems", 'nargs="+"']
            extras.append("one item per value, or per line; give the option again for more")
        if param.default is not None:
            shown = _default_text(param.default)
            if param.type is ParameterType.BOOL:
                args.append(f"default={bool(param.default)}")
            else:
                args.append(f"default={_literal(shown)}")
            extras.append(f"default: {shown or 'empty'}")
        elif param.required:
            args.append("required=True")
        elif param.type is ParameterType.BOOL:
            args.append("default=False")
            extras.append("default: false")
        else:
            args.append('default=""')
        if extras:
            about += f" ({'; '.join(extras)})"
        metavar = _metavar(param)
        if metavar is not None:
            args.append(f"metavar={_literal(metavar)}")
        args.append(f"help={_literal(_percent(about))}")
        return args

    def _read_secrets(self) -> str:
        lines = [
            *_call(
                "",
                "def read_secrets",
                ["parser: argparse.ArgumentParser", "args: argparse.Namespace"],
                " -> list[str]:",
            ),
            '    """Read the secrets into *args*; their values, to keep them out of messages."""',
        ]
        for option in self.secrets:
            param = option.parameter
            lines += _call(
                "    ",
                f"args.{option.dest} = read_secret",
                [
                    "parser",
                    _literal(param.name),
                    _literal(f"{option.flag}-env"),
                    f"args.{option.dest}_env",
                    f"required={param.required}",
                ],
            )
        values = ", ".join(f"args.{o.dest}" for o in self.secrets)
        if len(self.secrets) == 1:
            values += ","
        lines.append(f"    return [value for value in ({values}) if value]")
        return "\n".join(lines)


def _percent(text: str) -> str:
    """*text* safe as argparse help (which formats ``%``)."""
    return text.replace("%", "%%")


def _metavar(param: Parameter) -> str | None:
    return {
        ParameterType.NUMBER: "NUMBER",
        ParameterType.DATE: "YYYY-MM-DD",
        ParameterType.EMAIL: "EMAIL",
        ParameterType.BOOL: "true|false",
        ParameterType.CHOICE: "CHOICE",
        ParameterType.LIST: "ITEM",
    }.get(param.type)


def _default_text(default: object) -> str:
    if isinstance(default, bool):
        return "true" if default else "false"
    if isinstance(default, float):
        return _number(default) if default.is_integer() else repr(default)
    return str(default)
