"""Apps nobody here wrote, for tests and benchmarks: installed from the package registries into
cached environments of their own (never into Procedura's), started on 127.0.0.1, and read back
from their own storage.

- **TodoMVC** (the npm package ``todomvc``): the same to-do app built with many front-end
  frameworks (plain DOM, React, Vue, Backbone, AngularJS, Ember…), each a static page that
  routes by the URL's hash and keeps its items in ``localStorage``.
- **Flask-Admin** (PyPI ``flask-admin``): server-rendered CRUD screens over a SQLite database
  (list views with search and bulk actions, create and edit forms, flash messages), through a
  few lines of glue that declare one table, as anyone using it writes them.

Environments go to ``$PROCEDURA_TEST_APPS`` (default ``~/.cache/procedura-test-apps``), one folder
per app and version, installed once (under a lock, so test workers share it) and reused.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final
from urllib.error import URLError
from urllib.request import urlopen

from browser_support import free_port
from filelock import FileLock

CACHE: Final = Path(
    os.environ.get("PROCEDURA_TEST_APPS") or Path.home() / ".cache" / "procedura-test-apps"
)
TODOMVC_VERSION: Final = "0.1.1"
#: TodoMVC implementations that run in today's Chromium, each with its own DOM and timing.
TODOMVC_IMPLEMENTATIONS: Final = ("vanillajs", "react", "vue", "backbone", "angularjs", "emberjs")
FLASK_ADMIN_VERSIONS: Final = ("2.2.1",)
_INSTALL_TIMEOUT_S: Final = 600


def installed(name: str, install: Any) -> Path:
    """The folder *name* in the cache, made by ``install(folder)`` the first time (atomically:
    a half-made folder is never used)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    target = CACHE / name
    with FileLock(str(CACHE / f"{name}.lock"), timeout=_INSTALL_TIMEOUT_S):
        if (target / ".complete").exists():
            return target
        shutil.rmtree(target, ignore_errors=True)
        scratch = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=CACHE))
        try:
            install(scratch)
            (scratch / ".complete").write_text(time.strftime("%Y-%m-%d %H:%M:%S"))
            scratch.rename(target)
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
    return target


# ── TodoMVC ────────────────────────────────────────────────────────────────────────────────


def _install_todomvc(folder: Path) -> None:
    subprocess.run(
        ["npm", "pack", f"todomvc@{TODOMVC_VERSION}", "--silent"],
        cwd=folder,
        check=True,
        capture_output=True,
        timeout=_INSTALL_TIMEOUT_S,
    )
    archive = next(folder.glob("todomvc-*.tgz"))
    with tarfile.open(archive) as tar:
        tar.extractall(folder, filter="data")
    archive.unlink()


def todomvc_root() -> Path:
    """The unpacked ``todomvc`` package (its ``examples/`` hold the implementations)."""
    return installed(f"todomvc-{TODOMVC_VERSION}", _install_todomvc) / "package"


class _QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class StaticSite:
    """A folder served over HTTP on 127.0.0.1 (a thread of this process)."""

    def __init__(self, root: Path) -> None:
        handler = functools.partial(_QuietFiles, directory=str(root))
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> StaticSite:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"


@contextlib.contextmanager
def todomvc(implementation: str) -> Iterator[str]:
    """TodoMVC's *implementation* served locally; yields the URL of its page."""
    with StaticSite(todomvc_root()) as site:
        yield f"{site.url}/examples/{implementation}/index.html"


# ── Flask-Admin ────────────────────────────────────────────────────────────────────────────

