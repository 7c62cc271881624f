"""The Settings screen: fields round-trip to settings.toml, the key to the keyring, tests report."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.keyring_backend import MemoryKeyring, memory_keyring
from fakes.openai_server import FakeOpenAIServer
from gui_support import Gui
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QLabel,
    QLineEdit,
    QMessageBox,
    QSpinBox,
)
from replay_support import approved

from desktop_app.settings import data_dir_pointer_path, default_home, load_settings, platform_home
from desktop_app.ui.settings_page import SettingsPage

pytestmark = pytest.mark.slow

KEY = "sk-test-9f8e7d6c5b4a39281706"


@pytest.fixture
def keyring_memory() -> Iterator[MemoryKeyring]:
    with memory_keyring() as backend:
        yield backend


@pytest.fixture
def chat_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    """A fake LLM the app is configured for (set before the window opens)."""
    with FakeOpenAIServer(default_chat='{"ok": true}') as server:
        monkeypatch.setenv("PROCEDURA_LLM_BASE_URL", server.base_url)
        yield server


@pytest.fixture
def env_model(monkeypatch: pytest.MonkeyPatch) -> str:
    """The environment sets the model before the window opens."""
    monkeypatch.setenv("PROCEDURA_LLM_MODEL", "model-from-env")
    return "model-from-env"


def _page(gui: Gui) -> SettingsPage:
    page = gui.window.show_screen("Settings")
    assert isinstance(page, SettingsPage)
    return page


def _edit(page: SettingsPage, name: str) -> QLineEdit:
    editor = page.field_editor(name)
    assert isinstance(editor, QLineEdit)
    return editor


def _spin(page: SettingsPage, name: str) -> QSpinBox:
    editor = page.field_editor(name)
    assert isinstance(editor, QSpinBox)
    return editor


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_changed_fields_are_applied_to_the_settings_file(gui: Gui, home: Path) -> None:
    page = _page(gui)
    changed: list[bool] = []
    gui.window.events.settings_changed.connect(lambda: changed.append(True))
    assert not page.apply_button.isEnabled()

    _edit(page, "llm_base_url").setText("http://127.0.0.1:11434/v1")
    _edit(page, "llm_model").setText("qwen2.5:7b-instruct")
    _spin(page, "llm_max_calls_per_run").setValue(7)
    confirm = page.field_editor("confirm_irreversible")
    assert isinstance(confirm, QCheckBox)
    confirm.setChecked(False)
    embedding = page.field_editor("embedding")
    assert isinstance(embedding, QComboBox)
    assert not _edit(page, "embedding_model").isEnabled()  # only for an endpoint
    embedding.setCurrentIndex(embedding.findData("openai"))
    _edit(page, "embedding_model").setText("nomic-embed-text")
    assert page.apply_button.isEnabled()
    assert page.test_button.text() == "Apply and &test"

    page.apply_button.click()
    gui.settle()

    fresh = load_settings()
    assert fresh.llm_base_url == "http://127.0.0.1:11434/v1"
    assert fresh.llm_model == "qwen2.5:7b-instruct"
    assert fresh.llm_max_calls_per_run == 7
    assert fresh.confirm_irreversible is False
    assert (fresh.embedding, fresh.embedding_model) == ("openai", "nomic-embed-text")
    assert gui.backend.settings.llm_model == "qwen2.5:7b-instruct"  # in force now
    assert changed
    assert page.message.text() == "Settings saved."
    assert page.message.property("tone") == "ok"  # in green
    assert not page.apply_button.isEnabled()
    text = (home / "settings.toml").read_text()
    assert "key" not in text.split("kept here.")[1]  # only the header mentions the key
    # The index keeps its embeddings until the next start: say so, and do not rebuild now.
    assert page.embedding_notice.isVisible()
    assert "restarts" in page.embedding_notice.text()
    assert not page.reindex_button.isEnabled()

    # Revert puts back what was applied; nothing is written.
    _spin(page, "llm_max_calls_per_run").setValue(9)
    page.revert_button.click()
    assert _spin(page, "llm_max_calls_per_run").value() == 7
    assert not page.apply_button.isEnabled()
    assert load_settings().llm_max_calls_per_run == 7


def test_the_api_key_goes_to_the_keyring_and_nowhere_in_the_data_folder(
    gui: Gui, home: Path, keyring_memory: MemoryKeyring
) -> None:
    page = _page(gui)
    gui.run(page.reload())
    assert page.key_source.text().startswith("None.")
    assert not page.remove_key_button.isEnabled()
    page.key_edit.setText(KEY)
    assert page.key_edit.echoMode() == QLineEdit.EchoMode.Password
    page.save_key_button.click()
    gui.settle()

    assert keyring_memory.passwords[("procedura", "llm_api_key")] == KEY
    assert page.key_edit.text() == ""
    assert page.key_source.text().startswith("Stored in the OS keyring")
    assert page.remove_key_button.isEnabled()
    assert gui.backend.llm_configured()
    # Apply something else too, then look in every file of the data folder.
    _edit(page, "llm_model").setText("gpt-4.1-mini")
    page.apply_button.click()
    gui.settle()
    files = [p for p in home.rglob("*") if p.is_file()]
    assert home / "settings.toml" in files
    assert not [p for p in files if KEY.encode() in p.read_bytes()]

    page.remove_key_button.click()
    confirm = page.findChild(QMessageBox, "settings-remove-key-confirm")
    assert isinstance(confirm, QMessageBox)
    button = confirm.button(QMessageBox.StandardButton.Yes)
    assert button is not None
    button.click()
    gui.settle()
    assert ("procedura", "llm_api_key") not in keyring_memory.passwords
    assert page.key_source.text().startswith("None.")


def test_an_invalid_value_is_shown_and_nothing_is_written(gui: Gui, home: Path) -> None:
    page = _page(gui)
    base_url = _edit(page, "llm_base_url")
    base_url.setText("localhost:11434/v1")  # no scheme
    _spin(page, "llm_max_calls_per_step").setValue(5)
    page.apply_button.click()
    gui.settle()

    assert page.message.text().startswith("setting llm_base_url: 'localhost:11434/v1' is not")
    assert page.message.property("tone") == "error"  # in red
    assert base_url.property("invalid") is True  # framed in red
    assert not (home / "settings.toml").exists()
    assert page.apply_button.isEnabled()  # the changes are still there to fix
    assert gui.window.tasks.last_error is None  # shown on the screen, not as a dialog

    base_url.setText("http://localhost:11434/v1")
    assert base_url.property("invalid") is False
    _edit(page, "browser").setText(str(home / "no-such-browser"))
    page.apply_button.click()
    gui.settle()
    assert page.message.text().startswith("setting browser: there is no file at")
    assert not (home / "settings.toml").exists()

    # Limits cannot even be typed out of range: the fields take the setting's own bounds.
    calls = _spin(page, "llm_max_calls_per_run")
    calls.setValue(-3)
    assert calls.value() == 0


def test_settings_the_environment_sets_are_read_only(env_model: str, gui: Gui, home: Path) -> None:
    page = _page(gui)
    model = _edit(page, "llm_model")
    assert model.text() == env_model
    assert not model.isEnabled()
    badge = page.findChild(QLabel, "settings-llm_model-env")
    assert badge is not None and badge.isVisible()
    assert badge.text() == "set by PROCEDURA_LLM_MODEL"
    assert "PROCEDURA_LLM_MODEL" in model.toolTip()
    actor = _edit(page, "actor")  # the test environment sets PROCEDURA_ACTOR
    assert not actor.isEnabled() and actor.text() == "tester"
    assert not page.home_edit.isEnabled()  # ...and PROCEDURA_HOME
    assert _edit(page, "llm_base_url").isEnabled()

    _edit(page, "llm_base_url").setText("http://127.0.0.1:1234/v1")
    assert page.changes() == {"llm_base_url": "http://127.0.0.1:1234/v1"}
    page.apply_button.click()
    gui.settle()
    text = (home / "settings.toml").read_text()
    assert "llm_model" not in text and "actor" not in text
    assert model.text() == env_model


def test_test_connection_reports_the_model_or_one_line_in_red(
    chat_server: FakeOpenAIServer, gui: Gui
) -> None:
    page = _page(gui)
    tested: list[tuple[bool, str]] = []
    page.connection_tested.connect(lambda ok, line: tested.append((ok, line)))
    page.test_button.click()
    gui.settle()
    line = page.test_result.text()
    assert line.startswith(f"gpt-4o-mini at {chat_server.base_url} answered in ")
    assert line.endswith(" ms")
    assert page.test_result.property("tone") == "ok"
    assert tested == [(True, line)]
    assert not page.test_details_button.isVisible()
    assert len(chat_server.requests_to("/v1/chat/completions")) == 1

    # The environment sets the endpoint here, so the field shows it read-only.
    assert _edit(page, "llm_base_url").text() == chat_server.base_url
    assert not _edit(page, "llm_base_url").isEnabled()


def test_test_connection_failure_is_one_red_line_with_details(
    gui: Gui, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = _page(gui)
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    _edit(page, "llm_base_url").setText(url)
    page.test_button.click()  # "Apply and test"
    gui.settle()
    line = page.test_result.text()
    assert line.startswith(f"cannot reach the LLM endpoint {url}: connection refused")
    assert "\n" not in line
    assert page.test_result.property("tone") == "error"
    assert page.test_details_button.isVisible()
    assert not page.test_details.isVisible()
    page.test_details_button.click()
    assert page.test_details.isVisible()
    assert "LLMUnavailable" in page.test_details.toPlainText()
    assert page.test_button.isEnabled()
    assert gui.window.tasks.last_error is None


def test_the_data_folder_pointer_round_trip(
    gui: Gui, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if sys.platform != "linux":
        pytest.skip("platformdirs follows XDG_* variables on Linux only")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("PROCEDURA_HOME")
    page = _page(gui)
    in_use = gui.backend.settings.home
    gui.run(page.reload())
    assert page.home_edit.isEnabled()
    assert page.home_edit.text() == str(platform_home())
    assert page.home_in_use.text() == str(in_use)

    elsewhere = tmp_path / "elsewhere"
    page.home_edit.setText(str(elsewhere))
    assert "next start" in page.home_note.text()
    assert page.changes() == {}  # the folder is not a settings.toml setting
    page.apply_button.click()
    gui.settle()
    assert data_dir_pointer_path().read_text() == f"{elsewhere}\n"
    assert default_home() == elsewhere
    assert "next start" in page.message.text()
    assert page.home_in_use.text() == str(in_use)  # this session keeps its folder
    assert page.home_edit.text() == str(elsewhere)

    page.home_edit.clear()  # empty: the platform's default
    page.apply_button.click()
    gui.settle()
    assert not data_dir_pointer_path().exists()
    assert default_home() == platform_home()


def test_scrolling_over_a_limit_does_not_change_it_and_ctrl_s_applies(gui: Gui, home: Path) -> None:
    page = _page(gui)
    calls = _spin(page, "llm_max_calls_per_step")
    before = calls.value()
    center = QPointF(calls.rect().center())
    wheel = QWheelEvent(
        center,
        QPointF(calls.mapToGlobal(center.toPoint())),
        QPoint(0, 0),
        QPoint(0, 120),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(calls, wheel)
    assert calls.value() == before

    gui.window.activateWindow()
    _edit(page, "llm_model").setFocus()
    _edit(page, "llm_model").setText("typed-then-saved")
    QTest.keyClick(_edit(page, "llm_model"), Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    gui.settle()
    assert load_settings().llm_model == "typed-then-saved"


def test_rebuild_search_index_runs_in_the_background(gui: Gui) -> None:
    gui.call(lambda: approved(gui.services, "create-contact"))
    page = _page(gui)
    assert not page.embedding_notice.isVisible()
    page.reindex_button.click()
    assert not page.reindex_button.isEnabled()  # no second rebuild meanwhile
    gui.settle()
    assert page.message.text() == "The search index was rebuilt: 1 workflow, 0 remembered repairs."
    assert page.reindex_button.isEnabled()
    hits = gui.call(lambda: gui.backend.workflows.search("add a new contact", limit=3))
    assert hits
