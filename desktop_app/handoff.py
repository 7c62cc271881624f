"""Handing work to the desktop app that is running, so the stores keep one writer.

While ``procedura gui`` runs it holds the stores and listens on a local socket (a Unix socket or
a Windows named pipe) named after its data directory. A second ``procedura gui`` asks it to bring
its window forward; ``procedura run`` hands it the run and prints the result when it finishes.

The protocol is JSON, one object per line. The client sends one request::

    {"op": "ping"}                       → {"ok": true, "pid": 1234}
    {"op": "show"}                       → {"ok": true}
    {"op": "run", "plan": {...}, "secrets": {...}}
                                         (the plan: ``desktop_app.ops.run.RunPlan``)
                                         → {"step": {...}} per finished step and
                                           {"note": "text"} for what to tell the caller, then
                                           {"ok": true, "run": {...}} (as ``runs show --json``)
                                           or {"ok": false, "error": "one line"}

and, while a run goes on, may send ``{"op": "stop"}`` (Ctrl+C): the run stops and is answered as
interrupted. Closing the connection stops it too. The socket only accepts the same user.

The client uses Qt's QLocalSocket (a Windows named pipe cannot be reached portably otherwise);
PySide6 is imported only here, when a hand-off is tried, never at import time.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from desktop_app.core.errors import ProceduraError

if TYPE_CHECKING:
    from desktop_app.core.models.run import Run, RunStep
    from desktop_app.ops.run import RunPlan
    from desktop_app.settings import Settings

__all__ = [
    "HandoffError",
    "app_is_running",
    "hand_off_run",
    "run_from_json",
    "run_to_json",
    "server_name",
    "show_running_app",
    "try_handoff",
]

#: How long a connection to the app may take before it counts as not running.
CONNECT_TIMEOUT_MS: Final = 1500

#: How long the app may take to answer a request that is not a run.
ANSWER_TIMEOUT_S: Final = 10.0

#: How often the client looks up from waiting (so Ctrl+C gets through).
POLL_MS: Final = 250


class HandoffError(ProceduraError):
    """The running app took the request but broke off before answering."""


def server_name(home: Path) -> str:
    """The local socket's name for the data directory *home* (one app per data directory)."""
    resolved = str(Path(home).expanduser().resolve())
    digest = hashlib.sha256(resolved.encode("utf-8")).hexdigest()[:20]
    return f"procedura-{digest}"


def try_handoff(
    settings: Settings,
    request: Mapping[str, Any],
    *,
    on_message: Callable[[dict[str, Any]], object] | None = None,
    timeout_s: float | None = None,
    stop: threading.Event | None = None,
) -> dict[str, Any] | None:
    """Send *request* to the app that holds *settings*' data directory; its answer.

    Args:
        settings: whose data directory.
        request: the request (see the module docstring).
        on_message: called with every line before the answer (a run's finished steps).
        timeout_s: give up waiting for the answer after this long (None: wait for as long as
            the app is there, as a run takes).
        stop: once set, the app is asked to stop the run (as Ctrl+C does); the answer still
            comes, saying how the run ended. For waits on another thread than the main one,
            which Ctrl+C does not reach.

    Returns:
        The answer (``{"ok": ...}``), or None when no app listens.

    Raises:
        HandoffError: the app closed the connection, or did not answer in time.
    """
    from PySide6.QtNetwork import QLocalSocket

    socket = QLocalSocket()
    socket.connectToServer(server_name(settings.home))
    if not socket.waitForConnected(CONNECT_TIMEOUT_MS):
        return None
    try:
        _send(socket, request)
        return _answer(socket, on_message, timeout_s, stop)
    finally:
        socket.abort()


def _send(socket: Any, message: Mapping[str, Any]) -> None:
    socket.write((json.dumps(dict(message), ensure_ascii=False) + "\n").encode("utf-8"))
    socket.flush()
    socket.waitForBytesWritten(CONNECT_TIMEOUT_MS)


