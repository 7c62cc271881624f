"""One app per data directory: the running app takes over what a second start asks for.

:class:`InstanceServer` listens on a local socket named after the data directory (see
:mod:`desktop_app.handoff` for the protocol and the client). A second ``procedura gui`` asks it to
bring the window forward; ``procedura run`` hands it a run, which the app replays through its own
services (the stores keep one writer) while the command line prints the steps and the result.
A handed-over run shows in the tray and can be stopped there; questions for a person open as
dialogs in the app.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable
from datetime import datetime
from typing import Any, Final

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QAbstractSocket, QLocalServer, QLocalSocket

from desktop_app.core.errors import ProceduraError
from desktop_app.core.models.common import utcnow
from desktop_app.core.models.run import Run
from desktop_app.core.models.workflow import WorkflowVersion
from desktop_app.core.replay.engine import ReplayEvent
from desktop_app.core.replay.person import Question
from desktop_app.handoff import run_to_json, server_name
from desktop_app.ops.changes import Origin, run_changes
from desktop_app.ops.run import RunPlan
from desktop_app.settings import Settings
from desktop_app.ui.backend import RunRequest
from desktop_app.ui.host import Host
from desktop_app.ui.person_dialogs import DialogPerson
from desktop_app.ui.screenshot_view import ScreenshotLoader
from desktop_app.ui.tasks import describe_error
from desktop_app.ui.tray import Tray
from desktop_app.ui.windows import bring_forward

__all__ = ["InstanceServer"]

log = logging.getLogger(__name__)

#: The longest request line accepted (a run's values and secrets fit many times over).
MAX_LINE: Final = 1 << 20


class InstanceServer(QObject):
    """Listens for a second start of the app over the same data directory.

    Args:
        host: the main window.
        settings: whose data directory (the socket's name).
        tray: the tray, where handed-over runs show (and "Pause runs" refuses them).

    Signals:
        request_handled(str): a request was answered; its ``op``.
    """

    request_handled = Signal(str)

    def __init__(
        self,
        host: Host,
        settings: Settings,
        *,
        tray: Tray | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent if parent is not None else host.window)
        self._host = host
        self._tray = tray
        self.name = server_name(settings.home)
        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._on_server_new_connection)
        self._clients: set[_Client] = set()

    def listen(self) -> bool:
        """Start listening; whether it could (the app works on without it).

        Only the holder of the stores' writer lock calls this, so a socket left by an app that
        crashed is removed first.
        """
        if self._server.listen(self.name):
            return True
        if self._server.serverError() == QAbstractSocket.SocketError.AddressInUseError:
            QLocalServer.removeServer(self.name)
            if self._server.listen(self.name):
                return True
        log.warning("cannot listen for a second start: %s", self._server.errorString())
        return False

    @property
    def listening(self) -> bool:
        """Whether a second start can reach this app."""
        return self._server.isListening()

    def close(self) -> None:
        """Stop listening (runs handed over already go on until the jobs are cancelled)."""
        self._server.close()

    # ── requests ────────────────────────────────────────────────────────────────────────────

    def _on_server_new_connection(self) -> None:
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            client = _Client(socket, self._handle, self)
            self._clients.add(client)
            client.gone.connect(lambda c=client: self._clients.discard(c))

    def _handle(self, client: _Client, message: dict[str, Any]) -> None:
        op = message.get("op")
        if op == "ping":
            client.answer({"ok": True, "pid": os.getpid()})
        elif op == "show":
            bring_forward(self._host.window)
            client.answer({"ok": True})
        elif op == "run":
            if client.task is not None:
                client.answer({"ok": False, "error": "one run per connection"})
            elif self._tray is not None and self._tray.paused:
                client.answer(
                    {
                        "ok": False,
                        "error": "runs are paused in the Procedura tray; untick “Pause runs” "
                        "in its menu and try again",
                    }
                )
            else:
                client.task = self._host.tasks.start(
                    self._run(client, message), label="Running a workflow from the command line…"
                )
                return  # answered when the run ends
        elif op == "stop":
            if client.task is not None and not client.task.done():
                client.task.cancel()
            return
        else:
            client.answer({"ok": False, "error": f"unknown request {op!r}"})
        self.request_handled.emit(str(op))

    async def _run(self, client: _Client, message: dict[str, Any]) -> None:
        host = self._host
        try:
            plan = RunPlan.model_validate(message.get("plan"))
            version = await host.tasks.call(plan.version_in, host.backend.workflows)
            request = _request(host.backend.settings, version, plan, message)
        except (ProceduraError, TypeError, ValueError) as exc:  # a ValidationError too
            client.answer({"ok": False, "error": describe_error(exc)})
            self.request_handled.emit("run")
            return
        workflow = version.workflow
        total = len(workflow.steps)
        done = 0

        def on_event(event: ReplayEvent) -> None:
            nonlocal done
            step = event.step
            if step is None:
                return
            client.send({"step": step.model_dump(mode="json")})
            if step.top_level and self._tray is not None:
                done += 1
                self._tray.progress_run(client, f"step {done} of {total}")

        def on_asked(question: Question) -> None:
            note = f"? {question.step_title}: {question.message} (answer it in the Procedura app)"
            client.send({"note": note})

        interactive = plan.interactive
        person = (
            DialogPerson(None, on_asked=on_asked, pictures=ScreenshotLoader(host).load)
            if interactive
            else None
        )
        if self._tray is not None and client.task is not None:
            self._tray.track_run(client, workflow.name, client.task.cancel)
        began = utcnow()
        run: Run | None
        try:
            run = await host.backend.replay(request, person=person, on_event=on_event)
        except asyncio.CancelledError:
            run = await self._interrupted(workflow.id, began)  # the record says "interrupted"
        except ProceduraError as exc:
            client.answer({"ok": False, "error": str(exc)})
            host.events.announce(run_changes(None, Origin.HANDOFF))
            return
        except Exception as exc:
            client.answer({"ok": False, "error": describe_error(exc)})
            raise  # a bug: the window reports it too
        finally:
            if self._tray is not None:
                self._tray.end_run(client)
            self.request_handled.emit("run")
        if run is None:
            client.answer({"ok": False, "error": "stopped before the run began; nothing was done"})
            return
        host.events.announce(run_changes(run, Origin.HANDOFF))
        client.answer({"ok": True, "run": run_to_json(run)})

    async def _interrupted(self, workflow_id: str, began: datetime) -> Run | None:
        runs = self._host.backend.runs
        found = await self._host.tasks.call(runs.runs, workflow_id, 1)
        if found and found[0].started_at >= began:
            return found[0]
        return None


def _request(
    settings: Settings, version: WorkflowVersion, plan: RunPlan, message: dict[str, Any]
) -> RunRequest:
    secrets = message.get("secrets") or {}
    if not isinstance(secrets, dict):
        raise TypeError("secrets must be an object of names and values")
    return RunRequest(
        version=version,
        values=dict(plan.values),
        secrets={str(k): str(v) for k, v in secrets.items()},
        options=plan.options(settings),
        base_url=plan.base_url,
        headless=plan.headless,
    )


class _Client(QObject):
    """One connection: reads request lines, writes answer lines."""

    gone = Signal()

    def __init__(
        self,
        socket: QLocalSocket,
        handle: Callable[[_Client, dict[str, Any]], None],
        parent: QObject,
    ) -> None:
        super().__init__(parent)
        self._socket = socket
        socket.setParent(self)
        self._handle = handle
        self._buffer = b""
        self._answered = False
        self._gone = False
        self.task: asyncio.Task[Any] | None = None
        socket.readyRead.connect(self._on_socket_ready_read)
        socket.disconnected.connect(self._on_socket_disconnected)

    def send(self, message: dict[str, Any]) -> None:
        """Write one line (nothing happens once the client is gone)."""
        if self._gone or self._socket.state() != QLocalSocket.LocalSocketState.ConnectedState:
            return
        line = json.dumps(message, ensure_ascii=False, default=str) + "\n"
        self._socket.write(line.encode("utf-8"))
        self._socket.flush()

    def answer(self, message: dict[str, Any]) -> None:
        """Write the final line and hang up once it is written."""
        if self._answered:
            return
        self._answered = True
        self.send(message)
        if not self._gone:
            self._socket.disconnectFromServer()  # after what is written has gone out

    def _on_socket_ready_read(self) -> None:
        self._buffer += bytes(self._socket.readAll().data())
        if len(self._buffer) > MAX_LINE:
            self.answer({"ok": False, "error": "request too long"})
            return
        while b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                self.answer({"ok": False, "error": "not a JSON line"})
                return
            if not isinstance(message, dict):
                self.answer({"ok": False, "error": "a request is a JSON object"})
                return
            self._handle(self, message)

    def _on_socket_disconnected(self) -> None:
        if self._gone:
            return
        self._gone = True
        self.gone.emit()
        if self.task is not None and not self.task.done():
            self.task.cancel()  # the command line went away (Ctrl+C twice): stop the run
            self.task.add_done_callback(lambda _task: self.deleteLater())
        else:
            self.deleteLater()
