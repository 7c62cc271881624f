"""Settings: environment over the settings file, platform defaults, the API key never in a file."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes.keyring_backend import memory_keyring

from desktop_app.app import api_key
from desktop_app.settings import SettingsError, default_home, load_settings


def test_defaults(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = load_settings()
    assert settings.home == home
    assert settings.database_path == home / "procedura.db"
    assert settings.embedding == "minilm"
    assert settings.llm_api_key is None
    monkeypatch.delenv("PROCEDURA_HOME")
    assert load_settings().home == default_home()
    assert "procedura" in str(default_home()).lower()


def test_environment_wins_over_the_settings_file(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home.mkdir(parents=True)
    (home / "settings.toml").write_text('llm_model = "from-file"\nembedding = "openai"\n')
    settings = load_settings()
    assert (settings.llm_model, settings.embedding) == ("from-file", "openai")
    monkeypatch.setenv("PROCEDURA_LLM_MODEL", "from-env")
    assert load_settings().llm_model == "from-env"


def test_openai_variables_are_understood(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    settings = load_settings()
    assert settings.llm_base_url == "http://127.0.0.1:1/v1"
    assert api_key(settings) == ("sk-env", "environment")
    assert "sk-env" not in repr(settings)


def test_api_key_from_the_keyring(monkeypatch: pytest.MonkeyPatch) -> None:
    with memory_keyring():
        from desktop_app.adapters.secrets import delete_api_key, set_api_key

        assert api_key(load_settings()) == (None, "none")
        set_api_key("sk-kept")
        assert api_key(load_settings()) == ("sk-kept", "keyring")
        delete_api_key()
        assert api_key(load_settings()) == (None, "none")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('llm_api_key = "sk-in-a-file"', "remove llm_api_key"),
        ('embeding = "openai"', "unknown setting 'embeding'"),
        ("embedding = [", "not valid TOML"),
        ('embedding = "word2vec"', "setting embedding: Input should be 'minilm' or 'openai'"),
    ],
)
def test_bad_settings_file(home: Path, text: str, message: str) -> None:
    home.mkdir(parents=True)
    (home / "settings.toml").write_text(text)
    with pytest.raises(SettingsError, match=message) as info:
        load_settings()
    assert "sk-in-a-file" not in str(info.value)


def test_bad_setting_exits_2_with_one_line(procedura, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PROCEDURA_LLM_TIMEOUT_S", "-1")
    result = procedura("info")
    assert result.exit_code == 2
    assert result.stderr == "error: setting llm_timeout_s: Input should be greater than 0\n"
