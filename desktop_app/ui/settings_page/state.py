"""What the Settings screen shows: the settings in force and where each comes from."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from desktop_app.settings import Settings

__all__ = ["SettingsState"]


@dataclass(frozen=True, slots=True)
class SettingsState:
    """What the screen shows, loaded on the store thread.

    Attributes:
        settings: the settings in force.
        overrides: the settings the environment sets: name → variable.
        key_source: where the API key comes from (``environment``, ``keyring``, ``none``).
        browser: the browser found now, in one line.
        pointer: the data folder the next start uses when PROCEDURA_HOME is unset.
        pointer_problem: why the pointer file could not be read, if it could not.
    """

    settings: Settings
    overrides: dict[str, str] = field(default_factory=dict)
    key_source: str = "none"
    browser: str = ""
    pointer: Path | None = None
    pointer_problem: str | None = None
