"""The real-apps corpus: apps nobody here wrote, the everyday tasks done on them, and how a
replay is judged from the app's own data.

An app comes in several **variants** (versions, themes, front-end implementations) whose DOM
differs. Each variant starts fresh instances (a new database, a new port) and reads its own
storage back as a :data:`State`. A **task** is something a person does on the app (create a
record, search and edit one, select rows and delete them after a confirmation, fill a form with
every kind of input, sign in as another user), with the values of the demonstration and new
values to replay it with. The task says what the app's data must be afterwards
(:attr:`Task.expected`); a replay is judged by comparing that with what the app stored, never
by what Procedura reported:

* **right**: the app's data is exactly what the task done with the replay's values gives;
* **nothing**: the data did not change at all (a stop, safe);
* **wrong**: anything else (the wrong row deleted, a field left out, a record half made).

Everything here is test and benchmark code: the apps live in cached environments of their own
(:mod:`third_party`), never in Procedura's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from demonstrations import Demonstrator

__all__ = [
    "App",
    "Instance",
    "State",
    "Task",
    "Values",
    "Variant",
    "Verdict",
    "judge",
]

#: The app's own data: table (or store) name → its rows, each a dict of plain JSON values,
#: in a stable order (sorted by what identifies a row, never by an id the app hands out).
State = dict[str, list[dict[str, Any]]]
#: A task's inputs by the task's own keys (``name``, ``email``, ``password``…).
Values = Mapping[str, str]
Verdict = Literal["right", "nothing", "wrong"]


class Instance(Protocol):
    """One running instance of an app variant, over data of its own."""

    @property
    def url(self) -> str:
        """Its origin, e.g. ``http://127.0.0.1:8123``."""
        ...

    def state(self) -> State:
        """What the app stored, read from its own storage (database, files, mirrored
        ``localStorage``)."""
        ...


@dataclass(frozen=True)
class Variant:
    """An app at one version, theme or implementation.

    ``start`` makes a fresh instance (installing the variant into its cached environment the
    first time) and stops it on exit.
    """

    app: str  # "django-admin"
    name: str  # "django-admin 4.2", "todomvc react"
    start: Callable[[], contextlib.AbstractContextManager[Instance]]


Demonstrate = Callable[[Demonstrator, Values], Awaitable[None]]


@dataclass(frozen=True)
class Task:
    """An everyday task on an app, and what it must leave in the app's data.

    Args:
        name: e.g. ``"create"``, ``"search-edit"``, ``"bulk-delete"``, ``"every-input"``,
            ``"sign-in-as"``.
        intent: the stated intent, with ``{key}`` for the values it names, e.g.
            ``"Create a contact for {name}"`` (formatted with the recorded values when
            recording, with the new ones to run by intent).
        start: where the demonstration starts, relative to the instance's URL (``"/admin/"``).
        demonstrate: does the task on an open page at the demonstrator's pace, with *values*,
            as a person would (a click into a field before typing, waiting for what the page
            shows before going on, never sleeping).
        recorded: the values of the demonstration that is recorded.
        replays: new values to replay the induced workflow with. At least one replays a
            look-alike case where the app has one (two search results, a similar name).
        expected: the app's data after the task is done right with *values*, given the data
            before.
        secrets: keys of *recorded* / *replays* that are secrets (passwords).
        prepare: puts what the task needs into a fresh instance before recording and before
            each replay (rows to search, edit or delete; another user), through the app's own
            storage or its own pages.
    """

    name: str
    intent: str
    start: str
    demonstrate: Demonstrate
    recorded: Values
    replays: tuple[Values, ...]
    expected: Callable[[State, Values], State]
    secrets: frozenset[str] = frozenset()
    prepare: Callable[[Instance], None] | None = None


@dataclass(frozen=True)
class App:
    """An app nobody here wrote: its variants and its tasks (every task runs on every variant)."""

    name: str
    variants: tuple[Variant, ...]
    tasks: tuple[Task, ...]
    notes: tuple[str, ...] = field(default=())


def judge(before: State, after: State, expected: State) -> Verdict:
    """How a replay went, from the app's own data before and after it."""
    if after == expected:
        return "right"
    if after == before:
        return "nothing"
    return "wrong"


@contextlib.contextmanager
def started(variant: Variant, task: Task) -> Iterator[Instance]:
    """A fresh instance of *variant* with what *task* needs in it."""
    with variant.start() as instance:
        if task.prepare is not None:
            task.prepare(instance)
        yield instance
