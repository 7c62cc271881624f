"""The test run cannot hang: ``scripts/watchdog.py`` (what ``scripts/test.sh`` runs pytest
under) stops a command that printed nothing for a while, with everything it started, and
otherwise passes its output and exit status through."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from conftest import REPO

WATCHDOG = REPO / "scripts" / "watchdog.py"


def _watch(*args: str, quiet: str = "2", limit: str = "60") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(WATCHDOG), "--quiet", quiet, "--limit", limit, "--", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_command_that_stops_printing_is_stopped_with_what_it_started(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    # A command whose child (a browser, a server) would outlive it, and which then hangs.
    script = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "print('....', flush=True)\n"
        "time.sleep(120)\n"
    )
    began = time.monotonic()
    result = _watch(sys.executable, "-c", script)
    assert result.returncode == 124
    assert result.stdout.startswith("....")
    assert "watchdog: no output for 2 s: the run stopped making progress" in result.stdout
    assert time.monotonic() - began < 30  # not the command's two minutes
    grandchild = int(pid_file.read_text())
    try:
        os.kill(grandchild, 0)
    except ProcessLookupError:
        pass
    else:  # a zombie not yet reaped by init counts as gone
        status = Path(f"/proc/{grandchild}/stat").read_text().rsplit(")", 1)[1].split()[0]
        assert status == "Z", "the command's own child was left running"


def test_a_run_that_passes_its_limit_is_stopped() -> None:
    script = "import time\nwhile True:\n    print('.', flush=True)\n    time.sleep(0.2)\n"
    result = _watch(sys.executable, "-c", script, quiet="30", limit="2")
    assert result.returncode == 124
    assert "watchdog: the run took more than 2 s" in result.stdout


def test_output_and_exit_status_pass_through() -> None:
    result = _watch(sys.executable, "-c", "import sys; print('fine'); sys.exit(3)")
    assert result.returncode == 3
    assert result.stdout == "fine\n"
