"""The search index's worker: Chroma runs in a child process that never holds a secret.

Chroma's embedded HNSW index writes buffers it never zeroed to ``data_level0.bin`` and its
siblings, so freed memory of the process that runs it can reach the data directory
(docs/adr/0003-index-heap-bytes.md). Chroma therefore runs here, in a fresh interpreter started
with ``subprocess`` (never a fork of the parent) and an environment reduced to what Python needs,
so no API key is in it; the parent computes the embeddings and sends only ids, documents,
metadata and vectors.

Parent side: :class:`IndexWorker` starts the child, sends requests and turns every failure
into a one-line :class:`~desktop_app.core.errors.StoreError`.
Child side: :func:`main`, run as ``python -m desktop_app.adapters.search.worker <index dir>``,
or ``… --server`` for an index on a Chroma server (team mode): then the child is an HTTP client
(the server writes the HNSW files, so this process's memory never reaches them) and holds the
server's token, which it reads from its stdin, never from its arguments or environment (both
can be read by other users' ``ps``).

The protocol: the child reads an authentication key (hex) from its stdin, then, with
``--server``, one line of JSON describing the server (:meth:`ChromaServer.to_wire`); it listens with
:mod:`multiprocessing.connection` on a local socket (a named pipe on Windows), prints the address
on its stdout and serves that one connection: requests ``(op, args)``, replies ``("ok", value)`` or
``("error", detail)``. It exits when the connection closes, or when its stdin does before anyone
connected, so it never outlives the parent.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import weakref
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from multiprocessing import AuthenticationError
from multiprocessing.connection import Client, Connection, Listener
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

from desktop_app.adapters.search.server import ChromaServer, page_title, probe
from desktop_app.core.errors import StoreError

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection

__all__ = ["IndexWorker", "child_environment", "describe_index", "main"]

_MODULE: Final = "desktop_app.adapters.search.worker"
_SERVER_FLAG: Final = "--server"
#: The directory that holds the ``desktop_app`` package: the child's working directory, so
#: ``-m`` finds this module first whatever the parent's working directory holds.
_PACKAGE_ROOT: Final = Path(__file__).resolve().parents[3]

_START_TIMEOUT_S: Final = 60.0  # until the child listens (an interpreter start: ~50 ms)
_REPLY_TIMEOUT_S: Final = 120.0  # per request; the first one includes importing chromadb
_STOP_TIMEOUT_S: Final = 10.0

#: Environment variables the child keeps: what Python, its native libraries and the temporary
#: directory need. Everything else (API keys, tokens, proxies with passwords…) stays behind.
_KEPT_ENV: Final = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TMPDIR",
        "TEMP",
        "TMP",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONUTF8",
        "PYTHONIOENCODING",
        "PYTHONDONTWRITEBYTECODE",
        "VIRTUAL_ENV",
        "CONDA_PREFIX",
        "LD_LIBRARY_PATH",
        "DYLD_LIBRARY_PATH",
        "DYLD_FALLBACK_LIBRARY_PATH",
        # Windows
        "SYSTEMROOT",
        "SYSTEMDRIVE",
        "WINDIR",
        "COMSPEC",
        "PATHEXT",
        "USERPROFILE",
        "LOCALAPPDATA",
        "APPDATA",
        "NUMBER_OF_PROCESSORS",
        "PROCESSOR_ARCHITECTURE",
    }
)
_KEPT_ENV_PREFIXES: Final = ("LC_",)

_log = logging.getLogger(__name__)


def child_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The worker's environment: the variables of *environ* on an allowlist, no credentials."""
    return {
        name: value
        for name, value in environ.items()
        if name.upper() in _KEPT_ENV or name.upper().startswith(_KEPT_ENV_PREFIXES)
    }


# ── parent side ───────────────────────────────────────────────────────────────────────────────


