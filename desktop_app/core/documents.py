"""Reading and writing persisted documents (workflows, trajectories) as JSON, with helpful errors.

Every problem becomes one :class:`~desktop_app.core.errors.DocumentError` naming the source, the
JSON path and what is wrong, e.g. ``contact.json at steps[3].kind: unknown step kind 'clik';
expected one of goto, click, …``.

A trajectory file can be large (ARIA snapshots, tens of thousands of events): the
:class:`TrajectoryReader` reads one an event at a time, with the same checks and the same errors
as :func:`load_trajectory`, so an import never holds the whole document in memory.
"""

from __future__ import annotations

import codecs
import io
import json
import re
from collections.abc import Generator, Iterator, Sequence
from typing import Any, BinaryIO, Final, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from desktop_app.core.errors import DocumentError
from desktop_app.core.models.common import (
    ID_PATTERN,
    SCHEMA_VERSION,
    WORKFLOW_SCHEMA_VERSION,
    DocumentPathError,
)
from desktop_app.core.models.trajectory import Event, Trajectory
from desktop_app.core.models.workflow import Workflow

__all__ = [
    "MAX_TRAJECTORY_BYTES",
    "MAX_WORKFLOW_BYTES",
    "TrajectoryReader",
    "dump_document",
    "load_trajectory",
    "load_workflow",
    "parse_document",
]

#: The largest workflow file accepted (workflows are small; this stops a wrong file early).
MAX_WORKFLOW_BYTES: Final = 5 * 1024 * 1024
#: The largest trajectory file accepted (ARIA snapshots make trajectories larger).
MAX_TRAJECTORY_BYTES: Final = 100 * 1024 * 1024

M = TypeVar("M", bound=BaseModel)


def dump_document(model: BaseModel) -> str:
    """*model* as pretty, stable JSON text (what export writes)."""
    return model.model_dump_json(indent=2) + "\n"


def load_workflow(data: bytes | str, *, source: str = "") -> Workflow:
    """Parse and validate a workflow document.

    Raises:
        DocumentError: the text is too large, not JSON, of another schema version or kind of
            document, or invalid; nothing is returned in part.
    """
    return parse_document(data, Workflow, "workflow", MAX_WORKFLOW_BYTES, source=source)


def load_trajectory(data: bytes | str, *, source: str = "") -> Trajectory:
    """Parse and validate a trajectory document (errors as for :func:`load_workflow`)."""
    return parse_document(data, Trajectory, "trajectory", MAX_TRAJECTORY_BYTES, source=source)


def parse_document(
    data: bytes | str, model: type[M], document: str, max_bytes: int, *, source: str = ""
) -> M:
    """Parse *data* as a *document* of type *model*. See :func:`load_workflow`."""
    _check_size(len(data.encode() if isinstance(data, str) else data), max_bytes, document, source)
    try:
        raw = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError, ValueError) as exc:
        raise _json_error(exc, source) from None
    if not isinstance(raw, dict):
        raise DocumentError(
            f"expected a JSON object (a {document}), got {_json_type(raw)}", source=source
        )
    _check_text(data, raw, source)
    _check_kind_and_version(raw, document, source)
    return _validated(raw, model, source)


#: A \\uD800-\\uDFFF escape: half of a pair, which is no character when it is alone.
_SURROGATE_ESCAPE: Final = rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}"


