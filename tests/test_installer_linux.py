"""installers/linux: install into a temporary HOME, upgrade it, use it, uninstall it."""

from __future__ import annotations

import base64
import configparser
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import REPO

INSTALL = REPO / "installers" / "linux" / "install.sh"
UNINSTALL = REPO / "installers" / "linux" / "uninstall.sh"

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the Linux installer runs on Linux"
)


def _real_pip_cache() -> str:
    """pip's cache of the real user, so that a temporary HOME does not mean downloading again."""
    if "PIP_CACHE_DIR" in os.environ:
        return os.environ["PIP_CACHE_DIR"]
    cache_home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return str(Path(cache_home) / "pip")


def _user_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "user"
    home.mkdir()
    env = dict(os.environ)
    # The user's own pip.conf (if any) lives under the real XDG_CONFIG_HOME: keep using it.
    real_pip_conf = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    real_pip_conf = real_pip_conf / "pip" / "pip.conf"
    if real_pip_conf.is_file() and "PIP_CONFIG_FILE" not in env:
        env["PIP_CONFIG_FILE"] = str(real_pip_conf)
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        PIP_CACHE_DIR=_real_pip_cache(),
        PIP_NO_INPUT="1",
        # Byte-compiling every installed package is much of an install's time; the app compiles
        # what it imports on first use instead. pip's own setting, so the installer is the same
        # ("0": pip reads a false value of PIP_NO_COMPILE as "do not compile").
        PIP_NO_COMPILE="0",
    )
    # Whatever runs this test (the project's .venv) must not leak into the installed app.
    env.pop("VIRTUAL_ENV", None)
    env.pop("PYTHONPATH", None)
    return env


