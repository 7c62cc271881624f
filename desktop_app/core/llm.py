"""The port the core calls an LLM through, its errors, usage accounting and secret guards.

    ProceduraError
    └── LLMError                 an LLM call failed (other HTTP errors land here directly)
        ├── LLMUnavailable       cannot reach the endpoint, it timed out, refused the key, has no
        │                        such model or answered 5xx
        ├── LLMRateLimited       HTTP 429 (``retry_after`` seconds when the server said)
        ├── LLMRefused           the model refused (``refusal``, or finish_reason content_filter)
        ├── LLMInvalidOutput     no valid JSON for the schema, even after one repair round-trip
        └── LLMBudgetExceeded    one more call would pass the call or token limit

No message ever holds the API key. Adapters implement :class:`StructuredLLM`; tests use a real
local OpenAI-compatible server, so the core never needs to know which SDK talks to it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from pydantic import BaseModel

from desktop_app.core.errors import ProceduraError
from desktop_app.core.redaction import REDACTED

__all__ = [
    "LLMBudget",
    "LLMBudgetExceeded",
    "LLMError",
    "LLMInvalidOutput",
    "LLMRateLimited",
    "LLMRefused",
    "LLMUnavailable",
    "LLMUsage",
    "StructuredLLM",
    "assert_no_secrets",
    "redact",
]

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class LLMUsage:
    """What LLM calls consumed: answered calls and the tokens the server reported (0 if not)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Prompt and completion tokens together."""
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: LLMUsage) -> LLMUsage:
        if not isinstance(other, LLMUsage):
            return NotImplemented
        return LLMUsage(
            calls=self.calls + other.calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
        )


class LLMError(ProceduraError):
    """An LLM call failed.

    Args:
        message: what went wrong, in one line, never with the API key.
        usage: what the calls made before the failure consumed (they were still paid for).
    """

    def __init__(self, message: str, *, usage: LLMUsage | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.usage = usage if usage is not None else LLMUsage()


class LLMUnavailable(LLMError):
    """The endpoint cannot be used: unreachable, too slow, key refused, no such model, 5xx."""


class LLMRateLimited(LLMError):
    """The endpoint answered HTTP 429.

    Args:
        message: what went wrong, in one line.
        retry_after: seconds the server asked us to wait (``Retry-After``), when it said.
        usage: what the calls made before consumed.
    """

    def __init__(
        self, message: str, *, retry_after: float | None = None, usage: LLMUsage | None = None
    ) -> None:
        super().__init__(message, usage=usage)
        self.retry_after = retry_after


class LLMRefused(LLMError):
    """The model refused to answer (a ``refusal`` message, or a content filter stopped it)."""


class LLMInvalidOutput(LLMError):
    """The answer was not JSON valid against the schema, even after the repair round-trip.

    Args:
        problem: the validation problem, in one line.
        usage: what the calls consumed.
    """

    def __init__(self, problem: str, *, usage: LLMUsage | None = None) -> None:
        super().__init__(f"the LLM's answer is not valid: {problem}", usage=usage)
        self.problem = problem


class LLMBudgetExceeded(LLMError):
    """One more call would pass the budget's call or token limit."""


class StructuredLLM(Protocol):
    """An LLM that answers with an instance of a pydantic model.

    Synchronous on purpose: the SDK's blocking client is the simplest thing that works the same
    from the command line, a worker thread and tests, and it keeps the core free of any event-loop
    choice. A caller inside an event loop runs it with ``loop.run_in_executor`` (an executor call
    cannot be interrupted; the adapter's timeout bounds how long it blocks).
    """

    def complete(
        self,
        *,
        system: str,
        user: str,
        output: type[M],
        max_tokens: int | None = None,
        images: Sequence[bytes] = (),
    ) -> tuple[M, LLMUsage]:
        """Ask once (plus at most one repair round-trip) and return the validated answer.

        Args:
            system: the system prompt.
            user: the user message.
            output: the pydantic model the answer must validate against.
            max_tokens: the most tokens the answer may have (the server's default when None).
            images: PNG images sent with the user message (for a vision-capable model; the
                caller makes sure they show no secret).

        Returns:
            The validated answer and what the calls consumed.

        Raises:
            LLMError: one of its subclasses; see the module docstring.
            ValueError: a known secret is in the prompt (a bug in the caller), before any I/O.
        """
        ...


class LLMBudget:
    """Counts calls and tokens against limits; safe to share between threads.

    :meth:`check` before a call, :meth:`record` after it. Calls that run at the same time may
    together pass the token limit by what they use (tokens are known only afterwards).

    Args:
        max_calls: the most calls (None: no limit; 0: none at all).
        max_tokens: the most prompt plus completion tokens (None: no limit).
    """

    def __init__(self, max_calls: int | None = None, max_tokens: int | None = None) -> None:
        if max_calls is not None and max_calls < 0:
            raise ValueError("max_calls must be 0 or more")
        if max_tokens is not None and max_tokens < 0:
            raise ValueError("max_tokens must be 0 or more")
        self.max_calls = max_calls
        self.max_tokens = max_tokens
        self._used = LLMUsage()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"LLMBudget(max_calls={self.max_calls}, max_tokens={self.max_tokens}, used={self.used})"
        )

    @property
    def used(self) -> LLMUsage:
        """Everything recorded so far."""
        with self._lock:
            return self._used

    def check(self, *, tokens: int = 0) -> None:
        """Raise if one more call, expected to use *tokens*, would pass a limit.

        Raises:
            LLMBudgetExceeded: the call limit is reached, or the token limit is reached or
                would be passed by *tokens* (0 when the caller cannot tell).
        """
        with self._lock:
            used = self._used
        if self.max_calls is not None and used.calls + 1 > self.max_calls:
            raise LLMBudgetExceeded(
                f"the LLM budget allows {self.max_calls} calls and {used.calls} were made"
            )
        if self.max_tokens is not None and (
            used.total_tokens >= self.max_tokens or used.total_tokens + tokens > self.max_tokens
        ):
            raise LLMBudgetExceeded(
                f"the LLM budget allows {self.max_tokens} tokens and {used.total_tokens} were used"
            )

    def record(self, usage: LLMUsage) -> None:
        """Add what a call consumed."""
        with self._lock:
            self._used = self._used + usage


def redact(text: str, secrets: Iterable[str]) -> str:
    """*text* with every occurrence of every (non-empty) secret replaced by ``[secret]``.

    Longer secrets are masked first, so a secret containing another is masked whole.
    """
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def assert_no_secrets(text: str, secrets: Iterable[str]) -> None:
    """Raise if *text* holds any (non-empty) secret; the message does not repeat the secret.

    Raises:
        ValueError: a secret is in *text*: a bug in whoever built it, never a user error.
    """
    for secret in {s for s in secrets if s}:
        at = text.find(secret)
        if at >= 0:
            raise ValueError(
                f"a secret ({len(secret)} characters) is in text meant for the LLM, "
                f"at character {at}; mask it with redact() before building the prompt"
            )