def _check_text(data: bytes | str, raw: dict[str, Any], source: str) -> None:
    """Refuse a document whose escapes make a string no text can hold (half a surrogate pair,
    which JSON allows and no database or file takes). The escape is looked for first (cheap);
    only then is the parsed document checked whole."""
    probe = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if re.search(_SURROGATE_ESCAPE, probe) is None:
        return
    try:
        json.dumps(raw, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise DocumentError(
            "not text: a \\u escape is half of a surrogate pair, no character", source=source
        ) from None


def _check_size(size: int, max_bytes: int, document: str, source: str) -> None:
    if size > max_bytes:
        raise DocumentError(
            f"file is {size / 1e6:.1f} MB, "
            f"larger than the {max_bytes / 1e6:.0f} MB a {document} may be",
            source=source,
        )


def _json_error(exc: Exception, source: str) -> DocumentError:
    """What :func:`json.loads` raising *exc* means, as a one-line error."""
    if isinstance(exc, UnicodeDecodeError):
        return DocumentError("not UTF-8 text", source=source)
    if isinstance(exc, json.JSONDecodeError):
        return DocumentError(
            f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})", source=source
        )
    if isinstance(exc, RecursionError):
        return DocumentError("not a document: arrays or objects nested too deep", source=source)
    # Python's own limit on digits (a number of thousands of them)
    return DocumentError(
        "not a document: a number with more digits than any field takes", source=source
    )


def _check_kind_and_version(raw: dict[str, Any], document: str, source: str) -> None:
    kind = raw.get("document")
    if kind is not None and kind != document:
        raise DocumentError(
            f"this is a {kind} document, not a {document}", path="document", source=source
        )
    newest = WORKFLOW_SCHEMA_VERSION if document == "workflow" else SCHEMA_VERSION
    if "schema_version" not in raw:
        raise DocumentError(
            f"missing schema_version (this Procedura reads version {newest})",
            path="schema_version",
            source=source,
        )
    version = raw["schema_version"]
    if not isinstance(version, int) or isinstance(version, bool):
        raise DocumentError(
            f"schema_version must be a whole number, got {version!r}",
            path="schema_version",
            source=source,
        )
    if version > newest:
        raise DocumentError(
            f"schema_version {version} is newer than this Procedura understands "
            f"({newest}); "
            "upgrade Procedura to read it",
            path="schema_version",
            source=source,
        )
    if version < 1:
        raise DocumentError(
            f"schema_version {version} does not exist", path="schema_version", source=source
        )


def _validated(raw: dict[str, Any], model: type[M], source: str) -> M:
    try:
        parsed = model.model_validate(raw)
    except ValidationError as exc:
        raise _document_error(exc.errors(include_url=False), raw, source) from None
    _check_id(parsed, source)
    return parsed


def _check_id(parsed: BaseModel, source: str) -> None:
    given = getattr(parsed, "id", None)
    if isinstance(given, str) and not re.fullmatch(ID_PATTERN, given):
        raise DocumentError(
            "an id is 1 to 64 letters, digits, '_', '.' or '-', beginning with a letter or "
            f"a digit; got {given[:64]!r}",
            path="id",
            source=source,
        )


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if value is None:
        return "null"
    return f"a {type(value).__name__}"


def _document_error(
    errors: Sequence[ErrorDetails], raw: Any, source: str, *, more_elsewhere: int = 0
) -> DocumentError:
    """The first of pydantic's *errors* about *raw*, as a one-line DocumentError with a JSON path.

    *more_elsewhere*: how many errors there are besides *errors* (none of them about a part of
    the document the first error is about), counted in "(and N more problems)".
    """
    first = errors[0]
    loc = list(first["loc"])
    path, node = _json_path(loc, raw)
    kind = first["type"]
    ctx = first.get("ctx") or {}
    error = ctx.get("error")
    if isinstance(error, DocumentPathError):
        nested = error.path
        if nested:
            path = f"{path}.{nested}" if path and not nested.startswith("[") else path + nested
        return DocumentError(error.message, path=path, source=source)
    message = first["msg"]
    if kind == "union_tag_invalid":
        tag = ctx.get("tag")
        expected = ctx.get("expected_tags", "")
        noun = "step kind" if path.startswith("steps[") and path.endswith("]") else "kind"
        if path.endswith("expectations]") or "expectations[" in path.rsplit(".", 1)[-1]:
            noun = "expectation kind"
        message = f"unknown {noun} {tag!r}; expected one of {expected}"
        path = f"{path}.kind" if path else "kind"
    elif kind == "union_tag_not_found":
        message = "missing 'kind'"
        path = f"{path}.kind" if path else "kind"
    elif kind == "extra_forbidden":
        message = "unknown field (check its spelling)"
    elif kind == "missing":
        message = "required field is missing"
    elif kind == "value_error" and message.startswith("Value error, "):
        message = message.removeprefix("Value error, ")
    elif kind == "literal_error" and isinstance(node, dict | list | str | int | float | bool):
        message = f"{message}, got {node!r}"
    first_loc = tuple(first["loc"])
    more = more_elsewhere + sum(
        1 for other in errors[1:] if tuple(other["loc"]) != first_loc[: len(other["loc"])]
    )
    if more:
        message += f" (and {more} more problem{'s' if more > 1 else ''})"
    return DocumentError(message, path=path, source=source)


