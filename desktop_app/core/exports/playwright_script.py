"""A workflow as a standalone Python script on Playwright's async API (``--format playwright``).

The script is meant to be read, kept and edited by a person who never installs Procedura. It
needs Python 3.9+ and Playwright, nothing else, and is laid out like this:

* a docstring: the workflow's name, description, id and version, the command that runs it, and
  the steps a script cannot do;
* helpers: ``Step`` (a context manager per step: it prints ``6/10 Fill 'Full name' with …``,
  sets Playwright's default timeout to the step's, and turns any Playwright error inside it into
  ``StepFailed("step 6 'Fill …': <first line>")``), ``By`` + ``locate`` (a recorded locator and
  the Playwright call Procedura makes for it; ``test_id`` covers data-testid, data-test and
  data-qa), ``find`` (the ranked locators tried in order, again until the step's timeout; the
  first that finds exactly one visible, enabled element wins, else ``step 6 'Fill …': none of
  the 4 locators matched (role=textbox[name="Full name"]: no element; …)``), and the checks
  and converters the workflow needs (only those);
* ``build_parser``: one ``--option`` per parameter (``full_name`` → ``--full-name``), typed as
  ``procedura run`` types values (number, date, email, choice, bool; a bad value is argparse's
  exit 2 with the reason), defaults from the workflow, ``required`` where there is none. A
  secret gets only ``--NAME-env VAR``, naming an environment variable; without it the script
  asks at a hidden ``getpass`` prompt (or stops with exit 2 when standard input is no
  terminal). A secret never has a default, is never written into the script, cannot be given
  on the command line (``allow_abbrev=False``, so ``--password`` is not ``--password-env``)
  and is masked in failure messages. Then ``--base-url`` (URLs on the recorded origin move to
  it, as ``procedura run --base-url`` moves them), ``--headless``, ``--browser PATH`` (a
  Chromium-family executable; default Playwright's own) and ``--timeout SECONDS`` (every
  step's; default each step's recorded timeout);
* ``run(page, args)``: the steps in order, each a ``# N. title`` comment (plus ``# Irreversible``
  where it applies: a note only, the script asks nothing) and a ``with Step(...)`` block with
  the action and then the step's expectations as checks (``expect_url``, ``expect_title``,
  ``expect_text``, ``expect_element``). Values are the parameters (``args.full_name``) and the
  variables earlier ``extract`` steps stored (locals, also printed ``name=value`` on standard
  output), put into Python f-strings; step titles are shown with the values of the run, secrets
  left as ``{placeholder}``;
* ``main``: exit 0 when every step is done, 1 when one failed (the message names the step), 2
  for bad arguments.

Steps a script cannot do end the run at that step with an error naming it: ``call`` (the other
workflow is not in this export: export and run it too, or paste its steps in), ``agent`` (needs
Procedura's LLM) and the desktop steps; so do window-title and image checks. Unlike
``procedura run`` the script does not heal (no fingerprint matching, remembered repairs, LLM or
person), clears no overlays, tries no second element when a check fails and does not keep the
run to the workflow's domains.

The generated code passes ``ruff check`` and is laid out as ``ruff format`` lays it out (line
length 88). :func:`render_playwright` needs nothing but the standard library and never imports
Playwright.
"""

from __future__ import annotations

