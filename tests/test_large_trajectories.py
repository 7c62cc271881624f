"""Large trajectory files are imported an event at a time (issue 20): the same checks, the same
one-line errors and the same stored trajectory as reading the whole document, in bounded memory.
"""

from __future__ import annotations

import codecs
import io
import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from big_trajectories import big_events, run_measured, write_big_trajectory
from conftest import EXAMPLES, Cli
from sqlalchemy import Engine, text

from desktop_app.adapters.sql.database import migrate, open_database
from desktop_app.adapters.sql.trajectory_store import SqlTrajectoryStore
from desktop_app.core.documents import MAX_TRAJECTORY_BYTES, TrajectoryReader, load_trajectory
from desktop_app.core.errors import DocumentError
from desktop_app.core.models.trajectory import Event, Trajectory
from desktop_app.core.trajectories import TrajectoryLibrary

DATA = Path(__file__).parent / "data"
TRAJECTORY = EXAMPLES / "create-contact.trajectory.json"

#: The bound issue 20 asks for: importing the largest file allowed stays under this.
PEAK_RSS_LIMIT = 300e6


# ── The streaming reader agrees with load_trajectory ────────────────────────────────────────


@cache
def _fixture() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / "expense-report.trajectory.json").read_text())
    return data


@cache
def _many_text() -> str:
    """A document of 600 events (more than two of the reader's batches)."""
    out = io.StringIO()
    write_big_trajectory(out, events=600, size=900_000, trajectory_id="many")
    return out.getvalue()


def _doc(**changes: Any) -> dict[str, Any]:
    doc = json.loads(json.dumps(_fixture()))
    doc.update(changes)
    return doc


def _with_event(index: int, **changes: Any) -> dict[str, Any]:
    doc = _doc()
    doc["events"][index].update(changes)
    return doc


def _text(doc: Any, **kw: Any) -> bytes:
    return json.dumps(doc, **kw).encode()


def _reordered(*first: str) -> bytes:
    doc = _doc()
    return _text({**{key: doc[key] for key in first}, **doc})


def _many(change: Callable[[str], str] = lambda text: text) -> bytes:
    return change(_many_text()).encode()


def _many_event(index: int, change: Callable[[str], str]) -> bytes:
    """The 600-event document with event *index*'s text changed."""
    doc = json.loads(_many_text())
    events = [json.dumps(event) for event in doc.pop("events")]
    events[index] = change(events[index])
    return (json.dumps(doc)[:-1] + ', "events": [' + ", ".join(events) + "]}").encode()


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


_STARTED = _fixture()["started_at"]