def _json_path(loc: list[int | str], raw: Any) -> tuple[str, Any]:
    """Render a pydantic error location as a JSON path, dropping discriminated-union tags."""
    path = ""
    node: Any = raw
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
            node = node[part] if isinstance(node, list) and -len(node) <= part < len(node) else None
            continue
        if isinstance(node, dict) and part not in node and node.get("kind") == part:
            continue  # the tag pydantic adds for a discriminated union member
        path = f"{path}.{part}" if path else part
        node = node.get(part) if isinstance(node, dict) else None
    return path, node


# ── A trajectory read an event at a time ────────────────────────────────────────────────────

#: How many events :meth:`TrajectoryReader.events` hands over at a time.
_BATCH: Final = 256
#: Deeper than any trajectory nests: a document nested deeper is read whole (json.loads decides
#: whether it is too deep).
_STREAM_DEPTH: Final = 64

_Token = tuple[str, Any]


class _ReadWhole(Exception):
    """The streaming reader leaves this document to :func:`load_trajectory`: it is not JSON as
    ijson reads it (json.loads names the line and column), ijson might read it otherwise than
    json.loads does, or it is not shaped like a trajectory."""


class TrajectoryReader:
    """Reads a trajectory document from a binary file an event at a time, for import.

    It accepts and refuses exactly what :func:`load_trajectory` does, with the same one-line
    errors, and yields the same trajectory, but the document is parsed as it is read (by ijson)
    and each event is validated on its own and handed over in batches: memory does not grow with
    the document. A document ijson refuses (not JSON; but also NaN, Infinity, a number beyond
    64 bits or beyond a float's range, which Python's json module takes), one ijson might read
    otherwise than json does (see :class:`_AsJsonReads`), one nested deeper than a trajectory
    is, or one not shaped like a trajectory is read whole by :func:`load_trajectory` instead,
    once its text alone has been checked as JSON (which gives the line and column of an error).

    Use::

        reader = TrajectoryReader(file, source="t.json")
        for events in reader.events():  # raises DocumentError at the end if anything is wrong
            ...  # in order; none from the first invalid event on
        trajectory, count = reader.result()  # the header (no events) and how many events
    """

    def __init__(self, file: BinaryIO, *, source: str = "", stream: bool = True) -> None:
        """*file*: binary and seekable; it is read from its start. *stream*: False reads it
        whole, as :func:`load_trajectory` does (see :attr:`void`)."""
        self._file = file
        self._source = source
        self._stream_it = stream
        #: The id the document gives before its events, once they begin: ``None`` if it gives
        #: none there or not a valid one. The trajectory's id may still turn out to be another
        #: (a second ``id`` after the events); :meth:`result` has the one that counts.
        self.first_id: str | None = None
        #: The events handed over are not the trajectory's after all: the document has a second
        #: ``events`` array (json.loads keeps the last), seen only after the first was handed
        #: over. Read it again with ``stream=False``.
        self.void = False
        self._given = 0
        self._started = False
        self._result: tuple[Trajectory, int] | None = None
        self._count = 0
        self._first_invalid: tuple[int, Any, list[ErrorDetails]] | None = None
        self._other_errors = 0

    def events(self) -> Iterator[list[Event]]:
        """The document's events, in order and in batches, up to its first invalid one.

        The rest of the document is still read, so that the error raised at the end is the one
        :func:`load_trajectory` gives (a JSON error further on, or an earlier header field's).

        Raises:
            DocumentError: the document is too large, not JSON, not a trajectory or invalid.
        """
        if self._started:
            raise RuntimeError("a TrajectoryReader reads its file once")
        self._started = True
        self._file.seek(0, io.SEEK_END)
        _check_size(self._file.tell(), MAX_TRAJECTORY_BYTES, "trajectory", self._source)
        self._file.seek(0)
        ijson = _ijson() if self._stream_it else None
        if ijson is None:
            yield from self._read_whole()
            return
        backend, json_error = ijson
        try:
            header, streamed = yield from self._stream(backend)
        except (_ReadWhole, json_error, ValueError, OverflowError):
            # ValueError: ijson's UnicodeDecodeError (a string that is not UTF-8 as Python
            # decodes it); an event's ValidationError never gets here.
            yield from self._read_whole()
            return
        yield from self._conclude(header, streamed)

    def result(self) -> tuple[Trajectory, int]:
        """The trajectory without its events and how many events it has (reading the file if
        :meth:`events` has not).

        Raises:
            DocumentError: as :meth:`events`.
        """
        if not self._started:
            for _ in self.events():
                pass
        if self._result is None:
            raise RuntimeError("read all the events first")
        return self._result

    def _stream(self, backend: Any) -> Generator[list[Event], None, tuple[dict[str, Any], bool]]:
        """Parse the document with ijson; its header and whether the events were streamed."""
        tokens: Iterator[_Token] = iter(
            backend.basic_parse(_AsJsonReads(self._file), use_float=True)
        )
        if _next(tokens)[0] != "start_map":
            raise _ReadWhole  # load_trajectory says what it is instead
        header: dict[str, Any] = {}
        streamed = False
        while (token := _next(tokens))[0] != "end_map":
            key = token[1]
            kind, value = _next(tokens)
            if key == "events" and (streamed or "events" in header):
                raise _ReadWhole  # twice: json.loads keeps the last
            if key == "events" and kind == "start_array":
                streamed = True
                given = header.get("id")
                if isinstance(given, str) and re.fullmatch(ID_PATTERN, given):
                    self.first_id = given
                yield from self._stream_events(tokens)
            else:
                header[key] = _build(kind, value, tokens, depth=1)
        for _ in tokens:  # ijson reads to the end, refusing anything but spaces after the object
            raise _ReadWhole
        return header, streamed

    def _stream_events(self, tokens: Iterator[_Token]) -> Iterator[list[Event]]:
        batch: list[Event] = []
        index = 0
        while (token := _next(tokens))[0] != "end_array":
            item = _build(*token, tokens, depth=2)
            try:
                event = Event.model_validate(item)
            except ValidationError as exc:
                errors = exc.errors(include_url=False)
                if self._first_invalid is None:
                    self._first_invalid = (index, item, errors)
                    batch = []
                else:
                    self._other_errors += len(errors)
            else:
                if self._first_invalid is None:
                    batch.append(event)
                    if len(batch) == _BATCH:
                        self._given += len(batch)
                        yield batch
                        batch = []
            index += 1
        if batch:
            self._given += len(batch)
            yield batch
        self._count = index

    def _conclude(self, header: dict[str, Any], streamed: bool) -> Iterator[list[Event]]:
        """Check what was read as :func:`parse_document` checks a whole document."""
        _check_kind_and_version(header, "trajectory", self._source)
        if not streamed:  # no events, or not an array: the whole document is in *header*
            trajectory = _validated(header, Trajectory, self._source)
            yield from self._handed_over(trajectory, 0)
            return
        try:
            trajectory = Trajectory.model_validate(header)
            header_errors: list[ErrorDetails] = []
        except ValidationError as exc:
            header_errors = exc.errors(include_url=False)
        if header_errors or self._first_invalid is not None:
            raise self._error(header, header_errors)
        _check_id(trajectory, self._source)
        self._result = (trajectory, self._count)

    def _error(self, header: dict[str, Any], header_errors: list[ErrorDetails]) -> DocumentError:
        """The error pydantic's validation of the whole document leads to.

        Pydantic reports the fields in their order (``events``, the last, item by item), then
        the unknown fields; a model validator's error (no location) comes only when every field
        is valid.
        """
        if self._first_invalid is None:
            return _document_error(header_errors, header, self._source)
        index, item, errors = self._first_invalid
        fields = [error for error in header_errors if error["loc"]]
        event_errors = len(errors) + self._other_errors
        if any(error["type"] != "extra_forbidden" or len(error["loc"]) > 1 for error in fields):
            return _document_error(fields, header, self._source, more_elsewhere=event_errors)
        located: list[ErrorDetails] = [
            {**error, "loc": ("events", index, *error["loc"])} for error in errors
        ]
        # Only the invalid event is needed to name the path of its error.
        raw = {**header, "events": [None] * index + [item]}
        more = self._other_errors + len(fields)
        return _document_error(located, raw, self._source, more_elsewhere=more)

    def _read_whole(self) -> Iterator[list[Event]]:
        """The document read as :func:`load_trajectory` reads it, its events handed over from
        the first one not handed over yet."""
        self._file.seek(0)
        data = self._file.read()
        keys = _check_json_text(data, self._source)
        trajectory = load_trajectory(data, source=self._source)
        del data
        if self._given == 0:
            self.first_id = trajectory.id if re.fullmatch(ID_PATTERN, trajectory.id) else None
        elif keys is None or keys.count("events") > 1:
            self.void = True
            self._result = (trajectory.model_copy(update={"events": ()}), len(trajectory.events))
            return
        yield from self._handed_over(trajectory, self._given)

    def _handed_over(self, trajectory: Trajectory, start: int) -> Iterator[list[Event]]:
        events = trajectory.events
        for at in range(start, len(events), _BATCH):
            batch = list(events[at : at + _BATCH])
            self._given += len(batch)
            yield batch
        self._result = (trajectory.model_copy(update={"events": ()}), len(events))


