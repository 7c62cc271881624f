"""Settings from the environment and ``<data dir>/settings.toml`` (environment wins).

| setting | environment | default |
|---|---|---|
| data directory | ``PROCEDURA_HOME``, else the pointer file | the platform's user data dir |
| LLM endpoint | ``PROCEDURA_LLM_BASE_URL`` or ``OPENAI_BASE_URL`` | OpenAI's |
| LLM model | ``PROCEDURA_LLM_MODEL`` | ``gpt-4o-mini`` |
| LLM API key | ``PROCEDURA_LLM_API_KEY`` or ``OPENAI_API_KEY``, else the OS keyring | none |
| embeddings | ``PROCEDURA_EMBEDDING`` (``minilm`` offline, or ``openai``) | ``minilm`` |
| browser | ``PROCEDURA_BROWSER`` | Playwright's Chromium, else one on PATH |
| team database | ``PROCEDURA_TEAM_DATABASE`` | none (personal mode) |
| team index | ``PROCEDURA_TEAM_INDEX`` | none |
| team queue | ``PROCEDURA_TEAM_QUEUE`` | none (no runner fleet) |
| team password | ``PROCEDURA_TEAM_PASSWORD``, else the OS keyring | none |
| team index token | ``PROCEDURA_TEAM_INDEX_TOKEN``, else the OS keyring | none |

The API key, the team password and the index token are never read from or written to a file
by Procedura. In team mode (a team database is set) the actor is the database user: the
server, not the client, says who did what.

The data directory can also be chosen with a pointer file, ``data-dir.txt`` in the platform's user
config dir (``platformdirs.user_config_dir("Procedura")``): one line, the absolute path. It is read
when ``PROCEDURA_HOME`` is not set (the desktop app's Settings screen writes it), so the choice
lives outside the data directory it names. The desktop app keeps where its windows were in
``windows.ini`` beside it: positions belong to this machine's screens, not to the data.
"""

from __future__ import annotations

import getpass
import os
import tomllib
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from desktop_app.core.errors import ProceduraError

__all__ = [
    "DATA_DIR_POINTER",
    "SETTINGS_FILE",
    "WINDOW_STATE_FILE",
    "Settings",
    "SettingsError",
    "data_dir_pointer_path",
    "default_home",
    "environment_overrides",
    "environment_variables",
    "load_settings",
    "platform_home",
    "read_data_dir_pointer",
    "window_state_path",
]

#: The settings file inside the data directory.
SETTINGS_FILE = "settings.toml"
#: The pointer file in the user config dir that names the data directory.
DATA_DIR_POINTER = "data-dir.txt"
#: Where the desktop app's windows were (size, place, maximised), in the user config dir.
WINDOW_STATE_FILE = "windows.ini"


class SettingsError(ProceduraError):
    """The settings file or an environment variable holds an invalid value.

    Args:
        message: what is wrong, in one line.
        setting: the name of the setting at fault, when one is.
    """

    def __init__(self, message: str, *, setting: str | None = None) -> None:
        super().__init__(message)
        self.setting = setting


def platform_home() -> Path:
    """The platform's user data dir for Procedura (the data directory when nothing else says)."""
    return Path(platformdirs.user_data_dir("Procedura", appauthor=False))


def data_dir_pointer_path() -> Path:
    """Where the data-directory pointer lives: ``data-dir.txt`` in the user config dir."""
    return Path(platformdirs.user_config_dir("Procedura", appauthor=False)) / DATA_DIR_POINTER


def window_state_path() -> Path:
    """Where the desktop app remembers its windows: ``windows.ini`` in the user config dir."""
    return data_dir_pointer_path().with_name(WINDOW_STATE_FILE)


def read_data_dir_pointer() -> Path | None:
    """The data directory the pointer file names, or None when there is no pointer.

    Raises:
        SettingsError: the pointer cannot be read or does not hold an absolute path.
    """
    pointer = data_dir_pointer_path()
    try:
        text = pointer.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{pointer}: cannot read the data directory pointer ({exc})") from None
    if not text:
        return None
    path = Path(text).expanduser()
    if not path.is_absolute():
        raise SettingsError(
            f"{pointer}: the data directory must be an absolute path, not {text!r}; "
            "fix or delete the file",
            setting="home",
        )
    return path


