"""The SQLite stores (through sqlmodel): the source of truth for every document."""
