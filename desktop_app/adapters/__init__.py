"""Adapters: the only code that talks to SQLite, Chroma, the file system, browsers and LLMs."""
