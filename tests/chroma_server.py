"""A real Chroma server for tests: ``chroma run`` behind an nginx that asks for a bearer token.

This is the team deployment of docs/team.md in miniature: chromadb's own server (it has no
authentication of its own) listens on 127.0.0.1, and nginx in front of it answers 401 unless
``Authorization`` is ``Bearer <token>``. Both run as subprocesses on free loopback ports, with
every file they write (data, config, pid, logs, nginx's temporary paths) in one directory.

A missing ``chroma`` or ``nginx`` fails the test that wants them (CI must run these tests):
``chroma`` comes with the chromadb package, ``nginx`` with Debian's ``nginx-light``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import httpx
import pytest

from desktop_app.adapters.search.server import DEFAULT_TENANT, ChromaServer

__all__ = [
    "ChromaProcess",
    "ProxiedChroma",
    "chroma_behind_proxy",
    "free_port",
    "run_chroma",
]

_READY_TIMEOUT_S: Final = 60.0
_STOP_TIMEOUT_S: Final = 10.0
_POLL_S: Final = 0.05


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listened on a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _chroma_executable() -> Path:
    """The ``chroma`` script of this interpreter's environment (the chromadb package's)."""
    for candidate in (Path(sys.executable).parent / "chroma", shutil.which("chroma")):
        if candidate is not None and Path(candidate).is_file():
            return Path(candidate)
    pytest.fail(
        f"the chroma command is missing (looked beside {sys.executable} and on PATH): "
        "it comes with the chromadb package; run scripts/bootstrap.sh --dev",
        pytrace=False,
    )


def _nginx_executable() -> Path:
    for candidate in (shutil.which("nginx"), "/usr/sbin/nginx", "/usr/local/sbin/nginx"):
        if candidate is not None and Path(candidate).is_file():
            return Path(candidate)
    pytest.fail(
        "nginx is missing: the Chroma server tests put it in front of chroma as the token "
        "proxy; install Debian's nginx-light (apt-get install -y nginx-light)",
        pytrace=False,
    )


def _tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:]) or "(empty log)"


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Terminate *proc*, wait, kill it if it lingers, and reap it."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _wait_until_ready(
    proc: subprocess.Popen[bytes], url: str, headers: dict[str, str], log: Path, what: str
) -> None:
    """Poll *url* until it answers 200; fail with *log*'s tail if *proc* exits or time runs out."""
    deadline = time.monotonic() + _READY_TIMEOUT_S
    last = "no answer yet"
    while True:
        if proc.poll() is not None:
            pytest.fail(
                f"{what} exited with code {proc.returncode} before it answered {url}:\n"
                f"{_tail(log)}",
                pytrace=False,
            )
        try:
            reply = httpx.get(url, headers=headers, timeout=2.0)
        except httpx.HTTPError as exc:
            last = f"{type(exc).__name__}: {exc}"
        else:
            if reply.status_code == 200:
                return
            last = f"HTTP {reply.status_code}"
        if time.monotonic() > deadline:
            _stop(proc)
            pytest.fail(
                f"{what} did not answer {url} within {_READY_TIMEOUT_S:g} s ({last}):\n"
                f"{_tail(log)}",
                pytrace=False,
            )
        time.sleep(_POLL_S)  # between polls; readiness is what ends the loop


@dataclass
class ChromaProcess:
    """A ``chroma run`` on 127.0.0.1, no proxy, no token."""

    proc: subprocess.Popen[bytes]
    port: int
    path: Path
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def server(self) -> ChromaServer:
        return ChromaServer(host="127.0.0.1", port=self.port)

    def stop(self) -> None:
        _stop(self.proc)


