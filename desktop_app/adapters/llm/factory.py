"""Build the LLM client from plain configuration values (the composition root passes them)."""

from __future__ import annotations

from collections.abc import Sequence

from desktop_app.adapters.llm.openai_client import OpenAIStructuredLLM
from desktop_app.core.llm import LLMBudget

__all__ = ["make_llm"]


def make_llm(
    base_url: str | None,
    model: str,
    api_key: str | None,
    timeout_s: float,
    *,
    max_calls: int | None = None,
    max_tokens: int | None = None,
    secrets: Sequence[str] = (),
) -> OpenAIStructuredLLM | None:
    """The LLM client, or None when no LLM is configured (neither a base URL nor a key).

    Args:
        base_url: the OpenAI-compatible endpoint (OpenAI's when None but a key is given).
        model: the model name.
        api_key: the key (a local endpoint may need none).
        timeout_s: how long one request may take.
        max_calls: the most calls this client may make (no limit when None).
        max_tokens: the most tokens this client may use (no limit when None).
        secrets: values that must never reach a prompt.
    """
    if not base_url and not api_key:
        return None
    budget = None
    if max_calls is not None or max_tokens is not None:
        budget = LLMBudget(max_calls=max_calls, max_tokens=max_tokens)
    return OpenAIStructuredLLM(
        base_url or None, model, api_key or None, timeout_s, budget=budget, secrets=secrets
    )
