"""Procedura: turn one demonstration into a reusable, reviewable, self-healing procedure."""

__version__ = "0.1.0"

__all__ = ["__version__"]
