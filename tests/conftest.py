"""Shared fixtures: an isolated data directory and environment for every test."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from desktop_app.cli import cli

sys.path.insert(0, str(Path(__file__).parent))

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "docs" / "examples"

_ISOLATED_VARS = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "PROCEDURA_LLM_API_KEY",
    "PROCEDURA_LLM_BASE_URL",
    "PROCEDURA_LLM_MODEL",
    "PROCEDURA_EMBEDDING",
    "PROCEDURA_BROWSER",
    "PROCEDURA_ACTOR",
)


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own data directory, no LLM key, and no real keyring."""
    home = tmp_path / "home"
    for var in _ISOLATED_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PROCEDURA_HOME", str(home))
    # Where the data-folder pointer lives: never the developer's own (see settings.default_home).
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("PROCEDURA_ACTOR", "tester")
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    monkeypatch.setenv("ANONYMIZED_TELEMETRY", "False")
    return home


@pytest.fixture
def home(isolated_env: Path) -> Path:
    """The data directory of this test (not created yet)."""
    return isolated_env


class Cli:
    """Runs ``procedura`` in-process and keeps stdout and stderr apart."""

    def __init__(self) -> None:
        self._runner = CliRunner()

    def __call__(self, *args: str, input: str | None = None) -> Result:
        return self._runner.invoke(
            cli, list(args), input=input, catch_exceptions=False, env=dict(os.environ)
        )


@pytest.fixture
def procedura() -> Iterator[Cli]:
    """The command line, in-process."""
    yield Cli()


@pytest.fixture
def gui(qapp: Any) -> Iterator[Any]:
    """The desktop app's main window over this test's data directory (see gui_support)."""
    from gui_support import open_gui

    with open_gui(qapp) as opened:
        yield opened