def default_home() -> Path:
    """Where Procedura keeps its data when ``PROCEDURA_HOME`` is not set.

    The folder the pointer file names (:func:`read_data_dir_pointer`), else
    :func:`platform_home`.
    """
    return read_data_dir_pointer() or platform_home()


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
        for secret in ("team_password", "team_index_token"):
            if secret in self._data:
                raise SettingsError(
                    f"{path}: remove {secret}; keep it in the OS keyring (procedura team join) "
                    f"or in PROCEDURA_{secret.upper()} (procedura never stores it in a file)"
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

    # validate_by_name: the settings file and keyword overrides use field names even where the
    # environment has other names (llm_base_url from OPENAI_BASE_URL).
    model_config = SettingsConfigDict(
        env_prefix="PROCEDURA_",
        extra="ignore",
        frozen=True,
        validate_by_name=True,
        validate_by_alias=True,
    )

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
    #: The model sees images: desktop replay may show it a screenshot to find where to click.
    llm_vision: bool = False

    replay_patience_s: float = Field(default=3.0, gt=0, le=60)
    #: How long a page just loaded must be quiet before replay acts on it.
    replay_ready_quiet_s: float = Field(default=0.1, ge=0, le=5)
    #: How long the app must be quiet, nothing pending, after the last step of a run.
    replay_save_quiet_s: float = Field(default=0.2, ge=0, le=10)
    #: How long an action the page reacted to when recorded may take to get a reaction.
    replay_reaction_s: float = Field(default=1.5, gt=0, le=30)
    #: The longest a run may take, in minutes (a loop over many items included): past it the
    #: run stops before its next step and fails, saying so (0: no limit).
    run_time_limit_min: int = Field(default=0, ge=0, le=24 * 60)
    #: Ask before an irreversible step found by healing acts (the GUI's and tray's default;
    #: the command line asks unless ``--yes``).
    confirm_irreversible: bool = True
    #: A version nobody ran for this many days is flagged stale in the Library (0: never).
    stale_after_days: int = Field(default=60, ge=0, le=3650)
    #: Online induction: an agent step done the same way in this many runs in a row is
    #: proposed as recorded steps, and text parameters as their type (0: never).
    propose_after_runs: int = Field(default=3, ge=0, le=100)

    embedding: Literal["minilm", "openai"] = "minilm"
    embedding_model: str = "text-embedding-3-small"
    embedding_base_url: str | None = None

    browser: Path | None = None

    #: Team mode: the team's PostgreSQL database (a URL without its password).
    team_database: str | None = None
    #: Team mode: the team's Chroma server (``http://host:8000``).
    team_index: str | None = None
    #: Team mode: the runner fleet's queue, a Redis URL (``redis://host:6379/0``).
    team_queue: str | None = None
    team_password: SecretStr | None = None
    team_index_token: SecretStr | None = None
    #: How long a fleet worker's hold on a row lasts unless renewed (it renews a third of the
    #: way): past it, a worker that vanished is taken to be gone and the row taken again.
    fleet_lease_s: float = Field(default=60.0, ge=1, le=3600)
    #: How long the queue waits for a worker to finish a row before handing it to another
    #: (Redis's visibility timeout; the lease keeps a row from being run twice meanwhile).
    fleet_redeliver_s: float = Field(default=300.0, ge=2, le=86400)

    @model_validator(mode="before")
    @classmethod
    def _team_actor(cls, data: Any) -> Any:
        """In team mode the actor is the database user (its login decides what it may do)."""
        if isinstance(data, dict) and data.get("team_database"):
            from sqlalchemy import make_url
            from sqlalchemy.exc import ArgumentError

            try:
                url = make_url(str(data["team_database"]))
            except ArgumentError:
                raise ValueError("team_database is not a database URL") from None
            if url.password is not None:
                raise ValueError(
                    "team_database holds a password: keep it in the OS keyring "
                    "(procedura team join) or PROCEDURA_TEAM_PASSWORD"
                )
            if not url.username:
                raise ValueError("team_database names no user (postgresql://USER@host/db)")
            data = {**data, "actor": url.username}
        return data

    @property
    def team(self) -> bool:
        """Whether this is team mode (a shared database) rather than personal mode."""
        return self.team_database is not None

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
        # The file of the data directory in force: an explicit home (--home), else the
        # environment's, else the default.
        home = getattr(init_settings, "init_kwargs", {}).get("home") or os.environ.get(
            "PROCEDURA_HOME"
        )
        toml = (Path(home).expanduser() if home else default_home()) / SETTINGS_FILE
        return (init_settings, env_settings, _TomlFile(settings_cls, toml))


def environment_variables(name: str) -> tuple[str, ...]:
    """The environment variables that set the setting *name*, in the order they are read."""
    if name not in Settings.model_fields:
        raise KeyError(name)
    alias = Settings.model_fields[name].validation_alias
    if isinstance(alias, AliasChoices):
        return tuple(str(choice) for choice in alias.choices)
    return (f"PROCEDURA_{name.upper()}",)


def environment_overrides() -> dict[str, str]:
    """The settings the environment sets now (which win over the file): name → variable."""
    present = {key.upper() for key in os.environ}
    found: dict[str, str] = {}
    for name in Settings.model_fields:
        for variable in environment_variables(name):
            if variable.upper() in present:
                found[name] = variable
                break
    return found


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
        message = str(err["msg"]).removeprefix("Value error, ")
        if not name:  # a check of several settings at once
            raise SettingsError(f"settings: {message}") from None
        raise SettingsError(f"setting {name}: {message}", setting=name) from None
