"""What nobody caught, handled in one place for the desktop app: an exception raised in a Qt slot
(Qt calls ``sys.excepthook``), one in an asyncio task or callback nobody awaited (the loop's
exception handler), and the signals that end the app (Ctrl+C in its terminal, a logout).

Each uncaught exception is logged with its traceback and reported once, in the window's error
dialog, so a bug is seen rather than printed to a terminal nobody reads; the app goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any

__all__ = ["QUIT_SIGNALS", "reporting_uncaught", "when_asked_to_quit"]

log = logging.getLogger(__name__)

#: The signals that ask the app to quit as the user would.
QUIT_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def reporting_uncaught(
    loop: asyncio.AbstractEventLoop, report: Callable[[BaseException], object]
) -> Iterator[None]:
    """While open, hand every uncaught exception to *report* (after logging it); the hooks
    that were there before come back on exit."""

    def excepthook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, exc, tb)
            return
        log.error("uncaught exception", exc_info=(kind, exc, tb))
        _report(report, exc)

    def loop_handler(_loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if not isinstance(exc, BaseException) or isinstance(exc, asyncio.CancelledError):
            log.warning("%s", context.get("message", "asyncio reported a problem"))
            return
        log.error("%s", context.get("message", "uncaught exception"), exc_info=exc)
        _report(report, exc)

    previous_hook = sys.excepthook
    previous_handler = loop.get_exception_handler()
    sys.excepthook = excepthook
    loop.set_exception_handler(loop_handler)
    try:
        yield
    finally:
        sys.excepthook = previous_hook
        loop.set_exception_handler(previous_handler)


def _report(report: Callable[[BaseException], object], exc: BaseException) -> None:
    try:
        report(exc)
    except Exception:  # the report itself failed (the window is gone): the log has it
        log.exception("could not report an uncaught exception")


def when_asked_to_quit(loop: asyncio.AbstractEventLoop, quit_now: Callable[[], object]) -> None:
    """Call *quit_now* on the loop when a quit signal comes (where the platform allows)."""
    for sig in QUIT_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, quit_now)