class _Process:
    """The child and its pipes; :meth:`release` is also the finalizer (it never refers back)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.conn: Connection | None = None
        self.address: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self.stderr: deque[str] = deque(maxlen=20)
        self.readers = [
            threading.Thread(target=self._read_address, name="index-worker-stdout", daemon=True),
            threading.Thread(target=self._read_stderr, name="index-worker-stderr", daemon=True),
        ]
        for reader in self.readers:
            reader.start()

    def _read_address(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        with stream:
            try:
                line = stream.readline()
                self.address.put(line.decode("utf-8", "replace").strip() or None)
                stream.read()  # nothing more is written there; wait for the end
            except (OSError, ValueError):
                self.address.put(None)

    def _read_stderr(self) -> None:
        stream = self.proc.stderr
        assert stream is not None
        with stream:
            try:
                for raw in stream:
                    line = " ".join(raw.decode("utf-8", "replace").split())
                    if line:
                        self.stderr.append(line)
                        _log.debug("index worker %s: %s", self.proc.pid, line)
            except (OSError, ValueError):
                return

    def release(self, timeout: float = _STOP_TIMEOUT_S) -> None:
        """Close the pipes, let the child exit (killing it after *timeout*) and reap it."""
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.close()
        stdin = self.proc.stdin
        if stdin is not None:
            with contextlib.suppress(OSError):
                stdin.close()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for reader in self.readers:
            reader.join(timeout=2.0)


def describe_index(target: Path | ChromaServer) -> str:
    """The index at *target*, for messages: ``the search index at /dir`` or ``the search index
    on the Chroma server at http://host:port``."""
    if isinstance(target, ChromaServer):
        return f"the search index on {target.describe()}"
    return f"the search index at {target}"


class IndexWorker:
    """One worker process for the Chroma directory or server *target*, started on construction.

    Construction only launches the interpreter; the first :meth:`call` waits for it. A worker
    that died, or did not answer in time, is :attr:`stopped` for good: start a new one. A
    server's token reaches the worker through its stdin only.
    """

    def __init__(self, target: Path | ChromaServer) -> None:
        self._where = describe_index(target)
        self._key = secrets.token_bytes(32)
        self.stopped = False
        executable = sys.executable
        if not executable:
            raise StoreError("cannot start the search index: the Python interpreter is unknown")
        flags = getattr(subprocess, "CREATE_NO_WINDOW", 0) if sys.platform == "win32" else 0
        if isinstance(target, ChromaServer):
            argument = _SERVER_FLAG
            # The token travels on the stdin pipe with the key: never in argv nor environ.
            greeting = self._key.hex() + "\n" + json.dumps(target.to_wire()) + "\n"
        else:
            argument = str(target)
            greeting = self._key.hex() + "\n"
        try:
            proc = subprocess.Popen(
                [executable, "-m", _MODULE, argument],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=_PACKAGE_ROOT,
                env=child_environment(os.environ),
                close_fds=True,
                creationflags=flags,
            )
        except OSError as exc:
            raise StoreError(
                f"cannot start the worker of {self._where}: {exc.strerror or exc}"
            ) from exc
        self._process = _Process(proc)
        self._finalizer = weakref.finalize(self, self._process.release)
        assert proc.stdin is not None
        with contextlib.suppress(OSError):  # a child that died at once shows at the first call
            proc.stdin.write(greeting.encode("utf-8"))
            proc.stdin.flush()

    @property
    def pid(self) -> int:
        """The worker's process id."""
        return self._process.proc.pid

    def call(self, action: str, op: str, /, **args: Any) -> Any:
        """Run *op* in the worker; *action* names it in errors ("cannot {action} the index…")."""
        conn = self._connect(action)
        try:
            conn.send((op, args))
            if not conn.poll(_REPLY_TIMEOUT_S):
                self._fail()
                raise StoreError(
                    f"cannot {action} {self._where}: its worker did not "
                    f"answer within {_REPLY_TIMEOUT_S:g} s and was stopped; try again"
                )
            status, value = conn.recv()
        except (EOFError, OSError) as exc:
            raise self._died(action) from exc
        if status == "ok":
            return value
        raise StoreError(f"cannot {action} {self._where}: {value}")

    def _connect(self, action: str) -> Connection:
        if self.stopped:
            raise StoreError(f"cannot {action} {self._where}: it was closed")
        conn = self._process.conn
        if conn is not None:
            return conn
        try:
            address = self._process.address.get(timeout=_START_TIMEOUT_S)
        except queue.Empty:
            self._fail()
            raise StoreError(
                f"cannot {action} {self._where}: its worker did not start "
                f"within {_START_TIMEOUT_S:g} s"
            ) from None
        if address is None:
            raise self._died(action)
        try:
            conn = self._process.conn = Client(address, authkey=self._key)
        except (EOFError, OSError, AuthenticationError) as exc:
            raise self._died(action) from exc
        return conn

    def _fail(self) -> None:
        self.stopped = True
        self._process.proc.kill()
        self._finalizer()

    def _died(self, action: str) -> StoreError:
        """The error for a worker that went away; it is reaped (killed if it lingers)."""
        self.stopped = True
        self._finalizer()  # waits for the exit code and the last lines of stderr
        code = self._process.proc.returncode
        if code is not None and code < 0:
            try:
                how = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
        else:
            how = f"exit code {code}"
        last = self._process.stderr[-1][:200] if self._process.stderr else ""
        detail = f"{how}: {last}" if last else how
        return StoreError(
            f"cannot {action} {self._where}: its worker process stopped "
            f"({detail}); the next try starts a new one"
        )

    def stop(self) -> None:
        """Ask the worker to close Chroma and exit; kill it if it does not."""
        if self.stopped:
            return
        self.stopped = True
        conn = self._process.conn
        if conn is not None:
            with contextlib.suppress(EOFError, OSError):
                conn.send(("close", {}))
                if conn.poll(_STOP_TIMEOUT_S):
                    conn.recv()
        self._finalizer()


