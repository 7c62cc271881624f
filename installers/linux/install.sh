#!/usr/bin/env bash
# Install Procedura for the current user (no root needed). Running it again upgrades in place.
#
# Usage:  installers/linux/install.sh [--source DIR | --wheel FILE] [--autostart | --no-autostart]
#                                     [--prefix DIR] [--python PY]
#   --source DIR   install from this source tree (default: the checkout this script lives in)
#   --wheel FILE   install this procedura wheel instead
#   --autostart    also start the tray at login (~/.config/autostart/procedura.desktop)
#   --no-autostart do not (an upgrade keeps the choice of the install before unless told)
#   --prefix DIR   put the launcher in DIR/bin (default: ~/.local, so ~/.local/bin/procedura)
#   --python PY    the Python (3.11 or newer) to build the environment with (default: $PYTHON,
#                  else the first of python3, python3.11 ... python3.14 that is new enough)
#
# What it writes (and lists in $XDG_DATA_HOME/procedura/install-manifest.txt, so that
# uninstall.sh removes exactly that):
#   $XDG_DATA_HOME/procedura/venv                  the program: a virtual environment
#   $XDG_DATA_HOME/procedura/uninstall.sh          a copy of the uninstaller
#   ~/.local/bin/procedura                         the launcher (a tiny sh script)
#   $XDG_DATA_HOME/applications/procedura.desktop  the menu entry (runs `procedura gui`)
#   $XDG_DATA_HOME/icons/hicolor/{scalable,256x256}/apps/procedura.{svg,png}
#   $XDG_CONFIG_HOME/autostart/procedura.desktop   with --autostart (runs `procedura gui --tray`)
# Your data (workflows, recordings, settings) lives elsewhere, in $XDG_DATA_HOME/Procedura (or
# $PROCEDURA_HOME); this script never touches it. XDG_DATA_HOME defaults to ~/.local/share and
# XDG_CONFIG_HOME to ~/.config. pip's own configuration, cache and PIP_* variables apply.
set -euo pipefail

