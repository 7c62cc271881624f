"""Columns to parameters: matching them by name, and what is wrong with a mapping or -p values."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from desktop_app.core.models.workflow import Parameter, ParameterType, Workflow
from desktop_app.core.replay.parameters import ParameterError, bind_parameters

__all__ = ["MappingIssue", "default_mapping"]

_NAME_NOISE: Final = re.compile(r"[\s_\-]+")
_STAND_IN: Final = "-"


def _name_key(name: str) -> str:
    return _NAME_NOISE.sub("", name).casefold()


def default_mapping(workflow: Workflow, columns: Iterable[str]) -> dict[str, str | None]:
    """Each column's parameter: the same name, else the same ignoring case, spaces, ``_``
    and ``-`` (``Full name`` → ``full_name``); None for a column that names no parameter.

    Secret parameters are matched too, so that such a column is refused by name (see
    :func:`plan_batch`), not silently ignored.
    """
    exact = {p.name: p.name for p in workflow.parameters}
    loose = {_name_key(p.name): p.name for p in workflow.parameters}
    return {c: exact.get(c) or loose.get(_name_key(c)) for c in columns}


@dataclass(frozen=True, slots=True)
class MappingIssue:
    """Something about the columns or the values given for every row.

    ``blocking`` issues keep the batch from running; the others are for information.
    """

    message: str
    column: str | None = None
    blocking: bool = True

    def __str__(self) -> str:
        return self.message


def _mapping_issues(
    workflow: Workflow,
    columns: Sequence[str],
    mapping: Mapping[str, str | None],
    defaults: Mapping[str, str],
    explicit: frozenset[str],
) -> list[MappingIssue]:
    issues: list[MappingIssue] = []
    by_param: dict[str, list[str]] = {}
    for column in columns:
        name = mapping[column]
        if name is None:
            continue
        param = workflow.parameter(name)
        if param is None:
            issues.append(
                MappingIssue(
                    f"column {column!r} is mapped to {name!r}, which is not a parameter of "
                    f"{workflow.name!r}",
                    column,
                )
            )
        elif param.type is ParameterType.SECRET:
            issues.append(
                MappingIssue(
                    f"column {column!r} would give the secret parameter {name!r}; secrets are "
                    "never read from a file: delete the column, and give the secret with "
                    f"--secret-env {name}=VARIABLE, the keyring or the prompt",
                    column,
                )
            )
        else:
            by_param.setdefault(name, []).append(column)
    for name, given_by in by_param.items():
        if len(given_by) > 1:
            listed = ", ".join(repr(c) for c in given_by)
            issues.append(
                MappingIssue(f"columns {listed} all give parameter {name!r}; keep one", given_by[1])
            )
    mapped = {n for n in mapping.values() if n}
    open_params = {
        _name_key(p.name): p.name
        for p in workflow.parameters
        if p.type is not ParameterType.SECRET and p.name not in mapped and p.name not in defaults
    }
    for column in columns:
        if mapping[column] is not None:
            continue
        close = difflib.get_close_matches(_name_key(column), list(open_params), n=1, cutoff=0.75)
        if close and column not in explicit:
            issues.append(
                MappingIssue(
                    f"column {column!r} is not a parameter; did you mean "
                    f"{open_params[close[0]]!r}? Rename the column",
                    column,
                )
            )
        else:
            issues.append(
                MappingIssue(
                    f"column {column!r} is not a parameter of {workflow.name!r}; it is ignored",
                    column,
                    blocking=False,
                )
            )
    for param in workflow.parameters:
        if (
            param.type is not ParameterType.SECRET
            and param.required
            and param.default is None
            and param.name not in mapped
            and param.name not in defaults
        ):
            issues.append(
                MappingIssue(
                    f"parameter {param.name!r} needs a value and no column gives it; add a "
                    f"column named {param.name} (or give -p {param.name}=VALUE for every row)"
                )
            )
    return issues


def _default_issues(workflow: Workflow, defaults: Mapping[str, str]) -> list[MappingIssue]:
    """Check the values given for every row, once (not once per row)."""
    issues: list[MappingIssue] = []
    for name, value in defaults.items():
        param = workflow.parameter(name)
        if param is None or param.type is ParameterType.SECRET:
            try:
                bind_parameters(workflow, {name: value}, secrets=_stand_ins(workflow))
            except ParameterError as exc:
                issues.append(MappingIssue(str(exc)))
            continue
        problem = _value_problem(workflow, param, value)
        if problem:
            issues.append(MappingIssue(problem))
    return issues


def _value_problem(workflow: Workflow, param: Parameter, raw: str) -> str:
    """Why *raw* does not fit *param* ("" when it does)."""
    alone = workflow.model_copy(update={"parameters": (param,)})
    try:
        bind_parameters(alone, {param.name: raw})
    except ParameterError as exc:
        return str(exc)
    return ""


def _stand_ins(workflow: Workflow) -> dict[str, str]:
    return {p.name: _STAND_IN for p in workflow.parameters if p.type is ParameterType.SECRET}
