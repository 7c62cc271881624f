#!/usr/bin/env bash
# Run Procedura from this checkout (bootstrapping .venv first if needed):
#   scripts/run.sh [procedura arguments...]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Bootstrap progress goes to stderr so that procedura's own output can be piped or redirected.
bash "$root/scripts/bootstrap.sh" >&2

# With no arguments, show `procedura info` for now. Once the GUI lands, the default becomes
# launching it: change this line (or drop it, if a bare `procedura` opens the GUI).
if (($# == 0)); then
    set -- info
fi
exec "$root/.venv/bin/procedura" "$@"
