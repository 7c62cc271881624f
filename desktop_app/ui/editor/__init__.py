"""The visual step editor."""
