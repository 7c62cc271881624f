"""Architecture rules (DESIGN.md §2): side-effect-free imports, layer contracts, honest __all__."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import pkgutil
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import desktop_app.core

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "desktop_app"

# Runs in a fresh interpreter: blocks sockets and SQLite, then imports every module of desktop_app
# found by pkgutil.walk_packages, and writes what happened as JSON to the path in argv[1].
_IMPORT_EVERYTHING = r"""
import importlib, json, pkgutil, re, socket, sqlite3, sys, traceback

out_path = sys.argv[1]
# Alembic's env.py is a script alembic runs inside a migration context, not a module to import.
scripts = re.compile(r"\.migrations\.env$")
current = ["desktop_app"]
attempts = []


class BlockedSideEffect(OSError):
    pass


def block(what):
    def blocked(*args, **kwargs):
        stack = traceback.extract_stack()[:-1]
        ours = [f"{f.filename}:{f.lineno}" for f in stack if "/desktop_app/" in f.filename]
        attempts.append(
            {"module": current[0], "what": what, "args": repr(args)[:200], "where": ours[-3:]}
        )
        raise BlockedSideEffect(f"{what} while importing {current[0]}")

    return blocked


socket.socket.connect = block("socket.connect")
socket.socket.connect_ex = block("socket.connect_ex")
socket.socket.bind = block("socket.bind")
sqlite3.connect = block("sqlite3.connect")

errors = {}
imported = []
skipped = []


def load(name):
    current[0] = name
    try:
        importlib.import_module(name)
    except BaseException as exc:  # SystemExit too: an import must never end the process
        tb = traceback.TracebackException.from_exception(exc)
        frames = [f for f in tb.stack if not f.filename.startswith("<")]
        tb.stack = traceback.StackSummary.from_list(frames[-4:])
        errors[name] = "".join(tb.format())
    else:
        imported.append(name)


load("desktop_app")
if "desktop_app" in imported:
    package = sys.modules["desktop_app"]
    for info in pkgutil.walk_packages(package.__path__, "desktop_app.", onerror=lambda name: None):
        if scripts.search(info.name):
            skipped.append(info.name)
        else:
            load(info.name)

with open(out_path, "w", encoding="utf-8") as f:
    json.dump({"imported": imported, "skipped": skipped, "errors": errors, "attempts": attempts}, f)
"""


def _lint_imports() -> str:
    """The lint-imports of the interpreter running the tests (the .venv's)."""
    beside = Path(sys.executable).with_name("lint-imports")
    if beside.exists():
        return str(beside)
    found = shutil.which("lint-imports")
    if found is None:
        pytest.fail("lint-imports not found: install the dev extras (scripts/bootstrap.sh --dev)")
    return found


def _run_lint_imports(cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run(
        [_lint_imports(), "--no-cache"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def _core_contract_name(pyproject: Path) -> str:
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract["type"] == "forbidden" and "desktop_app.core" in contract["source_modules"]:
            return str(contract["name"])
    pytest.fail("pyproject.toml has no forbidden contract with source desktop_app.core")


def _core_modules_with_all() -> list[str]:
    """Modules of desktop_app.core (the package included) that define ``__all__``."""
    names = [desktop_app.core.__name__]
    names += [
        info.name for info in pkgutil.walk_packages(desktop_app.core.__path__, "desktop_app.core.")
    ]
    return [name for name in names if hasattr(importlib.import_module(name), "__all__")]


def test_every_module_imports_without_display_socket_or_database(tmp_path: Path) -> None:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"}
    }
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    out = tmp_path / "imports.json"
    proc = subprocess.run(
        [sys.executable, "-c", _IMPORT_EVERYTHING, str(out)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert proc.returncode == 0 and out.exists(), (
        f"the import child died (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    )
    result = json.loads(out.read_text(encoding="utf-8"))

    problems = [f"{name} raised on import:\n{error}" for name, error in result["errors"].items()]
    problems += [
        f"{a['module']} tried {a['what']}{a['args']} on import (from {', '.join(a['where'])})"
        for a in result["attempts"]
    ]
    assert not problems, "\n\n".join(problems)
    # The walk really happened: the package and its core were found and imported.
    assert {"desktop_app", "desktop_app.core"} <= set(result["imported"]), result


def test_import_contracts_hold() -> None:
    proc = _run_lint_imports(ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(
    "forbidden_import",
    ["import chromadb", "import desktop_app.adapters"],
    ids=["third-party", "adapters"],
)
def test_forbidden_import_in_core_breaks_the_contract(
    tmp_path: Path, forbidden_import: str
) -> None:
    shutil.copytree(PACKAGE, tmp_path / "desktop_app", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    victim = tmp_path / "desktop_app" / "core" / "templating.py"
    if not victim.exists():
        victim = tmp_path / "desktop_app" / "core" / "__init__.py"
    with victim.open("a", encoding="utf-8") as f:
        f.write(f"\n{forbidden_import}\n")

    proc = _run_lint_imports(tmp_path)

    output = proc.stdout + proc.stderr
    contract = _core_contract_name(tmp_path / "pyproject.toml")
    imported = forbidden_import.split()[-1]
    assert proc.returncode != 0, output
    assert f"{contract} BROKEN" in output, output
    assert f"-> {imported}" in output, output


@pytest.mark.parametrize("name", _core_modules_with_all())
def test_all_is_honest(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)

    missing = [n for n in exported if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ lists names the module does not have: {missing}"
    assert len(exported) == len(set(exported)), f"{name}.__all__ has duplicates"

    unlisted = sorted(
        n
        for n, obj in vars(module).items()
        if not n.startswith("_")
        and (inspect.isclass(obj) or inspect.isfunction(obj))
        and getattr(obj, "__module__", None) == name
        and n not in exported
    )
    assert not unlisted, f"{name} defines public names missing from __all__: {unlisted}"
