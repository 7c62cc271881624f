"""The exception tree, whole: the classes defined here and, where they live, the others.

    ProceduraError
    ├── DocumentError            a document (JSON file, stored row) is malformed or invalid
    │   ├── BatchFileError           a batch's CSV file (core/batch/table.py)
    │   ├── BundleError              a bundle that cannot be read (core/exports/bundle/)
    │   │   └── BundleConflictError      it holds what the library has otherwise
    │   └── NotTheSameTaskError      recordings of different tasks (core/induction/multi.py)
    ├── NotFoundError            no workflow / trajectory / run with that id or name
    │   └── AmbiguousReferenceError  a prefix or name matches more than one
    ├── TransitionError          a status change the review process does not allow
    ├── StoreError               a store cannot be used
    │   ├── StoreLockedError         another process already writes the stores
    │   ├── NotAllowedError          the team's server refused: the member's role may not
    │   ├── ConflictError            someone else saved a version since this edit began
    │   └── BundleWriteError         a bundle could not be written (core/exports/bundle/)
    ├── BrowserError             no browser, a browser that died, or one we could not attach to
    ├── ConfirmationRequired     a destructive operation was asked for without confirmation
    ├── EditError                an edit the workflow does not allow (core/editing/)
    ├── InductionCancelled       an induction stopped before it saved (core/induction/cancel.py)
    ├── LLMError                 the LLM could not answer usefully (core/llm.py)
    │   ├── LLMUnavailable           not configured, or not reachable
    │   ├── LLMRateLimited           asked to wait
    │   ├── LLMRefused               it refused
    │   ├── LLMInvalidOutput         its answer is not of the asked shape
    │   └── LLMBudgetExceeded        the calls or tokens allowed are spent
    ├── ParameterError           a value that does not fit its parameter (core/replay/parameters.py)
    │   └── UnboundIntentError       an intent short of some values (core/replay/intent.py)
    ├── RebaseError              --base-url for a workflow that opens no web page (render.py)
    ├── ActionFailed             the browser could not do the action (core/replay/browser.py)
    ├── BrowserGone              the browser closed or crashed during a run (browser.py)
    ├── NavigationRefused        a page outside the workflow's domains (browser.py)
    ├── StepFailed               a step that could not be done (core/replay/ladder.py)
    ├── DesktopUnavailable       no desktop to act on (core/replay/desktop.py)
    ├── SettingsError            a setting that cannot be used (settings.py)
    ├── ResourceMissingError     a file the package ships is missing (resources.py)
    ├── HandoffError             the desktop app broke off a handed-over run (handoff.py)
    └── DemoSiteError            the demo app cannot serve (demo_site/variants.py)

A person's decisions are not errors: ``PersonDecision`` (core/replay/ladder.py), with
``StepSkipped`` and ``RunAborted`` under it, unwinds a run to its engine, which records it.
tests/test_errors.py checks that every class under ProceduraError is drawn here.

Every error carries a message meant for a person: one line that says what was wrong, where,
and, when there is one, what to do next. The command line prints ``str(error)`` as it is.
"""

from __future__ import annotations

__all__ = [
    "AmbiguousReferenceError",
    "BrowserError",
    "ConfirmationRequired",
    "ConflictError",
    "DocumentError",
    "NotAllowedError",
    "NotFoundError",
    "ProceduraError",
    "StoreError",
    "StoreLockedError",
    "TransitionError",
]


class ProceduraError(Exception):
    """Base of every error Procedura raises on purpose."""


class DocumentError(ProceduraError):
    """A document is malformed, of the wrong schema, or inconsistent.

    Args:
        message: what is wrong, in one line.
        path: where in the document, as a JSON path such as ``steps[3].value`` ("" for the root).
        source: the file or record it came from, when known.
    """

    def __init__(self, message: str, *, path: str = "", source: str = "") -> None:
        self.message = message
        self.path = path
        self.source = source
        super().__init__(self._render())

    def _render(self) -> str:
        where = ""
        if self.source:
            where = self.source
        if self.path:
            where = f"{where} at {self.path}" if where else f"at {self.path}"
        return f"{where}: {self.message}" if where else self.message


class NotFoundError(ProceduraError):
    """Nothing matches the given id, prefix or name."""


class AmbiguousReferenceError(NotFoundError):
    """A prefix or name matches more than one item."""


class TransitionError(ProceduraError):
    """The review process does not allow this status change."""


class StoreError(ProceduraError):
    """A store cannot be opened or used."""


class StoreLockedError(StoreError):
    """Another process already writes the stores."""


class NotAllowedError(StoreError):
    """The team's server refused: the member's role may not do this (team mode)."""


class ConflictError(StoreError):
    """Someone else saved a version of the workflow since this edit began (team mode: two
    analysts at once); nothing was saved and the edit is kept.

    Args:
        message: what happened, in one line.
        latest: the version now latest.
    """

    def __init__(self, message: str, *, latest: int) -> None:
        super().__init__(message)
        self.latest = latest


class BrowserError(ProceduraError):
    """No usable browser: none installed, it died, or attaching to it failed."""


class ConfirmationRequired(ProceduraError):
    """A destructive operation needs the caller's explicit confirmation."""