@contextlib.contextmanager
def run_chroma(root: Path, port: int | None = None) -> Iterator[ChromaProcess]:
    """``chroma run`` on *port* (a free one if not given) with its data under *root*, ready
    when yielded; stopped on exit."""
    root.mkdir(parents=True, exist_ok=True)
    port = free_port() if port is None else port
    data = root / "data"
    log = root / f"chroma-{port}.log"
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "NO_COLOR": "1"}
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [
                str(_chroma_executable()),
                *("run", "--host", "127.0.0.1", "--port", str(port), "--path", str(data)),
            ],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=root,
            env=env,
        )
    chroma = ChromaProcess(proc=proc, port=port, path=data, log=log)
    try:
        _wait_until_ready(proc, f"{chroma.url}/api/v2/heartbeat", {}, log, "chroma run")
        yield chroma
    finally:
        chroma.stop()


_NGINX_CONF: Final = """\
{user}worker_processes 1;
pid {root}/nginx.pid;
error_log {root}/error.log warn;

events {{
    worker_connections 256;
}}

http {{
    access_log {root}/access.log;
    client_body_temp_path {root}/client_body;
    proxy_temp_path {root}/proxy;
    client_max_body_size 64m;

    # Only this exact header gets through.
    map $http_authorization $chroma_token_ok {{
        default 0;
        "Bearer {token}" 1;
    }}

    server {{
        listen 127.0.0.1:{port};

        location / {{
            if ($chroma_token_ok = 0) {{
                return 401;
            }}
            proxy_pass http://127.0.0.1:{upstream};
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_set_header Authorization "";
            proxy_read_timeout 300s;
        }}
    }}
}}
"""


@dataclass
class ProxiedChroma:
    """``chroma run`` behind nginx, which lets through only ``Bearer <token>``."""

    chroma: ChromaProcess
    nginx: subprocess.Popen[bytes]
    port: int
    token: str
    root: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def access_log(self) -> Path:
        return self.root / "nginx" / "access.log"

    def server(self, token: str | None = None, *, database: str | None = None) -> ChromaServer:
        """The proxy as a :class:`ChromaServer`, with the right token unless told another."""
        return ChromaServer.from_url(
            self.url,
            token=self.token if token is None else token,
            database=database or "default_database",
        )

    def new_database(self) -> str:
        """A new, empty Chroma database (in the default tenant), made through the proxy."""
        name = f"test_{uuid.uuid4().hex[:12]}"
        reply = httpx.post(
            f"{self.url}/api/v2/tenants/{DEFAULT_TENANT}/databases",
            json={"name": name},
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=10.0,
        )
        assert reply.status_code == 200, reply.text
        return name


@contextlib.contextmanager
def chroma_behind_proxy(root: Path, token: str) -> Iterator[ProxiedChroma]:
    """Start ``chroma run`` and nginx in front of it under *root*; stop both on exit."""
    nginx_exe = _nginx_executable()
    with run_chroma(root / "chroma") as chroma:
        prefix = root / "nginx"
        prefix.mkdir(parents=True, exist_ok=True)
        port = free_port()
        conf = prefix / "nginx.conf"
        conf.write_text(
            _NGINX_CONF.format(
                # As root, nginx's workers would otherwise run as nobody (and could not write
                # the temporary paths under *root*); as anyone else the directive is ignored.
                user="user root;\n" if os.geteuid() == 0 else "",
                root=prefix,
                token=token,
                port=port,
                upstream=chroma.port,
            )
        )
        log = prefix / "error.log"
        with (prefix / "nginx.out").open("wb") as out:
            nginx = subprocess.Popen(
                [
                    str(nginx_exe),
                    *("-p", str(prefix), "-c", str(conf), "-e", str(log), "-g", "daemon off;"),
                ],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=prefix,
            )
        try:
            proxied = ProxiedChroma(chroma=chroma, nginx=nginx, port=port, token=token, root=root)
            _wait_until_ready(
                nginx,
                f"{proxied.url}/api/v2/heartbeat",
                {"Authorization": f"Bearer {token}"},
                log,
                "nginx",
            )
            yield proxied
        finally:
            _stop(nginx)
