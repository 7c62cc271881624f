#!/usr/bin/env bash
# Run every check CI runs, stopping at the first failure: ruff, ruff format, mypy (strict on
# the whole package), import contracts, pytest. Extra arguments go to pytest:
#   scripts/test.sh -k architecture -x
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash scripts/bootstrap.sh --dev

bin="$root/.venv/bin"
export PATH="$bin:$PATH"

step() {
    printf '==> %s\n' "$*"
    "$bin/$1" "${@:2}"
}

step ruff check .
step ruff format --check .
step mypy
step lint-imports
# No display needed: Qt renders offscreen; tests that want a real X server start Xvfb themselves.
# Two workers (the machines have two cores); a test file stays on one worker, with its fixtures.
# The run cannot hang: a test over its time limit ends its worker (pyproject's timeout, by a
# thread: it fires even inside Qt), a crashed worker ends the run (no replacement to wait on),
# and the watchdog stops everything when nothing was printed for 10 minutes (no test takes
# more than 5) or the run passes 80 minutes. The files go to the workers in the order the tests'
# conftest gives them (the long ones first), not by how many tests they hold. The 25 slowest
# tests are listed at the end.
args=(-n 2 --dist loadfile --no-loadscope-reorder --max-worker-restart 0 --durations 25)
printf '==> %s\n' "pytest ${args[*]} $*"
QT_QPA_PLATFORM=offscreen "$bin/python" scripts/watchdog.py --quiet 600 --limit 4800 -- \
    "$bin/pytest" "${args[@]}" "$@"
