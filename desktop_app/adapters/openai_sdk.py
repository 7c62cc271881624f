"""Building the ``openai`` SDK client the same way everywhere (no hidden retries, no env reads)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import openai

__all__ = ["make_openai_client"]


def make_openai_client(
    api_key: str | None, base_url: str | None, timeout: float, max_retries: int = 0
) -> openai.OpenAI:
    """An ``openai.OpenAI`` client for an OpenAI-compatible endpoint.

    A local server may need no key, but the SDK insists on one and would otherwise read
    ``OPENAI_API_KEY`` behind our back: a placeholder is passed instead. Retries are ours to
    decide, so the SDK makes none unless asked.
    """
    import openai

    return openai.OpenAI(
        api_key=api_key or "no-key",
        base_url=base_url,
        timeout=timeout,
        max_retries=max_retries,
    )
