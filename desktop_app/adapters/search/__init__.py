"""Search over workflows and experiences: Chroma (a local directory, or a server in team mode)
with local or OpenAI embeddings, fused with the SQLite word index for workflows."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from desktop_app.adapters.search.chroma_index import ChromaSearchIndex
    from desktop_app.adapters.search.embeddings import (
        MiniLMEmbeddingFunction,
        OpenAIEmbeddingFunction,
        make_embedding_function,
    )
    from desktop_app.adapters.search.hybrid_index import HybridSearchIndex
    from desktop_app.adapters.search.server import ChromaServer

__all__ = [
    "ChromaSearchIndex",
    "ChromaServer",
    "HybridSearchIndex",
    "MiniLMEmbeddingFunction",
    "OpenAIEmbeddingFunction",
    "make_embedding_function",
]

_SUBMODULE = {
    "ChromaSearchIndex": "chroma_index",
    "ChromaServer": "server",
    "HybridSearchIndex": "hybrid_index",
    "MiniLMEmbeddingFunction": "embeddings",
    "OpenAIEmbeddingFunction": "embeddings",
    "make_embedding_function": "embeddings",
}


def __getattr__(name: str) -> Any:
    # Submodules load on first use: chromadb takes about a second to import.
    submodule = _SUBMODULE.get(name)
    if submodule is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{submodule}"), name)
