"""Prompt templates (``string.Template`` text files) for the LLM inducer."""
