"""Shared fixtures: an isolated data directory and environment for every test."""

from __future__ import annotations

import gc
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

sys.path.insert(0, str(Path(__file__).parent))

from fakes.openai_server import FakeOpenAIServer
from postgres_server import PostgresServer, pg_database, postgres  # noqa: F401 (fixtures)
from sqlalchemy import Engine

from desktop_app.cli import cli

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "docs" / "examples"

#: The test files that each take minutes (the benchmarks' smoke runs, twenty kills while
#: recording on a busy machine, an install): handed to the two workers first, so that neither
#: ends the run alone with one of them (see pytest_collection_modifyitems).
LONG_FILES = (
    "test_fleet.py",
    "test_bench_more.py",
    "test_bench.py",
    "test_recording_crash.py",
    "test_installer_linux.py",
)

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


@pytest.fixture(autouse=True)
def qt_objects_die_on_the_gui_thread(request: pytest.FixtureRequest) -> Iterator[None]:
    """Once Qt runs in this worker, Python's cycle collector runs only here, between tests.

    A widget caught in a reference cycle is deleted whenever the collector runs, on whichever
    thread triggers it: a test's HTTP server, a store thread, Playwright's. Deleted off the GUI
    thread, it crashes a later ``processEvents`` (pytest-qt's, after some other test). The app
    itself collects on its GUI thread while its window lives (``ui/collector.py``); tests that
    build widgets without that window get the same rule from here.
    """
    qt = sys.modules.get("PySide6.QtWidgets")
    uses_qt = {"qapp", "qtbot", "gui"} & set(request.fixturenames)
    if uses_qt or (qt is not None and qt.QApplication.instance() is not None):
        gc.disable()
    yield
    if qt is None:
        qt = sys.modules.get("PySide6.QtWidgets")
    if qt is not None and qt.QApplication.instance() is not None:
        gc.disable()
        gc.collect()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """A migrated database: a SQLite file (personal mode), then a PostgreSQL database (team
    mode): a test taking it runs on both."""
    from desktop_app.adapters.sql.database import migrate, open_database

    if request.param == "sqlite":
        engine = open_database(tmp_path / "db" / "procedura.db")
    else:
        server: PostgresServer = request.getfixturevalue("postgres")
        engine = open_database(server.url(server.new_database()))
    migrate(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def home(isolated_env: Path) -> Path:
    """The data directory of this test (not created yet)."""
    return isolated_env


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    """The fake LLM (a real local server speaking the OpenAI API), configured as the LLM."""
    with FakeOpenAIServer() as server:
        monkeypatch.setenv("PROCEDURA_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("PROCEDURA_LLM_MODEL", "fake-model")
        yield server


class Cli:
    """Runs ``procedura`` in-process and keeps stdout and stderr apart."""

    def __init__(self) -> None:
        self._runner = CliRunner()

    def __call__(self, *args: str, input: str | None = None) -> Result:
        return self._runner.invoke(
            cli, list(args), input=input, catch_exceptions=False, env=dict(os.environ)
        )

    def index_pending(self) -> int:
        """How many saved things wait to be indexed, as ``procedura info`` says."""
        result = self("info", "--json")
        assert result.exit_code == 0, result.stderr
        return int(json.loads(result.stdout)["counts"]["index_pending"])


@pytest.fixture
def procedura() -> Iterator[Cli]:
    """The command line, in-process."""
    yield Cli()


@pytest.fixture(scope="session")
def qapp(qapp: Any) -> Any:
    """pytest-qt's application, with the app's theme, so tests see what users see."""
    from desktop_app.ui import theme

    theme.apply(qapp)
    return qapp


@pytest.fixture
def gui(qapp: Any) -> Iterator[Any]:
    """The desktop app's main window over this test's data directory (see gui_support)."""
    from gui_support import open_gui

    with open_gui(qapp) as opened:
        yield opened


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Order the files as the workers should take them (``--dist loadfile`` with
    ``--no-loadscope-reorder``): the long ones first, then the files of browser, GUI or process
    tests (marked slow) by how many tests they hold, then the quick ones the same way. Whatever
    file a worker takes last is then short, and both workers finish together."""
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)

    def cost(name: str) -> tuple[int, int]:
        base = name.rsplit("/", 1)[-1]
        if base in LONG_FILES:
            return (0, LONG_FILES.index(base))
        slow = any(item.get_closest_marker("slow") for item in files[name])
        return (1 if slow else 2, -len(files[name]))

    items[:] = [item for name in sorted(files, key=cost) for item in files[name]]
