"""Run a command and stop it when it stops making progress: a test run that hangs fails fast
instead of using up CI's whole time limit, and nothing of it is left running.

    python scripts/watchdog.py --quiet 600 --limit 4800 -- pytest -n 2 …

Progress is output: the command's output (stdout and stderr together) is passed through as it
comes, and when nothing has come for ``--quiet`` seconds, or the whole run has taken
``--limit`` seconds, its whole process group (xdist workers, browsers, servers) is stopped —
SIGTERM, then SIGKILL ten seconds later — and the exit status is 124. Otherwise the exit
status is the command's own.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import select
import signal
import subprocess
import sys
import time

TIMED_OUT = 124


def _stop(process: subprocess.Popen[bytes]) -> None:
    for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def run(command: list[str], *, quiet_s: float, limit_s: float) -> int:
    """Run *command*, passing its output through; its exit status, or 124 when it was stopped."""
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    assert process.stdout is not None
    out = sys.stdout.buffer
    started = last = time.monotonic()
    reason = ""
    try:
        while True:
            ready, _, _ = select.select([process.stdout], [], [], 1.0)
            now = time.monotonic()
            if ready:
                chunk = os.read(process.stdout.fileno(), 65536)
                if not chunk:
                    break  # the command closed its output: it is ending
                out.write(chunk)
                out.flush()
                last = now
            if now - last > quiet_s:
                reason = f"no output for {quiet_s:.0f} s: the run stopped making progress"
            elif now - started > limit_s:
                reason = f"the run took more than {limit_s:.0f} s"
            if reason:
                out.write(f"\nwatchdog: {reason}; stopping it\n".encode())
                out.flush()
                _stop(process)
                return TIMED_OUT
        return process.wait()
    except BaseException:
        _stop(process)
        raise
    finally:
        # What the command left behind in its group (a browser, a server) goes with it.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quiet", type=float, required=True, help="seconds without output")
    parser.add_argument("--limit", type=float, required=True, help="seconds in all")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    sys.exit(run(command, quiet_s=args.quiet, limit_s=args.limit))


if __name__ == "__main__":
    main()
