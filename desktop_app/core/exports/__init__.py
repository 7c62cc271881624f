"""Workflows taken out of the app: as code, as guides for people, as bundles."""
