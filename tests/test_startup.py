"""Start-up holds Python's cycle collector off (a sixth of the desktop app's cold start) and
gives it back: to every command when it begins, to the desktop app's own collector in its
window. Each case runs in a process of its own, started as ``procedura`` is."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap


def _python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_command_runs_with_the_collector_on() -> None:
    out = _python(
        """
        import gc, sys
        from desktop_app.cli.main import cli

        @cli.command("collecting")
        def collecting():
            print("during", gc.isenabled())

        from desktop_app.__main__ import main
        print("before", gc.isenabled())
        sys.argv = ["procedura", "collecting"]
        try:
            main()
        except SystemExit as exc:
            assert not exc.code, exc.code
        """
    )
    assert out.splitlines() == ["before True", "during True"]


def test_the_desktop_app_s_collector_takes_over_and_gives_it_back() -> None:
    out = _python(
        """
        import gc
        from desktop_app.startup import hold_collection
        hold_collection()  # what the entry point does
        from PySide6.QtWidgets import QApplication
        from desktop_app.ui.collector import GuiThreadCollector
        app = QApplication([])
        collector = GuiThreadCollector()
        print(gc.isenabled(), len(gc.get_objects()) < gc.get_freeze_count())
        collector.stop()
        print(gc.isenabled())
        """
    )
    # off while the window's collector runs, start-up's objects left out of its collections;
    # on again when it stops
    assert out.splitlines() == ["False True", "True"]
