"""Settings from the environment and ``<data dir>/settings.toml`` (environment wins).

| setting | environment | default |
|---|---|---|
| data directory | ``PROCEDURA_HOME`` | the platform's user data dir (platformdirs) |
| LLM endpoint | ``PROCEDURA_LLM_BASE_URL`` or ``OPENAI_BASE_URL`` | OpenAI's |
| LLM model | ``PROCEDURA_LLM_MODEL`` | ``gpt-4o-mini`` |
| LLM API key | ``PROCEDURA_LLM_API_KEY`` or ``OPENAI_API_KEY``, else the OS keyring | none |
| embeddings | ``PROCEDURA_EMBEDDING`` (``minilm`` offline, or ``openai``) | ``minilm`` |
| browser | ``PROCEDURA_BROWSER`` | Playwright's Chromium, else one on PATH |

The API key is never read from or written to a file by Procedura.
"""

from __future__ import annotations

import getpass
import os
import tomllib
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from desktop_app.core.errors import ProceduraError

__all__ = ["SETTINGS_FILE", "Settings", "SettingsError", "default_home", "load_settings"]

#: The settings file inside the data directory.
SETTINGS_FILE = "settings.toml"


class SettingsError(ProceduraError):
    """The settings file or an environment variable holds an invalid value."""


def default_home() -> Path:
    """Where Procedura keeps its data when ``PROCEDURA_HOME`` is not set."""
    return Path(platformdirs.user_data_dir("Procedura", appauthor=False))


def _default_actor() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no user name on this system
        return "unknown"


class _TomlFile(PydanticBaseSettingsSource):
    """Values from ``<home>/settings.toml``; the API key is refused there."""

    def __init__(self, settings_cls: type[BaseSettings], path: Path) -> None:
        super().__init__(settings_cls)
        self._path = path
        self._data: dict[str, Any] = {}
        if path.is_file():
            try:
                self._data = tomllib.loads(path.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise SettingsError(f"{path}: not valid TOML: {exc}") from None
        if "llm_api_key" in self._data:
            raise SettingsError(
                f"{path}: remove llm_api_key; keep the key in OPENAI_API_KEY or the OS keyring "
                "(procedura never stores it in a file)"
            )
        unknown = set(self._data) - set(settings_cls.model_fields) - {"home"}
        if unknown:
            raise SettingsError(f"{path}: unknown setting {sorted(unknown)[0]!r}")

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self._data.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return {k: v for k, v in self._data.items() if k != "home"}


class Settings(BaseSettings):
    """Every user-facing setting. Build it with :func:`load_settings`."""

    model_config = SettingsConfigDict(env_prefix="PROCEDURA_", extra="ignore", frozen=True)

    home: Path = Field(default_factory=default_home)
    actor: str = Field(default_factory=_default_actor, min_length=1)

    llm_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("PROCEDURA_LLM_BASE_URL", "OPENAI_BASE_URL")
    )
    llm_model: str = "gpt-4o-mini"
    llm_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("PROCEDURA_LLM_API_KEY", "OPENAI_API_KEY")
    )
    llm_timeout_s: float = Field(default=60.0, gt=0)
    llm_max_calls_per_step: int = Field(default=3, ge=0)
    llm_max_calls_per_run: int = Field(default=20, ge=0)
    llm_max_tokens_per_run: int = Field(default=60_000, ge=0)

    replay_patience_s: float = Field(default=3.0, gt=0, le=60)
    #: Ask before an irreversible step found by healing acts (the GUI's and tray's default;
    #: the command line asks unless ``--yes``).
    confirm_irreversible: bool = True

    embedding: Literal["minilm", "openai"] = "minilm"
    embedding_model: str = "text-embedding-3-small"
    embedding_base_url: str | None = None

    browser: Path | None = None

    @field_validator("home", "browser", mode="after")
    @classmethod
    def _expand(cls, value: Path | None) -> Path | None:
        return value.expanduser() if value is not None else None

    @property
    def database_path(self) -> Path:
        """The SQLite database file."""
        return self.home / "procedura.db"

    @property
    def media_dir(self) -> Path:
        """The content-addressed media store."""
        return self.home / "media"

    @property
    def index_dir(self) -> Path:
        """The Chroma index (rebuildable from the database)."""
        return self.home / "index"

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        home = os.environ.get("PROCEDURA_HOME")
        toml = (Path(home).expanduser() if home else default_home()) / SETTINGS_FILE
        return (init_settings, env_settings, _TomlFile(settings_cls, toml))


def load_settings(**overrides: Any) -> Settings:
    """Settings from the environment and the settings file, with *overrides* on top.

    Raises:
        SettingsError: a value is invalid (the message names the setting).
    """
    from pydantic import ValidationError

    try:
        return Settings(**overrides)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        name = ".".join(str(p) for p in err["loc"])
        raise SettingsError(f"setting {name}: {err['msg']}") from None
