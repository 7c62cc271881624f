"""A real PostgreSQL server for the tests, started by the tests themselves.

Debian's ``postgresql`` package (scripts/bootstrap.sh installs it) gives the binaries; this
module makes a cluster in a temporary directory, starts it on a free port of 127.0.0.1 with
password (SCRAM) authentication over TCP, and stops it at the end. As root (CI), the server
runs as the ``postgres`` user the package creates, since PostgreSQL refuses to run as root.

One server per test process; each test that wants one gets a database of its own
(:meth:`PostgresServer.new_database`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import psycopg
import pytest

ADMIN: Final = "procedura_test_admin"


def _binaries() -> Path:
    found = shutil.which("initdb")
    if found is not None:
        return Path(found).resolve().parent
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    if not versions:
        pytest.fail(
            "PostgreSQL's server binaries are missing (initdb not found): install Debian's "
            "postgresql package (scripts/bootstrap.sh does)"
        )
    return versions[-1].parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    """A PostgreSQL cluster in a temporary directory, on 127.0.0.1."""

    def __init__(self) -> None:
        self.bin = _binaries()
        self.root = Path(tempfile.mkdtemp(prefix="procedura-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.password = secrets.token_urlsafe(16)
        self._as_root = os.geteuid() == 0

    def _run(self, *args: str) -> None:
        command = [str(self.bin / args[0]), *args[1:]]
        if self._as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            pytest.fail(f"{args[0]} failed: {done.stderr.strip() or done.stdout.strip()}")

    def start(self) -> None:
        pwfile = self.root / "pw"
        pwfile.write_text(self.password + "\n")
        if self._as_root:
            shutil.chown(self.root, "postgres")
            shutil.chown(pwfile, "postgres")
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            ADMIN,
            f"--pwfile={pwfile}",
            "--auth-host=scram-sha-256",
            "--auth-local=scram-sha-256",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
        )
        pwfile.unlink()
        options = " ".join(
            [
                f"-p {self.port}",
                "-c listen_addresses=127.0.0.1",
                f"-k {self.root}",
                "-c fsync=off",
                "-c synchronous_commit=off",
                "-c full_page_writes=off",
                "-c max_connections=200",
            ]
        )
        self._run(
            "pg_ctl", "start", "-w", "-t", "60", "-D", str(self.data), "-o", options,
            "-l", str(self.root / "server.log"),
        )  # fmt: skip

    def stop(self) -> None:
        with contextlib.suppress(BaseException):
            self._run("pg_ctl", "stop", "-m", "immediate", "-w", "-D", str(self.data))
        shutil.rmtree(self.root, ignore_errors=True)

    def url(
        self, database: str = "postgres", user: str = ADMIN, password: str | None = None
    ) -> str:
        """A SQLAlchemy URL (psycopg 3) for *user* on *database*."""
        secret = self.password if password is None else password
        return f"postgresql+psycopg://{user}:{secret}@127.0.0.1:{self.port}/{database}"

    def connect(self, database: str = "postgres") -> psycopg.Connection[tuple[object, ...]]:
        """A psycopg connection as the cluster's superuser (autocommit)."""
        return psycopg.connect(
            host="127.0.0.1",
            port=self.port,
            user=ADMIN,
            password=self.password,
            dbname=database,
            autocommit=True,
        )

    def new_database(self) -> str:
        """A new, empty database's name."""
        name = f"t_{uuid.uuid4().hex[:12]}"
        with self.connect() as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return name


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """This test process's PostgreSQL server."""
    server = PostgresServer()
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_database(postgres: PostgresServer) -> str:
    """The superuser's URL of a new database for this test."""
    return postgres.url(postgres.new_database())


def make_team(server: PostgresServer, members: dict[str, str]) -> str:
    """A new team's database (``procedura team init``'s work) with *members*, user name →
    role, each with the password ``<user>-pw``; its name."""
    from desktop_app.adapters.sql.database import open_database
    from desktop_app.adapters.sql.team import TeamRole, add_member
    from desktop_app.team import init_team

    database = server.new_database()
    init_team(server.url(database))
    engine = open_database(server.url(database))
    try:
        for user, role in members.items():
            add_member(engine, user, f"{user}-pw", [TeamRole(role)])
    finally:
        engine.dispose()
    return database
