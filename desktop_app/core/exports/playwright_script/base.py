"""The script being generated: its workflow and options, and the imports and helpers it needs
so far (the parts that render it add to them)."""

from __future__ import annotations

from collections import Counter

from desktop_app.core.exports.playwright_script.values import _options
from desktop_app.core.models.workflow import (
    DEFAULT_TIMEOUT_S,
    IfStep,
    ParameterType,
    Workflow,
    walk,
)
from desktop_app.core.replay.render import recorded_origin

# What the package's other modules use; none of it is public API.
__all__ = ["_ScriptBase"]


class _ScriptBase:
    """What :class:`~.script._Script`'s parts share: the workflow, its options, what is needed."""

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
        # An if's timeout is how long its condition may take to hold, not a step's wait.
        counts = Counter(
            step.timeout_s for step in walk(workflow.steps) if not isinstance(step, IfStep)
        )
        self.timeout_s = (
            max(counts.items(), key=lambda kv: (kv[1], kv[0] == DEFAULT_TIMEOUT_S))[0]
            if counts
            else DEFAULT_TIMEOUT_S
        )
        self.cannot: list[tuple[str, str]] = []  # (step number, why it cannot be done)
        self.read: set[str] = set()
        self.uses_timeout = False
        # While run() is written: how deep in blocks, the flags of the tries around (set once
        # an irreversible step inside was done), and the variables a step inside a block sets
        # (given a value first, so a way not taken leaves them empty, not undefined).
        self.depth = 0
        self.try_flags: list[str] = []
        self.hoisted: dict[str, str] = {}

    def _need(self, *modules: str, **from_imports: str) -> None:
        self.imports.update(modules)
        for module, names in from_imports.items():
            self.from_imports.setdefault(module.replace("__", "."), set()).update(names.split())
