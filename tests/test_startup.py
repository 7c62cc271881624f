"""Start-up holds Python's cycle collector off (a sixth of the desktop app's cold start) and
gives it back: to every command when it begins, to the desktop app's own collector in its
window. Each case runs in a process of its own, started as ``procedura`` is."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path


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


def test_started_with_its_standard_streams_closed_nothing_else_takes_them(
    tmp_path: Path,
) -> None:
    """As a launcher may start it: stdin, stdout and stderr closed. What writes to "standard
    error" below Python must reach /dev/null, never the first files the app opens."""
    report = tmp_path / "report.txt"
    code = f"""
        import os, sys
        from desktop_app.startup import open_standard_streams
        closed = open_standard_streams()
        first = open({str(tmp_path / "first.db")!r}, "w")
        os.write(2, b"a native library's warning\\n")
        print("on stdout")
        targets = [os.readlink(f"/proc/self/fd/{{fd}}") for fd in (0, 1, 2)]
        with open({str(report)!r}, "w") as out:
            print(closed, first.fileno() > 2, targets, sys.stdin.read(), file=out)
        """
    done = subprocess.run(
        ["sh", "-c", 'exec "$@" <&- 1>&- 2>&-', "sh", sys.executable, "-c", textwrap.dedent(code)],
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    assert report.read_text() == f"[0, 1, 2] True {[os.devnull] * 3} \n"
    assert (tmp_path / "first.db").read_bytes() == b""
