"""A real HTTP server that speaks enough of the OpenAI API for tests (embeddings and chat)."""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import math
import re
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Final

__all__ = [
    "ChatReply",
    "FakeOpenAIServer",
    "RecordedRequest",
    "embed_text",
    "fake_openai_server",
]

#: What a queued chat answer can be: the assistant's text; a message dict (``content``,
#: ``tool_calls``…); a whole ``chat.completion`` dict (has ``choices``); or a function of the
#: request body returning one of those.
ChatReply = str | Mapping[str, Any] | Callable[[dict[str, Any]], "str | Mapping[str, Any]"]

_WORD: Final = re.compile(r"[a-z0-9]+")


def embed_text(text: str, dim: int = 64) -> list[float]:
    """The fake's deterministic embedding: a hashed, signed bag of words, L2-normalised.

    Texts that share words are similar; a text without words gets a fixed unit vector.
    """
    vector = [0.0] * dim
    for word in _WORD.findall(text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        index = int.from_bytes(digest[:4], "little") % dim
        vector[index] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0.0:
        return [1.0] + [0.0] * (dim - 1)
    return [v / norm for v in vector]


def _count_tokens(value: Any) -> int:
    """A rough token count (words) of every string inside *value*."""
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, Mapping):
        return sum(_count_tokens(v) for v in value.values())
    if isinstance(value, list | tuple):
        return sum(_count_tokens(v) for v in value)
    return 0


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    raw_body: bytes
    at: float

    @property
    def json(self) -> Any:
        """The body parsed as JSON (``None`` when empty or not JSON)."""
        try:
            return json.loads(self.raw_body) if self.raw_body else None
        except ValueError:
            return None

    def header(self, name: str) -> str | None:
        """A header's value, case-insensitively."""
        wanted = name.lower()
        return next((v for k, v in self.headers.items() if k.lower() == wanted), None)


@dataclass
class _Failure:
    status: int  # 0 closes the connection without answering
    message: str
    path: str | None
    remaining: int | None  # None: forever
    headers: dict[str, str] = field(default_factory=dict)


