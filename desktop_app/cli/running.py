"""What running workflows from the command line shares (``run`` and ``run --params-csv``):
the version, the stores, secrets asked for in the terminal, the person at the terminal, exit
codes and JSON."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

import click

from desktop_app.core.errors import (
    StoreLockedError,
    TransitionError,
)
from desktop_app.core.models.run import (
    Run,
    RunStatus,
)
from desktop_app.core.models.workflow import ParameterType, Workflow
from desktop_app.core.ports import MediaStore
from desktop_app.core.replay.browser import Handle
from desktop_app.core.replay.naming import likeness_words
from desktop_app.core.replay.parameters import ParameterError
from desktop_app.core.replay.person import PersonAnswer, Question
from desktop_app.ops.run import version_to_run

if TYPE_CHECKING:
    from desktop_app.app import Services
    from desktop_app.core.models.workflow import WorkflowVersion

__all__ = [
    "EXIT_UNVERIFIED",
    "TerminalPerson",
    "exit_code",
    "json_text",
    "open_for_run",
    "runnable_version",
    "secret_values",
]


#: The exit code of a run that ended "done, unverified": not 0, so that no script takes it for a
#: success, and not 1, so that a script can tell it from a failure.
EXIT_UNVERIFIED: Final = 3


def exit_code(run: Run) -> int:
    """``procedura run``'s exit code for *run*: 0 succeeded, 3 done unverified, 1 otherwise."""
    if run.status is RunStatus.SUCCEEDED:
        return 0
    if run.status is RunStatus.UNVERIFIED:
        return EXIT_UNVERIFIED
    return 1


class TerminalPerson:
    """Rung 5 on the terminal: questions on standard error, answers from standard input.

    Elements are named as a person sees them (``the "Delete" button``); when the step's
    recording has a picture of the element, its file is named (*media* finds it).
    """

    def __init__(self, media: MediaStore | None = None) -> None:
        self._media = media

    async def ask(self, question: Question) -> PersonAnswer:
        return await asyncio.to_thread(self._ask, question)

    def _ask(self, question: Question) -> PersonAnswer:
        try:
            return self._ask_terminal(question)
        except (click.Abort, EOFError):  # no one at the terminal (input closed, Ctrl+D)
            return PersonAnswer(action="abort", note="no answer from the terminal")

    def _ask_terminal(self, question: Question) -> PersonAnswer:
        click.echo(f"\n? {question.step_title}: {question.message}", err=True)
        if question.element:
            said = "element" if question.kind == "confirm" else "looking for"
            click.echo(f"  {said}: {question.element}", err=True)
        media, picture = self._media, question.picture
        if picture is not None and media is not None and media.exists(picture):
            click.echo(f"  as recorded (outlined in red): {media.path(picture)}", err=True)
        if question.kind == "confirm":
            answer = (
                click.prompt(
                    "  go ahead? [y]es / [n]o / [a]bort", default="n", err=True, show_default=False
                )
                .strip()
                .lower()
            )
            action = {"y": "confirm", "yes": "confirm", "a": "abort", "abort": "abort"}
            return PersonAnswer(action=action.get(answer, "decline"))  # type: ignore[arg-type]
        for number, choice in enumerate(question.choices, 1):
            alike = (
                f" — {likeness_words(choice.score)} ({choice.score:.0%})"
                if choice.score is not None
                else ""
            )
            best = "  (the clear best)" if question.suggested == number - 1 else ""
            click.echo(f"  {number}. {choice.label}{alike}{best}", err=True)
        answer = click.prompt(
            "  number, a CSS selector, [s]kip or [a]bort", default="a", err=True
        ).strip()
        if answer.lower() in ("s", "skip"):
            return PersonAnswer(action="skip")
        if answer.lower() in ("a", "abort", ""):
            return PersonAnswer(action="abort")
        if answer.isdigit() and 1 <= int(answer) <= len(question.choices):
            return PersonAnswer(action="pick", handle=question.choices[int(answer) - 1].handle)
        return PersonAnswer(action="pick", handle=Handle(selector=answer))


def secret_values(
    workflow: Workflow, from_env: dict[str, str], *, interactive: bool
) -> tuple[dict[str, str], list[str]]:
    """Secret parameters' values: --secret-env, then the keyring, then a hidden prompt."""
    from desktop_app.adapters.secrets import get_parameter_secret

    values: dict[str, str] = {}
    prompted: list[str] = []
    secret_names = {p.name for p in workflow.parameters if p.type is ParameterType.SECRET}
    for name in from_env:
        if name not in secret_names:
            raise ParameterError(f"--secret-env {name}: {name!r} is not a secret parameter")
    for param in workflow.parameters:
        if param.type is not ParameterType.SECRET:
            continue
        if param.name in from_env:
            variable = from_env[param.name]
            if variable not in os.environ:
                raise ParameterError(
                    f"parameter {param.name!r}: the environment variable {variable} is not set"
                )
            values[param.name] = os.environ[variable]
            continue
        stored = get_parameter_secret(workflow.id, param.name)
        if stored:
            values[param.name] = stored
        elif interactive:
            values[param.name] = click.prompt(
                f"{param.name} ({param.description or 'secret'})", hide_input=True, err=True
            )
            prompted.append(param.name)
    return values, prompted


def runnable_version(services: Services, ref: str, *, allow_draft: bool) -> WorkflowVersion:
    """The version ``run`` uses (:func:`~desktop_app.ops.run.version_to_run`), its error
    naming the flag that runs a draft.

    Raises:
        TransitionError: no approved version (and no --allow-draft), or it is archived.
        NotFoundError: no such workflow.
    """
    try:
        return version_to_run(services.workflows, ref, allow_draft=allow_draft)
    except TransitionError as exc:
        if allow_draft or "archived" in str(exc):
            raise
        raise TransitionError(f"{exc}, or run the draft with --allow-draft") from None


@contextlib.contextmanager
def open_for_run(settings: Any) -> Iterator[Services]:
    """The stores as their writer; while the desktop app holds them, read-only (it runs it)."""
    from desktop_app.app import open_services
    from desktop_app.handoff import app_is_running

    with contextlib.ExitStack() as stack:
        try:
            services = stack.enter_context(open_services(settings, write=True))
        except StoreLockedError:
            if not app_is_running(settings):
                raise
            services = stack.enter_context(open_services(settings, write=False))
        yield services


def json_text(data: Any) -> str:
    """*data* as indented JSON."""
    import json

    return json.dumps(data, indent=2, ensure_ascii=False, default=str)
