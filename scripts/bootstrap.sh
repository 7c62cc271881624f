#!/usr/bin/env bash
# Make this checkout ready to run or test: system packages, .venv, and the project installed in it.
#
# Usage:  scripts/bootstrap.sh [--dev]          (or: source scripts/bootstrap.sh [--dev])
#   --dev   install the project with its [dev] extras (pytest, ruff, mypy, import-linter, ...)
#
# Environment:
#   PYTHON=/path/to/python3.X        interpreter to build .venv with (default: the first of python3,
#                                    python3.11, python3.12, ... that is Python >= 3.11)
#   PROCEDURA_SKIP_SYSTEM_PACKAGES=1 neither check nor install system packages
#
# Every step is announced as "==> ...". Re-running it when everything is in place changes nothing
# and takes a moment: system packages are only installed when missing (Debian/Ubuntu, as root or
# with passwordless sudo), and the project is only reinstalled when pyproject.toml (or the extras
# asked for) changed since the last install, as recorded in .venv/.procedura-bootstrap-stamp.

if [[ "${BASH_SOURCE[0]}" != "$0" ]]; then
    # Sourced: do the work in a child bash so `set -e` and `exit` cannot end the caller's shell,
    # then leave the caller two handy variables.
    bash "${BASH_SOURCE[0]}" "$@" || return
    PROCEDURA_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    # shellcheck disable=SC2034  # for the sourcing shell
    PROCEDURA_VENV="$PROCEDURA_ROOT/.venv"
    return 0
fi

set -euo pipefail

say() { printf '==> %s\n' "$*"; }
warn() { printf '==> WARNING: %s\n' "$*" >&2; }
die() {
    printf 'bootstrap: error: %s\n' "$*" >&2
    exit 1
}

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
stamp="$venv/.procedura-bootstrap-stamp"
extras=""
did_something=0
system_summary="system packages present"

for arg in "$@"; do
    case "$arg" in
        --dev) extras="dev" ;;
        -h | --help)
            sed -n '2,/^$/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
            exit 0
            ;;
        *) die "unknown argument '$arg' (expected --dev)" ;;
    esac
done

# ── Python ───────────────────────────────────────────────────────────────────────────────────────
# Prints "<sys.executable> <version>" when $1 is a working Python >= 3.11, fails otherwise.
python_info() {
    "$1" -c 'import sys
if sys.version_info < (3, 11):
    raise SystemExit(1)
print(sys.executable, "%d.%d.%d" % sys.version_info[:3])' 2>/dev/null
}

python=""
if [[ -n "${PYTHON:-}" ]]; then
    info="$(python_info "$PYTHON")" || die "PYTHON=$PYTHON is not a working Python >= 3.11"
    python="${info% *}"
else
    for candidate in python3 python3.11 python3.12 python3.13 python3.14; do
        command -v "$candidate" >/dev/null 2>&1 || continue
        if info="$(python_info "$candidate")"; then
            python="${info% *}"
            break
        fi
    done
    [[ -n "$python" ]] ||
        die "no Python >= 3.11 found (tried python3, python3.11 ... python3.14); install one or set PYTHON=/path/to/python"
fi
say "Python ${info##* } at $python"

# ── System packages ──────────────────────────────────────────────────────────────────────────────
# Chromium (replay browser), Xvfb + xdotool (GUI tests under a virtual display), the xcb
# libraries Qt 6's X11 platform plugin loads at run time; PostgreSQL and nginx (team mode's
# tests start a database server and a token-checking proxy in front of `chroma run` of their
# own; the app itself needs neither: psycopg's wheel holds the client library). The desktop
# tests' GTK 3 app runs in the system Python (python3-gi, gir1.2-gtk-3.0) and exposes its
# accessibility tree on an AT-SPI bus the tests start (dbus, at-spi2-core).
system_packages=(
    xvfb xdotool postgresql nginx-light redis-server
    dbus at-spi2-core python3-gi gir1.2-gtk-3.0
    libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0 libxcb-image0 libxcb-render-util0 libxcb-shape0
    libxcb-randr0 libxcb-xinerama0 libxcb-xkb1 libxkbcommon-x11-0 libxkbcommon0 libegl1 libgl1
    libfontconfig1 libdbus-1-3 libglib2.0-0
)

venv_works() { [[ -x "$venv/bin/python" ]] && python_info "$venv/bin/python" >/dev/null; }

# Prints the first of the given packages that apt can install (has a candidate), if any.
first_installable() {
    local pkg candidate
    for pkg in "$@"; do
        candidate="$(apt-cache policy "$pkg" 2>/dev/null | awk '$1 == "Candidate:" {print $2}')"
        if [[ -n "$candidate" && "$candidate" != "(none)" ]]; then
            printf '%s\n' "$pkg"
            return 0
        fi
    done
    return 1
}

