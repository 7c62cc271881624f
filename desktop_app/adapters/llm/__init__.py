"""LLM adapters: the openai SDK behind the core's StructuredLLM port."""

from __future__ import annotations

from desktop_app.adapters.llm.factory import make_llm
from desktop_app.adapters.llm.openai_client import DEFAULT_BASE_URL, OpenAIStructuredLLM

__all__ = ["DEFAULT_BASE_URL", "OpenAIStructuredLLM", "make_llm"]
