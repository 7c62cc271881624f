"""The domain: models, services and ports; pure Python and pydantic (no Qt, DB, or network)."""
