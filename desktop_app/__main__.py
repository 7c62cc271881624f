"""Entry point for ``python -m desktop_app``, the ``procedura`` script and the PyInstaller-built
executable."""

import sys

from desktop_app.startup import hold_collection, open_standard_streams


def _run_frozen_module() -> bool:
    """In a frozen app, run ``procedura -m desktop_app.X args`` as Python's ``-m`` would.

    Procedura starts helper processes as ``[sys.executable, "-m", module, ...]`` (the search index
    worker); in a PyInstaller build ``sys.executable`` is this program, not Python.
    """
    if not getattr(sys, "frozen", False) or len(sys.argv) < 3 or sys.argv[1] != "-m":
        return False
    module = sys.argv[2]
    if not module.startswith("desktop_app."):
        return False
    import runpy

    sys.argv = [sys.argv[0], *sys.argv[3:]]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
    return True


def main() -> None:
    """Run ``procedura``: the command line, or the desktop app (``procedura gui``)."""
    open_standard_streams()  # a launcher may have closed them: nothing else may take them
    hold_collection()  # until the command begins (see desktop_app.startup)
    if not _run_frozen_module():
        from desktop_app.cli import main as cli_main

        cli_main()


if __name__ == "__main__":
    main()