def _ijson() -> tuple[Any, type[Exception]] | None:
    """ijson's C backend (yajl) and its error, or None where it cannot be loaded (documents are
    then read whole). Named here, not chosen at run time, so a frozen app bundles it too."""
    try:
        from ijson.backends import yajl2_c
        from ijson.common import JSONError
    except ImportError:
        return None
    return yajl2_c, JSONError


def _next(tokens: Iterator[_Token]) -> _Token:
    token = next(tokens, None)
    if token is None:
        raise _ReadWhole  # ijson has said the document ended early, before it gets here
    return token


def _build(kind: str, value: Any, tokens: Iterator[_Token], *, depth: int) -> Any:
    """The JSON value whose first token is *kind*, *value*, the rest read from *tokens*, as
    json.loads makes it (a repeated key keeps its first place and its last value).

    ijson's own ``ObjectBuilder`` does the same, three times slower. *depth*: how many arrays
    and objects hold the value.
    """
    if kind == "start_map":
        root: dict[str, Any] | list[Any] = {}
    elif kind == "start_array":
        root = []
    else:
        return value
    stack = [root]
    key = ""
    for kind, value in tokens:
        if kind == "map_key":
            key = value
            continue
        if kind == "end_map" or kind == "end_array":
            stack.pop()
            if not stack:
                return root
            continue
        container = kind == "start_map" or kind == "start_array"
        if container:
            value = {} if kind == "start_map" else []
        top = stack[-1]
        if isinstance(top, dict):
            top[key] = value
        else:
            top.append(value)
        if container:
            if depth + len(stack) >= _STREAM_DEPTH:
                raise _ReadWhole
            stack.append(value)
    raise _ReadWhole


