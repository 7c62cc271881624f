"""Steps compared through blocks: matched by id wherever they are (a step moved into or out of a
block is the same step), else by likeness among the steps of the same list (the workflow's, or
the same branch of the same block); listed in the new version's order, each block before its
steps, a removed step after the one it followed.

A step counts as moved when it changed lists, or when it left the longest run of matched steps
of its list that kept their order (inserting or removing a step moves nothing). A workflow
without blocks is compared exactly as before blocks existed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from desktop_app.core.diff.steps import (
    MATCH_THRESHOLD,
    _kept_order,
    _lone_step,
    _step_change,
    _step_similarity,
)
from desktop_app.core.diff.views import StepChange
from desktop_app.core.models.workflow import Step, branches
from desktop_app.core.step_places import StepPlace, step_places

__all__: list[str] = []

#: A list of steps: the workflow's own (None), or a block's branch (block id, branch name).
_List = tuple[str, str] | None

#: The list a list of a removed block became: none.
_GONE: Final = ("", "gone")

#: What a block's ``otherwise`` is called where a diff line says where a step is.
_OTHERWISE: Final = {"if": "otherwise", "try": "if it fails"}


def _list_of(place: StepPlace) -> _List:
    if place.parent is None or place.branch is None:
        return None
    return (place.parent.step.id, place.branch)


def _where(place: StepPlace) -> str | None:
    """``in 'For each invoice'``, ``in 'If signed out', otherwise``; None at the top."""
    parent = place.parent
    if parent is None:
        return None
    text = f"in '{parent.step.title}'"
    if place.branch == "otherwise":
        text += f", {_OTHERWISE.get(parent.step.kind, 'otherwise')}"
    return text


class _Tree:
    """Two versions' steps, placed, and how they match."""

    def __init__(self, old: Sequence[Step], new: Sequence[Step]) -> None:
        self.old = list(step_places(tuple(old)))
        self.new = list(step_places(tuple(new)))
        self.pairs: dict[int, tuple[int, str]] = {}  # old place → (new place, how)
        self._old_at = {place.step.id: i for i, place in enumerate(self.old)}
        self._new_lists: dict[_List, list[int]] = {}
        for j, place in enumerate(self.new):
            self._new_lists.setdefault(_list_of(place), []).append(j)
        self._match()
        self.new_to_old = {j: (i, how) for i, (j, how) in self.pairs.items()}
        self.moved = self._moved()

    # ── matching ──────────────────────────────────────────────────────────────────────────

    def _match(self) -> None:
        new_by_id = {place.step.id: j for j, place in enumerate(self.new)}
        for i, place in enumerate(self.old):
            if place.step.id in new_by_id:
                self.pairs[i] = (new_by_id[place.step.id], "id")
        # By likeness, list by list, a block's lists after the list holding the block (so a
        # block matched by likeness has its steps compared with its counterpart's).
        lists: dict[_List, list[int]] = {}
        for i, place in enumerate(self.old):
            lists.setdefault(_list_of(place), []).append(i)
        for key, members in lists.items():
            counterpart = self.counterpart(key)
            if counterpart != _GONE:
                self._by_likeness(members, self._new_lists.get(counterpart, []))

    def counterpart(self, key: _List) -> _List:
        """The new version's list that old list *key* became (``_GONE``: its block is)."""
        if key is None:
            return None
        block_id, branch = key
        old_block = self._old_at[block_id]
        if old_block not in self.pairs:
            return _GONE
        return (self.new[self.pairs[old_block][0]].step.id, branch)

    def _by_likeness(self, old: list[int], new: list[int]) -> None:
        taken = {j for j, _ in self.pairs.values()}
        loose_old = [i for i in old if i not in self.pairs]
        loose_new = [j for j in new if j not in taken]
        candidates: list[tuple[float, int, int]] = []
        for i in loose_old:
            for j in loose_new:
                score = _step_similarity(self.old[i].step, self.new[j].step)
                if score >= MATCH_THRESHOLD:
                    # Nearer positions win ties.
                    gap = abs(self.old[i].index - self.new[j].index)
                    candidates.append((score - 0.001 * gap, i, j))
        for _, i, j in sorted(candidates, key=lambda c: (-c[0], c[1], c[2])):
            if i in self.pairs or j in taken:
                continue
            self.pairs[i] = (j, "similarity")
            taken.add(j)

    # ── moves ─────────────────────────────────────────────────────────────────────────────

    def changed_list(self, i: int) -> bool:
        """Whether matched old step *i* is in another list now (into or out of a block)."""
        j = self.pairs[i][0]
        return self.counterpart(_list_of(self.old[i])) != _list_of(self.new[j])

    def _moved(self) -> set[int]:
        moved = {i for i in self.pairs if self.changed_list(i)}
        by_list: dict[_List, list[tuple[int, int]]] = {}
        for i, (j, _) in self.pairs.items():
            if i not in moved:
                by_list.setdefault(_list_of(self.new[j]), []).append((i, j))
        for pairs in by_list.values():
            ordered = sorted(pairs, key=lambda pair: self.new[pair[1]].index)
            positions = [(self.old[i].index, self.new[j].index) for i, j in ordered]
            kept = _kept_order(positions)
            moved |= {i for k, (i, _) in enumerate(ordered) if k not in kept}
        return moved

    # ── the changes, in order ─────────────────────────────────────────────────────────────

    def changes(self) -> list[StepChange]:
        after: dict[int, list[int]] = {}  # new place → removed old steps shown after it
        at_start: dict[_List, list[int]] = {}  # new list → removed old steps shown first
        for i, place in enumerate(self.old):
            if i in self.pairs:
                continue
            key = _list_of(place)
            counterpart = self.counterpart(key)
            if counterpart == _GONE:
                continue  # shown under its removed block
            anchor = next(
                (
                    k
                    for k in range(i - 1, -1, -1)
                    if _list_of(self.old[k]) == key
                    and k in self.pairs
                    and k not in self.moved
                    and not self.changed_list(k)
                ),
                None,
            )
            if anchor is not None:
                after.setdefault(self.pairs[anchor][0], []).append(i)
            else:
                at_start.setdefault(counterpart, []).append(i)
        out: list[StepChange] = []

        def removed(i: int) -> None:
            out.append(self._removed(i))
            for k, place in enumerate(self.old):
                if place.parent is self.old[i] and k not in self.pairs:
                    removed(k)

        def listed(key: _List) -> None:
            for i in at_start.get(key, []):
                removed(i)
            for j in self._new_lists.get(key, []):
                place = self.new[j]
                out.append(self._present(j))
                for name, _steps in branches(place.step):
                    listed((place.step.id, name))
                for i in after.get(j, []):
                    removed(i)

        listed(None)
        return out

    def _present(self, j: int) -> StepChange:
        place = self.new[j]
        where = _where(place)
        if j not in self.new_to_old:
            change = _lone_step(place.step, "added", place.index)
            return change.model_copy(update={"number": place.number, "where": where})
        i, how = self.new_to_old[j]
        before = self.old[i]
        change = _step_change(
            before.step,
            place.step,
            old_index=before.index,
            new_index=place.index,
            matched_by="id" if how == "id" else "similarity",
            moved=i in self.moved,
        )
        update: dict[str, object] = {
            "number": place.number,
            "old_number": before.number,
            "where": where,
        }
        if self.changed_list(i):
            update["old_where"] = _where(before) or "at the top"
        return change.model_copy(update=update)

    def _removed(self, i: int) -> StepChange:
        place = self.old[i]
        change = _lone_step(place.step, "removed", place.index)
        return change.model_copy(update={"old_number": place.number, "where": _where(place)})

    def top_pairs(self) -> dict[int, int]:
        """Matched steps of the workflows' own lists: old position → new position."""
        return {
            self.old[i].index: self.new[j].index
            for i, (j, _) in self.pairs.items()
            if self.old[i].parent is None and self.new[j].parent is None
        }


def _diff_steps(
    old: Sequence[Step], new: Sequence[Step]
) -> tuple[list[StepChange], dict[int, int]]:
    """Every step of either version and what happened to it, in display order; and the
    matched steps of the workflows' own lists (old position → new position)."""
    tree = _Tree(old, new)
    return tree.changes(), tree.top_pairs()
