"""Running a workflow: which version runs, and how it may behave, decided once for the command
line (``run``, ``run --params-csv``), the run window, a batch, the tray and the hand-off.

- **Which version.** The approved one. A numbered version runs as asked (the run window's "Run
  this version", the hand-off, which names the one the command line chose); with *allow_draft*
  the latest. Never an archived one: restore it first.
- **How.** :func:`replay_options` turns the settings and the few choices a person makes for one
  run (confirm irreversible steps, use the LLM) into the engine's options; nothing else builds
  them.
- **A plan.** A :class:`RunPlan` is a run decided — the version, its values, those choices — as
  the command line hands it to the desktop app when the app holds the stores: the app takes the
  plan, not a restated argument list. Secrets travel beside it, never in it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from pydantic import Field

from desktop_app.core.errors import TransitionError
from desktop_app.core.models.common import FrozenModel
from desktop_app.core.models.run import RunTrigger
from desktop_app.core.models.workflow import WorkflowStatus
from desktop_app.core.replay.engine import ReplayOptions

if TYPE_CHECKING:
    from desktop_app.core.library import WorkflowLibrary
    from desktop_app.core.models.workflow import WorkflowVersion
    from desktop_app.settings import Settings

__all__ = ["RunPlan", "replay_options", "version_to_run"]


def version_to_run(
    workflows: WorkflowLibrary,
    ref: str,
    *,
    version: int | None = None,
    allow_draft: bool = False,
) -> WorkflowVersion:
    """The version a run of the workflow *ref* uses (blocking: it reads the library).

    Args:
        workflows: the library.
        ref: the workflow's id, id prefix or name.
        version: a version number: that one. None: the approved one, or with *allow_draft*
            the latest.
        allow_draft: None for *version* may mean the latest, a draft.

    Raises:
        TransitionError: no approved version (and nothing else asked for), or the version
            is archived.
        NotFoundError: no such workflow or version.
    """
    if version is None and not allow_draft:
        found = workflows.runnable(ref)
    else:
        found = workflows.get(ref, version)
    if found.status is WorkflowStatus.ARCHIVED:
        raise TransitionError(
            f"workflow {found.workflow.name!r} version {found.version} is archived; "
            "restore it first"
        )
    return found


def replay_options(
    settings: Settings,
    *,
    trigger: RunTrigger,
    confirm: bool | None = None,
    use_llm: bool = True,
    stop_before_irreversible: bool = False,
) -> ReplayOptions:
    """How one run may behave.

    Args:
        settings: the user's settings (LLM calls per step, patience).
        trigger: what started the run, for its record.
        confirm: irreversible steps found by healing wait for a person's yes (None: as the
            ``confirm_irreversible`` setting says).
        use_llm: the LLM may heal (when one is configured).
        stop_before_irreversible: end the run before its first irreversible step (a
            verification).
    """
    if confirm is None:
        confirm = settings.confirm_irreversible
    return ReplayOptions(
        assume_yes=not confirm,
        use_llm=use_llm,
        max_llm_calls_per_step=settings.llm_max_calls_per_step,
        patience_s=settings.replay_patience_s,
        trigger=trigger,
        stop_before_irreversible=stop_before_irreversible,
        time_limit_s=settings.run_time_limit_min * 60 or None,
    )


class RunPlan(FrozenModel):
    """A run decided: which version, with which values, and how it may behave.

    Its JSON is what the hand-off sends (``docs/tray.md``); the app checks the version again
    (:meth:`version_in`: an archived one never runs) and builds the options from its own
    settings (:meth:`options`).
    """

    workflow_id: str = Field(min_length=1)
    version: int = Field(ge=1)
    values: dict[str, str] = Field(default_factory=dict)
    trigger: RunTrigger = RunTrigger.CLI
    confirm: bool = True
    use_llm: bool = True
    base_url: str | None = None
    headless: bool = False
    interactive: bool = True
    stop_before_irreversible: bool = False

    @classmethod
    def of(
        cls,
        version: WorkflowVersion,
        values: Mapping[str, str],
        options: ReplayOptions,
        *,
        base_url: str | None = None,
        headless: bool = False,
        interactive: bool = True,
    ) -> RunPlan:
        """The plan of running *version* with *values* (not secret ones) as *options* say."""
        return cls(
            workflow_id=version.workflow_id,
            version=version.version,
            values=dict(values),
            trigger=options.trigger,
            confirm=not options.assume_yes,
            use_llm=options.use_llm,
            base_url=base_url,
            headless=headless,
            interactive=interactive,
            stop_before_irreversible=options.stop_before_irreversible,
        )

    def version_in(self, workflows: WorkflowLibrary) -> WorkflowVersion:
        """The planned version, read again (blocking).

        Raises:
            TransitionError: it is archived.
            NotFoundError: no such workflow or version.
        """
        return version_to_run(workflows, self.workflow_id, version=self.version)

    def options(self, settings: Settings) -> ReplayOptions:
        """The engine's options for this run, from *settings* and the plan's choices."""
        return replay_options(
            settings,
            trigger=self.trigger,
            confirm=self.confirm,
            use_llm=self.use_llm,
            stop_before_irreversible=self.stop_before_irreversible,
        )