import keyword
import re
import textwrap
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from desktop_app.core.models.target import Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import (
    DEFAULT_TIMEOUT_S,
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
from desktop_app.core.replay.render import recorded_origin
from desktop_app.core.templating import pieces, placeholders

__all__ = ["render_playwright"]

_WIDTH: Final = 88
_INDENT: Final = "    "

# ── the fixed parts of every script ─────────────────────────────────────────────────────────

_STEP_HELPERS: Final = '''
class StepFailed(Exception):
    """A step could not be done; the message names the step and says why."""


@final
class Step:
    """The step being done: announced when it starts, named in any error it ends with."""

    def __init__(
        self,
        page: Page,
        number: int,
        title: str,
        timeout_s: float,
        *,
        optional: bool = False,
    ) -> None:
        self.page = page
        self.number = number
        self.title = title
        self.timeout_s = timeout_s
        self.optional = optional

    def __str__(self) -> str:
        return f"step {self.number} '{self.title}'"

    @property
    def milliseconds(self) -> float:
        """The step's timeout, as Playwright counts it."""
        return self.timeout_s * 1000

    def __enter__(self) -> Step:
        print(f"{self.number:>2}/{STEP_COUNT} {self.title}", file=sys.stderr)
        self.page.set_default_timeout(self.milliseconds)
        return self

    def __exit__(
        self, kind: object, error: BaseException | None, traceback: object
    ) -> bool:
        if isinstance(error, PlaywrightError):
            failure = StepFailed(f"{self}: {first_line(error)}")
        elif isinstance(error, StepFailed):
            failure = error
        else:
            return False  # done, or stopped by something else
        if self.optional:
            print(f"      skipped, the step is optional: {failure}", file=sys.stderr)
            return True
        if failure is error:
            return False
        raise failure from None


def first_line(error: BaseException) -> str:
    """The first line of an error message (Playwright's go on with a call log)."""
    lines = [line for line in str(error).strip().splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


# ── finding elements ─────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class By:
    """One recorded way to find an element.

    strategy is role, label, placeholder, text, test_id, css or xpath; value is the role, the
    text or the selector; name is a role's accessible name; nth picks one of several matches
    (0 is the first); within is (item selector, text): look only inside the one repeated item
    (a table row, a list item) that shows an element whose whole text is that text.
    """

    strategy: str
    value: str
    name: str | None = None
    exact: bool = True
    nth: int | None = None
    within: tuple[str, str] | None = None

    def __str__(self) -> str:
        if self.strategy == "role" and self.name is not None:
            text = f'role={self.value}[name="{self.name}"]'
        else:
            text = f"{self.strategy}={self.value}"
        if self.within is not None:
            text = f'{self.within[0]} with "{self.within[1]}" >> {text}'
        return text if self.nth is None else f"{text} >> nth={self.nth}"


def locate(page: Page, by: By) -> Locator:
    """The Playwright locator for *by*, built as Procedura builds it when it replays."""
    scope: Page | Locator = page
    if by.within is not None:
        item, text = by.within
        scope = page.locator(item).filter(has=page.get_by_text(text, exact=True))
    if by.strategy == "role":
        found = scope.get_by_role(by.value, name=by.name, exact=by.exact)
    elif by.strategy == "label":
        found = scope.get_by_label(by.value, exact=by.exact)
    elif by.strategy == "placeholder":
        found = scope.get_by_placeholder(by.value, exact=by.exact)
    elif by.strategy == "text":
        found = scope.get_by_text(by.value, exact=by.exact)
    elif by.strategy == "test_id":
        selectors = [f"[{name}={json.dumps(by.value)}]" for name in TEST_ID_ATTRIBUTES]
        found = scope.locator(", ".join(selectors))
    elif by.strategy == "css":
        found = scope.locator(by.value)
    elif by.strategy == "xpath":
        found = scope.locator(f"xpath={by.value}")
    else:
        raise ValueError(f"unknown locator strategy {by.strategy!r}")
    return found if by.nth is None else found.nth(by.nth)


async def find(page: Page, step: Step, *candidates: By) -> Locator:
    """The element the first of *candidates* finds: exactly one, visible and enabled.

    The candidates are the step's recorded locators, best first. They are tried in turn, and
    again until the step's timeout, so a page that is still loading has time to show them.
    """
    deadline = time.monotonic() + step.timeout_s
    while True:
        misses = []
        for rank, by in enumerate(candidates, start=1):
            element = locate(page, by)
            miss = await why_unusable(element)
            if miss is None:
                # A page still loading may have just shown what a better locator finds.
                for better in candidates[: rank - 1]:
                    if await why_unusable(locate(page, better)) is None:
                        return locate(page, better)
                if rank > 1:  # the page has changed since the recording
                    print(f"      found by locator {rank}: {by}", file=sys.stderr)
                return element
            misses.append(f"{by}: {miss}")
        if time.monotonic() >= deadline:
            tried = "; ".join(misses)
            if len(candidates) == 1:
                raise StepFailed(f"{step}: its only locator did not match ({tried})")
            raise StepFailed(
                f"{step}: none of the {len(candidates)} locators matched ({tried})"
            )
        await asyncio.sleep(0.1)


async def why_unusable(element: Locator) -> str | None:
    """Why *element* cannot be acted on now, or None when it can."""
    try:
        count = await element.count()
        if count != 1:
            return "no element" if count == 0 else f"{count} elements"
        if not await element.is_visible():
            return "hidden"
        if not await element.is_enabled(timeout=1000):
            return "disabled"
    except PlaywrightError as error:  # the page changed, or the selector is invalid
        return first_line(error)
    return None
'''

_EXPECT_URL: Final = '''
async def expect_url(page: Page, step: Step, pattern: str, match: str = "glob") -> None:
    """Wait until the page address matches *pattern*: a glob (* matches anything), a
    regular expression (match="regex") or the exact address (match="exact")."""
    deadline = time.monotonic() + step.timeout_s
    while not url_matches(page.url, pattern, match):
        if time.monotonic() >= deadline:
            raise StepFailed(
                f"{step}: expected the page address to match {pattern}; it is {page.url}"
            )
        await asyncio.sleep(0.05)


def url_matches(url: str, pattern: str, match: str) -> bool:
    """Whether *url* matches *pattern* the *match* way (glob, regex or exact)."""
    if match == "exact":
        return url == pattern
    if match == "regex":
        return re.search(pattern, url) is not None
    return fnmatchcase(url, pattern)
'''

#: The title of the exported script's last step (as the run record names it).
_SUCCESS_TITLE: Final = "Check that the task was done"

_EXPECT_TITLE: Final = '''
async def expect_title(page: Page, step: Step, text: str) -> None:
    """Wait until the page title contains *text*."""
    deadline = time.monotonic() + step.timeout_s
    title = ""
    while True:
        try:
            title = await page.title()
        except PlaywrightError:  # navigating
            title = ""
        if text in title:
            return
        if time.monotonic() >= deadline:
            raise StepFailed(
                f"{step}: expected the page title to contain {text!r}; it is {title!r}"
            )
        await asyncio.sleep(0.05)
'''

_EXPECT_TEXT: Final = '''
async def expect_text(page: Page, step: Step, text: str) -> None:
    """Wait until *text* shows on the page."""
    try:
        await page.get_by_text(text).first.wait_for(timeout=step.milliseconds)
    except PlaywrightError:
        raise StepFailed(
            f"{step}: expected the page to show the text {text!r}; it did not"
        ) from None
'''

_ANSWER_DIALOG: Final = '''
def answer_next_dialog(page: Page, *, accept: bool) -> None:
    """Answer the browser's next question (a confirm, a prompt) as the person did: OK or Cancel."""

    async def answer(dialog: Dialog) -> None:
        await (dialog.accept() if accept else dialog.dismiss())

    page.once("dialog", answer)
'''

_EXPECT_ELEMENT: Final = '''
async def expect_element(page: Page, step: Step, by: By, visible: bool = True) -> None:
    """Wait until the element *by* finds is visible (or, with visible=False, gone)."""
    state = "visible" if visible else "hidden"
    try:
        await locate(page, by).first.wait_for(state=state, timeout=step.milliseconds)
    except PlaywrightError:
        what = "visible" if visible else "gone"
        raise StepFailed(f"{step}: expected {by} to be {what}; it was not") from None
'''

_MATCHED: Final = '''
def matched(step: Step, pattern: str, text: str) -> str:
    """The part of *text* that *pattern* finds (its first group, if it has one), stripped."""
    found = re.search(pattern, text)
    if found is None:
        raise StepFailed(f"{step}: {text[:80]!r} does not match {pattern!r}")
    return (found.group(1) if found.groups() else found.group(0) or "").strip()
'''

_CANNOT_RUN: Final = '''
def cannot_run(step: Step, why: str) -> NoReturn:
    """Stop at a step this script cannot do."""
    raise StepFailed(f"{step}: {why}")
'''

_CONVERTERS: Final[dict[ParameterType, str]] = {
    ParameterType.NUMBER: '''
def number(text: str) -> str:
    """A number: digits, an optional sign and '.' decimal point (12, -3, 12.50 → 12.5)."""
    if not text.strip():
        return ""
    found = re.fullmatch(r"([+-]?)(\\d*)(?:(\\.)(\\d*))?", text.strip(), re.ASCII)
    if found is None or not (found.group(2) or found.group(4)):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number; write digits with an optional '.' decimal point "
            "and no thousands separators, e.g. 1234.5"
        )
    sign, whole, point, fraction = found.groups()
    minus = "-" if sign == "-" else ""
    if not point:
        return str(int(minus + (whole or "0")))
    return f"{minus}{int(whole or '0')}.{(fraction or '').rstrip('0') or '0'}"
''',
    ParameterType.DATE: '''
def iso_date(text: str) -> str:
    """A date written YYYY-MM-DD."""
    if not text.strip():
        return ""
    if re.fullmatch(r"\\d{4}-\\d{2}-\\d{2}", text.strip(), re.ASCII) is None:
        dotted = re.fullmatch(r"(\\d{1,2})\\.(\\d{1,2})\\.(\\d{4})", text.strip(), re.ASCII)
        example = "2026-11-30"
        if dotted is not None:
            day, month, year = dotted.groups()
            example = f"{year}-{month:0>2}-{day:0>2}"
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a date; write it as YYYY-MM-DD, e.g. {example}"
        )
    try:
        return datetime.date.fromisoformat(text.strip()).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a real date") from None
''',
    ParameterType.EMAIL: '''
def email(text: str) -> str:
    """An email address: local@domain.tld, without spaces."""
    if not text.strip():
        return ""
    if re.fullmatch(r"[^@\\s]+@[^@\\s.]+(?:\\.[^@\\s.]+)+", text.strip()) is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not an email address")
    return text.strip()
''',
    ParameterType.CHOICE: '''
def one_of(*choices: str) -> Callable[[str], str]:
    """A converter to one of *choices*, case ignored; the value is the choice's spelling."""

    def convert(text: str) -> str:
        if not text.strip():
            return ""
        for choice in choices:
            if choice.strip().casefold() == text.strip().casefold():
                return choice
        listed = ", ".join(choices)
        raise argparse.ArgumentTypeError(f"{text!r} is not one of: {listed}")

    return convert
''',
    ParameterType.BOOL: '''
def true_or_false(text: str) -> bool:
    """true or false (also yes/no, on/off, 1/0), case ignored."""
    key = text.strip().lower()
    if key in ("true", "yes", "on", "1"):
        return True
    if key in ("false", "no", "off", "0"):
        return False
    raise argparse.ArgumentTypeError(
        f"{text!r} is not true or false; use true/false, yes/no, on/off or 1/0"
    )
''',
}

_RUNNER_CONVERTERS: Final = '''
def http_origin(text: str) -> str:
    """The origin (scheme://host:port) of an http(s) URL."""
    parts = urlsplit(text.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise argparse.ArgumentTypeError(f"{text!r} is not an http(s) URL")
    return f"{parts.scheme}://{parts.netloc}"
'''

_SECONDS: Final = '''
def seconds(text: str) -> float:
    """A number of seconds, more than 0."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0")
    return value
'''

_READ_SECRET: Final = '''
def read_secret(
    parser: argparse.ArgumentParser,
    name: str,
    option: str,
    variable: str | None,
    *,
    required: bool,
) -> str:
    """The secret *name*: from the environment *variable* if one is named, else typed in at a
    hidden prompt. It is never taken from the command line."""
    if variable is not None:
        value = os.environ.get(variable, "")
        if not value and required:
            parser.error(f"{option} {variable}: the variable is not set, or empty")
        return value
    if not sys.stdin.isatty():
        parser.error(f"{name!r} is a secret: give {option} VAR, a variable holding it")
    value = getpass.getpass(f"{name} (not shown): ")
    if not value and required:
        parser.error(f"{name!r} is required")
    return value


def hide(text: str, secrets: list[str]) -> str:
    """*text* with every secret value masked."""
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, "••••••")
    return text
'''

_EXECUTE: Final = '''
async def execute(args: argparse.Namespace) -> None:
    """Start the browser, do the steps, and close the browser whatever happens."""
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            headless=args.headless, executable_path=args.browser
        )
        try:
            page = await browser.new_page()
            await run(page, args)
        finally:
            await browser.close()
'''

_MAIN: Final = '''
def main(argv: list[str] | None = None) -> int:
    """Run the workflow: exit status 0 done, 1 a step failed, 2 bad arguments."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        asyncio.run(execute(args))
    except StepFailed as failure:
        print(f"failed: {failure}", file=sys.stderr)
        return 1
    except PlaywrightError as error:  # the browser did not start, or went away
        print(f"failed: {first_line(error)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
        return 130
    print(f"done: {STEP_COUNT} steps", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

_MAIN_WITH_SECRETS: Final = '''
def main(argv: list[str] | None = None) -> int:
    """Run the workflow: exit status 0 done, 1 a step failed, 2 bad arguments."""
    parser = build_parser()
    args = parser.parse_args(argv)
    secrets = read_secrets(parser, args)
    try:
        asyncio.run(execute(args))
    except StepFailed as failure:
        print(f"failed: {hide(str(failure), secrets)}", file=sys.stderr)
        return 1
    except PlaywrightError as error:  # the browser did not start, or went away
        print(f"failed: {hide(first_line(error), secrets)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
        return 130
    print(f"done: {STEP_COUNT} steps", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

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
    }
)

#: The runner's own options and where argparse keeps them.
_RUNNER_OPTIONS: Final = ("--help", "-h", "--base-url", "--headless", "--browser", "--timeout")
_RUNNER_DESTS: Final = ("help", "base_url", "headless", "browser", "timeout")


# ── Python source pieces ────────────────────────────────────────────────────────────────────


def _quote_for(text: str) -> str:
    """The quote ruff format would pick: double, unless that takes more escapes."""
    return "'" if text.count('"') > text.count("'") else '"'


def _escape(text: str, quote: str, *, braces: bool = False) -> str:
    out = []
    for char in text:
        if char == "\\":
            out.append("\\\\")
        elif char == quote:
            out.append("\\" + quote)
        elif char == "\n":
            out.append("\\n")
        elif char == "\r":
            out.append("\\r")
        elif char == "\t":
            out.append("\\t")
        elif not char.isprintable():
            code = ord(char)
            out.append(
                f"\\x{code:02x}"
                if code < 0x100
                else f"\\u{code:04x}"
                if code < 0x10000
                else f"\\U{code:08x}"
            )
        elif braces and char in "{}":
            out.append(char * 2)
        else:
            out.append(char)
    return "".join(out)


def _literal(text: str) -> str:
    """*text* as a Python string literal."""
    quote = _quote_for(text)
    return quote + _escape(text, quote) + quote


def _regex_literal(pattern: str) -> str:
    """A regular expression as a raw string where it can be one."""
    quote = _quote_for(pattern)
    trailing = len(pattern) - len(pattern.rstrip("\\"))
    if (
        "\\" in pattern
        and quote not in pattern
        and trailing % 2 == 0
        and all(c.isprintable() for c in pattern)
    ):
        return f"r{quote}{pattern}{quote}"
    return _literal(pattern)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _comment(text: str, indent: str) -> list[str]:
    """*text* on one or more ``#`` lines (whitespace, newlines included, collapsed)."""
    words = " ".join(text.split())
    return textwrap.wrap(
        words,
        width=_WIDTH,
        initial_indent=f"{indent}# ",
        subsequent_indent=f"{indent}# ",
        break_long_words=False,
        break_on_hyphens=False,
    ) or [f"{indent}#"]


def _docstring_text(text: str) -> str:
    """*text* safe inside a triple-quoted docstring."""
    cleaned = "".join(c if c.isprintable() or c == "\n" else " " for c in text)
    return cleaned.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


@dataclass(frozen=True, slots=True)
class _Nested:
    """A call inside a call's arguments, laid out on its own lines when it has to be."""

    head: str
    args: Sequence[str | _Nested]

    def __str__(self) -> str:
        return f"{self.head}({', '.join(str(a) for a in self.args)})"


def _call(
    indent: str,
    head: str,
    args: Sequence[str | _Nested],
    tail: str = "",
    *,
    explode: bool = False,
) -> list[str]:
    """``head(args)tail`` laid out as ruff format lays it out: on one line if it fits, else the
    arguments on one indented line, else one argument a line with a trailing comma."""
    joined = ", ".join(str(a) for a in args)
    one = f"{indent}{head}({joined}){tail}"
    if not explode and len(one) <= _WIDTH:
        return [one]
    inner = indent + _INDENT
    if not explode and args and len(inner + joined) <= _WIDTH:
        return [f"{indent}{head}(", inner + joined, f"{indent}){tail}"]
    lines = [f"{indent}{head}("]
    for arg in args:
        if isinstance(arg, _Nested):
            lines += _call(inner, arg.head, arg.args, ",")
        else:
            lines.append(f"{inner}{arg},")
    lines.append(f"{indent}){tail}")
    return lines


def _slug(name: str) -> str:
    """The default file name ``procedura export`` gives the script, without ``.py``."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:60] or "workflow"


# ── values ──────────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class _Value:
    """What a ``{placeholder}`` stands for in the script: a Python expression and its kind."""

    expr: str
    is_bool: bool = False
    secret: bool = False


@dataclass(frozen=True, slots=True)
class _Option:
    """A parameter's command-line option."""

    parameter: Parameter
    flag: str
    dest: str


class _Scope:
    """Placeholders → expressions, as they stand at one step (extract steps add variables)."""

    def __init__(self, origin: str | None) -> None:
        self.origin = origin
        self.values: dict[str, _Value] = {}
        self.uses_origin = False
        self.read: set[str] = set()  # the placeholders rendered as expressions

    def expr(self, template: str, *, titles: bool = False) -> str:
        """*template* as a Python expression: a literal, a name, or an f-string.

        A template on the recorded origin starts with ``origin`` (the ``--base-url``). For a
        title (``titles``), secrets stay ``{placeholders}`` and the origin is not moved.
        """
        parts: list[tuple[str, str | None]] = []  # (literal text, or None with an expression)
        rest = template
        if not titles and self.origin is not None and template.startswith(self.origin):
            self.uses_origin = True
            parts.append(("origin", None))
            rest = template[len(self.origin) :]
        for text, is_name in pieces(rest):
            value = self.values.get(text) if is_name else None
            if not is_name:
                parts.append((text, ""))
            elif value is None or (titles and value.secret):
                parts.append(("{" + text + "}", ""))
            else:
                self.read.add(text)
                expr = f"str({value.expr}).lower()" if value.is_bool else value.expr
                parts.append((expr, None))
        if all(kind is not None for _, kind in parts):
            return _literal("".join(text for text, _ in parts))
        if len(parts) == 1:
            return parts[0][0]
        literal = "".join(text for text, kind in parts if kind is not None)
        quote = _quote_for(literal)
        body = "".join(
            _escape(text, quote, braces=True) if kind is not None else "{" + text + "}"
            for text, kind in parts
        )
        return f"f{quote}{body}{quote}"


# ── the script ──────────────────────────────────────────────────────────────────────────────


def render_playwright(workflow: Workflow) -> str:
    """*workflow* as a standalone Playwright script (Python source; see the module docstring)."""
    return _Script(workflow).render()


class _Script:
    def __init__(self, workflow: Workflow) -> None:
        self.workflow = workflow
        self.origin = recorded_origin(workflow)
        self.options = _options(workflow.parameters, has_origin=self.origin is not None)
        self.secrets = [o for o in self.options if o.parameter.type is ParameterType.SECRET]
        self.imports: set[str] = {"argparse", "asyncio", "json", "sys", "time"}
        self.from_imports: dict[str, set[str]] = {
            "dataclasses": {"dataclass"},
            "typing": {"final"},
            "playwright.async_api": {"Locator", "Page", "async_playwright"},
        }
        if self.secrets:
            self.imports.update({"getpass", "os"})
        self.helpers: set[str] = set()
        counts = Counter(step.timeout_s for step in workflow.steps)
        self.timeout_s = (
            max(counts.items(), key=lambda kv: (kv[1], kv[0] == DEFAULT_TIMEOUT_S))[0]
            if counts
            else DEFAULT_TIMEOUT_S
        )
        self.cannot: list[tuple[int, str]] = []
        self.read: set[str] = set()
        self.uses_timeout = False

    def _need(self, *modules: str, **from_imports: str) -> None:
        self.imports.update(modules)
        for module, names in from_imports.items():
            self.from_imports.setdefault(module.replace("__", "."), set()).update(names.split())

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
                + (' for most)"' if len(set(s.timeout_s for s in w.steps)) > 1 else ')"'),
            ]
        )
        for option_args in runner:
            lines += _call("    ", "browser.add_argument", option_args)
        lines.append("    return parser")
        return "\n".join(lines)

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
        for number, step in enumerate(steps, start=1):
            if body:
                body.append("")
            body += self._step(number, step, scope, taken, read)
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
        if len(head) > 2 and body:
            head.append("")
        return "\n".join(head + body)

    def _step(
        self, number: int, step: Step, scope: _Scope, taken: set[str], read: set[str] | None
    ) -> list[str]:
        ind, inner = _INDENT, _INDENT * 2
        shown = "".join("{" + text + "}" if name else text for text, name in pieces(step.title))
        lines = _comment(f"{number}. {shown}", ind)
        if step.irreversible:
            lines += _comment("Irreversible: this step cannot be undone.", ind)
        if step.timeout_s == self.timeout_s:
            timeout = "timeout"
            self.uses_timeout = True
        else:
            timeout = f"args.timeout or {float(step.timeout_s)!r}"
        args = ["page", str(number), scope.expr(step.title, titles=True), timeout]
        if step.optional:
            args.append("optional=True")
        pre: list[str] = []
        body: list[str] = []
        stored: tuple[str, str] | None = None  # (placeholder name, local name)
        cannot = _cannot(step)
        if cannot is not None:
            self.helpers.add("cannot_run")
            self._need(typing="NoReturn")
            self.cannot.append((number, cannot[0]))
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
                body += action
            if isinstance(step, WaitForStep | AssertStep):
                body += self._check(step.condition, scope, inner)
            for expectation in step.expectations:
                body += self._check(expectation, scope, inner)
        if stored is not None and step.optional:
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
            item = f"({_literal(locator.within.css)}, {scope.expr(locator.within.text)})"
            args.append(f"within={item}")
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

    def _check(self, expectation: Expectation, scope: _Scope, ind: str) -> list[str]:
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


