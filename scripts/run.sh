#!/usr/bin/env bash
# Run Procedura from this checkout (bootstrapping .venv first if needed):
#   scripts/run.sh [procedura arguments...]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Bootstrap progress goes to stderr so that procedura's own output can be piped or redirected.
bash "$root/scripts/bootstrap.sh" >&2

# With no arguments, open the desktop app.
if (($# == 0)); then
    set -- gui
fi
exec "$root/.venv/bin/procedura" "$@"