_FLASK_ADMIN_APP: Final = '''"""A Flask-Admin site over one table: python app.py DATABASE PORT."""
import enum
import sys

from flask import Flask, redirect
from flask_admin import Admin
from flask_admin.contrib.sqla import ModelView
from flask_sqlalchemy import SQLAlchemy


class Status(enum.Enum):
    lead = "Lead"
    customer = "Customer"
    former = "Former"


app = Flask(__name__)
app.config["SQLALCHEMY_DATABASE_URI"] = "sqlite:///" + sys.argv[1]
app.config["SECRET_KEY"] = "test-only"
db = SQLAlchemy(app)


class Contact(db.Model):
    id = db.Column(db.Integer, primary_key=True)
    name = db.Column(db.String(100), nullable=False)
    email = db.Column(db.String(100))
    status = db.Column(db.Enum(Status), nullable=False, default=Status.lead)
    vip = db.Column(db.Boolean, default=False)
    notes = db.Column(db.Text)


class ContactView(ModelView):
    column_searchable_list = ["name", "email"]
    column_list = ["name", "email", "status", "vip"]


admin = Admin(app, name="Contacts admin")
admin.add_view(ContactView(Contact, db.session))


@app.route("/")
def home():
    return redirect("/admin/contact/")


with app.app_context():
    db.create_all()
    if not Contact.query.count():
        for name, email in [("Maria Garcia", "maria@example.test"), ("Li Wei", "li@example.test")]:
            db.session.add(Contact(name=name, email=email, status=Status.customer))
        db.session.commit()

app.run(host="127.0.0.1", port=int(sys.argv[2]), threaded=True, use_reloader=False)
'''


def _install_flask_admin(version: str, folder: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", str(folder / "venv")], check=True)
    subprocess.run(
        [
            str(folder / "venv" / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            f"flask-admin[sqlalchemy]=={version}",
        ],
        check=True,
        capture_output=True,
        timeout=_INSTALL_TIMEOUT_S,
    )
    (folder / "app.py").write_text(_FLASK_ADMIN_APP, encoding="utf-8")


def flask_admin_env(version: str = FLASK_ADMIN_VERSIONS[0]) -> Path:
    """The folder holding Flask-Admin *version*'s virtual environment and the site's glue."""
    digest = hashlib.sha256(_FLASK_ADMIN_APP.encode()).hexdigest()[:8]
    return installed(
        f"flask-admin-{version}-{digest}", functools.partial(_install_flask_admin, version)
    )


class FlaskAdminSite:
    """A Flask-Admin site in a process of its own, over a fresh SQLite database."""

    def __init__(self, version: str = FLASK_ADMIN_VERSIONS[0]) -> None:
        self._env = flask_admin_env(version)
        self._folder = Path(tempfile.mkdtemp(prefix="flask-admin-"))
        self.database = self._folder / "contacts.db"
        self.port = free_port()
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> FlaskAdminSite:
        python = self._env / "venv" / "bin" / "python"
        self._process = subprocess.Popen(
            [str(python), str(self._env / "app.py"), str(self.database), str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                with urlopen(self.url + "/admin/", timeout=2):
                    return self
            except (URLError, OSError):
                if time.monotonic() > deadline or self._process.poll() is not None:
                    self.__exit__()
                    raise RuntimeError("the Flask-Admin site did not start") from None
                time.sleep(0.1)

    def __exit__(self, *exc: object) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        shutil.rmtree(self._folder, ignore_errors=True)

    def contacts(self) -> list[dict[str, Any]]:
        """The rows of the site's own table, as it stored them."""
        with contextlib.closing(sqlite3.connect(self.database)) as db:
            db.row_factory = sqlite3.Row
            return [dict(r) for r in db.execute("SELECT * FROM contact ORDER BY id")]


def todo_items(local_storage: dict[str, str]) -> list[dict[str, Any]]:
    """The to-do items a TodoMVC page keeps in ``localStorage`` (every implementation's own
    layout read back as ``{"title", "completed"}``)."""
    items: list[dict[str, Any]] = []
    for key, raw in local_storage.items():
        with contextlib.suppress(ValueError, TypeError):
            value = json.loads(raw)
            found = value.get("todos") if isinstance(value, dict) else value
            if isinstance(found, list) and all(isinstance(i, dict) for i in found):
                items += [
                    {"title": i.get("title"), "completed": bool(i.get("completed"))}
                    for i in found
                    if "title" in i
                ]
            elif isinstance(value, dict) and "title" in value and key != "todos":
                items.append({"title": value["title"], "completed": bool(value.get("completed"))})
    return items
