"""How a step's target changed: its ranked locators and its recorded fingerprint."""

from __future__ import annotations

import itertools

from desktop_app.core.describe import describe_locator
from desktop_app.core.diff.views import LocatorChange
from desktop_app.core.models.target import Fingerprint, ItemContext, Locator, Target
from desktop_app.core.step_kinds.spec import quote

__all__: list[str] = []


def _locator_key(
    locator: Locator,
) -> tuple[str, str, str | None, bool, int | None, tuple[tuple[str, str], ...]]:
    scope = locator.within
    within = tuple((s.css, s.text) for s in scope.scopes) if scope is not None else ()
    return (locator.strategy.value, locator.value, locator.name, locator.exact, locator.nth, within)


def _describe_locator(locator: Locator) -> str:
    text = describe_locator(locator)
    return text if locator.exact else f"{text} (inexact)"


def _diff_locators(old: Target | None, new: Target | None) -> list[LocatorChange]:
    old_locs = list(old.locators) if old is not None else []
    new_locs = list(new.locators) if new is not None else []
    old_keys = [_locator_key(loc) for loc in old_locs]
    new_keys = [_locator_key(loc) for loc in new_locs]
    removed = [i for i, key in enumerate(old_keys) if key not in new_keys]
    added = [j for j, key in enumerate(new_keys) if key not in old_keys]

    # A removed and an added locator of the same strategy read as one that changed.
    changed: list[tuple[int, int]] = []
    for i in list(removed):
        j = next((j for j in added if new_locs[j].strategy is old_locs[i].strategy), None)
        if j is not None:
            changed.append((i, j))
            removed.remove(i)
            added.remove(j)

    # Locators both versions have: when their order relative to each other (and to the changed
    # ones) changed, each one now tried at another rank is re-ranked; a mere shift from an
    # insertion or removal above it is not.
    common = [(old_keys.index(key), j) for j, key in enumerate(new_keys) if key in old_keys]
    matched = sorted([*common, *changed], key=lambda pair: pair[1])
    reordered = any(a[0] > b[0] for a, b in itertools.pairwise(matched))
    moved = [(i, j) for i, j in common if reordered and i != j]

    changes: list[LocatorChange] = []
    for j in added:
        changes.append(
            LocatorChange(change="added", after=_describe_locator(new_locs[j]), new_rank=j + 1)
        )
    for i, j in changed:
        changes.append(
            LocatorChange(
                change="changed",
                before=_describe_locator(old_locs[i]),
                after=_describe_locator(new_locs[j]),
                old_rank=i + 1,
                new_rank=j + 1,
            )
        )
    for i, j in moved:
        changes.append(
            LocatorChange(
                change="moved",
                before=_describe_locator(old_locs[i]),
                after=_describe_locator(new_locs[j]),
                old_rank=i + 1,
                new_rank=j + 1,
            )
        )
    changes.sort(key=lambda change: change.new_rank or 0)
    for i in removed:
        changes.append(
            LocatorChange(change="removed", before=_describe_locator(old_locs[i]), old_rank=i + 1)
        )
    return changes


def _short(text: str | None) -> str:
    return quote(text, 40) if text else "none"


def _fingerprint_summary(old: Fingerprint | None, new: Fingerprint | None) -> str | None:
    """One line saying how the recorded element changed, or None if it did not."""
    if old == new:
        return None
    if old is None:
        return "recorded (the element can now be found by likeness)"
    if new is None:
        return "removed (the element can no longer be found by likeness)"
    parts: list[str] = []
    for name in ("tag", "role", "name", "text"):
        before, after = getattr(old, name), getattr(new, name)
        if before != after:
            parts.append(f"{name} {_short(before)} → {_short(after)}")
    attrs = sorted(set(old.attributes) | set(new.attributes))
    shown = [k for k in ("id", "type", "name") if k in attrs]
    others: list[str] = []
    for key in attrs:
        before_attr, after_attr = old.attributes.get(key), new.attributes.get(key)
        if before_attr == after_attr:
            continue
        if key in shown:
            parts.append(f"{key} {_short(before_attr)} → {_short(after_attr)}")
        else:
            others.append(key)
    if others:
        parts.append("attributes " + ", ".join(others) + " changed")
    if old.bbox != new.bbox:
        if old.bbox is None or new.bbox is None:
            parts.append("position " + ("recorded" if old.bbox is None else "dropped"))
        else:
            moved = (old.bbox.x, old.bbox.y) != (new.bbox.x, new.bbox.y)
            resized = (old.bbox.width, old.bbox.height) != (new.bbox.width, new.bbox.height)
            parts.append(
                "box " + " and ".join(w for w, f in (("moved", moved), ("resized", resized)) if f)
            )
    if old.nearby_text != new.nearby_text:
        parts.append("nearby text changed")
    if old.ancestors != new.ancestors:
        parts.append("ancestors changed")
    if old.item != new.item:
        parts.append(_item_change(old.item, new.item))
    return "; ".join(parts) if parts else "updated"


def _item_change(old: ItemContext | None, new: ItemContext | None) -> str:
    """How the repeated item (row, card) the element was recorded in changed, in words."""
    if new is None:
        return "no longer recorded in a repeated item"
    shows = f"showing {_short(new.texts[0])}" if new.texts else "showing no text"
    if old is None:
        return f"recorded in a repeated item ({new.css}, {shows})"
    if old.css != new.css:
        return f"item {old.css} → {new.css}"
    if old.texts != new.texts:
        return f"item texts changed (now {shows})"
    return "item's inner locator changed"
