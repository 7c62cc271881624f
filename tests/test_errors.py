"""The exception tree drawn in core/errors.py is the tree the code defines: every class under
ProceduraError, wherever it lives, is drawn under its parent, and nothing drawn is missing.
A person's decisions (skip the step, stop the run) are not errors."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from desktop_app.core import errors
from desktop_app.core.errors import ProceduraError
from desktop_app.core.replay.ladder import PersonDecision, RunAborted, StepSkipped

PACKAGE = Path(errors.__file__).resolve().parents[1]


def _defined() -> dict[str, str]:
    """Every class under ProceduraError in the package, with its parent's name."""
    bases: dict[str, str] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.bases:
                base = node.bases[0]
                name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", "")
                bases[node.name] = name
    tree: dict[str, str] = {}
    grew = True
    while grew:
        grew = False
        for name, parent in bases.items():
            if name not in tree and (parent == "ProceduraError" or parent in tree):
                tree[name] = parent
                grew = True
    return tree


def _drawn() -> dict[str, str]:
    """The classes the drawing shows, with the parent it draws each under."""
    doc = errors.__doc__ or ""
    lines = doc[doc.index("ProceduraError") :].split("\n\n")[0].splitlines()
    drawn: dict[str, str] = {}
    stack: list[tuple[int, str]] = [(-1, "ProceduraError")]
    for line in lines[1:]:
        found = re.search(r"[├└]── (\w+)", line)
        assert found, line
        column = found.start(1)
        while stack[-1][0] >= column:
            stack.pop()
        drawn[found.group(1)] = stack[-1][1]
        stack.append((column, found.group(1)))
    return drawn


def test_every_error_class_is_drawn_under_its_parent() -> None:
    defined, drawn = _defined(), _drawn()
    assert len(defined) > 30
    assert drawn == defined


def test_a_persons_decision_is_not_an_error() -> None:
    for decision in (StepSkipped, RunAborted):
        assert issubclass(decision, PersonDecision)
        assert not issubclass(decision, ProceduraError)
