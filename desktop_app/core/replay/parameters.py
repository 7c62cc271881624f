"""Binding a run's parameters: raw strings checked, normalised and typed; secrets kept apart.

Decisions a user will notice:

* A blank value (empty or only spaces) counts as not given: the default is used, else a required
  parameter is missing (an error) and an optional one is empty (``""``). Secrets are the
  exception: they are never stripped, so only ``""`` is blank.
* number: ASCII digits with an optional sign and ``.`` decimal point (``12``, ``-3``, ``12.50``,
  ``.5``). No thousands separators, no decimal comma (``1,5`` is ambiguous across locales), no
  exponent, no ``nan``/``inf``. Whole numbers become ``int``; with a ``.`` they become ``float``
  and render with trailing zeros dropped (``12.50`` → ``12.5``, ``12.0`` stays ``12.0``).
* date: ISO ``YYYY-MM-DD`` only; ``30.11.2026`` is refused with the ISO spelling suggested.
* email: ``local@domain.tld`` without spaces; surrounding spaces are dropped.
* choice: matched ignoring case and surrounding spaces; the value is the choice's own spelling.
* bool: true/false, yes/no, on/off, 1/0 in any case; rendered ``"true"``/``"false"``.
* text: kept exactly as given.
* A secret is never accepted among the given values; it comes from the keyring, an environment
  variable or a hidden prompt, and no error message ever shows a secret's value.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from types import MappingProxyType
from typing import Final

from desktop_app.core.errors import ProceduraError
from desktop_app.core.models.common import JsonScalar
from desktop_app.core.models.run import MASK
from desktop_app.core.models.workflow import Parameter, ParameterType, Workflow
from desktop_app.core.values import value_text

__all__ = [
    "BoundParameters",
    "ParameterError",
    "bind_parameters",
    "missing_secrets",
    "parse_assignments",
    "renders_as_typed",
]

_NO_SECRETS: Final[Mapping[str, str]] = MappingProxyType({})
_SECRET_SOURCES: Final = (
    "it is read from the keyring, an environment variable (--secret-env {name}=VAR) "
    "or a hidden prompt"
)
_NUMBER: Final = re.compile(r"([+-]?)(\d*)(?:(\.)(\d*))?", re.ASCII)
_ISO_DATE: Final = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)
_DOTTED_DATE: Final = re.compile(r"(\d{1,2})\.(\d{1,2})\.(\d{4})", re.ASCII)
_EMAIL: Final = re.compile(r"[^@\s]+@[^@\s.]+(?:\.[^@\s.]+)+")
_TRUE: Final = frozenset({"true", "yes", "on", "1"})
_FALSE: Final = frozenset({"false", "no", "off", "0"})
_HINTS: Final = {
    ParameterType.NUMBER: "NUMBER",
    ParameterType.DATE: "YYYY-MM-DD",
    ParameterType.BOOL: "true|false",
    ParameterType.LIST: '\'["first", "second"]\'',
}


class ParameterError(ProceduraError):
    """A parameter value is missing, unknown, malformed, or a secret given the wrong way.

    Args:
        message: what is wrong, in one line, naming the parameter.
        name: the parameter concerned (a form can highlight its field), when there is one.
    """

    def __init__(self, message: str, *, name: str | None = None) -> None:
        self.name = name
        super().__init__(message)


class _Invalid(ValueError):
    """Internal: why a raw value does not fit its type (completed into a ParameterError)."""


@dataclass(frozen=True, slots=True)
class BoundParameters:
    """The values one run uses, checked and normalised.

    Attributes:
        values: name → the string a ``{placeholder}`` renders to.
        typed: name → the value as JSON (bool, int/float for numbers, str otherwise; None for
            an empty non-text value).
        secrets: the names whose values must never be shown or stored.
    """

    values: Mapping[str, str]
    typed: Mapping[str, JsonScalar]
    secrets: frozenset[str] = field(default_factory=frozenset)

    def secret_values(self) -> tuple[str, ...]:
        """The non-empty secret values, longest first, for masking text that may contain them."""
        found = {self.values[n] for n in self.secrets if self.values.get(n)}
        return tuple(sorted(found, key=lambda v: (-len(v), v)))

    def masked(self) -> dict[str, JsonScalar]:
        """The typed values with every secret replaced by :data:`MASK`, fit for a run record."""
        return {k: (MASK if k in self.secrets else v) for k, v in self.typed.items()}

    def with_variable(self, name: str, value: str) -> BoundParameters:
        """These values plus a variable an earlier step extracted (a secret's name stays secret)."""
        return BoundParameters(
            values=MappingProxyType({**self.values, name: value}),
            typed=MappingProxyType({**self.typed, name: value}),
            secrets=self.secrets,
        )

    def without(self, names: Iterable[str]) -> BoundParameters:
        """These values less the variables *names* (a loop's item, once the round is over)."""
        gone = set(names)
        if not gone:
            return self
        return BoundParameters(
            values=MappingProxyType({k: v for k, v in self.values.items() if k not in gone}),
            typed=MappingProxyType({k: v for k, v in self.typed.items() if k not in gone}),
            secrets=self.secrets,
        )


# ── public functions ────────────────────────────────────────────────────────────────────────


def parse_assignments(items: Iterable[str]) -> dict[str, str]:
    """``["full_name=Ann Lee", "plan=pro"]`` (from ``--param``) as a name → raw value mapping.

    Each item is split at its first ``=``; the name loses surrounding spaces, the value keeps
    everything.

    Raises:
        ParameterError: an item has no ``=`` or no name, or a name is given twice.
    """
    result: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep:
            raise ParameterError(f"--param {item!r} has no '='; write it as --param NAME=VALUE")
        if not name:
            raise ParameterError("a --param has no name before '='; write it as --param NAME=VALUE")
        if name in result:
            raise ParameterError(f"parameter {name!r} is given twice with --param", name=name)
        result[name] = value
    return result


def missing_secrets(workflow: Workflow, secrets: Mapping[str, str]) -> list[Parameter]:
    """The secret parameters of *workflow* that *secrets* gives no value for, in order.

    Optional secrets are included too (asking is harmless; an empty answer is accepted for
    them); ``Parameter.required`` says whether an empty answer will do.
    """
    return [p for p in _secret_parameters(workflow) if not secrets.get(p.name)]


def bind_parameters(
    workflow: Workflow,
    given: Mapping[str, str],
    *,
    secrets: Mapping[str, str] = _NO_SECRETS,
) -> BoundParameters:
    """Check and normalise the values for one run of *workflow*.

    Args:
        workflow: the version to run.
        given: raw strings for the non-secret parameters (command line, form or CSV row).
        secrets: values for the secret parameters (keyring, environment, hidden prompt).

    Raises:
        ParameterError: an unknown name, a secret among *given*, a missing required value, or
            a value that does not fit its type. The message names the parameter.
    """
    _check_names(workflow, given, secrets)
    bound = {
        p.name: _bind_one(p, given.get(p.name))
        for p in workflow.parameters
        if p.type is not ParameterType.SECRET
    }
    for param in _secret_parameters(workflow):  # after the typed values: those errors come first
        value = _bind_secret(param, secrets)
        bound[param.name] = (value, value)
    order = [p.name for p in workflow.parameters]
    return BoundParameters(
        values=MappingProxyType({n: bound[n][0] for n in order}),
        typed=MappingProxyType({n: bound[n][1] for n in order}),
        secrets=frozenset(p.name for p in _secret_parameters(workflow)),
    )


# ── names ───────────────────────────────────────────────────────────────────────────────────


def _secret_parameters(workflow: Workflow) -> list[Parameter]:
    return [p for p in workflow.parameters if p.type is ParameterType.SECRET]


def _check_names(workflow: Workflow, given: Mapping[str, str], secrets: Mapping[str, str]) -> None:
    """Refuse unknown names and secrets given among the plain values."""
    secret_names = [p.name for p in _secret_parameters(workflow)]
    plain_names = [p.name for p in workflow.parameters if p.name not in secret_names]
    for name in given:
        if name in secret_names:
            raise ParameterError(
                f"parameter {name!r} is a secret; it is not accepted on the command line — "
                + _SECRET_SOURCES.format(name=name),
                name=name,
            )
        if name not in plain_names:
            raise ParameterError(_unknown(name, plain_names, "parameter"), name=name)
    for name in secrets:
        if name not in secret_names:
            raise ParameterError(_unknown(name, secret_names, "secret parameter"), name=name)


def _unknown(name: str, known: list[str], what: str) -> str:
    """``unknown parameter 'x'; did you mean 'y'? parameters: y, z``."""
    if not known:
        return f"unknown {what} {name!r}; this workflow has no {what}s"
    close = difflib.get_close_matches(name.lower(), known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ";"
    return f"unknown {what} {name!r}{hint} {what}s: {', '.join(known)}"


# ── values ──────────────────────────────────────────────────────────────────────────────────


def _bind_secret(param: Parameter, secrets: Mapping[str, str]) -> str:
    """The secret's value as given (never stripped); "" for an optional one without a value."""
    value = secrets.get(param.name, "")
    if value == "" and param.required:
        raise ParameterError(
            f"missing secret parameter {param.name!r}{_about(param)}; "
            + _SECRET_SOURCES.format(name=param.name),
            name=param.name,
        )
    return value


def _bind_one(param: Parameter, raw: str | None) -> tuple[str, JsonScalar]:
    """The rendered and typed value of a non-secret parameter."""
    if raw is not None and raw.strip():
        return _convert(param, raw, lambda shown: f"parameter {param.name!r}: {shown}")
    if param.default is not None:
        return _convert(
            param,
            value_text(param.default),
            lambda shown: (
                f"parameter {param.name!r}: the workflow's default {shown}; "
                "fix the workflow or give a value"
            ),
        )
    if param.required:
        raise ParameterError(
            f"missing parameter {param.name!r}{_about(param)}; give it with "
            f"--param {param.name}={_HINTS.get(param.type, 'VALUE')}",
            name=param.name,
        )
    return "", ("" if param.type is ParameterType.TEXT else None)


def renders_as_typed(kind: ParameterType, raw: str) -> bool:
    """Whether *raw*, given to a parameter of type *kind*, is accepted and typed as written."""
    try:
        rendered, _ = _CONVERTERS[kind](Parameter(name="value", type=kind, choices=()), raw)
    except _Invalid:
        return False
    return rendered == raw


def _about(param: Parameter) -> str:
    return f" ({param.description})" if param.description else ""


def _convert(param: Parameter, raw: str, where: Callable[[str], str]) -> tuple[str, JsonScalar]:
    """*raw* checked against the parameter's type; ``where`` words the error's start."""
    try:
        return _CONVERTERS[param.type](param, raw)
    except _Invalid as exc:
        raise ParameterError(where(f"{_show(raw)} {exc}"), name=param.name) from None


def _show(raw: str) -> str:
    """*raw* quoted for a message, shortened when long."""
    return repr(raw if len(raw) <= 60 else raw[:57] + "...")


def _text(param: Parameter, raw: str) -> tuple[str, JsonScalar]:
    return raw, raw


def _number(param: Parameter, raw: str) -> tuple[str, JsonScalar]:
    match = _NUMBER.fullmatch(raw.strip())
    if match is None or not (match.group(2) or match.group(4)):
        raise _Invalid(
            "is not a number; write digits with an optional '.' decimal point and no "
            "thousands separators, e.g. 1234.5"
        )
    sign, whole, point, fraction = match.groups()
    whole = str(int(whole or "0"))
    minus = "-" if sign == "-" else ""
    if not point:
        number = int(minus + whole)
        return str(number), number
    text = f"{minus}{whole}.{(fraction or '').rstrip('0') or '0'}"
    return text, float(text)


def _date(param: Parameter, raw: str) -> tuple[str, JsonScalar]:
    text = raw.strip()
    if _ISO_DATE.fullmatch(text) is None:
        dotted = _DOTTED_DATE.fullmatch(text)
        if dotted is not None:
            day, month, year = dotted.groups()
            raise _Invalid(
                f"is not an ISO date; write it as YYYY-MM-DD: {year}-{month:0>2}-{day:0>2}"
            )
        raise _Invalid("is not a date; write it as YYYY-MM-DD, e.g. 2026-11-30")
    try:
        value = date.fromisoformat(text).isoformat()
    except ValueError:
        raise _Invalid("is not a date in the calendar") from None
    return value, value


def _email(param: Parameter, raw: str) -> tuple[str, JsonScalar]:
    text = raw.strip()
    if _EMAIL.fullmatch(text) is None:
        raise _Invalid("is not an email address")
    return text, text


def _choice(param: Parameter, raw: str) -> tuple[str, JsonScalar]:
    text = raw.strip()
    if text in param.choices:
        return text, text
    key = text.casefold()
    found = [c for c in param.choices if c.strip().casefold() == key]
    if len(found) == 1:
        return found[0], found[0]
    listed = ", ".join(param.choices)
    if found:
        raise _Invalid(
            f"matches more than one choice when case is ignored; choose one of: {listed}"
        )
    folded = {c.strip().casefold(): c for c in param.choices}
    close = difflib.get_close_matches(key, list(folded), n=1)
    hint = f"; did you mean {folded[close[0]]!r}?" if close else ""
    raise _Invalid(f"is not one of the choices: {listed}{hint}")


def _bool(param: Parameter, raw: str) -> tuple[str, JsonScalar]:
    key = raw.strip().lower()
    if key in _TRUE:
        return "true", True
    if key in _FALSE:
        return "false", False
    raise _Invalid("is not true or false; use true/false, yes/no, on/off or 1/0")


def _list(param: Parameter, raw: str) -> tuple[str, JsonScalar]:
    """One item per line, or a JSON array of texts (what a command line can give)."""
    text = raw.strip()
    items: list[str]
    if text.startswith("["):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            raise _Invalid('is not a JSON array; give one item per line or ["a", "b"]') from None
        if not isinstance(parsed, list) or not all(
            isinstance(i, str | int | float) for i in parsed
        ):
            raise _Invalid("is not a list of texts")
        items = [str(i) for i in parsed]
    else:
        items = text.splitlines()
    lines = [i.strip() for i in items if i.strip()]
    return "\n".join(lines), "\n".join(lines)


_CONVERTERS: Final[dict[ParameterType, Callable[[Parameter, str], tuple[str, JsonScalar]]]] = {
    ParameterType.TEXT: _text,
    ParameterType.LIST: _list,
    ParameterType.NUMBER: _number,
    ParameterType.DATE: _date,
    ParameterType.EMAIL: _email,
    ParameterType.CHOICE: _choice,
    ParameterType.BOOL: _bool,
}