die() {
    printf 'install.sh: error: %s\n' "$*" >&2
    exit 1
}
say() { printf '==> %s\n' "$*"; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source_dir="$(cd "$here/../.." && pwd)"
wheel=""
autostart="" # 1, 0, or empty: as the install before (none: no autostart)
prefix="${HOME:?HOME is not set}/.local"
python_arg="${PYTHON:-}"

while (($#)); do
    case "$1" in
        --source)
            (($# >= 2)) || die "--source needs a directory"
            [[ -f "$2/pyproject.toml" ]] || die "--source $2: no pyproject.toml there"
            source_dir="$(cd "$2" && pwd)"
            shift
            ;;
        --wheel)
            (($# >= 2)) || die "--wheel needs a file"
            [[ -f "$2" && "$2" == *.whl ]] || die "--wheel $2: not a .whl file"
            wheel="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
            shift
            ;;
        --autostart) autostart=1 ;;
        --no-autostart) autostart=0 ;;
        --prefix)
            (($# >= 2)) || die "--prefix needs a directory"
            prefix="$2"
            shift
            ;;
        --python)
            (($# >= 2)) || die "--python needs an interpreter"
            python_arg="$2"
            shift
            ;;
        -h | --help)
            sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
            exit 0
            ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
    shift
done

data_home="${XDG_DATA_HOME:-$HOME/.local/share}"
config_home="${XDG_CONFIG_HOME:-$HOME/.config}"
app_dir="$data_home/procedura"
venv="$app_dir/venv"
manifest="$app_dir/install-manifest.txt"
bin_dir="$prefix/bin"
launcher="$bin_dir/procedura"
desktop_file="$data_home/applications/procedura.desktop"
icon_svg="$data_home/icons/hicolor/scalable/apps/procedura.svg"
icon_png="$data_home/icons/hicolor/256x256/apps/procedura.png"
autostart_file="$config_home/autostart/procedura.desktop"
marker="Installed by Procedura's installers/linux/install.sh"
if [[ -z "$autostart" ]]; then # an upgrade keeps the autostart entry the last install wrote
    autostart=0
    [[ -f "$manifest" ]] && grep -qxF "file $autostart_file" "$manifest" && autostart=1
fi

# The launcher's path goes into Exec= lines quoted; refuse the few characters that would need
# escaping there rather than risk a broken menu entry.
case "$launcher" in
    *[\"\`\$\\%]*) die "the launcher path $launcher contains one of \" \` \$ \\ %; use --prefix" ;;
esac

# ── Python ───────────────────────────────────────────────────────────────────────────────────────
python_ok() {
    "$1" -c 'import sys; raise SystemExit(sys.version_info < (3, 11))' >/dev/null 2>&1
}
python=""
if [[ -n "$python_arg" ]]; then
    python_ok "$python_arg" || die "$python_arg is not a working Python 3.11 or newer"
    python="$python_arg"
else
    for candidate in python3 python3.11 python3.12 python3.13 python3.14; do
        if command -v "$candidate" >/dev/null 2>&1 && python_ok "$candidate"; then
            python="$candidate"
            break
        fi
    done
    [[ -n "$python" ]] ||
        die "no Python 3.11 or newer found (tried python3, python3.11 ... python3.14); install one or pass --python"
fi
"$python" -c 'import venv, ensurepip' >/dev/null 2>&1 ||
    die "$python has no venv/ensurepip module; install it (Debian/Ubuntu: sudo apt install python3-venv)"

# A case-insensitive file system would put the program inside the user's data folder.
if [[ -d "$data_home/Procedura" && "$data_home/procedura" -ef "$data_home/Procedura" ]]; then
    die "$data_home is case-insensitive, so $app_dir would be the data folder; not supported"
fi

# Refuse to replace a file this installer did not write (someone else's `procedura`, say).
ours() { [[ ! -e "$1" ]] || grep -qF "$marker" "$1" 2>/dev/null; }
for f in "$launcher" "$desktop_file" "$autostart_file"; do
    ours "$f" || die "$f exists and was not written by this installer; move it away first"
done

# ── The program: a fresh environment, moved into place only once pip succeeded ──────────────────
mkdir -p "$app_dir"
staging="$(mktemp -d "$app_dir/.venv-new.XXXXXX")"
old=""
new_manifest=""
prepared=""
cleanup() {
    [[ -n "$staging" ]] && rm -rf "$staging"
    [[ -n "$prepared" ]] && rm -rf "$prepared"
    [[ -n "$old" && -d "$old" ]] && rm -rf "$old"
    [[ -n "$new_manifest" ]] && rm -f "$new_manifest"
    return 0
}
trap cleanup EXIT

target="${wheel:-$source_dir}"
say "Creating the environment with $("$python" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
"$python" -m venv "$staging" || die "'$python -m venv' failed (see above)"
say "Installing Procedura from $target (pip; this takes a minute)"
# --quiet keeps warnings and errors. The one line dropped is pip's note, once per package, that an
# extra index configured on this machine as a local folder has no such folder.
set +e
PIP_NO_INPUT=1 "$staging/bin/python" -m pip install --quiet --disable-pip-version-check \
    "$target" 2>&1 |
    sed -e "/^WARNING: Location 'file:.*' is ignored: it is neither a file nor a directory/d"
pip_status="${PIPESTATUS[0]}"
set -e
((pip_status == 0)) || die "pip could not install Procedura from $target (see above); nothing was changed"
"$staging/bin/python" -P -m desktop_app --version >/dev/null ||
    die "the new environment cannot run Procedura (see above); nothing was changed"

# Everything else is prepared (and the menu entries validated) before anything is replaced.
prepared="$staging.files"
mkdir "$prepared"
icons="$("$staging/bin/python" -P -c 'from desktop_app.resources import resource_path
print(resource_path("icons"))')" || die "the installed package has no icons (see above); nothing was changed"
cp "$icons/procedura.svg" "$icons/procedura-256.png" "$prepared/"

desktop_entry() { # $1: extra arguments after "gui", $2: an extra line
    cat <<EOF
[Desktop Entry]
# $marker
Type=Application
Version=1.0
Name=Procedura
GenericName=Procedure recorder
Comment=Turn one demonstration into a reusable, reviewable, self-healing procedure
Exec="$launcher" gui$1
TryExec=$launcher
Icon=procedura
Terminal=false
Categories=Office;
Keywords=workflow;automation;record;replay;
StartupNotify=false
$2
EOF
}
desktop_entry "" "" >"$prepared/menu.desktop"
desktop_entry " --tray" "X-GNOME-Autostart-enabled=true" >"$prepared/autostart.desktop"
if command -v desktop-file-validate >/dev/null 2>&1; then
    for f in "$prepared"/*.desktop; do
        desktop-file-validate "$f" || die "desktop-file-validate rejected $f (see above); nothing was changed"
    done
fi

# The environment is not relocatable (console scripts carry its path in their first line), so
# the launcher runs it as "$venv/bin/python -P -m desktop_app", which survives the move. -P keeps
# the current directory off sys.path: a desktop_app folder there (a checkout) is never run.
if [[ -d "$venv" ]]; then
    old="$app_dir/.venv-old.$$"
    mv "$venv" "$old"
fi
mv "$staging" "$venv"
staging=""
version="$("$venv/bin/python" -P -m desktop_app --version | awk '{print $NF}')"

# ── Launcher, menu entry, icons, autostart ───────────────────────────────────────────────────────
new_manifest="$(mktemp "$app_dir/.manifest.XXXXXX")"
record() { printf '%s %s\n' "$1" "$2" >>"$new_manifest"; }
record dir "$venv"

# Writes stdin to $1 atomically (mode $2, default 644) and records it in the manifest.
write_file() {
    local tmp
    mkdir -p "$(dirname "$1")"
    tmp="$(mktemp "$(dirname "$1")/.procedura.XXXXXX")"
    cat >"$tmp"
    chmod "${2:-644}" "$tmp"
    mv -f "$tmp" "$1"
    record file "$1"
}

write_file "$launcher" 755 <<EOF
#!/bin/sh
# $marker; uninstall with $app_dir/uninstall.sh
exec "$venv/bin/python" -P -m desktop_app "\$@"
EOF
write_file "$app_dir/uninstall.sh" 755 <"$here/uninstall.sh"
write_file "$icon_svg" <"$prepared/procedura.svg"
write_file "$icon_png" <"$prepared/procedura-256.png"
write_file "$desktop_file" <"$prepared/menu.desktop"
if ((autostart)); then
    write_file "$autostart_file" <"$prepared/autostart.desktop"
fi


# ── Manifest: files the previous install wrote and this one did not (say, autostart) go ──────────
record file "$manifest"
if [[ -f "$manifest" ]]; then
    while read -r kind path; do
        [[ "$kind" == file ]] || continue
        grep -qxF "file $path" "$new_manifest" && continue
        if [[ -f "$path" ]]; then
            rm -f "$path"
            say "Removed $path (not part of this install)"
        fi
    done <"$manifest"
fi
mv -f "$new_manifest" "$manifest"
new_manifest=""

say "Installed Procedura $version"
say "  program:   $venv"
say "  launcher:  $launcher"
say "  menu:      $desktop_file"
((autostart)) && say "  autostart: $autostart_file"
say "  your data: ${PROCEDURA_HOME:-$data_home/Procedura} (kept by uninstall.sh unless --purge-data)"
case ":$PATH:" in
    *":$bin_dir:"*) ;;
    *) say "Note: $bin_dir is not on your PATH; add it (e.g. in ~/.profile) to type 'procedura'" ;;
esac
say "Uninstall with: $app_dir/uninstall.sh"
