"""Writing settings.toml, the data-directory pointer, and testing the LLM connection."""

from __future__ import annotations

import re
import socket
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.openai_server import FakeOpenAIServer

from desktop_app.core.llm import LLMError, LLMInvalidOutput, LLMUnavailable
from desktop_app.gui import settings_io
from desktop_app.settings import (
    SettingsError,
    data_dir_pointer_path,
    default_home,
    environment_overrides,
    load_settings,
    platform_home,
    read_data_dir_pointer,
)


@pytest.fixture
def browser_exe(tmp_path: Path) -> Path:
    exe = tmp_path / "bin" / "my-chromium"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


@pytest.fixture
def user_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """platformdirs' config and data dirs inside the test's tmp dir (Linux: XDG variables)."""
    if sys.platform != "linux":
        pytest.skip("platformdirs follows XDG_* variables on Linux only")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path


@pytest.fixture
def chat_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(default_chat='{"ok": true}') as server:
        yield server


# ── settings.toml ───────────────────────────────────────────────────────────────────────────


def test_saved_settings_are_what_a_fresh_load_sees(home: Path, browser_exe: Path) -> None:
    saved = settings_io.save_settings(
        load_settings(),
        {
            "llm_base_url": "http://127.0.0.1:11434/v1",
            "llm_model": "qwen2.5:7b-instruct",
            "llm_max_calls_per_run": 7,
            "replay_patience_s": 4.5,
            "confirm_irreversible": False,
            "embedding": "openai",
            "browser": browser_exe,
        },
    )
    fresh = load_settings()
    for settings in (saved, fresh):
        assert settings.llm_base_url == "http://127.0.0.1:11434/v1"
        assert settings.llm_model == "qwen2.5:7b-instruct"
        assert settings.llm_max_calls_per_run == 7
        assert settings.replay_patience_s == 4.5
        assert settings.confirm_irreversible is False
        assert settings.embedding == "openai"
        assert settings.browser == browser_exe
    text = (home / "settings.toml").read_text()
    assert "llm_api_key" not in text
    assert text.startswith("# Procedura settings")


def test_defaults_and_blanks_leave_the_file(home: Path) -> None:
    settings = settings_io.save_settings(load_settings(), {"llm_model": "m1", "actor": "ann"})
    settings = settings_io.save_settings(settings, {"llm_model": "gpt-4o-mini"})
    settings = settings_io.save_settings(settings, {"llm_base_url": "   ", "llm_model": None})
    text = (home / "settings.toml").read_text()
    assert "llm_model" not in text and "llm_base_url" not in text
    assert 'actor = "ann"' in text
    assert settings.llm_model == "gpt-4o-mini"


@pytest.mark.parametrize(
    ("values", "setting", "message"),
    [
        (
            {"llm_max_calls_per_run": -1},
            "llm_max_calls_per_run",
            "setting llm_max_calls_per_run: Input should be greater than or equal to 0",
        ),
        (
            {"replay_patience_s": 61},
            "replay_patience_s",
            "setting replay_patience_s: Input should be less than or equal to 60",
        ),
        ({"embedding": "word2vec"}, "embedding", "setting embedding: Input should be 'minilm'"),
        (
            {"llm_base_url": "localhost:11434/v1"},
            "llm_base_url",
            "setting llm_base_url: 'localhost:11434/v1' is not an http:// or https:// URL",
        ),
        ({"browser": "/nowhere/chrome"}, "browser", "setting browser: there is no file at"),
        ({"llm_api_key": "sk-never"}, "llm_api_key", "the API key is never written to a file"),
        ({"home": "/elsewhere"}, "home", "the data directory is not kept in settings.toml"),
        ({"embeding": "openai"}, "embeding", "unknown setting 'embeding'"),
    ],
)
def test_an_invalid_value_writes_nothing(
    home: Path, values: dict[str, object], setting: str, message: str
) -> None:
    home.mkdir(parents=True)
    before = 'llm_model = "kept"\n'
    (home / "settings.toml").write_text(before)
    with pytest.raises(SettingsError) as info:
        settings_io.save_settings(load_settings(), {"llm_max_calls_per_step": 1, **values})
    assert str(info.value).startswith(message)
    assert info.value.setting == setting
    assert "sk-never" not in str(info.value)
    assert (home / "settings.toml").read_text() == before
    assert [p.name for p in home.iterdir()] == ["settings.toml"]  # no temporary file left


