"""The whole script, assembled: its docstring, imports and constants, the fixed helpers it
needs, its command line, ``run()`` and the start."""

from __future__ import annotations

import re
import textwrap

from desktop_app.core.exports.playwright_script.blocks import _Blocks
from desktop_app.core.exports.playwright_script.command_line import _CommandLine, _metavar
from desktop_app.core.exports.playwright_script.fixed_parts import (
    _ANSWER_DIALOG,
    _BLOCK_HELPERS,
    _CANNOT_RUN,
    _EXECUTE,
    _EXPECT_ELEMENT,
    _EXPECT_TEXT,
    _EXPECT_TITLE,
    _EXPECT_URL,
    _MAIN,
    _MAIN_WITH_SECRETS,
    _MATCHED,
    _READ_SECRET,
    _STEP_HELPERS,
    _URL_MATCHES,
)
from desktop_app.core.exports.playwright_script.source import (
    _WIDTH,
    _docstring_text,
    _literal,
    _slug,
)
from desktop_app.core.models.workflow import ParameterType, Workflow

__all__ = ["render_playwright"]


def render_playwright(workflow: Workflow) -> str:
    """*workflow* as a standalone Playwright script (Python source; see the package's docstring)."""
    return _Script(workflow).render()


class _Script(_CommandLine, _Blocks):
    """The script for one workflow; :meth:`render` writes it."""

    # ── assembly ────────────────────────────────────────────────────────────────────────────

    def render(self) -> str:
        run = self._run()  # first: these decide which helpers and imports are needed
        converters = self._converters()
        parser = self._parser()
        sections = [
            self._header() + "\n\n" + self._imports() + "\n\n" + self._constants(),
            _STEP_HELPERS.strip("\n"),
        ]
        checks = [
            _EXPECT_URL if "expect_url" in self.helpers else "",
            _URL_MATCHES if self.helpers & {"expect_url", "url_matches"} else "",
            _EXPECT_TITLE if "expect_title" in self.helpers else "",
            _EXPECT_TEXT if "expect_text" in self.helpers else "",
            _EXPECT_ELEMENT if "expect_element" in self.helpers else "",
            _MATCHED if "matched" in self.helpers else "",
            _ANSWER_DIALOG if "answer_next_dialog" in self.helpers else "",
            _CANNOT_RUN if "cannot_run" in self.helpers else "",
        ]
        if any(checks):
            sections.append(_section("checks"))
            sections.extend(c.strip("\n") for c in checks if c)
        blocks = [code for name, code in _BLOCK_HELPERS.items() if name in self.helpers]
        if blocks:
            sections.append(_section("blocks: conditions and items"))
            sections.extend(code.strip("\n") for code in blocks)
        sections.append(_section("the command line"))
        sections.extend(converters)
        sections.append(parser)
        if self.secrets:
            sections.append(_READ_SECRET.strip("\n"))
            sections.append(self._read_secrets())
        sections.append(_section("the steps"))
        sections.append(run)
        sections.append(_section("start"))
        sections.append(_EXECUTE.strip("\n"))
        sections.append((_MAIN_WITH_SECRETS if self.secrets else _MAIN).strip("\n"))
        return "\n\n\n".join(sections) + "\n"

    def _header(self) -> str:
        w = self.workflow
        name = _docstring_text(" ".join(w.name.split()))
        lines = [
            *textwrap.wrap(
                f'"""{name} (version {w.version}): a Procedura workflow as a Playwright script.',
                width=_WIDTH,
                break_long_words=False,
            ),
        ]
        if w.description.strip():
            for paragraph in re.split(r"\n\s*\n", w.description.strip()):
                lines.append("")
                lines.extend(
                    textwrap.wrap(
                        _docstring_text(" ".join(paragraph.split())),
                        width=_WIDTH,
                        break_long_words=False,
                        break_on_hyphens=False,
                    )
                )
        command = [f"python {_slug(w.name)}.py"]
        for option in self.options:
            param = option.parameter
            if param.type is ParameterType.SECRET:
                command.append(f"{option.flag}-env {param.name.upper()}")
            elif param.required and param.default is None:
                command.append(f"{option.flag} {_metavar(param) or option.dest.upper()}")
        command.append("--headless")
        lines += [
            "",
            "Run it (Python 3.9 or later; Playwright is all it needs):",
            "",
            "    pip install playwright && playwright install chromium",
            *textwrap.wrap(
                " ".join(command),
                width=_WIDTH - 4,
                initial_indent="    ",
                subsequent_indent="        ",
                break_long_words=False,
                break_on_hyphens=False,
            ),
            "",
        ]
        about = "Every value is an option (see --help)"
        if self.secrets:
            about += (
                "; a secret comes from the environment variable its --NAME-env option names,"
                " else from a hidden prompt, never from the command line"
            )
        lines += textwrap.wrap(
            about + ". Exit status: 0 done, 1 a step failed (the message names it), "
            "2 bad arguments.",
            width=_WIDTH,
        )
        if self.cannot:
            listed = "; ".join(f"step {n} ({why})" for n, why in self.cannot)
            lines.append("")
            lines += textwrap.wrap(
                _docstring_text(
                    f"A script cannot do everything Procedura does. These steps stop the "
                    f"run with an error when reached: {listed}. See the comments there."
                ),
                width=_WIDTH,
                break_long_words=False,
            )
        lines += [
            "",
            *textwrap.wrap(
                f"Generated by Procedura from workflow {w.id}, version {w.version}. It does "
                "not heal: where the site changed so that none of a step's locators finds its "
                "element, the step fails; procedura run would heal it.",
                width=_WIDTH,
            ),
            '"""',
        ]
        return "\n".join(lines)

    def _imports(self) -> str:
        lines = ["from __future__ import annotations", ""]
        lines += [f"import {m}" for m in sorted(self.imports)]
        std = {k: v for k, v in self.from_imports.items() if not k.startswith("playwright")}
        for module in sorted(std):
            lines.append(f"from {module} import {', '.join(sorted(std[module], key=_isort_key))}")
        lines.append("")
        lines.append("from playwright.async_api import Error as PlaywrightError")
        names = sorted(self.from_imports["playwright.async_api"], key=_isort_key)
        lines.append(f"from playwright.async_api import {', '.join(names)}")
        return "\n".join(lines)

    def _constants(self) -> str:
        lines = []
        if self.origin is not None:
            lines.append(f"RECORDED_ORIGIN = {_literal(self.origin)}")
        lines.append(f"STEP_COUNT = {len(self.workflow.steps)}")
        lines.append('TEST_ID_ATTRIBUTES = ("data-testid", "data-test", "data-qa")')
        return "\n".join(lines)


def _isort_key(name: str) -> tuple[int, str]:
    """isort's order of imported names: constants, then classes, then the rest."""
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name


def _section(title: str) -> str:
    return f"# ── {title} " + "─" * max(3, _WIDTH - 6 - len(title))
