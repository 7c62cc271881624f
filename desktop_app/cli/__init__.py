"""The ``procedura`` command line (click, no Qt): ``main`` is the console script. Each module
is a command or a group of them over the same services as the app; ``common`` is what they
share. See docs/cli.md."""

from desktop_app.cli.main import cli, main

__all__ = ["cli", "main"]