def test_the_environment_still_wins_over_what_is_saved(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROCEDURA_LLM_MODEL", "from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    saved = settings_io.save_settings(
        load_settings(), {"llm_model": "from-file", "llm_base_url": "http://127.0.0.1:8/v1"}
    )
    assert (saved.llm_model, saved.llm_base_url) == ("from-env", "http://127.0.0.1:9/v1")
    assert 'llm_model = "from-file"' in (home / "settings.toml").read_text()
    overrides = environment_overrides()
    assert overrides["llm_model"] == "PROCEDURA_LLM_MODEL"
    assert overrides["llm_base_url"] == "OPENAI_BASE_URL"
    assert overrides["home"] == "PROCEDURA_HOME"
    assert "embedding" not in overrides


def test_an_explicit_home_reads_its_own_settings_file(tmp_path: Path) -> None:
    other = tmp_path / "other"
    settings_io.save_settings(load_settings(home=other), {"llm_base_url": "http://127.0.0.1:7/v1"})
    assert load_settings(home=other).llm_base_url == "http://127.0.0.1:7/v1"
    assert load_settings().llm_base_url is None  # PROCEDURA_HOME's file is another one


def test_the_browser_found_now_is_described(browser_exe: Path, tmp_path: Path) -> None:
    assert settings_io.describe_browser(browser_exe) == f"{browser_exe} (the browser chosen here)"
    missing = tmp_path / "gone" / "chrome"
    assert settings_io.describe_browser(missing) == f"none: there is no file at {missing}"


# ── the data directory pointer ──────────────────────────────────────────────────────────────


def test_the_data_directory_pointer_round_trip(
    user_dirs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PROCEDURA_HOME")
    assert str(data_dir_pointer_path()).startswith(str(user_dirs / "config"))
    assert default_home() == platform_home()
    elsewhere = user_dirs / "elsewhere" / "Procedura"
    assert settings_io.write_data_dir_pointer(elsewhere) == elsewhere
    assert elsewhere.is_dir()
    assert data_dir_pointer_path().read_text() == f"{elsewhere}\n"
    assert read_data_dir_pointer() == elsewhere
    assert load_settings().home == elsewhere
    settings_io.save_settings(load_settings(), {"llm_model": "there"})
    assert (elsewhere / "settings.toml").is_file()
    assert load_settings().llm_model == "there"
    # PROCEDURA_HOME wins over the pointer.
    monkeypatch.setenv("PROCEDURA_HOME", str(user_dirs / "env-home"))
    assert load_settings().home == user_dirs / "env-home"
    monkeypatch.delenv("PROCEDURA_HOME")
    # Back to the default: the pointer goes.
    assert settings_io.write_data_dir_pointer(None) is None
    assert not data_dir_pointer_path().exists()
    assert load_settings().home == platform_home()


def test_a_bad_data_directory_is_refused(user_dirs: Path) -> None:
    with pytest.raises(SettingsError, match="must be an absolute path"):
        settings_io.write_data_dir_pointer(Path("relative/dir"))
    a_file = user_dirs / "a-file"
    a_file.write_text("x")
    with pytest.raises(SettingsError, match="is a file, not a folder"):
        settings_io.write_data_dir_pointer(a_file)
    assert not data_dir_pointer_path().exists()
    data_dir_pointer_path().parent.mkdir(parents=True)
    data_dir_pointer_path().write_text("relative/dir\n")
    with pytest.raises(SettingsError, match="must be an absolute path"):
        read_data_dir_pointer()


# ── test connection ─────────────────────────────────────────────────────────────────────────


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_connection_test_reports_what_answered(
    chat_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROCEDURA_LLM_BASE_URL", chat_server.base_url)
    monkeypatch.setenv("PROCEDURA_LLM_MODEL", "fake-chat")
    line = settings_io.test_llm_connection(load_settings())
    assert re.fullmatch(rf"fake-chat at {re.escape(chat_server.base_url)} answered in \d+ ms", line)
    (request,) = chat_server.requests_to("/v1/chat/completions")
    assert request.json["model"] == "fake-chat"


def test_a_connection_test_without_an_llm_says_so() -> None:
    with pytest.raises(LLMUnavailable, match=r"^no LLM is configured"):
        settings_io.test_llm_connection(load_settings())


@pytest.mark.parametrize(
    ("status", "kind", "message"),
    [
        (401, LLMUnavailable, r"the API key was refused by .* \(HTTP 401\)"),
        (404, LLMUnavailable, r"has no model 'gpt-4o-mini' \(HTTP 404"),
        (500, LLMUnavailable, r"failed \(HTTP 500"),
    ],
)
def test_a_connection_test_fails_with_one_clear_line(
    chat_server: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    status: int,
    kind: type[LLMError],
    message: str,
) -> None:
    monkeypatch.setenv("PROCEDURA_LLM_BASE_URL", chat_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-test-key")
    chat_server.fail_next(status, "nope", times=None)
    with pytest.raises(kind, match=message) as info:
        settings_io.test_llm_connection(load_settings())
    assert "\n" not in str(info.value)
    assert "sk-secret-test-key" not in str(info.value)


def test_a_connection_test_to_nothing_fails_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCEDURA_LLM_BASE_URL", f"http://127.0.0.1:{_closed_port()}/v1")
    with pytest.raises(LLMUnavailable, match=r"cannot reach .*: connection refused") as info:
        settings_io.test_llm_connection(load_settings())
    assert "\n" not in str(info.value)


def test_a_connection_test_of_a_slow_or_confused_model(
    chat_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROCEDURA_LLM_BASE_URL", chat_server.base_url)
    chat_server.queue_chat("Sure! Here you go.", "Happy to help.")
    with pytest.raises(LLMInvalidOutput, match="answered, but not with the JSON asked for"):
        settings_io.test_llm_connection(load_settings())
    monkeypatch.setenv("PROCEDURA_LLM_TIMEOUT_S", "0.3")
    chat_server.set_delay(3)
    with pytest.raises(LLMUnavailable, match=r"did not answer within 0.3 s \(timeout\)"):
        settings_io.test_llm_connection(load_settings())