# ── child side ────────────────────────────────────────────────────────────────────────────────

#: How many candidates the HNSW graph search keeps (chroma's default is 100). The library asks
#: for the 50 nearest neighbours of a query; among the many near-identical workflows of a large
#: library the approximate search then missed some of the true ones, depending on the order the
#: workflows were added in (at 10,000, bench/retrieval.py: recall@3 49.3% against 54.8% for
#: exact search over the same vectors). With 1,000 it found exactly the nearest in either
#: order, for about half a millisecond more per query; a wider graph (max_neighbors,
#: ef_construction) did not, alone. It is the one HNSW
#: setting a collection may change after creation: :meth:`_Chroma.open` raises it on older ones.
EF_SEARCH: Final = 1000
_COSINE: Final = {"hnsw": {"space": "cosine", "ef_search": EF_SEARCH}}


class _Chroma:
    """The worker's Chroma client and collections; every vector comes from the parent."""

    def __init__(self, target: Path | ChromaServer) -> None:
        self._target = target
        self._client: ClientAPI | None = None
        self._collections: dict[str, Collection] = {}
        self._identities: dict[str, dict[str, Any]] = {}  # the metadata each was opened with

    def client(self) -> ClientAPI:
        if self._client is None:
            import chromadb
            from chromadb.config import Settings

            target = self._target
            if isinstance(target, ChromaServer):
                # Connecting asks the server who we are and checks the tenant and database.
                self._client = chromadb.HttpClient(
                    host=target.host,
                    port=target.port,
                    ssl=target.ssl,
                    settings=Settings(**target.client_settings()),
                    tenant=target.tenant,
                    database=target.database,
                )
            else:
                self._client = chromadb.PersistentClient(
                    path=str(target),
                    settings=Settings(anonymized_telemetry=False, allow_reset=False),
                )
        return self._client

    def explain(self, exc: Exception) -> str:
        """A one-line description of *exc*, for the parent's error message. On a server, what a
        heartbeat shows comes first (unreachable, token refused); the token is never in it."""
        target = self._target
        if not isinstance(target, ChromaServer):
            return _detail(exc)
        detail = probe(target) or page_title(_detail(exc))
        if target.token:
            detail = detail.replace(target.token, "***")
        return detail

    def refresh(self, name: str) -> bool:
        """Forget the collection *name* after the server said it does not exist (another
        machine rebuilt the index, so it has a new id); whether it was held (worth a retry).

        Raises:
            ValueError: it was made again with other embeddings than it was opened with.
        """
        if self._collections.pop(name, None) is None:
            return False
        held = self._identities.get(name, {})
        found = dict(self._get(name).metadata or {})
        if any(found.get(key) != value for key, value in held.items()):
            self._collections.pop(name, None)
            raise ValueError(
                "another machine rebuilt it with other embeddings; "
                "run `procedura reindex` on one of them after agreeing on the embeddings"
            )
        return True

    def _create(self, name: str, metadata: dict[str, Any]) -> Collection:
        # No embedding function: chroma keeps none in the configuration and never loads its
        # default one, since every call brings its vectors.
        return self.client().create_collection(
            name,
            configuration=_COSINE,  # type: ignore[arg-type]
            metadata=metadata,
            embedding_function=None,
        )

    def _get(self, name: str) -> Collection:
        collection = self._collections.get(name)
        if collection is None:
            collection = self.client().get_collection(name, embedding_function=None)
            self._collections[name] = collection
        return collection

    def open(self, name: str, metadata: dict[str, Any]) -> dict[str, Any]:
        from chromadb.errors import NotFoundError

        self._collections.pop(name, None)
        self._identities[name] = dict(metadata)
        try:
            collection = self._get(name)
        except NotFoundError:
            collection = self._collections[name] = self._create(name, metadata)
        configuration = collection.configuration_json
        legacy = configuration.get("embedding_function") not in (None, {"type": "legacy"})
        hnsw = configuration.get("hnsw") or {}
        # Made before it was raised. (Not one made before the worker, which names a function
        # chroma cannot load here: a reindex makes it again, the new way.)
        if int(hnsw.get("ef_search") or 0) < EF_SEARCH and not legacy:
            collection.modify(configuration={"hnsw": {"ef_search": EF_SEARCH}})
            self._collections.pop(name, None)
            collection = self._get(name)
        return {
            "metadata": dict(collection.metadata or {}),
            "embedding_function": collection.configuration_json.get("embedding_function"),
            "dimension": collection.get_model().dimension,  # None until a vector was added
        }

    def replace(
        self,
        name: str,
        ids: list[str],
        documents: list[str],
        metadatas: list[dict[str, Any]],
        embeddings: Any,
    ) -> None:
        collection = self._get(name)
        # Chroma's upsert merges metadata, which would keep the keys of dropped domains.
        collection.delete(ids=ids)
        collection.add(ids=ids, documents=documents, metadatas=metadatas, embeddings=embeddings)  # type: ignore[arg-type]

    def upsert(
        self,
        name: str,
        ids: list[str],
        documents: list[str],
        metadatas: list[dict[str, Any]],
        embeddings: Any,
    ) -> None:
        self._get(name).upsert(
            ids=ids,
            documents=documents,
            metadatas=metadatas,  # type: ignore[arg-type]
            embeddings=embeddings,
        )

    def delete(
        self, name: str, ids: list[str] | None = None, where: dict[str, Any] | None = None
    ) -> None:
        self._get(name).delete(ids=ids, where=where)

    def count(self, name: str) -> int:
        return self._get(name).count()

    def entries(self, name: str) -> list[tuple[str, dict[str, Any]]]:
        """Every entry's id and metadata (no documents, no vectors)."""
        found = self._get(name).get(include=["metadatas"])
        metadatas = found["metadatas"] or [{} for _ in found["ids"]]
        return [(i, dict(m or {})) for i, m in zip(found["ids"], metadatas, strict=True)]

    def query(
        self, name: str, vector: Any, n: int, where: dict[str, Any] | None
    ) -> tuple[list[str], list[float]]:
        collection = self._get(name)  # an empty one answers with nothing (no count first)
        result = collection.query(
            query_embeddings=[vector], n_results=n, where=where, include=["distances"]
        )
        ids = list(result["ids"][0]) if result["ids"] else []
        distances = [float(d) for d in result["distances"][0]] if result["distances"] else []
        return ids, distances

    def clear(self, names: Sequence[str], metadata: dict[str, Any]) -> None:
        from chromadb.errors import NotFoundError

        client = self.client()
        self._collections.clear()
        self._identities = {name: dict(metadata) for name in names}
        for name in names:
            with contextlib.suppress(NotFoundError):
                client.delete_collection(name)
            self._collections[name] = self._create(name, metadata)

    def close(self) -> None:
        client, self._client = self._client, None
        self._collections.clear()
        close = getattr(client, "close", None)  # chromadb ≥ 1.1 clients have close()
        if callable(close):
            close()


