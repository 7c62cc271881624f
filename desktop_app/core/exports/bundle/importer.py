"""Importing a bundle into the library: plan every write, resolve conflicts, then write."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from desktop_app.core.errors import ProceduraError, StoreError
from desktop_app.core.exports.bundle.format import (
    Bundle,
    BundleConflictError,
    BundleError,
    BundleWriteError,
    _secret_default,
)
from desktop_app.core.exports.bundle.references import (
    _callees_first,
    _calls,
    _loop_message,
    media_refs,
)
from desktop_app.core.library import WorkflowLibrary
from desktop_app.core.models.common import new_id
from desktop_app.core.models.workflow import CallStep, Workflow, WorkflowStatus, map_steps
from desktop_app.core.ports import MediaStore

__all__ = [
    "Conflict",
    "ImportAction",
    "ImportPlan",
    "ImportReport",
    "ImportedWorkflow",
    "OnConflict",
    "Resolution",
    "import_bundle",
    "plan_import",
]

Resolution = Literal["keep-both", "replace", "skip"]
"""What to do with a workflow of the bundle whose id exists here with other content."""

OnConflict = Literal["ask", "keep-both", "replace", "skip"]
"""A :data:`Resolution`, or ``ask``: raise :class:`BundleConflictError` so a person chooses."""

ImportAction = Literal["imported", "copied", "new version", "unchanged", "skipped"]


def _content(workflow: Workflow) -> object:
    return workflow.model_dump(mode="json", exclude={"version"})


@dataclass(frozen=True, slots=True)
class Conflict:
    """A workflow of the bundle whose id exists here, with content that is not already here."""

    workflow_id: str
    name: str
    bundle_version: int
    local_version: int
    local_status: WorkflowStatus
    resolution: Resolution | None

    @property
    def local_is_newer(self) -> bool:
        """Whether the local latest version number is higher than the bundle's."""
        return self.local_version > self.bundle_version

    @property
    def why(self) -> str:
        """How the local workflow differs from the bundle's."""
        local = f"the local version {self.local_version} ({self.local_status.value})"
        if self.local_is_newer:
            return f"{local} is newer than the bundle's version {self.bundle_version}"
        return f"{local} differs from the bundle's version {self.bundle_version}"

    def describe(self) -> str:
        """One line: which workflow and how the local one differs."""
        return f"{self.name!r} ({self.workflow_id[:8]}): {self.why}"


@dataclass(frozen=True, slots=True)
class ImportedWorkflow:
    """What import did (or will do) with one carried version."""

    name: str
    bundle_id: str
    bundle_version: int
    action: ImportAction
    local_id: str
    local_version: int | None
    reason: str = ""

    def describe(self) -> str:
        """One line for a person."""
        head = f"{self.name!r} ({self.bundle_id[:8]} v{self.bundle_version})"
        where = f"{self.local_id[:8]} version {self.local_version}"
        tail = f"; {self.reason}" if self.reason else ""
        if self.action == "imported":
            return f"{head}: imported as {where} (draft){tail}"
        if self.action == "copied":
            return f"{head}: kept both: imported as {where} (draft){tail}"
        if self.action == "new version":
            return f"{head}: replaced: now {where} (draft){tail}"
        if self.action == "unchanged":
            return f"{head}: already here as version {self.local_version}; nothing imported{tail}"
        return f"{head}: skipped{tail}"


@dataclass(frozen=True, slots=True)
class _Write:
    workflow: Workflow
    version: int
    note: str
    outcome: int


@dataclass(frozen=True, slots=True)
class ImportPlan:
    """Everything an import would write, worked out without writing anything."""

    bundle: Bundle
    outcomes: tuple[ImportedWorkflow, ...]
    conflicts: tuple[Conflict, ...]
    warnings: tuple[str, ...]
    media: tuple[str, ...]
    writes: tuple[_Write, ...]

    @property
    def unresolved(self) -> tuple[Conflict, ...]:
        """Conflicts nobody chose a resolution for."""
        return tuple(c for c in self.conflicts if c.resolution is None)


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What an import wrote: each carried version's outcome, media stored, and warnings."""

    main: ImportedWorkflow
    workflows: tuple[ImportedWorkflow, ...]
    media_stored: tuple[str, ...]
    media_present: tuple[str, ...]
    warnings: tuple[str, ...]


