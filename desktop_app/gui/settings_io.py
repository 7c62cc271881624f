"""What the Settings screen does to disk and network: settings file, data pointer, LLM test.

Everything here blocks (disk, keyring, HTTP): the window calls it through the backend on the store
thread. The API key is never written to a file: it lives in the environment or the OS keyring
(:mod:`desktop_app.adapters.secrets`).
"""

from __future__ import annotations

import os
import time
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

import tomli_w
from pydantic import BaseModel, SecretStr, ValidationError

from desktop_app.core.llm import LLMInvalidOutput, LLMUnavailable
from desktop_app.files import write_atomically
from desktop_app.settings import (
    SETTINGS_FILE,
    Settings,
    SettingsError,
    data_dir_pointer_path,
    load_settings,
    platform_home,
)

__all__ = [
    "FILE_SETTINGS",
    "TEST_TIMEOUT_S",
    "describe_browser",
    "save_settings",
    "test_llm_connection",
    "write_data_dir_pointer",
]

#: The settings the settings file may hold (the data directory and the API key are not among them).
FILE_SETTINGS: Final = tuple(
    n
    for n in Settings.model_fields
    if n not in ("home", "llm_api_key", "team_password", "team_index_token")
)
#: The longest a connection test waits for the LLM (less when the LLM timeout setting is shorter).
TEST_TIMEOUT_S: Final = 15.0

_HEADER: Final = (
    "# Procedura settings (see docs/settings.md); environment variables win over this file.\n"
    "# Written by the desktop app's Settings screen. The API key is never kept here.\n\n"
)


def save_settings(current: Settings, values: Mapping[str, Any]) -> Settings:
    """Merge *values* into ``<home>/settings.toml`` and return the settings now in force.

    A value of None, or one equal to the setting's default, removes the setting from the file.
    The result is validated before anything is written; the file is replaced atomically.
    Environment variables still win over the file, so the settings returned may differ from
    *values* for a setting the environment sets.

    Raises:
        SettingsError: a value is invalid, the setting is unknown, or it is the API key or the
            data directory (which never go in this file); nothing is written.
    """
    for name in values:
        if name in ("llm_api_key", "team_password", "team_index_token"):
            raise SettingsError(
                "the API key is never written to a file; save it in the OS keyring instead",
                setting=name,
            )
        if name == "home":
            raise SettingsError(
                "the data directory is not kept in settings.toml; choose it on the Settings "
                "screen (a pointer file) or with PROCEDURA_HOME",
                setting=name,
            )
        if name not in FILE_SETTINGS:
            raise SettingsError(f"unknown setting {name!r}", setting=name)

    path = current.home / SETTINGS_FILE
    stored = _read(path)
    stored.pop("llm_api_key", None)  # never kept, whatever put it there

    given = {name: _plain(name, value) for name, value in values.items()}
    if given.get("browser") is not None:
        browser = Path(str(given["browser"])).expanduser()
        if not browser.is_file():
            raise SettingsError(
                f"setting browser: there is no file at {browser}", setting="browser"
            )
    for name in ("llm_base_url", "embedding_base_url"):
        url = given.get(name)
        if url is not None and not _is_http_url(str(url)):
            raise SettingsError(
                f"setting {name}: {str(url)!r} is not an http:// or https:// URL "
                "(for example http://127.0.0.1:11434/v1)",
                setting=name,
            )
    candidate = {name: value for name, value in given.items() if value is not None}
    try:
        checked = Settings(home=current.home, **candidate)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        name = ".".join(str(p) for p in err["loc"])
        raise SettingsError(f"setting {name}: {err['msg']}", setting=name) from None

    dumped = checked.model_dump(mode="json")
    for name, value in given.items():
        default = Settings.model_fields[name].get_default(call_default_factory=True)
        if value is None or getattr(checked, name) == default:
            stored.pop(name, None)
        else:
            stored[name] = dumped[name]

    ordered = {name: stored[name] for name in FILE_SETTINGS if name in stored}
    ordered.update({name: value for name, value in stored.items() if name not in ordered})
    try:
        write_atomically(path, (_HEADER + tomli_w.dumps(ordered)).encode("utf-8"), force=True)
    except OSError as exc:
        raise SettingsError(f"cannot write {path} ({exc.strerror or exc})") from None
    return load_settings(home=current.home)


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path}: cannot read it ({exc})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: not valid TOML ({exc}); fix or delete the file") from None


