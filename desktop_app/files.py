"""Writing the command line's output files: whole or not at all, never over a file unasked."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from desktop_app.core.errors import ConfirmationRequired

__all__ = ["write_atomically"]


def write_atomically(target: Path, data: bytes, *, force: bool) -> None:
    """Write *data* to *target* through a temporary file renamed into place.

    Raises:
        ConfirmationRequired: *target* exists and *force* is not set.
    """
    if target.exists() and not force:
        raise ConfirmationRequired(f"{target} exists; pass --force to replace it")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        Path(tmp).chmod(0o644)  # an ordinary file, not mkstemp's private 0600
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