def _detail(exc: Exception) -> str:
    """A one-line description of a failure in the worker, for the parent's error message."""
    from chromadb.errors import ChromaError

    text = " ".join(str(exc).split())[:300]
    if isinstance(exc, ChromaError | OSError | ValueError):
        return text or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _run(chroma: _Chroma, handler: Callable[..., Any], args: dict[str, Any]) -> Any:
    """Run *handler*; once more if the server lost a collection that another machine rebuilt."""
    from chromadb.errors import NotFoundError

    try:
        return handler(**args)
    except NotFoundError:
        name = args.get("name")
        if not isinstance(name, str) or not chroma.refresh(name):
            raise
    return handler(**args)


def _serve(conn: Connection, target: Path | ChromaServer) -> None:
    import warnings

    # Collections built before the worker existed name an embedding function chroma cannot
    # build here (it is not registered in this process, on purpose); it is never needed.
    warnings.filterwarnings("ignore", message="Could not reconstruct embedding function")
    chroma = _Chroma(target)
    handlers: dict[str, Callable[..., Any]] = {
        "open": chroma.open,
        "replace": chroma.replace,
        "upsert": chroma.upsert,
        "delete": chroma.delete,
        "count": chroma.count,
        "entries": chroma.entries,
        "query": chroma.query,
        "clear": chroma.clear,
    }
    try:
        while True:
            try:
                op, args = conn.recv()
            except EOFError:
                return
            if op == "close":
                chroma.close()
                conn.send(("ok", None))
                return
            try:
                value = _run(chroma, handlers[op], args)
            except Exception as exc:  # reported to the parent, which raises StoreError
                conn.send(("error", chroma.explain(exc)))
            else:
                conn.send(("ok", value))
    finally:
        chroma.close()