def _answer(
    socket: Any,
    on_message: Callable[[dict[str, Any]], object] | None,
    timeout_s: float | None,
    stop: threading.Event | None,
) -> dict[str, Any]:
    from PySide6.QtNetwork import QLocalSocket

    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    buffer = b""
    stopping = False
    while True:
        try:
            if stop is not None and stop.is_set() and not stopping:
                stopping = True
                _send(socket, {"op": "stop"})
            got = socket.waitForReadyRead(POLL_MS)
            buffer += bytes(socket.readAll().data())
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                if not line.strip():
                    continue
                message = json.loads(line)
                if "ok" in message:
                    return dict(message)
                if on_message is not None:
                    on_message(message)
            if not got and socket.state() != QLocalSocket.LocalSocketState.ConnectedState:
                raise HandoffError("the desktop app closed the connection before answering")
            if deadline is not None and time.monotonic() > deadline:
                raise HandoffError("the desktop app did not answer in time")
        except KeyboardInterrupt:
            if stopping:
                raise
            stopping = True  # the first Ctrl+C stops the run; the answer says how it ended
            _send(socket, {"op": "stop"})


def app_is_running(settings: Settings) -> bool:
    """Whether the desktop app listens for *settings*' data directory."""
    try:
        answer = try_handoff(settings, {"op": "ping"}, timeout_s=ANSWER_TIMEOUT_S)
    except HandoffError:
        return False
    return answer is not None and bool(answer.get("ok"))


def show_running_app(settings: Settings, *, wait_s: float = 5.0) -> bool:
    """Ask the running app to bring its window forward; whether it did.

    The app may still be starting (it holds the stores before it listens): it is asked again
    for up to *wait_s*.
    """
    deadline = time.monotonic() + wait_s
    while True:
        try:
            answer = try_handoff(settings, {"op": "show"}, timeout_s=ANSWER_TIMEOUT_S)
        except HandoffError:
            answer = None
        if answer is not None:
            return bool(answer.get("ok"))
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)


def run_to_json(run: Run) -> dict[str, Any]:
    """A run record as ``procedura runs show --json`` prints it."""
    data = run.model_dump(mode="json")
    data["llm_calls"] = run.llm_calls
    data["tokens"] = run.tokens
    return data


def run_from_json(data: Mapping[str, Any]) -> Run:
    """The run record :func:`run_to_json` wrote."""
    from desktop_app.core.models.run import Run

    return Run.model_validate({k: v for k, v in data.items() if k not in ("llm_calls", "tokens")})


def hand_off_run(
    settings: Settings,
    plan: RunPlan,
    secrets: Mapping[str, str],
    *,
    on_step: Callable[[RunStep], object] | None = None,
    on_note: Callable[[str], object] | None = None,
    stop: threading.Event | None = None,
) -> Run:
    """Have the running app carry out *plan*; the finished run record.

    Questions for a person (a healed irreversible step, an element not found) open as dialogs
    in the app unless the plan is not interactive. *on_step* gets each finished step, *on_note*
    what the app says meanwhile (a question waiting for an answer there). Setting *stop* stops
    the run (it is then answered as interrupted), as Ctrl+C does on the main thread.

    Raises:
        ProceduraError: the app refused the run (the message says why) or went away.
        StoreLockedError: no app listens any more (something else holds the stores).
    """
    from desktop_app.core.errors import StoreLockedError
    from desktop_app.core.models.run import RunStep

    request = {
        "op": "run",
        "plan": plan.model_dump(mode="json"),
        "secrets": dict(secrets),
        "pid": os.getpid(),
    }

    def message(line: dict[str, Any]) -> None:
        if on_step is not None and isinstance(line.get("step"), dict):
            on_step(RunStep.model_validate(line["step"]))
        elif on_note is not None and isinstance(line.get("note"), str):
            on_note(line["note"])

    answer = try_handoff(settings, request, on_message=message, stop=stop)
    if answer is None:
        raise StoreLockedError(
            f"another Procedura process is writing to {settings.home} and the desktop app does "
            "not answer; close it first (or set PROCEDURA_HOME to use another data directory)"
        )
    if not answer.get("ok"):
        raise ProceduraError(str(answer.get("error") or "the desktop app refused the run"))
    return run_from_json(answer["run"])