class FakeOpenAIServer:
    """An OpenAI-compatible server on ``127.0.0.1`` (a free port) in a background thread.

    Endpoints: ``POST /v1/embeddings`` (:func:`embed_text` vectors, ``float`` or ``base64``),
    ``POST /v1/chat/completions`` (queued replies, else :attr:`default_chat`; ``stream: true``
    answers as server-sent events), ``GET /v1/models``. Every request is recorded in
    :attr:`requests`. :meth:`fail_next` makes requests answer an HTTP error (or drop the
    connection), :meth:`set_delay` makes them slow and :meth:`hold` keeps them waiting.

    Use as a context manager, or :func:`fake_openai_server` in a fixture.
    """

    def __init__(
        self,
        *,
        embedding_dim: int = 64,
        default_chat: ChatReply = "OK",
        models: tuple[str, ...] = ("fake-chat", "fake-embedding"),
    ) -> None:
        self.embedding_dim = embedding_dim
        self.default_chat: ChatReply = default_chat
        self.models = models
        self._requests: list[RecordedRequest] = []
        self._chat_queue: deque[ChatReply] = deque()
        self._failures: list[_Failure] = []
        self._delays: dict[str | None, float] = {}
        self._holds: dict[str, threading.Event] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ── lifecycle ────────────────────────────────────────────────────────────────────────────

    def start(self) -> FakeOpenAIServer:
        """Listen on a free port and serve in a daemon thread."""
        if self._httpd is not None:
            return self
        handler = type("_BoundHandler", (_Handler,), {"fake": self})
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        httpd.daemon_threads = True
        self._stopping.clear()
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-openai-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, wake any delayed request, and close the listening socket."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The port it listens on."""
        if self._httpd is None:
            raise RuntimeError("the fake OpenAI server is not running")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """What an OpenAI client takes as ``base_url``: :attr:`url` + ``/v1``."""
        return self.url + "/v1"

    # ── what the test controls ───────────────────────────────────────────────────────────────

    def queue_chat(self, *replies: ChatReply) -> None:
        """Answer the next chat completions with these, in order (then :attr:`default_chat`)."""
        with self._lock:
            self._chat_queue.extend(replies)

    def fail_next(
        self,
        status: int,
        message: str = "fake failure",
        *,
        times: int | None = 1,
        path: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Answer the next *times* requests (to *path*, or any) with HTTP *status*.

        ``times=None`` fails forever; ``status=0`` closes the connection without answering.
        """
        with self._lock:
            self._failures.append(_Failure(status, message, path, times, dict(headers or {})))

    def set_delay(self, seconds: float, *, path: str | None = None) -> None:
        """Wait *seconds* before answering requests (to *path*, or any); 0 removes it."""
        with self._lock:
            if seconds > 0:
                self._delays[path] = seconds
            else:
                self._delays.pop(path, None)

    def hold(self, path: str) -> threading.Event:
        """Keep requests to *path* unanswered until the event returned is set."""
        gate = threading.Event()
        with self._lock:
            self._holds[path] = gate
        return gate

    def reset(self) -> None:
        """Forget requests, queued replies, failures, delays and holds (held requests go on)."""
        with self._lock:
            self._requests.clear()
            self._chat_queue.clear()
            self._failures.clear()
            self._delays.clear()
            for gate in self._holds.values():
                gate.set()
            self._holds.clear()

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    def requests_to(self, path: str) -> list[RecordedRequest]:
        """The requests whose path (without query) is *path*, e.g. ``/v1/embeddings``."""
        return [r for r in self.requests if r.path.split("?", 1)[0] == path]

    # ── used by the handler ──────────────────────────────────────────────────────────────────

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _take_failure(self, path: str) -> _Failure | None:
        with self._lock:
            for failure in self._failures:
                if failure.path is None or failure.path == path:
                    if failure.remaining is not None:
                        failure.remaining -= 1
                        if failure.remaining <= 0:
                            self._failures.remove(failure)
                    return failure
        return None

    def _delay_for(self, path: str) -> float:
        with self._lock:
            return self._delays.get(path, self._delays.get(None, 0.0))

    def _hold_for(self, path: str) -> threading.Event | None:
        with self._lock:
            return self._holds.get(path)

    def _next_chat(self) -> ChatReply:
        with self._lock:
            return self._chat_queue.popleft() if self._chat_queue else self.default_chat

    def _embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        inputs = body.get("input")
        texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
        data = []
        for index, text in enumerate(texts):
            vector = embed_text(text if isinstance(text, str) else str(text), self.embedding_dim)
            embedding: list[float] | str = vector
            if body.get("encoding_format") == "base64":
                embedding = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
            data.append({"object": "embedding", "index": index, "embedding": embedding})
        tokens = _count_tokens(texts)
        return {
            "object": "list",
            "data": data,
            "model": body.get("model", "fake-embedding"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    def _chat_completion(self, body: dict[str, Any]) -> dict[str, Any]:
        reply = self._next_chat()
        if callable(reply):
            reply = reply(body)
        prompt_tokens = _count_tokens(body.get("messages", []))
        if isinstance(reply, Mapping) and "choices" in reply:
            completion = dict(reply)
            completion.setdefault("id", f"chatcmpl-fake-{next(self._ids)}")
            completion.setdefault("object", "chat.completion")
            completion.setdefault("created", int(time.time()))
            completion.setdefault("model", body.get("model", "fake-chat"))
            completion.setdefault(
                "usage",
                {"prompt_tokens": prompt_tokens, "completion_tokens": 0, "total_tokens": 0},
            )
            return completion
        if isinstance(reply, str):
            message: dict[str, Any] = {"role": "assistant", "content": reply, "refusal": None}
        else:
            message = {"role": "assistant", "content": None, "refusal": None, **reply}
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        completion_tokens = _count_tokens(message.get("content") or "") + _count_tokens(
            message.get("tool_calls") or []
        )
        return {
            "id": f"chatcmpl-fake-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake-chat"),
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


def _stream_chunks(completion: dict[str, Any], include_usage: bool) -> Iterator[dict[str, Any]]:
    """A completion as ``chat.completion.chunk`` events: the message, the finish, the usage."""
    base = {
        "id": completion["id"],
        "object": "chat.completion.chunk",
        "created": completion["created"],
        "model": completion["model"],
    }
    choice = completion["choices"][0]
    delta = {k: v for k, v in choice["message"].items() if v is not None}
    if "tool_calls" in delta:
        delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(delta["tool_calls"])]
    yield {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    yield {
        **base,
        "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}],
    }
    if include_usage:
        yield {**base, "choices": [], "usage": completion["usage"]}


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAIServer  # set on the subclass bound to one server
    server_version = "FakeOpenAI/1.0"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the test reads :attr:`FakeOpenAIServer.requests` instead."""

    def do_GET(self) -> None:
        self._serve(b"")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self._serve(self.rfile.read(length) if length else b"")

    def _serve(self, raw: bytes) -> None:
        path = self.path.split("?", 1)[0]
        self.fake._record(
            RecordedRequest(
                method=self.command,
                path=self.path,
                headers=dict(self.headers.items()),
                raw_body=raw,
                at=time.time(),
            )
        )
        delay = self.fake._delay_for(path)
        if delay and self.fake._stopping.wait(delay):
            return
        gate = self.fake._hold_for(path)
        while gate is not None and not gate.wait(0.05):
            if self.fake._stopping.is_set():
                return
        failure = self.fake._take_failure(path)
        try:
            if failure is not None:
                if failure.status == 0:
                    self.close_connection = True
                    return
                self._error(failure.status, failure.message, failure.headers)
                return
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                self._error(400, "the body is not JSON")
                return
            if self.command == "GET" and path == "/v1/models":
                self._json(
                    200,
                    {
                        "object": "list",
                        "data": [
                            {"id": m, "object": "model", "created": 0, "owned_by": "fake"}
                            for m in self.fake.models
                        ],
                    },
                )
            elif self.command == "POST" and path == "/v1/embeddings":
                self._json(200, self.fake._embeddings(body))
            elif self.command == "POST" and path == "/v1/chat/completions":
                completion = self.fake._chat_completion(body)
                if body.get("stream"):
                    options = body.get("stream_options") or {}
                    self._sse(_stream_chunks(completion, bool(options.get("include_usage"))))
                else:
                    self._json(200, completion)
            else:
                self._error(404, f"no route {self.command} {path}")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)

    def _json(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
        kind = {
            400: "invalid_request_error",
            401: "authentication_error",
            403: "permission_error",
            404: "not_found_error",
            429: "rate_limit_error",
        }.get(status, "server_error")
        payload = {"error": {"message": message, "type": kind, "param": None, "code": None}}
        self._json(status, payload, headers)

    def _sse(self, events: Iterator[dict[str, Any]]) -> None:
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        for event in events:
            self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


def fake_openai_server(**options: Any) -> FakeOpenAIServer:
    """A started server (stop it, or use ``with``); *options* go to :class:`FakeOpenAIServer`.

    In a fixture::

        @pytest.fixture
        def openai_server() -> Iterator[FakeOpenAIServer]:
            with fake_openai_server() as server:
                yield server
    """
    return FakeOpenAIServer(**options).start()
