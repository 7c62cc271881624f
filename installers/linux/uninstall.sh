#!/usr/bin/env bash
# Remove what installers/linux/install.sh installed, exactly the files its manifest lists.
#
# Usage:  uninstall.sh [--purge-data] [--yes]
#   --purge-data   also delete your data: $XDG_DATA_HOME/Procedura (workflows, recordings, runs,
#                  settings); asks first unless --yes. $PROCEDURA_HOME, if you set one, is never
#                  touched: delete it yourself.
#   --yes          do not ask
#
# Without --purge-data your data stays, and installing again finds it.
set -euo pipefail

die() {
    printf 'uninstall.sh: error: %s\n' "$*" >&2
    exit 1
}
say() { printf '==> %s\n' "$*"; }

purge=0
yes=0
for arg in "$@"; do
    case "$arg" in
        --purge-data) purge=1 ;;
        --yes | -y) yes=1 ;;
        -h | --help)
            sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
            exit 0
            ;;
        *) die "unknown argument '$arg' (expected --purge-data or --yes)" ;;
    esac
done

: "${HOME:?HOME is not set}"
data_home="${XDG_DATA_HOME:-$HOME/.local/share}"
app_dir="$data_home/procedura"
manifest="$app_dir/install-manifest.txt"
user_data="$data_home/Procedura"

if ((purge)) && [[ -d "$user_data" ]] && ((!yes)); then
    # Ask before removing anything, so that "no" leaves everything as it was.
    { : </dev/tty; } 2>/dev/null ||
        die "--purge-data deletes $user_data; pass --yes to confirm (no terminal to ask)"
    printf 'Delete all your Procedura data in %s? [y/N] ' "$user_data" >/dev/tty
    read -r answer </dev/tty || answer=""
    case "$answer" in
        y | Y | yes | YES) ;;
        *) die "not confirmed; nothing was removed" ;;
    esac
fi

if [[ -f "$manifest" ]]; then
    # shellcheck disable=SC2094  # the loop skips the manifest; it is removed after the loop
    while read -r kind path; do
        [[ -n "$path" ]] || continue
        case "$kind" in
            file)
                [[ "$path" == "$manifest" ]] && continue # last, so a failure can be retried
                rm -f -- "$path"
                ;;
            dir)
                # Only ever a directory inside the installer's own folder (the environment).
                case "$path" in
                    "$app_dir"/*) rm -rf -- "$path" ;;
                    *) die "the manifest lists $path, outside $app_dir; not removing it" ;;
                esac
                ;;
            *) die "$manifest: unexpected line '$kind $path'" ;;
        esac
        say "Removed $path"
    done <"$manifest"
    rm -f -- "$manifest"
    # Left-over staging folders of an interrupted install, then the folder itself if empty.
    rm -rf -- "$app_dir"/.venv-new.* "$app_dir"/.venv-old.* "$app_dir"/.manifest.*
    rmdir -- "$app_dir" 2>/dev/null || true
    say "Procedura is uninstalled"
else
    say "Procedura is not installed here (no $manifest); nothing to remove"
fi

if ((purge)); then
    if [[ -d "$user_data" ]]; then
        rm -rf -- "$user_data"
        say "Deleted your data in $user_data"
    fi
elif [[ -d "$user_data" ]]; then
    say "Your data stays in $user_data (delete it with --purge-data)"
fi
