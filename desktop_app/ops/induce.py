"""Inducing a draft workflow from recordings — one way, with one LLM policy, for the command line
(``procedura induce``), the Recordings screen and the record dialog.

- **Several recordings** of one task are aligned: what differs becomes a parameter, what agrees a
  constant (one recording is induced on its own).
- **The LLM** names, describes and titles the draft when one is configured (:attr:`LlmUse.AUTO`,
  the default everywhere, as for runs); :attr:`LlmUse.ON` needs one, :attr:`LlmUse.OFF` stays
  offline. Its failure keeps the offline result and says why in the notes.
- **Composition:** steps that do what an approved workflow does become a call to it.
- A secret a recording's stated intent gives never reaches the draft or a prompt.
- **Cancel:** a caller may stop it from another thread (a ``threading.Event``); it then saves
  nothing (see :mod:`desktop_app.core.induction.cancel`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from desktop_app.core.induction.cancel import CancellableLLM, check_cancelled
from desktop_app.core.induction.compose import compose as compose_workflow
from desktop_app.core.induction.heuristic import Induction
from desktop_app.core.induction.heuristic import induce as induce_one
from desktop_app.core.induction.llm_inducer import induce_with_llm
from desktop_app.core.induction.multi import NotTheSameTaskError, induce_many
from desktop_app.core.llm import LLMUnavailable, StructuredLLM
from desktop_app.core.models.workflow import WorkflowStatus
from desktop_app.core.redaction import scrub_stated_secrets
from desktop_app.ops.changes import Changes, Origin

if TYPE_CHECKING:
    from desktop_app.core.induction.multi import Alignment
    from desktop_app.core.library import SaveResult, WorkflowLibrary
    from desktop_app.core.models.trajectory import Trajectory
    from desktop_app.core.trajectories import TrajectoryLibrary

__all__ = ["NEEDS_AN_LLM", "Induced", "LlmUse", "choose_llm", "induce"]

#: What to do when the LLM is asked for and none is configured.
NEEDS_AN_LLM = "set OPENAI_API_KEY or PROCEDURA_LLM_BASE_URL (see docs/settings.md)"


class LlmUse(StrEnum):
    """Whether induction asks the LLM."""

    AUTO = "auto"  # when one is configured
    ON = "on"  # one is needed
    OFF = "off"  # offline heuristics only


def choose_llm(use: LlmUse, configured: Callable[[], StructuredLLM | None]) -> StructuredLLM | None:
    """The LLM induction asks, by *use*; *configured* makes the one the settings name (None
    when none is configured) and is called only when it may be used.

    Raises:
        LLMUnavailable: :attr:`LlmUse.ON` and none is configured.
    """
    if use is LlmUse.OFF:
        return None
    model = configured()
    if model is None and use is LlmUse.ON:
        raise LLMUnavailable(f"inducing with the LLM needs one: {NEEDS_AN_LLM}")
    return model


@dataclass(frozen=True, slots=True)
class Induced:
    """A draft induced and saved: the version, notes for its reviewer, the recordings it came
    from and, for several, how their steps line up; and what changed."""

    saved: SaveResult
    notes: tuple[str, ...]
    recordings: tuple[Trajectory, ...]
    alignment: Alignment | None
    changes: Changes

    @property
    def summary(self) -> str:
        """One line: what was drafted."""
        wf = self.saved.version.workflow
        return (
            f"induced {wf.name!r} as {wf.id[:8]} version {wf.version} (draft): "
            f"{len(wf.parameters)} parameters, {len(wf.steps)} steps"
        )


def induce(
    trajectories: TrajectoryLibrary,
    workflows: WorkflowLibrary,
    refs: Sequence[str],
    *,
    actor: str,
    origin: Origin,
    llm: StructuredLLM | None = None,
    llm_model: str = "",
    name: str | None = None,
    compose: bool = True,
    cancel: threading.Event | None = None,
) -> Induced:
    """Induce a draft from the recordings *refs* and save it (blocking; LLM calls with *llm*).

    Args:
        trajectories: where the recordings are.
        workflows: the library the draft is saved in (and whose approved workflows it may
            call).
        refs: recording ids or unique prefixes; several are aligned.
        actor: who saves the draft.
        origin: which way in asked.
        llm: the LLM to name, describe and title it (see :func:`choose_llm`), or None.
        llm_model: its model's name, for the version's note.
        name: the workflow's name (default: from the stated intent).
        compose: steps that do what an approved workflow does become a call to it.
        cancel: set (from another thread) to stop it; nothing is saved then.

    Raises:
        NotFoundError: a recording does not exist.
        NotTheSameTaskError: the recordings do not show one task.
        StoreError: the draft could not be saved.
        InductionCancelled: *cancel* was set before the draft was saved (nothing was).
    """
    recordings = [trajectories.get(ref) for ref in refs]
    _check_combinable(recordings)
    check_cancelled(cancel)
    # One recorded before intents were scrubbed may state a secret: never in a draft or a prompt.
    recordings = [
        r.model_copy(update={"intent": scrub_stated_secrets(r.intent)}) for r in recordings
    ]
    alignment = None
    if len(recordings) == 1:
        result = induce_one(recordings[0], name=name)
        workflow, notes = result.workflow, list(result.notes)
        note = f"induced from trajectory {recordings[0].id[:8]}"
    else:
        many = induce_many(recordings, name=name)
        workflow, notes, alignment = many.workflow, list(many.notes), many.alignment
        note = "induced from trajectories " + ", ".join(r.id[:8] for r in recordings)
    check_cancelled(cancel)
    if llm is not None:
        asked = llm if cancel is None else CancellableLLM(llm, cancel)
        improved = induce_with_llm(recordings[0], Induction(workflow, notes), asked)
        workflow, notes = improved.workflow, list(improved.notes)
        usage = improved.usage
        spent = f"{usage.calls} call(s), {usage.prompt_tokens + usage.completion_tokens} tokens"
        note += f"; LLM {llm_model}: " + (
            f"used ({spent})" if improved.used_llm else f"not used ({spent})"
        )
    if compose:
        library = [
            workflows.runnable(summary.id).workflow
            for summary in workflows.list(status=WorkflowStatus.APPROVED)
        ]
        composed = compose_workflow(workflow, library)
        workflow, notes = composed.workflow, [*notes, *composed.notes]
    check_cancelled(cancel)  # the last point where stopping leaves nothing behind
    saved = workflows.save(workflow, actor=actor, change_note=note)
    changes = Changes.of(origin, workflows=[saved.version.workflow_id])
    return Induced(saved, tuple(notes), tuple(recordings), alignment, changes)


def _check_combinable(recordings: Sequence[Trajectory]) -> None:
    """Refuse recordings that cannot show one task: of different kinds (web and desktop), or
    web recordings that start on different sites.

    Raises:
        NotTheSameTaskError: they cannot.
    """
    if len(recordings) < 2:  # one recording is always its own task
        return
    first = recordings[0]
    for other in recordings[1:]:
        if other.kind is not first.kind:
            raise NotTheSameTaskError(
                f"recordings {first.id[:8]} ({first.kind.value}) and {other.id[:8]} "
                f"({other.kind.value}) cannot be combined: select recordings of one kind"
            )
        here, there = _site(first), _site(other)
        if here and there and here != there:
            raise NotTheSameTaskError(
                f"recordings {first.id[:8]} ({here}) and {other.id[:8]} ({there}) start on "
                "different sites, so they are not one task: select recordings of one site"
            )


def _site(recording: Trajectory) -> str:
    """The host a web recording starts on ("" when it does not say), without ``www.``."""
    url = recording.start_url or next(
        (e.before.url for e in recording.events if e.before and e.before.url), None
    )
    host = (urlsplit(url).hostname or "") if url else ""
    return host.removeprefix("www.")
