"""StructuredLLM over any OpenAI-compatible chat completions endpoint (the openai SDK)."""

from __future__ import annotations

import base64
import copy
import email.utils
import json
import logging
import math
import re
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ValidationError

from desktop_app.adapters.openai_sdk import make_openai_client
from desktop_app.core.llm import (
    LLMBudget,
    LLMError,
    LLMInvalidOutput,
    LLMRateLimited,
    LLMRefused,
    LLMUnavailable,
    LLMUsage,
    assert_no_secrets,
    redact,
)

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletion

__all__ = ["DEFAULT_BASE_URL", "OpenAIStructuredLLM"]

_log = logging.getLogger(__name__)

#: The endpoint used when no base URL is configured.
DEFAULT_BASE_URL: Final = "https://api.openai.com/v1"
_KEY_HELP: Final = "set PROCEDURA_LLM_API_KEY or OPENAI_API_KEY, or store the key in the keyring"
_FORMAT_WORDS: Final = ("response_format", "response format", "json_schema", "json schema")
_FENCE: Final = re.compile(r"^```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?```$", re.DOTALL)
_MAX_PROBLEMS: Final = 3

M = TypeVar("M", bound=BaseModel)
Message = dict[str, Any]  # content: text, or text and image parts


class OpenAIStructuredLLM:
    """:class:`~desktop_app.core.llm.StructuredLLM` with the openai SDK; thread-safe.

    Asks for ``response_format`` ``json_schema`` first; an endpoint that answers 400/422 about
    it gets ``json_object`` with the schema in the system prompt from then on. An answer that does
    not validate gets one repair round-trip. The SDK never retries (``max_retries=0``): callers
    decide. Every message is checked against *secrets* (and the API key) before any I/O.

    Args:
        base_url: the endpoint, e.g. ``http://localhost:11434/v1`` (OpenAI's when None).
        model: the model name sent with every request.
        api_key: the key (a local server may need none).
        timeout_s: how long one HTTP request may take.
        budget: limits shared by the calls of this client (none when None).
        secrets: values that must never be part of a prompt.
    """

    def __init__(
        self,
        base_url: str | None,
        model: str,
        api_key: str | None,
        timeout_s: float,
        *,
        budget: LLMBudget | None = None,
        secrets: Sequence[str] = (),
    ) -> None:
        if not model:
            raise ValueError("an LLM client needs a model name")
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        self._base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self._model = model
        self._api_key = api_key
        self._timeout = float(timeout_s)
        self._budget = budget
        self._secrets = tuple(s for s in (*secrets, api_key or "") if s)
        self._json_object_only = False
        self._client: openai.OpenAI | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenAIStructuredLLM(base_url={self.endpoint!r}, model={self._model!r})"

    @property
    def endpoint(self) -> str:
        """The base URL, without any user or password in it (safe to show)."""
        parts = urlsplit(self._base_url)
        if parts.username is None and parts.password is None:
            return self._base_url
        host = parts.hostname or ""
        netloc = f"{host}:{parts.port}" if parts.port else host
        return urlunsplit(parts._replace(netloc=netloc))

    @property
    def model(self) -> str:
        """The model name."""
        return self._model

    @property
    def budget(self) -> LLMBudget | None:
        """The budget the calls count against, if any."""
        return self._budget

    @property
    def uses_json_object(self) -> bool:
        """Whether the endpoint turned out not to support ``json_schema``."""
        return self._json_object_only

    # ── the port ─────────────────────────────────────────────────────────────────────────────

    def complete(
        self,
        *,
        system: str,
        user: str,
        output: type[M],
        max_tokens: int | None = None,
        images: Sequence[bytes] = (),
    ) -> tuple[M, LLMUsage]:
        """Ask for an instance of *output*; see :meth:`StructuredLLM.complete`."""
        schema = _schema_for(output)
        # Fail before any I/O when a secret is in what the caller wrote.
        self._assert_clean(
            [{"role": "system", "content": system}, {"role": "user", "content": user}]
        )
        content: Any = _with_images(user, images) if images else user
        messages, answer, json_object, usage = self._ask(
            system, content, output, schema, max_tokens
        )
        result, problem = _validate(answer, output)
        if result is not None:
            return result, usage

        _log.info("the answer for %s is not valid (%s); asking once more", output.__name__, problem)
        repair = [
            *messages,
            {"role": "assistant", "content": redact(answer, self._secrets)},
            {
                "role": "user",
                "content": (
                    f"Your answer is not valid: {problem}. Reply again with the corrected JSON "
                    "only: one JSON object valid against the schema, no prose, no code fences."
                ),
            },
        ]
        answer, usage = self._call(repair, schema, output.__name__, json_object, max_tokens, usage)
        result, problem = _validate(answer, output)
        if result is None:
            raise LLMInvalidOutput(problem, usage=usage)
        return result, usage

    # ── requests ─────────────────────────────────────────────────────────────────────────────

    def _ask(
        self,
        system: str,
        user: Any,
        output: type[BaseModel],
        schema: dict[str, Any],
        max_tokens: int | None,
    ) -> tuple[list[Message], str, bool, LLMUsage]:
        """The first round: json_schema, else json_object with the schema in the system prompt.

        Returns:
            The messages sent, the answer, whether json_object was used, and the usage.
        """
        name = output.__name__
        if not self._json_object_only:
            messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
            try:
                answer, usage = self._call(
                    messages, schema, name, False, max_tokens, LLMUsage(), may_fall_back=True
                )
            except _FormatUnsupported as unsupported:
                _log.info(
                    "%s does not support response_format json_schema (%s); using json_object",
                    self.endpoint,
                    unsupported,
                )
                self._json_object_only = True
            else:
                return messages, answer, False, usage
        messages = [
            {"role": "system", "content": _with_schema(system, schema)},
            {"role": "user", "content": user},
        ]
        answer, usage = self._call(messages, schema, name, True, max_tokens, LLMUsage())
        return messages, answer, True, usage

    def _call(
        self,
        messages: list[Message],
        schema: dict[str, Any],
        name: str,
        json_object: bool,
        max_tokens: int | None,
        usage: LLMUsage,
        *,
        may_fall_back: bool = False,
    ) -> tuple[str, LLMUsage]:
        """One request; returns the answer's text and *usage* plus this call's.

        Raises:
            _FormatUnsupported: *may_fall_back* and the endpoint rejected json_schema.
        """
        import openai

        self._assert_clean(messages)
        if self._budget is not None:
            try:
                self._budget.check()
            except LLMError as exc:
                exc.usage = usage
                raise
        if json_object:
            response_format: dict[str, Any] = {"type": "json_object"}
        else:
            response_format = {
                "type": "json_schema",
                "json_schema": {"name": _schema_name(name), "schema": schema, "strict": False},
            }
        client = self._ensure_client()
        try:
            response: ChatCompletion = client.chat.completions.create(
                model=self._model,
                messages=cast(Any, messages),
                response_format=cast(Any, response_format),
                max_completion_tokens=openai.omit if max_tokens is None else max_tokens,
            )
        except openai.OpenAIError as exc:
            if may_fall_back and not json_object and _is_format_unsupported(exc):
                raise _FormatUnsupported(self._clean(_detail(exc))) from None
            raise self._error_for(exc, usage) from None

        this_call = _usage_of(response)
        if self._budget is not None:
            self._budget.record(this_call)
        usage = usage + this_call
        if not response.choices:
            raise LLMInvalidOutput("the answer has no choices", usage=usage)
        choice = response.choices[0]
        refusal = choice.message.refusal
        if refusal:
            raise LLMRefused(
                self._clean(f"the model refused: {_one_line(refusal, 200)}"), usage=usage
            )
        if choice.finish_reason == "content_filter":
            raise LLMRefused("the model's content filter stopped the answer", usage=usage)
        if choice.finish_reason == "length":
            limit = f" ({max_tokens})" if max_tokens is not None else ""
            raise LLMInvalidOutput(f"the answer was cut off at max_tokens{limit}", usage=usage)
        return choice.message.content or "", usage

    def _ensure_client(self) -> openai.OpenAI:
        client = self._client
        if client is None:
            with self._lock:
                client = self._client
                if client is None:
                    client = self._client = make_openai_client(
                        self._api_key, self._base_url, self._timeout
                    )
        return client

    # ── errors ───────────────────────────────────────────────────────────────────────────────

    def _assert_clean(self, messages: Sequence[Message]) -> None:
        for message in messages:
            content = message["content"]
            texts = [content] if isinstance(content, str) else [p.get("text", "") for p in content]
            for text in texts:
                assert_no_secrets(text, self._secrets)

    def _clean(self, text: str) -> str:
        """*text* on one line with the key and every secret masked."""
        return redact(" ".join(text.split()), self._secrets)

    def _error_for(self, exc: Exception, usage: LLMUsage) -> LLMError:
        import openai

        where = f"the LLM endpoint {self.endpoint}"
        error: LLMError
        if isinstance(exc, openai.APITimeoutError):
            message = f"{where} did not answer within {self._timeout:g} s (timeout)"
            error = LLMUnavailable(message, usage=usage)
        elif isinstance(exc, openai.APIConnectionError):
            message = f"cannot reach {where}: {_connection_problem(exc)}"
            error = LLMUnavailable(self._clean(message), usage=usage)
        elif isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            message = f"the API key was refused by {where} (HTTP {exc.status_code}); {_KEY_HELP}"
            error = LLMUnavailable(message, usage=usage)
        elif isinstance(exc, openai.RateLimitError):
            retry_after = _retry_after(exc.response.headers)
            wait = f"; retry after {retry_after:g} s" if retry_after is not None else ""
            message = f"{where} is rate limiting us (HTTP 429: {_detail(exc)}){wait}"
            error = LLMRateLimited(self._clean(message), retry_after=retry_after, usage=usage)
        elif isinstance(exc, openai.NotFoundError):
            message = f"{where} has no model {self._model!r} (HTTP 404: {_detail(exc)})"
            error = LLMUnavailable(self._clean(message), usage=usage)
        elif isinstance(exc, openai.APIStatusError) and exc.status_code >= 500:
            message = f"{where} failed (HTTP {exc.status_code}: {_detail(exc)})"
            error = LLMUnavailable(self._clean(message), usage=usage)
        elif isinstance(exc, openai.APIStatusError):
            message = f"{where} rejected the request (HTTP {exc.status_code}: {_detail(exc)})"
            error = LLMError(self._clean(message), usage=usage)
        else:
            error = LLMError(f"the call to {where} failed ({type(exc).__name__})", usage=usage)
        return error