def _exit_when_orphaned(stdin: IO[bytes], connected: threading.Event) -> None:
    """End the process if the parent goes away before it connected (its stdin closes)."""
    with contextlib.suppress(OSError, ValueError):
        stdin.read()
    if not connected.is_set():
        os._exit(0)


def _listen(key: bytes) -> tuple[Listener, str | None]:
    """A listener on a new local address, and the private directory that holds it (POSIX)."""
    if sys.platform == "win32":
        address = rf"\\.\pipe\procedura-index-{os.getpid()}-{secrets.token_hex(8)}"
        return Listener(address, family="AF_PIPE", authkey=key), None
    directory = tempfile.mkdtemp(prefix="procedura-index-")  # mode 0700: ours alone
    try:
        listener = Listener(os.path.join(directory, "s"), family="AF_UNIX", authkey=key)
    except OSError:
        os.rmdir(directory)
        raise
    return listener, directory


def main(argv: Sequence[str] | None = None) -> int:
    """The worker process: serve the Chroma directory ``argv[0]`` (or, with ``--server``, the
    server described on stdin) to the parent that started it."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print(f"usage: python -m {_MODULE} <index directory> | {_SERVER_FLAG}", file=sys.stderr)
        return 2
    # Ctrl+C in a terminal reaches the whole process group; the parent decides when we stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    key = bytes.fromhex(sys.stdin.buffer.readline().decode("ascii").strip())
    target: Path | ChromaServer
    if args[0] == _SERVER_FLAG:
        try:
            target = ChromaServer.from_wire(json.loads(sys.stdin.buffer.readline()))
        except (ValueError, KeyError, TypeError) as exc:
            print(f"no Chroma server was described on stdin: {type(exc).__name__}", file=sys.stderr)
            return 2
    else:
        target = Path(args[0])
    connected = threading.Event()
    threading.Thread(
        target=_exit_when_orphaned, args=(sys.stdin.buffer, connected), daemon=True
    ).start()
    listener, directory = _listen(key)
    try:
        sys.stdout.buffer.write(str(listener.address).encode("utf-8") + b"\n")
        sys.stdout.flush()
        # From now on stdout is stderr: nothing chroma prints can be taken for the protocol.
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
        conn = listener.accept()
    except (OSError, EOFError, AuthenticationError) as exc:
        print(f"the parent did not connect: {exc}", file=sys.stderr)
        return 1
    finally:
        listener.close()  # removes the socket file
        if directory is not None:
            with contextlib.suppress(OSError):
                os.rmdir(directory)
    connected.set()
    with conn:
        _serve(conn, target)
    # Chroma is closed and every reply sent: skip the interpreter's teardown (~0.2 s with
    # chromadb loaded), which the parent would otherwise wait for.
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