def _check_json_text(data: bytes, source: str) -> list[str] | None:
    """Raise the error json.loads(*data*) would for its text: not UTF-8 (nor UTF-16 or 32), not
    valid JSON, a number of thousands of digits. Only the text is held, not what it describes.

    Returns the keys of the outermost object, as written (the keys of the last object if the
    document is not one); None when nesting is too deep to tell, which is left to json.loads
    itself (this reading goes one call deeper).
    """
    keys: list[str] = []

    def forget(pairs: list[tuple[str, Any]]) -> None:
        keys[:] = [key for key, _ in pairs]  # objects end inner first, the outermost last

    try:
        text = data.decode(json.detect_encoding(data), "surrogatepass")
        # What json.loads does with bytes once decoded (a str is checked for a BOM first).
        json.JSONDecoder(object_pairs_hook=forget).decode(text)
    except ValueError as exc:  # UnicodeDecodeError, JSONDecodeError, too many digits
        raise _json_error(exc, source) from None
    except RecursionError:
        return None
    return keys


class _AsJsonReads:
    """The file's bytes for ijson: UTF-8 as json.loads decodes the file, up to anything yajl
    (ijson's parser) reads otherwise than json.loads, which raises :class:`_ReadWhole`.

    json.loads takes UTF-8 with or without a byte order mark, UTF-16 and UTF-32 (passed on here
    as UTF-8). yajl takes a vertical tab or a form feed between tokens for a space, where
    json.loads refuses the document (a control character in a string, both refuse); and it
    reads an escaped high surrogate not followed by an escaped low one as ``?``, where
    json.loads keeps it.
    """

    _LONE_SURROGATE: Final = re.compile(
        rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    )
    #: Bytes held back until what follows them is known (a surrogate's escape and the next one).
    _HOLD: Final = 11

    def __init__(self, file: BinaryIO) -> None:
        self._file = file
        self._decoder: codecs.IncrementalDecoder | None = None
        self._began = False
        self._held = b""
        self._ended = False

    def read(self, size: int = -1) -> bytes:
        if size == 0 or self._ended:
            return b""
        while True:
            chunk = self._next(size)
            data = self._held + chunk
            ready = len(data) if not chunk else max(len(data) - self._HOLD, 0)
            if b"\x0b" in data or b"\x0c" in data:
                raise _ReadWhole
            if b"\\ud" in data or b"\\uD" in data:
                found = self._LONE_SURROGATE.search(data)
                if found is not None and found.start() < ready:
                    raise _ReadWhole
            self._held = data[ready:]
            if ready or not chunk:
                self._ended = not chunk
                return data[:ready]

    def _next(self, size: int) -> bytes:
        """The next bytes of the text as UTF-8 (``b""`` at its end)."""
        while True:
            raw = self._file.read(size) if self._began else self._begin(size)
            if self._decoder is None:
                return raw
            text = self._decoder.decode(raw, final=not raw)
            if text or not raw:
                return text.encode("utf-8", "surrogatepass")

    def _begin(self, size: int) -> bytes:
        self._began = True
        head = b""
        while len(head) < 4 and (more := self._file.read(4 - len(head))):
            head += more
        # json.detect_encoding looks at the first 4 bytes only.
        encoding = json.detect_encoding(head)
        if encoding == "utf-8-sig":
            head = head[len(codecs.BOM_UTF8) :]
        elif encoding != "utf-8":
            self._decoder = codecs.getincrementaldecoder(encoding)("surrogatepass")
        return head + self._file.read(size)