def _old_release(folder: Path) -> Path:
    """A wheel of a tiny "procedura 0.0.1": what install.sh needs of a release, and no more."""
    icons = REPO / "resources" / "icons"
    inside = "desktop_app/_resources/icons"
    files = {
        "desktop_app/__init__.py": b'__version__ = "0.0.1"\n',
        "desktop_app/__main__.py": b'import sys\nprint("procedura 0.0.1")\nsys.exit(0)\n',
        "desktop_app/resources.py": (
            b"from pathlib import Path\n\n\ndef resource_path(name):\n"
            b'    return Path(__file__).parent / "_resources" / name\n'
        ),
        f"{inside}/procedura.svg": (icons / "procedura.svg").read_bytes(),
        f"{inside}/procedura-256.png": (icons / "procedura-256.png").read_bytes(),
        "procedura-0.0.1.dist-info/METADATA": (
            b"Metadata-Version: 2.1\nName: procedura\nVersion: 0.0.1\n"
        ),
        "procedura-0.0.1.dist-info/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append("procedura-0.0.1.dist-info/RECORD,,")
    folder.mkdir()
    wheel = folder / "procedura-0.0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr("procedura-0.0.1.dist-info/RECORD", "\n".join(record) + "\n")
    return wheel


def _run(
    args: list[str], env: dict[str, str], *, check: bool = True, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        args,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        start_new_session=True,  # no controlling terminal, as in CI: nothing may ask
    )
    if check and result.returncode != 0:
        pytest.fail(f"{args} exited {result.returncode}\n{result.stdout}\n{result.stderr}")
    return result


def _files(env: dict[str, str]) -> set[Path]:
    """The files where the installer may write (not, say, ~/.rustup that a toolchain on PATH
    creates on first use under a new HOME)."""
    roots = [env["XDG_DATA_HOME"], env["XDG_CONFIG_HOME"], f"{env['HOME']}/.local/bin"]
    return {p for root in roots for p in Path(root).rglob("*") if p.is_file() or p.is_symlink()}


def _desktop_entry(path: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read(path, encoding="utf-8")
    return parser["Desktop Entry"]


def _check_desktop_entry(path: Path, launcher: Path, data_home: Path, args: list[str]) -> None:
    entry = _desktop_entry(path)
    assert entry["Type"] == "Application"
    assert entry["Name"] == "Procedura"
    assert entry["Categories"].endswith(";")
    assert shlex.split(entry["Exec"]) == [str(launcher), *args]
    icon = entry["Icon"]
    assert icon == "procedura"
    found = sorted(data_home.glob(f"icons/hicolor/*/apps/{icon}.*"))
    assert {p.suffix for p in found} == {".svg", ".png"}
    assert found[0].read_bytes().startswith(b"\x89PNG")
    if shutil.which("desktop-file-validate"):
        result = subprocess.run(
            ["desktop-file-validate", str(path)], capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_install_use_and_uninstall_in_a_temporary_home(tmp_path: Path) -> None:
    env = _user_env(tmp_path)
    home = Path(env["HOME"])
    data_home = Path(env["XDG_DATA_HOME"])
    config_home = Path(env["XDG_CONFIG_HOME"])
    launcher = home / ".local" / "bin" / "procedura"
    desktop = data_home / "applications" / "procedura.desktop"
    autostart = config_home / "autostart" / "procedura.desktop"
    manifest = data_home / "procedura" / "install-manifest.txt"
    # The user's data from before: uninstalling must leave it alone.
    user_data = data_home / "Procedura" / "settings.toml"
    user_data.parent.mkdir(parents=True)
    user_data.write_text('actor = "ann"\n', encoding="utf-8")
    before = _files(env)

    # An older release first, with autostart (a small wheel: a second full pip install would
    # double the test's time), then the upgrade to this checkout, run without flags.
    old = _old_release(tmp_path / "wheels")
    _run(["bash", str(INSTALL), "--wheel", str(old), "--autostart"], env)
    assert _run([str(launcher), "--version"], env).stdout == "procedura 0.0.1\n"
    assert autostart.is_file()
    old_manifest = manifest.read_text(encoding="utf-8")

    upgraded = _run(["bash", str(INSTALL), "--source", str(REPO)], env).stdout
    assert f"autostart: {autostart}" in upgraded  # the choice made before is kept
    assert "0.0.1" not in _run([str(launcher), "--version"], env).stdout
    assert manifest.read_text(encoding="utf-8") == old_manifest  # the same files, rewritten

    help_text = _run([str(launcher), "--help"], env).stdout
    assert "Usage: procedura" in help_text
    info = _run([str(launcher), "info"], env).stdout
    assert f"data dir:     {env['PROCEDURA_HOME']}" in info
    _check_desktop_entry(desktop, launcher, data_home, ["gui"])
    _check_desktop_entry(autostart, launcher, data_home, ["gui", "--tray"])
    listed = manifest.read_text(encoding="utf-8").splitlines()
    assert f"file {launcher}" in listed
    assert f"file {desktop}" in listed
    assert f"file {autostart}" in listed
    assert f"dir {data_home / 'procedura' / 'venv'}" in listed
    assert not list((data_home / "procedura").glob(".venv-*")), "staging left behind"

    paths = [Path(line.split(" ", 1)[1]) for line in listed]
    result = _run(["bash", str(UNINSTALL)], env)
    assert "Your data stays" in result.stdout
    for path in paths:
        assert not path.exists(), f"{path} was listed in the manifest but not removed"
    assert not (data_home / "procedura").exists()
    assert user_data.read_text(encoding="utf-8") == 'actor = "ann"\n'
    assert _files(env) == before, "uninstall left files behind (or removed others)"


def test_errors_are_one_line_and_change_nothing(tmp_path: Path) -> None:
    env = _user_env(tmp_path)
    home = Path(env["HOME"])

    result = _run(["bash", str(INSTALL), "--python", "/bin/false"], env, check=False)
    assert result.returncode == 1
    assert result.stderr == "install.sh: error: /bin/false is not a working Python 3.11 or newer\n"

    result = _run(["bash", str(INSTALL), "--source", str(tmp_path)], env, check=False)
    assert result.returncode == 1
    assert "no pyproject.toml there" in result.stderr

    result = _run(["bash", str(INSTALL), "--frobnicate"], env, check=False)
    assert (result.returncode, result.stderr.count("\n")) == (1, 1)

    # pip fails (a broken wheel): nothing is left behind but the empty program folder.
    wheel = tmp_path / "procedura-0.0.0-py3-none-any.whl"
    wheel.write_bytes(b"not a zip file")
    result = _run(
        ["bash", str(INSTALL), "--wheel", str(wheel), "--python", sys.executable], env, check=False
    )
    assert result.returncode == 1
    assert "pip could not install Procedura" in result.stderr
    assert "nothing was changed" in result.stderr
    assert _files(env) == set()

    # Someone else's `procedura` on the launcher's path is not replaced.
    other = home / ".local" / "bin" / "procedura"
    other.parent.mkdir(parents=True)
    other.write_text("#!/bin/sh\necho mine\n", encoding="utf-8")
    result = _run(["bash", str(INSTALL)], env, check=False)
    assert result.returncode == 1
    assert "was not written by this installer" in result.stderr
    assert other.read_text(encoding="utf-8") == "#!/bin/sh\necho mine\n"


def test_uninstall_without_an_install_and_purge_needs_confirmation(tmp_path: Path) -> None:
    env = _user_env(tmp_path)
    data = Path(env["XDG_DATA_HOME"]) / "Procedura"
    data.mkdir(parents=True)
    (data / "procedura.db").write_bytes(b"")

    result = _run(["bash", str(UNINSTALL)], env)
    assert "not installed here" in result.stdout
    assert (data / "procedura.db").exists()

    result = _run(["bash", str(UNINSTALL), "--purge-data"], env, check=False)
    assert result.returncode == 1
    assert "pass --yes to confirm" in result.stderr
    assert (data / "procedura.db").exists()

    _run(["bash", str(UNINSTALL), "--purge-data", "--yes"], env)
    assert not data.exists()