class _FormatUnsupported(Exception):
    """The endpoint rejected ``response_format`` ``json_schema`` (internal)."""


# ── helpers ──────────────────────────────────────────────────────────────────────────────────


def _with_images(text: str, images: Sequence[bytes]) -> list[dict[str, Any]]:
    """A user message's content parts: the text, then each PNG as a data URL."""
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
    for image in images:
        data = base64.b64encode(image).decode("ascii")
        parts.append({"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}})
    return parts


def _schema_for(output: type[BaseModel]) -> dict[str, Any]:
    """*output*'s JSON schema, adjusted for structured outputs.

    ``oneOf`` becomes ``anyOf`` and pydantic's ``discriminator`` goes (structured outputs
    support neither); a property with a ``const`` (a union's tag) becomes required, so the
    answer always says which variant it is; objects that do not say otherwise get
    ``additionalProperties: false``.
    """
    return cast(dict[str, Any], _strict_compatible(copy.deepcopy(output.model_json_schema())))


def _strict_compatible(node: Any, *, names: bool = False) -> Any:
    """See :func:`_schema_for`; *names* marks a mapping of names to schemas (not a schema)."""
    if isinstance(node, list):
        return [_strict_compatible(item) for item in node]
    if not isinstance(node, dict):
        return node
    if names:
        return {key: _strict_compatible(value) for key, value in node.items()}
    node = {
        key: _strict_compatible(value, names=key in ("properties", "$defs", "definitions"))
        for key, value in node.items()
    }
    node.pop("discriminator", None)
    if "oneOf" in node and "anyOf" not in node:
        node["anyOf"] = node.pop("oneOf")
    properties = node.get("properties")
    if node.get("type") == "object" and isinstance(properties, dict):
        node.setdefault("additionalProperties", False)
        required = list(node.get("required", []))
        tags = [
            name
            for name, prop in properties.items()
            if isinstance(prop, dict) and "const" in prop and name not in required
        ]
        if tags:
            node["required"] = required + tags
    return node


def _schema_name(name: str) -> str:
    """A ``json_schema`` name: letters, digits, ``_`` and ``-``, at most 64."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:64] or "answer"


def _with_schema(system: str, schema: dict[str, Any]) -> str:
    return (
        f"{system}\n\nAnswer with one JSON object only (no prose, no code fences) that is valid "
        f"against this JSON schema:\n{json.dumps(schema, separators=(',', ':'))}"
    )


def _validate(answer: str, output: type[M]) -> tuple[M | None, str]:
    """The validated answer, or None and the problem in one line (never the answer's values)."""
    text = answer.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    if not text:
        return None, "the answer is empty"
    try:
        json.loads(text)
    except ValueError as exc:
        return None, f"not valid JSON ({exc})"
    try:
        return output.model_validate_json(text), ""
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        problems = []
        for error in errors[:_MAX_PROBLEMS]:
            where = ".".join(str(part) for part in error["loc"]) or "the root"
            problems.append(f"{where}: {error['msg']}")
        more = f" (and {len(errors) - _MAX_PROBLEMS} more)" if len(errors) > _MAX_PROBLEMS else ""
        return None, _one_line("; ".join(problems) + more, 500)


def _usage_of(response: ChatCompletion) -> LLMUsage:
    usage = response.usage
    if usage is None:
        return LLMUsage(calls=1)
    return LLMUsage(
        calls=1,
        prompt_tokens=usage.prompt_tokens or 0,
        completion_tokens=usage.completion_tokens or 0,
    )


def _detail(exc: Exception) -> str:
    """The server's error message, on one line and short."""
    body = getattr(exc, "body", None)
    detail: object = None
    if isinstance(body, dict):
        detail = body.get("message") or body.get("detail")
    if detail is None:
        detail = getattr(exc, "message", None) or str(exc)
    if not isinstance(detail, str):
        detail = json.dumps(detail)
    return _one_line(detail, 200)


def _is_format_unsupported(exc: Exception) -> bool:
    """Whether *exc* is a 400/422 complaining about ``response_format`` / ``json_schema``."""
    import openai

    if not isinstance(exc, openai.APIStatusError) or exc.status_code not in (400, 422):
        return False
    text = f"{exc.message} {json.dumps(exc.body, default=str)}".lower()
    if "invalid schema" in text:  # the endpoint supports json_schema; our schema is wrong
        return False
    return any(word in text for word in _FORMAT_WORDS)


def _connection_problem(exc: Exception) -> str:
    """Which connection problem: refused, unknown host, or what the cause says."""
    causes: list[str] = []
    cause: BaseException | None = exc
    while cause is not None and len(causes) < 6:
        causes.append(str(cause).lower())
        cause = cause.__cause__ or cause.__context__
    text = " ".join(causes)
    if "refused" in text:
        return "connection refused; is the server running and is the URL right?"
    if any(
        hint in text
        for hint in (
            "name or service not known",
            "nodename nor servname",
            "getaddrinfo",
            "name resolution",
            "no address associated",
        )
    ):
        return "the host name could not be resolved (DNS); is the URL right?"
    if "ssl" in text or "certificate" in text:
        return "the TLS handshake failed"
    last = exc
    while last.__cause__ is not None:
        last = last.__cause__  # type: ignore[assignment]
    return f"connection failed ({type(last).__name__})"


def _retry_after(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            value = float(milliseconds) / 1000
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value >= 0:
            return value
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - time.time())
    return value if math.isfinite(value) and value >= 0 else None


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
