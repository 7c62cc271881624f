#!/usr/bin/env bash
# Run every check CI runs, stopping at the first failure: ruff, ruff format, mypy (strict on
# desktop_app/core), import contracts, pytest. Extra arguments go to pytest:
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
QT_QPA_PLATFORM=offscreen step pytest -n 2 --dist loadfile "$@"
