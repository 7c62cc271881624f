"""What every command of the command line shares: errors as one line and an exit code, the
stores, tables, input and output files."""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, NoReturn

import click

from desktop_app.core.errors import (
    ConfirmationRequired,
    DocumentError,
    NotFoundError,
    ProceduraError,
    TransitionError,
)
from desktop_app.core.replay.parameters import ParameterError
from desktop_app.core.replay.render import RebaseError
from desktop_app.files import write_atomically
from desktop_app.settings import Settings, SettingsError

__all__ = [
    "INPUT_ERRORS",
    "Group",
    "emit_json",
    "fail",
    "input_error",
    "open_input",
    "open_stores",
    "print_table",
    "read_input",
    "shorten",
    "stdin_is_terminal",
    "write_output",
]

INPUT_ERRORS = (
    DocumentError,
    NotFoundError,
    TransitionError,
    ConfirmationRequired,
    SettingsError,
    ParameterError,
    RebaseError,
)


def fail(message: str, code: int) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


@contextmanager
def open_stores(ctx: click.Context, *, write: bool) -> Iterator[Any]:
    from desktop_app.app import open_services

    settings: Settings = ctx.obj["settings"]()
    with open_services(settings, write=write) as services:
        yield services


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def print_table(rows: Sequence[Sequence[str]], headers: Sequence[str]) -> None:
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    click.echo(line.rstrip())
    for row in rows:
        click.echo("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def read_input(path: str) -> tuple[bytes, str]:
    if path == "-":
        return sys.stdin.buffer.read(), "<stdin>"
    file = Path(path)
    try:
        return file.read_bytes(), file.name
    except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        raise input_error(exc, path) from None


@contextmanager
def open_input(path: str) -> Iterator[tuple[BinaryIO, str]]:
    """:func:`read_input` as a seekable binary file, for documents read a part at a time.

    Standard input (and a pipe given by name) is copied to a temporary file first, not into
    memory.
    """
    with contextlib.ExitStack() as stack:
        if path == "-":
            stream: BinaryIO = sys.stdin.buffer
            source = "<stdin>"
        else:
            try:
                stream = stack.enter_context(Path(path).open("rb"))
            except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
                raise input_error(exc, path) from None
            source = Path(path).name
        if path == "-" or not stream.seekable():
            spool = stack.enter_context(tempfile.TemporaryFile())
            shutil.copyfileobj(stream, spool)
            spool.seek(0)
            stream = spool
        yield stream, source


def input_error(exc: OSError, path: str) -> DocumentError:
    if isinstance(exc, FileNotFoundError):
        return DocumentError("no such file", source=path)
    if isinstance(exc, IsADirectoryError):
        return DocumentError("is a directory, not a file", source=path)
    return DocumentError("permission denied", source=path)


def write_output(
    text: str, out: str | None, force: bool, said: Callable[[str], str] | None = None
) -> None:
    """Print *text*, or write it to *out* atomically, never replacing a file without --force.

    *said* gives the line for standard error from where it went (``wrote OUT`` without it).
    """
    if out is None or out == "-":
        click.echo(text, nl=False)
        if said is not None:
            click.echo(said("standard output"), err=True)
        return
    write_atomically(Path(out), text.encode("utf-8"), force=force)
    click.echo(said(out) if said is not None else f"wrote {out}", err=True)


class Group(click.Group):
    """A group that turns Procedura's errors into one line and an exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except INPUT_ERRORS as exc:
            fail(str(exc), 2)
        except ProceduraError as exc:
            fail(str(exc), 1)


def stdin_is_terminal() -> bool:
    return sys.stdin.isatty()
