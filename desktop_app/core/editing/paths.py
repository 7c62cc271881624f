"""Where a step is in a workflow whose blocks hold steps: a :data:`StepPath`.

A path is the index of a top-level step, followed, for a step inside a block, by the block's
list it is in and its index there: ``(3,)`` is the fourth step, ``(3, "steps", 0)`` the first
step inside it, ``(3, "otherwise", 1, "steps", 2)`` the third step inside the second step of
its "otherwise". A *list* path ends with the list's name (``(3, "otherwise")``), or is ``()``
for the workflow's own steps; a *slot* is a place in a list a step can be put at (its index
may be the list's length).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Final, TypeAlias

from desktop_app.core.editing.common import EditError, _step_paths
from desktop_app.core.models.workflow import Step, Workflow, branches

__all__ = [
    "BRANCH_NAMES",
    "StepPath",
    "Where",
    "as_path",
    "is_inside",
    "list_at",
    "parent_of",
    "path_label",
    "slot_after_removal",
    "step_at",
    "step_paths",
    "with_list",
]

StepPath: TypeAlias = tuple[int | str, ...]
#: A step as the editing functions take it: a top-level index, or a path into blocks.
Where: TypeAlias = int | StepPath

#: The lists a block holds, by the field name a path uses.
BRANCH_NAMES: Final = ("steps", "otherwise")


def as_path(where: Where) -> StepPath:
    """*where* as a path (a top-level index ``3`` is ``(3,)``)."""
    return (where,) if isinstance(where, int) else tuple(where)


def _split(path: StepPath) -> tuple[StepPath, int]:
    """A step's path as the path of its list and its index there."""
    if not path or not isinstance(path[-1], int) or len(path) % 2 != 1:
        raise EditError(f"{path!r} is not where a step can be")
    return path[:-1], path[-1]


def path_label(path: Where) -> str:
    """How a person reads where a step is: ``4``, ``4.1`` (first inside step 4), ``4 otherwise
    2`` (second in its "otherwise"), ``4.1.3``…"""
    parts = as_path(path)
    text = str(int(parts[0]) + 1)
    for k in range(1, len(parts) - 1, 2):
        name, index = parts[k], int(parts[k + 1]) + 1
        text += f".{index}" if name == "steps" else f" otherwise {index}"
    return text


def list_at(workflow: Workflow, list_path: StepPath) -> tuple[Step, ...]:
    """The steps of the list at *list_path* (``()``: the workflow's own)."""
    if not list_path:
        return workflow.steps
    if not isinstance(list_path[-1], str):
        raise EditError(f"{list_path!r} is not a list of steps")
    block = step_at(workflow, list_path[:-1])
    held = dict(branches(block))
    name = list_path[-1]
    if name not in held:
        label = path_label(list_path[:-1])
        raise EditError(
            f"step {label} holds no steps"
            if not held
            else f"step {label} has no {name!r} (it has {', '.join(held)})"
        )
    return held[name]


def step_at(workflow: Workflow, where: Where) -> Step:
    """The step at *where*.

    Raises:
        EditError: there is no step there (the message says which one is missing).
    """
    path = as_path(where)
    list_path, index = _split(path)
    steps = list_at(workflow, list_path)
    if not 0 <= index < len(steps):
        if not list_path:
            raise EditError(f"there is no step {index + 1} (the workflow has {len(steps)})")
        raise EditError(f"there is no step {path_label(path)} (that list has {len(steps)})")
    return steps[index]


def with_list(workflow: Workflow, list_path: StepPath, steps: Sequence[Step]) -> Workflow:
    """*workflow* with the list at *list_path* made of *steps* (blocks around it rebuilt)."""
    if not list_path:
        return workflow.model_copy(update={"steps": tuple(steps)})
    list_at(workflow, list_path)  # it exists
    block_path = list_path[:-1]
    block = step_at(workflow, block_path)
    rebuilt = block.model_copy(update={str(list_path[-1]): tuple(steps)})
    outer, index = _split(block_path)
    around = list(list_at(workflow, outer))
    around[index] = rebuilt
    return with_list(workflow, outer, around)


def parent_of(path: Where) -> StepPath | None:
    """The path of the block holding the step at *path* (None for a top-level step)."""
    parts = as_path(path)
    return parts[:-2] if len(parts) > 1 else None


def is_inside(path: Where, ancestor: Where) -> bool:
    """Whether *path* is *ancestor* itself or a step (or list) inside it."""
    parts, top = as_path(path), as_path(ancestor)
    return parts[: len(top)] == top


def step_paths(steps: tuple[Step, ...], prefix: StepPath = ()) -> Iterator[tuple[StepPath, Step]]:
    """Every step of *steps* with its path, each block before its own steps."""
    return _step_paths(steps, prefix)


def slot_after_removal(source: Where, slot: Where) -> StepPath:
    """Where a step dropped on *slot* (a place in the workflow as it is now) ends up once the
    step at *source* is taken out first: a later index in the same list, or in a list after
    the source in a list the source shares, moves one up.

    Raises:
        EditError: *slot* is inside the step moved (a block cannot go into itself).
    """
    src, dst = as_path(source), as_path(slot)
    if is_inside(dst, src) and len(dst) > len(src):
        raise EditError("a block cannot be moved into itself")
    list_path, index = _split(src)
    depth = len(list_path)
    if dst[:depth] == list_path and len(dst) > depth:
        at = dst[depth]
        if isinstance(at, int) and at > index:
            return (*dst[:depth], at - 1, *dst[depth + 1 :])
    return dst
