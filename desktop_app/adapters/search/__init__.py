"""Semantic search over workflows and experiences: Chroma with local or OpenAI embeddings."""

__all__ = ["chroma_index", "embeddings"]