ensure_system_packages() {
    if [[ "${PROCEDURA_SKIP_SYSTEM_PACKAGES:-}" == 1 ]]; then
        say "System packages: skipped (PROCEDURA_SKIP_SYSTEM_PACKAGES=1)"
        system_summary="system packages skipped"
        return 0
    fi
    local wanted=("${system_packages[@]}")
    # python3-venv only matters when .venv must be made and this Python cannot make one.
    if ! venv_works && ! "$python" -c 'import ensurepip, venv' >/dev/null 2>&1; then
        wanted+=(python3-venv)
    fi

    if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-query >/dev/null 2>&1; then
        say "System packages: not Debian/Ubuntu, so not checked. The browser and GUI tests need"
        say "  Chromium and, on Linux, Xvfb, xdotool and Qt 6's xcb runtime libraries; the"
        say "  desktop accessibility tests D-Bus, at-spi2-core and GTK 3 with PyGObject"
        system_summary="system packages not checked"
        return 0
    fi

    local installed missing=() pkg
    installed=" $(dpkg-query -W -f='${Package}=${db:Status-Status} ' \
        "${wanted[@]}" chromium chromium-browser 2>/dev/null || true) "
    for pkg in "${wanted[@]}"; do
        [[ "$installed" == *" $pkg=installed "* ]] || missing+=("$pkg")
    done
    local need_chromium=1
    if [[ "$installed" == *" chromium=installed "* || "$installed" == *" chromium-browser=installed "* ]]; then
        need_chromium=0
    fi
    if ((${#missing[@]} == 0 && need_chromium == 0)); then
        say "System packages: all present"
        return 0
    fi
    local shown=("${missing[@]}")
    ((need_chromium)) && shown=(chromium "${shown[@]}")

    local as_root=()
    if ((EUID != 0)); then
        if command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
            as_root=(sudo -n)
        else
            say "System packages missing (not root and no passwordless sudo, so not installing):"
            say "  sudo apt-get install --no-install-recommends ${shown[*]}"
            system_summary="system packages missing (see above)"
            return 0
        fi
    fi
    as_root+=(env DEBIAN_FRONTEND=noninteractive)

    did_something=1
    say "System packages missing: ${shown[*]}"
    say "apt-get update"
    "${as_root[@]}" apt-get update -qq || warn "apt-get update failed; trying with the package lists there are"

    local install=() unavailable=()
    for pkg in "${missing[@]}"; do
        if first_installable "$pkg" >/dev/null; then install+=("$pkg"); else unavailable+=("$pkg"); fi
    done
    if ((need_chromium)); then
        # Debian calls it chromium; Ubuntu's is chromium-browser (a snap wrapper) where chromium has
        # no candidate.
        if pkg="$(first_installable chromium chromium-browser)"; then
            install+=("$pkg")
        else
            unavailable+=(chromium)
        fi
    fi
    if ((${#unavailable[@]})); then
        warn "no installation candidate, skipped: ${unavailable[*]}"
    fi
    if ((${#install[@]})); then
        say "apt-get install ${install[*]}"
        local log
        log="$(mktemp)"
        if ! "${as_root[@]}" apt-get install -y -qq --no-install-recommends -o Dpkg::Use-Pty=0 \
            "${install[@]}" >"$log"; then
            tail -n 30 "$log" >&2
            rm -f "$log"
            die "apt-get install failed (see above)"
        fi
        rm -f "$log"
    fi
}

ensure_system_packages

# ── .venv and the project ────────────────────────────────────────────────────────────────────────
if ! venv_works; then
    # Never wipe an existing .venv: it may only be unreadable to this user, or hold work.
    [[ -e "$venv" || -L "$venv" ]] &&
        die ".venv exists but its Python is missing, unusable or older than 3.11; remove it (rm -rf .venv) and run again"
    did_something=1
    say "Creating .venv with $python"
    "$python" -m venv "$venv" ||
        die "'$python -m venv' failed; install the venv package for it (Debian/Ubuntu: python3-venv)"
fi

if command -v sha256sum >/dev/null 2>&1; then
    pyproject_hash="$(sha256sum "$root/pyproject.toml" | cut -d' ' -f1)"
else # macOS
    pyproject_hash="$(shasum -a 256 "$root/pyproject.toml" | cut -d' ' -f1)"
fi

# The stamp records "<sha256 of pyproject.toml> <extras>"; an install with [dev] also serves a
# plain run. A missing entry point means someone uninstalled things by hand: install again.
stamped_hash="" stamped_extras=""
if [[ -f "$stamp" ]]; then
    read -r stamped_hash stamped_extras <"$stamp" || true
fi
reason=""
if [[ "$stamped_hash" != "$pyproject_hash" ]]; then
    reason="pyproject.toml changed since the last install"
    [[ -z "$stamped_hash" ]] && reason="no record of a completed install"
elif [[ -n "$extras" && "$stamped_extras" != *"$extras"* ]]; then
    reason="[$extras] extras not installed yet"
elif [[ ! -x "$venv/bin/procedura" ]]; then
    reason="the procedura command is missing"
elif [[ -n "$extras" ]]; then
    for tool in pytest ruff mypy lint-imports; do
        [[ -x "$venv/bin/$tool" ]] || reason="$tool is missing"
    done
fi

target="procedura${extras:+[$extras]}"
if [[ -n "$reason" ]]; then
    did_something=1
    say "Installing $target into .venv ($reason)"
    rm -f "$stamp"
    # --quiet keeps warnings and errors. The one warning dropped is pip's note, once per package,
    # that an extra index configured on this machine as a local folder has no such folder.
    set +e
    (cd "$root" && PIP_NO_INPUT=1 "$venv/bin/python" -m pip install --quiet \
        --disable-pip-version-check -e ".${extras:+[$extras]}" 2>&1) |
        sed -e "/^WARNING: Location 'file:.*' is ignored: it is neither a file nor a directory/d"
    pip_status="${PIPESTATUS[0]}"
    set -e
    ((pip_status == 0)) || die "pip install of $target failed (see above)"
    printf '%s %s\n' "$pyproject_hash" "$extras" >"$stamp"
else
    say ".venv: $target up to date"
fi

if ((did_something)); then
    say "Bootstrap done"
else
    say "Nothing needed: $system_summary, .venv up to date"
fi