class _Planner:
    def __init__(
        self,
        library: WorkflowLibrary,
        bundle: Bundle,
        on_conflict: OnConflict,
        choices: Mapping[str, Resolution],
    ) -> None:
        self.library = library
        self.bundle = bundle
        self.on_conflict = on_conflict
        self.choices = choices
        self.ids: dict[str, str] = {}
        self.numbers: dict[tuple[str, int], int | None] = {}
        self.outcomes: list[ImportedWorkflow] = []
        self.conflicts: list[Conflict] = []
        self.warnings: list[str] = []
        self.writes: list[_Write] = []
        self.names = {wid: wf.name for (wid, _), wf in bundle.workflows.items()}

    def error(self, message: str, member: str = "", path: str = "") -> BundleError:
        return BundleError(message, member=member, source=self.bundle.source, path=path)

    def plan(self) -> ImportPlan:
        self._check_outside_calls()
        order, loop = _callees_first(self.bundle.workflows)
        if loop is not None:  # read_bundle refuses these; a Bundle built by hand might not
            raise self.error(_loop_message(loop, self.names))
        for wid in order:
            keys = sorted(k for k in self.bundle.workflows if k[0] == wid)
            self._plan_workflow(wid, keys)
        refs = sorted(
            {ref for w in self.writes for ref in media_refs(w.workflow)} & set(self.bundle.media)
        )
        return ImportPlan(
            bundle=self.bundle,
            outcomes=tuple(self.outcomes),
            conflicts=tuple(self.conflicts),
            warnings=tuple(dict.fromkeys(self.warnings)),
            media=tuple(refs),
            writes=tuple(self.writes),
        )

    def _check_outside_calls(self) -> None:
        """Calls to workflows the bundle does not hold must reach workflows stored here."""
        ids = {wid for wid, _ in self.bundle.workflows}
        for (wid, number), workflow in self.bundle.workflows.items():
            member = f"workflows/{wid}/v{number}.json"
            for place, step in _calls(workflow):
                if step.workflow_id in ids:
                    continue
                found = self.library.versions_by_id(step.workflow_id)
                if not found:
                    raise self.error(
                        f"calls workflow {step.workflow_id!r}, which is neither in the bundle "
                        "nor in this library",
                        member,
                        f"{place.path}.workflow_id",
                    )
                if step.version is not None and step.version > found[-1].version:
                    raise self.error(
                        f"calls version {step.version} of {found[-1].workflow.name!r}, which is "
                        f"neither in the bundle nor in this library (it has {found[-1].version})",
                        member,
                        f"{place.path}.version",
                    )

    def _rewrite(self, workflow: Workflow) -> tuple[Workflow, list[str]]:
        """*workflow* with its calls pointing where the callees were (or will be) imported."""
        notes: list[str] = []
        replaced: dict[str, CallStep] = {}
        for place, step in _calls(workflow):
            if step.workflow_id not in self.ids:
                continue
            target = self.ids[step.workflow_id]
            number = step.version
            if number is not None:
                number = self.numbers[(step.workflow_id, number)]
                if number is None:
                    notes.append(
                        f"{workflow.name!r} step {place.number} ({step.title!r}) called version "
                        f"{step.version} of {self.names[step.workflow_id]!r}, which was skipped; "
                        "it now calls the approved version here"
                    )
            if (target, number) != (step.workflow_id, step.version):
                replaced[step.id] = step.model_copy(
                    update={"workflow_id": target, "version": number}
                )
        if not replaced:
            return workflow, notes
        steps = map_steps(workflow.steps, lambda step, _in_loop: replaced.get(step.id, step))
        data = workflow.model_dump()
        data["steps"] = [s.model_dump() for s in steps]
        return Workflow.model_validate(data), notes

    def _note(self, wid: str, number: int, *, copy: bool) -> str:
        status = self.bundle.status_of(wid, number)
        there = f", {status.value} there" if status is not None else ""
        source = self.bundle.source or "a bundle"
        what = "as a copy of" if copy else "version"
        if copy:
            return f"imported from {source} {what} {wid[:8]} version {number}{there}"
        return f"imported from {source}: {what} {number} of {wid[:8]}{there}"

    def _outcome(self, outcome: ImportedWorkflow) -> int:
        self.outcomes.append(outcome)
        return len(self.outcomes) - 1

    def _plan_workflow(self, wid: str, keys: list[tuple[str, int]]) -> None:
        rewritten = [(key, *self._rewrite(self.bundle.workflows[key])) for key in keys]
        existing = self.library.versions_by_id(wid)
        if not existing:
            self._plan_copy(wid, wid, rewritten, "imported", "")
            return
        matches = [
            next((v for v in reversed(existing) if _content(v.workflow) == _content(wf)), None)
            for _, wf, _ in rewritten
        ]
        latest = existing[-1]
        # A called version already here satisfies its callers; the exported workflow itself is
        # a conflict too when a newer local version exists, so a person decides which is latest.
        newest = matches[-1]
        behind = wid == self.bundle.manifest.workflow_id and (
            newest is None or newest.version != latest.version
        )
        if all(m is not None for m in matches) and not behind:
            self.ids[wid] = wid
            for (key, wf, _), match in zip(rewritten, matches, strict=True):
                assert match is not None
                self.numbers[key] = match.version
                newer = (
                    f"the latest here is version {latest.version}"
                    if match.version != latest.version
                    else ""
                )
                self._outcome(
                    ImportedWorkflow(wf.name, wid, key[1], "unchanged", wid, match.version, newer)
                )
            return
        top = keys[-1][1]
        resolution = self.choices.get(wid)
        if resolution is None and self.on_conflict != "ask":
            resolution = self.on_conflict
        conflict = Conflict(
            workflow_id=wid,
            name=self.names[wid],
            bundle_version=top,
            local_version=latest.version,
            local_status=latest.status,
            resolution=resolution,
        )
        self.conflicts.append(conflict)
        why = conflict.why
        if resolution == "keep-both":
            self._plan_copy(wid, new_id(), rewritten, "copied", f"{wid[:8]} exists here ({why})")
        elif resolution == "replace":
            self.ids[wid] = wid
            number, current = latest.version, latest.workflow
            for key, wf, notes in rewritten:
                if _content(current) == _content(wf):
                    self.numbers[key] = number
                    self._outcome(ImportedWorkflow(wf.name, wid, key[1], "unchanged", wid, number))
                    continue
                number += 1
                self.numbers[key] = number
                self.warnings.extend(notes)
                index = self._outcome(
                    ImportedWorkflow(
                        wf.name, wid, key[1], "new version", wid, number, f"before: {why}"
                    )
                )
                self.writes.append(_Write(wf, number, self._note(wid, key[1], copy=False), index))
                current = wf
        else:
            self.ids[wid] = wid
            reason = why + (" (--on-conflict skip)" if resolution == "skip" else "")
            for (key, wf, _), match in zip(rewritten, matches, strict=True):
                self.numbers[key] = None if match is None else match.version
                local = None if match is None else match.version
                self._outcome(ImportedWorkflow(wf.name, wid, key[1], "skipped", wid, local, reason))

    def _plan_copy(
        self,
        wid: str,
        target: str,
        rewritten: list[tuple[tuple[str, int], Workflow, list[str]]],
        action: ImportAction,
        reason: str,
    ) -> None:
        self.ids[wid] = target
        number = 0
        current: Workflow | None = None
        for key, wf, notes in rewritten:
            workflow = wf if target == wid else wf.model_copy(update={"id": target})
            if current is not None and _content(current) == _content(workflow):
                self.numbers[key] = number
                self._outcome(ImportedWorkflow(wf.name, wid, key[1], "unchanged", target, number))
                continue
            number += 1
            self.numbers[key] = number
            self.warnings.extend(notes)
            index = self._outcome(
                ImportedWorkflow(wf.name, wid, key[1], action, target, number, reason)
            )
            note = self._note(wid, key[1], copy=target != wid)
            self.writes.append(_Write(workflow, number, note, index))
            current = workflow


