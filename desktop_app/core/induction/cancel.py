"""Stopping an induction part-way: a flag checked between its stages, and an LLM call given up.

The caller holds a :class:`threading.Event` and sets it to cancel (from any thread). The induction
checks it between its stages and once more right before it saves, so a cancelled induction writes
nothing; a draft whose save had begun is complete and kept. An LLM call cannot be interrupted (the
SDK's blocking request), so :class:`CancellableLLM` makes it in a thread of its own and gives up
waiting once the flag is set: the induction stops at once, and the answer, when it comes (the
adapter's timeout bounds the wait), is dropped.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from desktop_app.core.errors import ProceduraError
from desktop_app.core.llm import LLMUsage, StructuredLLM

__all__ = ["CANCELLED", "CancellableLLM", "InductionCancelled", "check_cancelled"]

M = TypeVar("M", bound=BaseModel)

#: What a person is told when they stopped an induction.
CANCELLED = "induction cancelled: no draft was saved, and the recordings are kept"

#: How often a wait for the LLM looks at the flag (seconds).
_POLL_S = 0.05


class InductionCancelled(ProceduraError):
    """The induction was cancelled before it saved anything."""

    def __init__(self, message: str = CANCELLED) -> None:
        super().__init__(message)


def check_cancelled(cancel: threading.Event | None) -> None:
    """Stop here if *cancel* is set.

    Raises:
        InductionCancelled: it is.
    """
    if cancel is not None and cancel.is_set():
        raise InductionCancelled


class CancellableLLM:
    """*llm*, whose calls are given up once *cancel* is set (see the module docstring)."""

    def __init__(self, llm: StructuredLLM, cancel: threading.Event) -> None:
        self._llm = llm
        self._cancel = cancel

    def complete(
        self,
        *,
        system: str,
        user: str,
        output: type[M],
        max_tokens: int | None = None,
        images: Sequence[bytes] = (),
    ) -> tuple[M, LLMUsage]:
        """As :meth:`StructuredLLM.complete`.

        Raises:
            InductionCancelled: *cancel* was set before the answer came.
        """
        check_cancelled(self._cancel)
        outcome: dict[str, Any] = {}
        done = threading.Event()

        def ask() -> None:
            try:
                outcome["answer"] = self._llm.complete(
                    system=system, user=user, output=output, max_tokens=max_tokens, images=images
                )
            except BaseException as exc:  # handed to the waiting thread, which raises it
                outcome["error"] = exc
            finally:
                done.set()

        threading.Thread(target=ask, name="procedura-llm", daemon=True).start()
        while not done.wait(_POLL_S):
            check_cancelled(self._cancel)
        if "error" in outcome:
            raise outcome["error"]
        answer: tuple[M, LLMUsage] = outcome["answer"]
        return answer
