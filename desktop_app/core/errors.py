"""The core's exception tree.

    ProceduraError
    ├── DocumentError            a document (JSON file, stored row) is malformed or invalid
    ├── NotFoundError            no workflow / trajectory / run with that id or name
    │   └── AmbiguousReferenceError  a prefix or name matches more than one
    ├── TransitionError          a status change the review process does not allow
    ├── StoreError               a store cannot be used
    │   └── StoreLockedError     another process already writes the stores
    ├── BrowserError             no browser, a browser that died, or one we could not attach to
    └── ConfirmationRequired     a destructive operation was asked for without confirmation

Every error carries a message meant for a person: one line that says what was wrong, where,
and, when there is one, what to do next. The command line prints ``str(error)`` as it is.
"""

from __future__ import annotations

__all__ = [
    "AmbiguousReferenceError",
    "BrowserError",
    "ConfirmationRequired",
    "DocumentError",
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


class BrowserError(ProceduraError):
    """No usable browser: none installed, it died, or attaching to it failed."""


class ConfirmationRequired(ProceduraError):
    """A destructive operation needs the caller's explicit confirmation."""
