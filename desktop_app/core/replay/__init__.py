"""Replay: running a workflow's steps on a live page and healing them when the page drifted."""