def _is_http_url(text: str) -> bool:
    parts = urlsplit(text.strip())
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def _plain(name: str, value: Any) -> Any:
    """*value* as TOML can hold it (paths as text; blank text means "not set")."""
    if isinstance(value, SecretStr):
        raise SettingsError("secrets are never written to the settings file", setting=name)
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, str):
        return value.strip() or None
    return value


# ── the data directory pointer ──────────────────────────────────────────────────────────────


def write_data_dir_pointer(path: Path | None) -> Path | None:
    """Make the next start use *path* as the data directory (None: the platform's default).

    Writes (or removes) the pointer file read by :func:`desktop_app.settings.default_home`; it
    only matters while ``PROCEDURA_HOME`` is not set. The folder is created if needed. Nothing
    is moved. Returns the folder the pointer now names (None: no pointer).

    Raises:
        SettingsError: *path* is relative, is a file, or cannot be created or written to.
    """
    pointer = data_dir_pointer_path()
    if path is None or path.expanduser() == platform_home():
        try:
            pointer.unlink(missing_ok=True)
        except OSError as exc:
            raise SettingsError(
                f"cannot remove {pointer} ({exc.strerror})", setting="home"
            ) from None
        return None
    folder = path.expanduser()
    if not folder.is_absolute():
        raise SettingsError(
            f"the data directory must be an absolute path, not {str(path)!r}", setting="home"
        )
    if folder.exists() and not folder.is_dir():
        raise SettingsError(f"{folder} is a file, not a folder", setting="home")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SettingsError(
            f"cannot create the data directory {folder} ({exc.strerror})", setting="home"
        ) from None
    if not os.access(folder, os.W_OK):
        raise SettingsError(f"cannot write to {folder}; choose a folder you own", setting="home")
    try:
        write_atomically(pointer, f"{folder}\n".encode(), force=True)
    except OSError as exc:
        raise SettingsError(f"cannot write {pointer} ({exc.strerror})", setting="home") from None
    return folder


# ── the browser ─────────────────────────────────────────────────────────────────────────────

_BROWSER_SOURCES: Final = {
    "setting": "the browser chosen here",
    "playwright": "Playwright's Chromium",
    "system": "found on PATH",
}


def describe_browser(configured: Path | None) -> str:
    """One line: the browser recording and replay would use now, or why there is none."""
    from desktop_app.adapters.browsers import find_browser

    found = find_browser(configured)
    if found is not None:
        return f"{found.path} ({_BROWSER_SOURCES.get(found.source, found.source)})"
    if configured is not None:
        return f"none: there is no file at {configured}"
    return (
        "none found: install Playwright's Chromium (playwright install chromium), "
        "or Chromium or Chrome, or choose a browser"
    )


# ── the LLM ─────────────────────────────────────────────────────────────────────────────────


class _Ping(BaseModel):
    """The answer a connection test asks for."""

    ok: bool


_SYSTEM: Final = "You check that a connection works. Answer with JSON only."
_USER: Final = 'Reply with exactly this JSON object: {"ok": true}'


def test_llm_connection(settings: Settings) -> str:
    """Make one small structured chat completion with the configured LLM; what answered.

    Uses the same client as replay and induction, with a short timeout and no retries.

    Returns:
        One line, e.g. ``gpt-4o-mini at https://api.openai.com/v1 answered in 420 ms``.

    Raises:
        LLMUnavailable: nothing is configured, the endpoint cannot be reached or timed out,
            the key was refused, or the model is unknown.
        LLMInvalidOutput: the endpoint answered, but not with the JSON asked for.
        LLMError: any other failure (one line, never with the key).
    """
    from desktop_app.adapters.llm import make_llm
    from desktop_app.app import api_key

    key, _ = api_key(settings)
    timeout = min(settings.llm_timeout_s, TEST_TIMEOUT_S)
    llm = make_llm(settings.llm_base_url, settings.llm_model, key, timeout, max_calls=2)
    if llm is None:
        raise LLMUnavailable(
            "no LLM is configured: enter the LLM base URL (for a local server) or save an "
            "API key, apply, then test again"
        )
    started = time.perf_counter()
    try:
        llm.complete(system=_SYSTEM, user=_USER, output=_Ping)
    except LLMInvalidOutput as exc:
        raise LLMInvalidOutput(
            f"{exc.problem} ({llm.model} at {llm.endpoint} answered, but not with the JSON "
            "asked for; choose a model that can answer in JSON)",
            usage=exc.usage,
        ) from None
    elapsed_ms = round((time.perf_counter() - started) * 1000)
    return f"{llm.model} at {llm.endpoint} answered in {elapsed_ms} ms"