def _was_saved(library: WorkflowLibrary, write: _Write) -> bool:
    """Whether a save that raised had stored its version (e.g. only re-indexing failed)."""
    try:
        found = library.versions_by_id(write.workflow.id)
    except (ProceduraError, OSError):
        return False
    return any(
        v.version == write.version and _content(v.workflow) == _content(write.workflow)
        for v in found
    )


def plan_import(
    library: WorkflowLibrary,
    bundle: Bundle,
    *,
    on_conflict: OnConflict = "ask",
    choices: Mapping[str, Resolution] | None = None,
) -> ImportPlan:
    """Work out what importing *bundle* would do, writing nothing.

    Workflows are planned callees first, so a caller's call steps follow its callees to where
    they land (a new id for "keep-both", the local version number they get or already have).

    Args:
        on_conflict: the resolution for every conflict not in *choices*; ``ask`` leaves them
            unresolved (see :attr:`ImportPlan.unresolved`) and plans them as skipped.
        choices: a resolution per bundle workflow id.

    Raises:
        BundleError: a call step reaches a workflow neither the bundle nor this library holds.
    """
    return _Planner(library, bundle, on_conflict, dict(choices or {})).plan()


def import_bundle(
    library: WorkflowLibrary,
    media: MediaStore,
    bundle: Bundle,
    *,
    on_conflict: OnConflict,
    actor: str,
    choices: Mapping[str, Resolution] | None = None,
) -> ImportReport:
    """Import a validated bundle: its workflows as new draft versions, its media into the store.

    Nothing is written unless the whole import was planned and every conflict resolved. A
    conflict is a carried workflow whose id exists here while its content is not already one of
    the local versions: "keep-both" imports it under a new id (callers follow), "replace" saves
    it as the next (draft) version of the local workflow, "skip" leaves the local one. No version
    is ever changed or deleted, and nothing arrives approved.

    Raises:
        BundleConflictError: a conflict without a resolution (``on_conflict="ask"``).
        BundleError: see :func:`plan_import`.
        BundleWriteError: a write failed midway; the message lists what had been written.
    """
    plan = plan_import(library, bundle, on_conflict=on_conflict, choices=choices)
    if plan.unresolved:
        raise BundleConflictError(plan.unresolved, source=bundle.source)
    for write in plan.writes:
        if (path := _secret_default(write.workflow)) is not None:
            raise BundleError(
                "a secret parameter cannot have a default", source=bundle.source, path=path
            )
    written: list[str] = []
    stored: list[str] = []
    present: list[str] = []
    current: _Write | None = None
    try:
        for ref in plan.media:
            if media.exists(ref):
                present.append(ref)
                continue
            got = media.put(bundle.media[ref], ref.rsplit(".", 1)[1])
            stored.append(got)
            written.append(f"media {got}")
            if got != ref:
                raise StoreError(f"the media store named {ref} {got}")
        for write in plan.writes:
            current = write
            result = library.save(write.workflow, actor=actor, change_note=write.note)
            current = None
            saved = result.version
            written.append(
                f"{saved.workflow.name!r} as {saved.workflow_id} version {saved.version}"
            )
            if not result.created or saved.version != write.version:
                raise StoreError(
                    f"expected {saved.workflow.name!r} to become version {write.version}, but "
                    f"the library {'made' if result.created else 'has'} version {saved.version}"
                )
    except (ProceduraError, OSError) as exc:
        if current is not None and _was_saved(library, current):
            written.append(
                f"{current.workflow.name!r} as {current.workflow.id} version {current.version}"
            )
        done = ", ".join(written) if written else "nothing"
        raise BundleWriteError(
            f"importing {bundle.source or 'the bundle'} stopped midway ({exc}); written before "
            f"it stopped: {done}",
            written,
        ) from exc
    by_key = {(o.bundle_id, o.bundle_version): o for o in plan.outcomes}
    main = by_key[(bundle.manifest.workflow_id, bundle.manifest.workflow_version)]
    return ImportReport(
        main=main,
        workflows=plan.outcomes,
        media_stored=tuple(stored),
        media_present=tuple(present),
        warnings=plan.warnings,
    )