# Each builds a document; the reader must read it exactly as load_trajectory does.
DOCUMENTS: dict[str, Callable[[], bytes]] = {
    # valid
    "a recording": lambda: _text(_doc()),
    "indented": lambda: _text(_doc(), indent=2),
    "600 events": _many,
    "the events first": lambda: _reordered("events"),
    "the id after the events": lambda: _reordered("events", "id"),
    "the id twice": lambda: _text(_doc())[:-1] + b', "id": "second"}',
    "a key twice in an event": lambda: _text(_doc()).replace(
        b'{"action": "navigate"', b'{"action": "click", "action": "navigate"', 1
    ),
    "no events": lambda: _text({k: v for k, v in _doc().items() if k != "events"}),
    "events empty": lambda: _text(_doc(events=[])),
    "escaped non-ASCII and an emoji": lambda: _text(_doc(intent="Café — 🙂"), ensure_ascii=True),
    "raw non-ASCII and an emoji": lambda: _text(_doc(intent="Café — 🙂"), ensure_ascii=False),
    "a byte order mark": lambda: codecs.BOM_UTF8 + _text(_doc()),
    "UTF-16": lambda: json.dumps(_doc()).encode("utf-16"),
    "UTF-16 LE without a BOM": lambda: json.dumps(_doc()).encode("utf-16-le"),
    "UTF-32 BE": lambda: json.dumps(_doc()).encode("utf-32-be"),
    "NaN": lambda: _text(_with_event(3, scroll={"dx": float("nan"), "dy": 1.5})),
    "Infinity": lambda: _text(_with_event(3, scroll={"dx": float("inf"), "dy": 0})),
    "1e400": lambda: _text(_with_event(3, scroll={"dx": 1.5, "dy": 0})).replace(
        b'"dx": 1.5', b'"dx": 1e400'
    ),
    "an int beyond 64 bits": lambda: _text(
        _with_event(3, effects={**_fixture()["events"][3]["effects"], "items_added": 2**70})
    ),
    "NaN in event 590": lambda: _many_event(
        590, lambda e: e.replace('"injected": false', '"injected": false, "scroll": {"dx": NaN}')
    ),
    "half a surrogate pair": lambda: _text(_doc(intent="\ud800 alone"), ensure_ascii=True),
    "a high surrogate then a letter": lambda: _text(_doc(intent="x")).replace(
        b'"intent": "x"', b'"intent": "\\ud800\\u0041"'
    ),
    "an escaped backslash before u": lambda: _text(_doc(intent="\\ud800")),
    "a UTF-8 encoded surrogate": lambda: _text(_doc(intent="x")).replace(
        b'"intent": "x"', b'"intent": "\xed\xa0\x80"'
    ),
    # invalid: the document
    "schema_version missing": lambda: _text(
        {k: v for k, v in _doc().items() if k != "schema_version"}
    ),
    "schema_version 2": lambda: _text(_doc(schema_version=2)),
    "schema_version '1'": lambda: _text(_doc(schema_version="1")),
    "schema_version 0": lambda: _text(_doc(schema_version=0)),
    "schema_version after the events": lambda: _text(
        {**{k: v for k, v in _doc().items() if k != "schema_version"}, "schema_version": 3}
    ),
    "a workflow": lambda: (EXAMPLES / "create-contact.workflow.json").read_bytes(),
    "a workflow after the events": lambda: _text(_doc())[:-1] + b', "document": "workflow"}',
    "ended before it started": lambda: _text(_doc(ended_at="2000-01-01T00:00:00Z")),
    "an unknown field": lambda: _text(_doc(titel="x")),
    "an unknown field nested 80 deep": lambda: _text(_doc(extra=_nested(80))),
    "a bad id": lambda: _text(_doc(id="../../etc/passwd")),
    "a blank id": lambda: _text(_doc(id=" ")),
    "an id not a string": lambda: _text(_doc(id=5)),
    "an id too long": lambda: _text(_doc(id="x" * 65)),
    "events a number": lambda: _text(_doc(events=5)),
    "events an object": lambda: _text(_doc(events={})),
    "events twice": lambda: _text(_doc())[:-1] + b', "events": []}',
    "events twice, the first with NaN": lambda: (
        _many_event(
            590,
            lambda e: e.replace('"injected": false', '"injected": false, "scroll": {"dx": NaN}'),
        )[:-1]
        + b', "events": ['
        + json.dumps(_fixture()["events"][0]).encode()
        + b"]}"
    ),
    # invalid: events
    "a misspelt action": lambda: _text(_with_event(2, action="clik")),
    "a misspelt action in event 590": lambda: _many_event(
        590, lambda e: e.replace('"action": "', '"action": "x', 1)
    ),
    "two bad events": lambda: _text(
        {**_doc(), "events": [{**e, "action": "clik"} for e in _fixture()["events"][:2]]}
    ),
    "a bad event and an unknown field": lambda: _text({**_with_event(4, at="x"), "zzz": 1}),
    "a bad event and a bad id": lambda: _text({**_with_event(4, at="x"), "id": 5}),
    "a bad event, ended before it started": lambda: _text(
        {**_with_event(4, at="x"), "ended_at": "2000-01-01T00:00:00Z"}
    ),
    "a bad event after a bad intent": lambda: _text({**_with_event(4, at="x"), "intent": 7}),
    "an unknown role (the value is quoted)": lambda: _text(
        _with_event(
            1,
            effects={
                **_fixture()["events"][1]["effects"],
                "texts_added": [{"text": "Saved", "role": "banner"}],
            },
        )
    ),
    "a value neither text nor a secret": lambda: _text(_with_event(2, value=5)),
    "a plain password": lambda: TRAJECTORY.read_bytes().replace(
        b'"value": {"secret": true, "label": "Password"}', b'"value": "hunter2"'
    ),
    "an event not an object": lambda: _text({**_doc(), "events": [*_doc()["events"], 7]}),
    "an event null": lambda: _text({**_doc(), "events": [None, *_doc()["events"]]}),
    "an unknown field nested in an event": lambda: _text(_with_event(2, bogus=_nested(30))),
    "ended before it began, an event": lambda: _text(
        _with_event(5, ended_at="2000-01-01T00:00:00Z")
    ),
    # invalid: not JSON
    "an array": lambda: b"[1, 2]",
    "a string": lambda: b'"text"',
    "a number": lambda: b"5",
    "null": lambda: b"null",
    "empty": lambda: b"",
    "spaces": lambda: b"  \n ",
    "truncated": lambda: _many()[:400_000],
    "truncated after a bad event": lambda: _many_event(
        20, lambda e: e.replace('"action": "', '"action": "x', 1)
    )[:400_000],
    "a trailing comma": lambda: _text(_doc()).replace(b"}]", b"},]", 1),
    "trailing text": lambda: _text(_doc()) + b" x",
    "two documents": lambda: _text(_doc()) + _text(_doc()),
    "a comment": lambda: _text(_doc()).replace(b', "kind"', b' /* c */, "kind"', 1),
    "a form feed between tokens": lambda: _text(_doc()).replace(b', "kind"', b',\x0c"kind"', 1),
    "a vertical tab between tokens": lambda: _many_event(
        590, lambda e: e.replace(', "at"', ',\x0b"at"', 1)
    ),
    "a tab in a string": lambda: _text(_doc(intent="x")).replace(b'"x"', b'"a\tb"', 1),
    "not UTF-8": lambda: _text(_doc(intent="x")).replace(b'"x"', b'"\xff"', 1),
    "an overlong encoding": lambda: _text(_doc(intent="x")).replace(b'"x"', b'"\xc0\x80"', 1),
    "UTF-16 cut in half a character": lambda: json.dumps(_doc()).encode("utf-16")[:-1],
    "nested too deep": lambda: b'{"steps": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "thousands of digits": lambda: b'{"schema_version": ' + b"1" * 5_000 + b"}",
    "thousands of digits in event 590": lambda: _many_event(
        590, lambda e: e.replace('"injected": false', '"injected": ' + "7" * 5_000, 1)
    ),
}


def _read_whole(data: bytes) -> Trajectory | str:
    try:
        return load_trajectory(data, source="t.json")
    except DocumentError as exc:
        return str(exc)


def _read_streaming(data: bytes) -> Trajectory | str:
    reader = TrajectoryReader(io.BytesIO(data), source="t.json")
    events: list[Event] = []
    try:
        for batch in reader.events():
            assert 0 < len(batch) <= 256
            events.extend(batch)
    except DocumentError as exc:
        return str(exc)
    header, count = reader.result()
    if reader.void:  # a second events array, seen after the first was handed over
        again = TrajectoryReader(io.BytesIO(data), source="t.json", stream=False)
        events = [event for batch in again.events() for event in batch]
    assert header.events == () and count == len(events)
    return header.model_copy(update={"events": tuple(events)})


@pytest.mark.parametrize("name", list(DOCUMENTS))
def test_the_streaming_reader_reads_as_load_trajectory_does(name: str) -> None:
    data = DOCUMENTS[name]()
    whole, streamed = _read_whole(data), _read_streaming(data)
    if isinstance(whole, str) or isinstance(streamed, str):
        assert streamed == whole
        assert "\n" not in streamed
    else:  # repr: NaN is not equal to itself
        assert repr(streamed.model_dump()) == repr(whole.model_dump())


def test_the_errors_above_are_the_ones_meant() -> None:
    """A few of the cases, spelt out: the comparison above is not between two wrong answers."""
    assert _read_streaming(DOCUMENTS["a misspelt action in event 590"]()).startswith(
        "t.json at events[590].action: Input should be 'navigate', 'click'"
    )
    assert _read_streaming(DOCUMENTS["two bad events"]()).endswith("(and 1 more problem)")
    assert _read_streaming(DOCUMENTS["a bad event and a bad id"]()) == (
        "t.json at id: Input should be a valid string (and 1 more problem)"
    )
    assert _read_streaming(DOCUMENTS["a bad event and an unknown field"]()).startswith(
        "t.json at events[4].at: Input should be a valid datetime"
    )
    assert _read_streaming(DOCUMENTS["an unknown role (the value is quoted)"]()).endswith(
        ", got 'banner'"
    )
    assert _read_streaming(DOCUMENTS["truncated"]()).startswith("t.json: not valid JSON: ")
    assert _read_streaming(DOCUMENTS["a form feed between tokens"]()).startswith(
        "t.json: not valid JSON: Expecting property name enclosed in double quotes (line 1"
    )
    assert _read_streaming(DOCUMENTS["nested too deep"]()) == (
        "t.json: not a document: arrays or objects nested too deep"
    )
    # JSON allows it; no text (a database, a file) holds it: refused, not a crash in the store.
    assert _read_streaming(DOCUMENTS["half a surrogate pair"]()) == (
        "t.json: not text: a \\u escape is half of a surrogate pair, no character"
    )


def test_an_oversized_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as out:
        out.truncate(MAX_TRAJECTORY_BYTES + 1)  # sparse: nothing written
    with path.open("rb") as file, pytest.raises(DocumentError) as info:
        TrajectoryReader(file, source="huge.json").result()
    assert (
        str(info.value) == "huge.json: file is 104.9 MB, larger than the 105 MB a trajectory may be"
    )


def test_the_reader_knows_every_check_the_trajectory_model_makes() -> None:
    """The reader validates the header and each event apart, so it must know every check the
    model makes on the whole: today only that it ends after it starts. A validator added to
    Trajectory (one across events, say) has to be added to TrajectoryReader too."""
    decorators = Trajectory.__pydantic_decorators__
    assert set(decorators.model_validators) == {"_ordered"}
    assert not decorators.field_validators and not decorators.validators
    assert list(Trajectory.model_fields)[-1] == "events"  # pydantic reports its errors last


# ── Importing a file: stored as an import of the whole document would be, or not at all ─────


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    engine = open_database(tmp_path / "db" / "procedura.db")
    migrate(engine)
    return engine


def _rows(engine: Engine) -> tuple[list[Any], list[Any]]:
    with engine.connect() as conn:
        return (
            list(conn.execute(text("SELECT * FROM trajectories ORDER BY id"))),
            list(conn.execute(text("SELECT * FROM trajectory_events ORDER BY trajectory_id, seq"))),
        )


@pytest.mark.parametrize(
    "name",
    [
        "a recording",
        "600 events",
        "the events first",
        "the id after the events",
        "the id twice",
        "NaN in event 590",
        "events twice",
        "events twice, the first with NaN",
    ],
)
def test_an_imported_file_is_stored_as_an_imported_document_is(
    name: str, tmp_path: Path, engine: Engine
) -> None:
    data = DOCUMENTS[name]()
    whole = open_database(tmp_path / "whole.db")
    migrate(whole)
    TrajectoryLibrary(SqlTrajectoryStore(whole)).import_json(data, source="t.json")
    library = TrajectoryLibrary(SqlTrajectoryStore(engine))
    summary = library.import_file(io.BytesIO(data), source="t.json")
    assert _rows(engine) == _rows(whole)
    assert summary == library.list()[0]


def test_a_document_without_an_id_gets_one(engine: Engine) -> None:
    doc = {k: v for k, v in _doc().items() if k != "id"}
    library = TrajectoryLibrary(SqlTrajectoryStore(engine))
    summary = library.import_file(io.BytesIO(_text(doc)), source="t.json")
    stored = library.get(summary.id)
    assert stored.model_copy(update={"id": "x"}) == Trajectory.model_validate({**doc, "id": "x"})


def test_an_invalid_event_after_hundreds_written_leaves_nothing(engine: Engine) -> None:
    data = DOCUMENTS["a misspelt action in event 590"]()
    library = TrajectoryLibrary(SqlTrajectoryStore(engine))
    with pytest.raises(DocumentError) as info:
        library.import_file(io.BytesIO(data), source="t.json")
    assert str(info.value) == _read_whole(data)
    assert _rows(engine) == ([], [])


def test_a_trajectory_is_never_imported_over_another(engine: Engine) -> None:
    library = TrajectoryLibrary(SqlTrajectoryStore(engine))
    library.import_file(io.BytesIO(_many()), source="t.json")
    before = _rows(engine)
    with pytest.raises(DocumentError) as info:
        library.import_file(io.BytesIO(_many()), source="again.json")
    assert str(info.value) == (
        "again.json at id: a trajectory with id many is already stored; trajectories are never "
        "overwritten"
    )
    # Its events read first under an id already stored, the document's last id a new one.
    renamed = _many(lambda text: text[:-1] + ', "id": "renamed"}')
    assert library.import_file(io.BytesIO(renamed), source="t.json").event_count == 600
    assert {t.id: t.event_count for t in library.list()} == {"many": 600, "renamed": 600}
    assert _rows(engine)[1][:600] == before[1]


def test_import_from_standard_input(procedura: Cli) -> None:
    result = procedura("trajectories", "import", "-", input=TRAJECTORY.read_text())
    assert result.stdout == "imported trajectory 0b6d7e2f (5 events)\n"
    missing = procedura("trajectories", "import", "missing.json")
    assert missing.exit_code == 2
    assert missing.stderr == "error: missing.json: no such file\n"


# ── The command line on a large file, in a process of its own ───────────────────────────────

BIG_EVENTS = 30_000
BIG_SIZE = 44_000_000


def _files(home: Path) -> dict[str, int]:
    return {
        str(p.relative_to(home)): p.stat().st_size
        for p in home.rglob("*")
        if p.is_file() and not p.name.startswith("writer.")
    }


def _stored_documents(home: Path, trajectory_id: str) -> Iterator[tuple[int, str]]:
    with sqlite3.connect(home / "procedura.db") as db:
        yield from db.execute(
            "SELECT seq, document FROM trajectory_events WHERE trajectory_id = ? ORDER BY seq",
            (trajectory_id,),
        )


@pytest.mark.slow
def test_importing_a_44_mb_trajectory_stays_under_300_mb(tmp_path: Path, home: Path) -> None:
    path = tmp_path / "big.trajectory.json"
    trajectory_id = write_big_trajectory(path, events=BIG_EVENTS, size=BIG_SIZE)
    assert 40e6 < path.stat().st_size < 50e6

    result = run_measured("trajectories", "import", str(path), env=dict(os.environ))

    assert result.returncode == 0, result.stderr
    assert result.stdout == f"imported trajectory {trajectory_id[:8]} ({BIG_EVENTS} events)\n"
    assert result.peak_rss < PEAK_RSS_LIMIT, f"peak RSS {result.peak_rss / 1e6:.0f} MB"
    # Every event, stored as an import of the whole document stores it.
    stored = _stored_documents(home, trajectory_id)
    for seq, (event, (stored_seq, document)) in enumerate(
        zip(big_events(BIG_EVENTS, BIG_SIZE), stored, strict=True)
    ):
        assert stored_seq == seq
        assert document == Event.model_validate(json.loads(event)).model_dump_json()


@pytest.mark.slow
def test_an_invalid_event_at_the_end_of_a_large_file_stores_nothing(
    tmp_path: Path, home: Path, procedura: Cli
) -> None:
    assert procedura("trajectories", "import", str(TRAJECTORY)).exit_code == 0
    before = procedura("info", "--json").stdout, _files(home)
    bad = BIG_EVENTS - 10
    path = tmp_path / "big.trajectory.json"
    write_big_trajectory(path, events=BIG_EVENTS, size=BIG_SIZE, bad_event=bad)

    result = run_measured("trajectories", "import", str(path), env=dict(os.environ))

    # The error of a small document with that event, at its place in the large one.
    small = _doc(events=[{**json.loads(next(big_events(1, 1500))), "action": "clik"}])
    expected = str(_read_whole(_text(small))).replace("t.json", path.name, 1)
    expected = expected.replace("events[0]", f"events[{bad}]", 1)
    assert expected.startswith(f"{path.name} at events[{bad}].action: Input should be 'navigate'")
    assert (result.returncode, result.stdout, result.stderr) == (2, "", f"error: {expected}\n")
    assert result.peak_rss < PEAK_RSS_LIMIT, f"peak RSS {result.peak_rss / 1e6:.0f} MB"
    assert (procedura("info", "--json").stdout, _files(home)) == before
    assert [
        t["id"][:8] for t in json.loads(procedura("trajectories", "list", "--json").stdout)
    ] == ["0b6d7e2f"]