# ── helpers of the generator ────────────────────────────────────────────────────────────────


def _isort_key(name: str) -> tuple[int, str]:
    """isort's order of imported names: constants, then classes, then the rest."""
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name


def _section(title: str) -> str:
    return f"# ── {title} " + "─" * max(3, _WIDTH - 6 - len(title))


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
    }.get(param.type)


def _default_text(default: object) -> str:
    if isinstance(default, bool):
        return "true" if default else "false"
    if isinstance(default, float):
        return _number(default) if default.is_integer() else repr(default)
    return str(default)


def _options(parameters: Iterable[Parameter], *, has_origin: bool) -> list[_Option]:
    """Each parameter's option and argparse destination, clear of the runner's and each
    other's (a clash gets ``--param-`` in front)."""
    flags = set(_RUNNER_OPTIONS)
    dests = set(_RUNNER_DESTS)
    if not has_origin:
        flags.discard("--base-url")
        dests.discard("base_url")
    result = []
    for param in parameters:
        flag = "--" + param.name.replace("_", "-")
        dest = param.name + "_" if keyword.iskeyword(param.name) else param.name
        own = {flag, f"{flag}-env"} if param.type is ParameterType.SECRET else {flag}
        mine = {dest, f"{dest}_env"} if param.type is ParameterType.SECRET else {dest}
        if own & flags or mine & dests:
            flag = "--param-" + param.name.replace("_", "-")
            dest = "param_" + param.name
            own = {flag, f"{flag}-env"}
            mine = {dest, f"{dest}_env"}
        flags |= own
        dests |= mine
        result.append(_Option(param, flag, dest))
    return result


def _local_name(variable: str, taken: set[str]) -> str:
    """A local variable name for an extracted *variable*, clear of run()'s own names."""
    name = variable
    while name in taken or keyword.iskeyword(name):
        name += "_"
    taken.add(name)
    return name


def _cannot(step: Step) -> tuple[str, str, str] | None:
    """For a step a script cannot do: (a short reason, a comment, the run-time message)."""
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
        case DesktopClickStep() | DesktopTypeStep() | HotkeyStep():
            return (
                "a desktop step",
                "A desktop step: it acts on a window outside the browser, which only "
                "Procedura's desktop backend can do.",
                "a desktop step needs Procedura's desktop backend",
            )
    return None
