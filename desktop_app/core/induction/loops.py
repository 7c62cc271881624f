"""Loops from one demonstration: the same steps done to several items of one list become a
``for_each`` over those items, when the recording shows which items they were and why.

A run of steps is a loop when it repeats (the same kinds of step on the same elements, two
rounds at least) and each round acts inside a different item of one repeated structure (a
table row, a list item, a card) the recorder described (``ItemContext``). Every difference
between the rounds must be explained by the item: its key (the text that tells it apart, read
with a selector inside the item), or a value shown in the item (a field); anything else that
differs (a value typed that the item does not show, another element) keeps the plain
sequence. The loop's steps find their element inside the item showing ``{item}`` and nowhere
else: their recorded locators that pinned one record (a position, an id) are dropped, and so
is whatever in their fingerprint described the recorded item.

What the loop goes over:

* every item of the list, when the demonstration did every item the page showed;
* the items holding a text (``contains``), when exactly the items the demonstration did hold
  it, no other item does, and the stated intent names it ("… every overdue invoice");
* otherwise a list parameter of the items' keys, by default the ones demonstrated: a run does
  exactly the items it is given, and a reviewer sees which.

A list the recording could not read whole (too long, an item cut short) never makes a loop
over the page's items. One loop per demonstration, the one covering the most steps.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import TypeAdapter

from desktop_app.core.describe import item_noun
from desktop_app.core.induction.naming import snake_case, unique_name
from desktop_app.core.induction.slots import Slot
from desktop_app.core.items import inside_item
from desktop_app.core.models.target import (
    Fingerprint,
    ItemContext,
    Locator,
    Target,
)
from desktop_app.core.models.workflow import (
    NON_TEMPLATE_FIELDS,
    Expectation,
    ForEachStep,
    ListItems,
    PageItems,
    Parameter,
    ParameterType,
    Step,
)
from desktop_app.core.templating import escape, placeholders

__all__ = ["Loop", "drop_item_checks", "fold_loop"]

#: A loop over every item of a page goes round at most this many times, or four times as many
#: as the recorded page showed (a reviewer raises it).
MIN_LIMIT: Final = 20
#: Steps looked at for a loop, at most (a longer recording is left as it is).
MAX_STEPS: Final = 400
#: A filter text shorter than this says too little.
_MIN_FILTER: Final = 3
_PLACEHOLDER: Final = re.compile(r"\{([a-z_][a-z0-9_]*)\}")
_WORDS: Final = re.compile(r"[^\W\d_][\w'-]*", re.UNICODE)
_STEP: Final[TypeAdapter[Step]] = TypeAdapter(Step)
_EXPECTATION: Final[TypeAdapter[Expectation]] = TypeAdapter(Expectation)
#: Fields of a step left out when rounds are compared (they differ by nature, or are checked
#: on their own).
_NOT_COMPARED: Final = frozenset({"id", "title", "screenshot", "source_events", "expectations"})


@dataclass
class Loop:
    """A loop folded into the steps: the new steps, the parameters that went (the rounds'
    values now come from the item), the one added (a list of keys), notes for the reviewer,
    and the texts of the items done (a success check holding one describes that item)."""

    steps: tuple[Step, ...]
    dropped: set[str]
    added: Parameter | None
    notes: list[str] = field(default_factory=list)
    item_texts: tuple[str, ...] = ()


# ── looking at steps ────────────────────────────────────────────────────────────────────────


def _item(step: Step) -> ItemContext | None:
    """The item the step's element was recorded in, when the recorder described it whole."""
    target = step.target_or_none
    fp = target.fingerprint if target is not None else None
    item = fp.item if fp is not None else None
    return item if item is not None and item.inner is not None else None


def _loose_key(step: Step) -> str:
    """What the step does, whatever item it does it in and whatever value it is given."""
    parts: list[str] = [step.kind]
    item = _item(step)
    target = step.target_or_none
    if item is not None and item.inner is not None:
        parts += ["item", item.css, item.inner.strategy.value, item.inner.value]
    elif target is not None:
        loc = next((loc for loc in target.locators if loc.within is None), target.locators[0])
        parts.append(_PLACEHOLDER.sub("{}", loc.describe()))
    url = getattr(step, "url", None)
    if isinstance(url, str):
        parts.append(re.sub(r"\d+", "#", _PLACEHOLDER.sub("{}", url)))
    for name in ("key", "checked"):
        value = getattr(step, name, None)
        if value is not None:
            parts.append(_PLACEHOLDER.sub("{}", str(value)))
    return " | ".join(parts)


def _candidates(steps: Sequence[Step]) -> list[tuple[int, int, int]]:
    """(start, period, rounds) of every maximal repetition of two rounds or more with an item
    step in it, those covering the most steps first."""
    keys = [_loose_key(s) for s in steps]
    in_item = [_item(s) is not None for s in steps]
    n = len(steps)
    found: list[tuple[int, int, int]] = []
    for period in range(1, n // 2 + 1):
        for start in range(n - 2 * period + 1):
            if not any(in_item[start : start + period]):
                continue
            if start >= period and keys[start - period : start] == keys[start : start + period]:
                continue  # not maximal: an earlier round starts the same repetition
            rounds = 1
            while (
                keys[start + rounds * period : start + (rounds + 1) * period]
                == keys[start : start + period]
            ):
                rounds += 1
            if rounds >= 2:
                found.append((start, period, rounds))
    return sorted(found, key=lambda c: (-c[1] * c[2], c[1], c[0]))


# ── the key and the fields ──────────────────────────────────────────────────────────────────


def _keyed(item: ItemContext, step: Step) -> list[tuple[str, str, int]]:
    """(selector, text, rank) of each text of the item a selector reads, the element's own
    text included (a link named after its record)."""
    found = [
        (css, text, rank)
        for rank, (text, css) in enumerate(zip(item.texts, item.text_css, strict=False))
        if css is not None
    ]
    inner = item.inner
    if item.own_css is not None and inner is not None and inner.name:
        found.append((item.own_css, inner.name, len(found)))
    return found


def _keys(items: Sequence[tuple[ItemContext, Step]]) -> list[tuple[str, list[str]]]:
    """The selectors every round's item shows a different text at, those whose texts no
    sibling shows first (the recorder lists them first); each with its texts, round by
    round."""
    per_round = [{css: (text, rank) for css, text, rank in _keyed(i, s)} for i, s in items]
    common = set(per_round[0]).intersection(*per_round[1:])
    found: list[tuple[int, str, list[str]]] = []
    for css in common:
        texts = [one[css][0] for one in per_round]
        if len(set(texts)) != len(texts) or any(len(t.strip()) < 2 for t in texts):
            continue
        found.append((sum(one[css][1] for one in per_round), css, texts))
    return [(css, texts) for _, css, texts in sorted(found)]


def _field_of(items: Sequence[ItemContext], values: Sequence[str]) -> str | None:
    """The selector at which each round's item shows that round's value, if there is one."""
    common: set[str] | None = None
    for item, value in zip(items, values, strict=True):
        here = {
            css
            for text, css in zip(item.texts, item.text_css, strict=False)
            if css is not None and text == value.strip()
        }
        common = here if common is None else common & here
    return min(common) if common else None


# ── rounds compared ─────────────────────────────────────────────────────────────────────────


def _whole(text: str) -> re.Pattern[str]:
    escaped = re.escape(escape(text))
    left = r"(?<!\w)" if re.match(r"\w", text) else ""
    right = r"(?!\w)" if re.search(r"\w$", text) else ""
    return re.compile(left + escaped + right)


def _map_strings(value: Any, change: Any) -> Any:
    """*value* (JSON data) with every template string passed through *change*."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {
            k: v if k in NON_TEMPLATE_FIELDS else _map_strings(v, change) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_map_strings(v, change) for v in value]
    return value


@dataclass
class _Round:
    """One round: its steps, the item it acted in, its key text, how its own parameters map
    into the loop (placeholder → what it becomes)."""

    steps: Sequence[Step]
    key: str
    variable: str
    mapping: dict[str, str] = field(default_factory=dict)

    @property
    def item(self) -> str:
        """The loop's ``{item}`` placeholder."""
        return "{" + self.variable + "}"

    def rewrite(self, text: str) -> str:
        text = _PLACEHOLDER.sub(lambda m: self.mapping.get(m.group(1), m.group(0)), text)
        return _whole(self.key).sub(lambda _m: self.item, text)

    def shape(self, step: Step, css: str) -> Any:
        """*step* as the loop would do it in this round, for comparing rounds."""
        dumped = step.model_dump(mode="json", exclude=set(_NOT_COMPARED))
        target = dumped.pop("target", None)
        item = _item(step)
        if item is not None and item.inner is not None:
            dumped["target"] = {"in": css, "inner": item.inner.model_dump(mode="json")}
        elif target is not None:
            dumped["target"] = target["locators"]
        return _map_strings(dumped, self.rewrite)

    def expectations(self, step: Step) -> list[Any]:
        return [_map_strings(e.model_dump(mode="json"), self.rewrite) for e in step.expectations]


class _NoLoop(Exception):
    """Why a repetition is no loop (said to the reviewer)."""


def _own_placeholders(steps: Sequence[Step], before: set[str]) -> list[str]:
    """The parameters *steps* use that no step before them used, in order of first use."""
    found: list[str] = []
    for step in steps:
        for name in placeholders(step.model_dump_json(exclude={"title"})):
            if name not in before and name not in found:
                found.append(name)
    return found


def _slot_value(slots: Mapping[str, Slot], name: str) -> tuple[object, ...]:
    slot = slots.get(name)
    if slot is None:
        return (name,)
    p = slot.parameter
    return (slot.value, p.type.value, p.default, p.choices)


# ── the whole ───────────────────────────────────────────────────────────────────────────────


def fold_loop(steps: Sequence[Step], slots: Sequence[Slot], intent: str) -> Loop | None:
    """*steps* with the longest repetition over items of one list folded into a ``for_each``,
    or None when there is none (a note says why a repetition was left as it is)."""
    if len(steps) > MAX_STEPS:
        return None
    by_name = {s.parameter.name: s for s in slots}
    refused: list[str] = []
    for start, period, count in _candidates(steps)[:50]:
        try:
            return _fold(steps, by_name, intent, start, period, count)
        except _NoLoop as exc:
            refused.append(
                f"steps {start + 1}-{start + period * count} repeat {count} times over "
                f"items of a list, but are left as they are: {exc}"
            )
    if refused:
        return Loop(steps=tuple(steps), dropped=set(), added=None, notes=refused[:1])
    return None


def _fold(
    steps: Sequence[Step],
    slots: Mapping[str, Slot],
    intent: str,
    start: int,
    period: int,
    count: int,
) -> Loop:
    chunks = [steps[start + r * period : start + (r + 1) * period] for r in range(count)]
    anchor = next(j for j, s in enumerate(chunks[0]) if _item(s) is not None)
    anchors = [(_item(chunk[anchor]), chunk[anchor]) for chunk in chunks]
    items = [(i, s) for i, s in anchors if i is not None]
    first = items[0][0]
    if any(i.css != first.css for i, _ in items):
        raise _NoLoop("the items are not of one kind")
    lists = [i.list for i, _ in items]
    list_css = lists[0].css if lists[0] is not None else None
    if any(lst is None or lst.css != list_css for lst in lists):
        list_css = None
    options = _keys(items)
    if not options:
        raise _NoLoop("the items show no text that tells each from the others")
    refused: _NoLoop | None = None
    for key_css, keys in options:  # the first that explains every difference between rounds
        try:
            return _keyed_loop(steps, slots, intent, start, chunks, items, key_css, keys, list_css)
        except _NoLoop as exc:
            refused = refused or exc
    assert refused is not None
    raise refused


def _keyed_loop(
    steps: Sequence[Step],
    slots: Mapping[str, Slot],
    intent: str,
    start: int,
    chunks: Sequence[Sequence[Step]],
    items: Sequence[tuple[ItemContext, Step]],
    key_css: str,
    keys: Sequence[str],
    list_css: str | None,
) -> Loop:
    first = items[0][0]
    period, count = len(chunks[0]), len(chunks)
    css = list_css or first.css

    # Each round's own parameters: the item's key, a value the item shows, or one value.
    before: set[str] = set()
    for step in steps[:start]:
        before.update(placeholders(step.model_dump_json(exclude={"title"})))
    owns = [_own_placeholders(chunk, before) for chunk in chunks]
    if len({len(o) for o in owns}) != 1:
        raise _NoLoop("the rounds ask for different values")
    taken = list(slots)
    variable = "item" if "item" not in taken else unique_name("the_item", taken)
    rounds = [_Round(chunk, key, variable) for chunk, key in zip(chunks, keys, strict=True)]
    fields: dict[str, str] = {}
    dropped: set[str] = set()
    for position in range(len(owns[0])):
        names = [o[position] for o in owns]
        values = [_slot_value(slots, n) for n in names]
        recorded = [slots[n].value if n in slots else None for n in names]
        if all(v is not None and v.strip() == k for v, k in zip(recorded, keys, strict=True)):
            target = rounds[0].item
        elif len(set(values)) == 1:
            target = "{" + names[0] + "}"
        else:
            texts = [v for v in recorded if v is not None]
            where = _field_of([i for i, _ in items], texts) if len(texts) == len(recorded) else None
            if where is None:
                raise _NoLoop(
                    f"{{{names[0]}}} differs from round to round and the items do not show it"
                )
            fields[names[0]] = where
            target = "{" + names[0] + "}"
        for one, name in zip(rounds, names, strict=True):
            one.mapping[name] = target
        # The rounds after the first asked for what the first asks for; a parameter that is
        # the item or one of its fields goes (the loop sets the variable).
        dropped.update(names[1:])
        if target == rounds[0].item or names[0] in fields:
            dropped.add(names[0])

    # The rounds must do the same thing, item for item.
    shapes = [[one.shape(s, css) for s in one.steps] for one in rounds]
    for number, shape in enumerate(shapes[1:], start=2):
        for j, (a, b) in enumerate(zip(shapes[0], shape, strict=True)):
            if a != b:
                title = rounds[0].steps[j].title
                raise _NoLoop(f"round {number} does '{title}' differently ({_differ(a, b)})")
    # ... and the same item throughout a round.
    for one in rounds:
        for step in one.steps:
            item = _item(step)
            if item is not None and item.css != first.css:
                raise _NoLoop("a round acts in items of two lists")
            if item is not None and one.key not in (*item.texts, item.inner and item.inner.name):
                raise _NoLoop("a round acts in two items")

    after = steps[start + period * count :]
    used_after = set()
    for step in after:
        used_after.update(placeholders(step.model_dump_json(exclude={"title"})))
    if dropped & used_after:
        name = sorted(dropped & used_after)[0]
        raise _NoLoop(f"{{{name}}}, a value of one round, is used after them")

    source, added, said = _source(items, keys, key_css, fields, css, intent, taken)
    body = [_body_step(rounds, j, css) for j in range(period)]
    loop = ForEachStep(
        title=f"For each {said}",
        over=source,
        item=variable,
        limit=_limit(source, items),
        steps=tuple(body),
    )
    notes = [
        f"steps {start + 1}-{start + period * count} did the same to {count} "
        f"{item_noun(first.css)}s ({', '.join(repr(k) for k in keys)}): one loop "
        f"for each {said}, each found by its text {{{variable}}} (read at {key_css!r})"
        + (f"; {', '.join(sorted(fields))} read from the item" if fields else "")
    ]
    if added is not None:
        notes.append(
            f"the loop goes over {{{added.name}}}, the {item_noun(first.css)}s to do, one per "
            "line (by default the ones demonstrated): " + _why_not_page(items, keys, intent, css)
        )
    shown = tuple(dict.fromkeys(t for i, _ in items for t in (*i.texts, *keys)))
    return Loop(
        steps=(*steps[:start], loop, *after),
        dropped=dropped,
        added=added,
        notes=notes,
        item_texts=shown,
    )


def _differ(a: Any, b: Any) -> str:
    """Where two dumped steps differ first, in a few words."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a:
            if a.get(k) != b.get(k):
                return f"{k}: {_differ(a.get(k), b.get(k))}"
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for x, y in zip(a, b, strict=True):
            if x != y:
                return _differ(x, y)
    return f"{str(a)[:60]!r} vs {str(b)[:60]!r}"


def _body_step(rounds: Sequence[_Round], j: int, css: str) -> Step:
    """The loop's *j*-th step: the first round's, its values mapped, its element found in the
    item showing ``{item}``, the expectations every round saw, irreversible if any round was."""
    first = rounds[0]
    step = first.steps[j]
    dumped = _map_strings(step.model_dump(mode="json"), first.rewrite)
    seen = [one.expectations(one.steps[j]) for one in rounds]
    dumped["expectations"] = [e for e in seen[0] if all(e in other for other in seen[1:])]
    dumped["irreversible"] = any(one.steps[j].irreversible for one in rounds)
    item = _item(step)
    if item is not None and item.inner is not None:
        inner = item.inner
        if inner.name is not None and inner.name == first.key:
            inner = inner.model_copy(update={"name": first.item})
        locator = inside_item(inner, css, first.item)
        dumped["target"] = _thin_target(step, locator, item).model_dump(mode="json")
        title = first.rewrite(step.title)
        dumped["title"] = title if first.item in title else f"{title} in '{first.item}'"
    else:
        dumped["title"] = first.rewrite(step.title)
    return _STEP.validate_python(dumped)


def _thin_target(step: Step, locator: Locator, item: ItemContext) -> Target:
    """The target found in the loop's item only; its fingerprint keeps what every item's
    element shares (tag, role, type), never what described the recorded item (its texts,
    neighbours, place on the page): a heal must not find the recorded item's element again."""
    target = step.target_or_none
    fp = target.fingerprint if target is not None else None
    kept: Fingerprint | None = None
    if fp is not None:
        inner = item.inner
        attributes = {k: v for k, v in fp.attributes.items() if k in {"type", "role"}}
        kept = Fingerprint(
            tag=fp.tag,
            role=fp.role,
            name=fp.name if locator.name is not None and "{" not in locator.name else None,
            attributes=attributes,
            item=ItemContext(css=item.css, inner=inner),
        )
    return Target(locators=(locator,), fingerprint=kept)


# ── what the loop goes over ─────────────────────────────────────────────────────────────────


def _filters(items: Sequence[tuple[ItemContext, Step]], keys: Sequence[str]) -> list[str]:
    """Texts every demonstrated item holds and no other item of the list did when the loop
    began (as the loop reads them: case aside, anywhere in the item's text)."""
    listed = items[0][0].list
    assert listed is not None
    page = [t.casefold() for t in listed.texts]
    done = [i.list.texts[i.list.at].casefold() for i, _ in items if i.list is not None]
    candidates: list[str] = []
    for text in items[0][0].texts:  # a text of the item, or a word of one (of its key too)
        candidates += [text, *_WORDS.findall(text)]
    found = []
    for text in dict.fromkeys(candidates):
        wanted = text.casefold()
        if len(wanted) < _MIN_FILTER or any(wanted == k.casefold() for k in keys):
            continue
        if not all(wanted in d for d in done):
            continue
        holding = [t for t in page if wanted in t]
        if len(holding) == len(keys) and all(any(k.casefold() in t for k in keys) for t in holding):
            found.append(text)
    return found


def _named(intent: str, text: str) -> bool:
    pattern = r"(?<!\w)" + re.escape(text.casefold()) + r"(?!\w)"
    return re.search(pattern, intent.casefold()) is not None


def _page_readable(items: Sequence[tuple[ItemContext, Step]], css: str) -> bool:
    return all(i.list is not None and i.list.complete and i.list.css == css for i, _ in items)


def _all_done(items: Sequence[tuple[ItemContext, Step]], keys: Sequence[str]) -> bool:
    listed = items[0][0].list
    assert listed is not None
    return len(listed.texts) == len(keys) and all(
        any(k.casefold() in t.casefold() for k in keys) for t in listed.texts
    )


def _source(
    items: Sequence[tuple[ItemContext, Step]],
    keys: Sequence[str],
    key_css: str,
    fields: Mapping[str, str],
    css: str,
    intent: str,
    taken: Sequence[str],
) -> tuple[PageItems | ListItems, Parameter | None, str]:
    """What the loop goes over, the list parameter it needs (if any), and how it is said."""
    noun = item_noun(items[0][0].css)
    if _page_readable(items, css):
        if _all_done(items, keys):
            return PageItems(css=css, key=key_css, fields=dict(fields)), None, noun
        named = [f for f in _filters(items, keys) if _named(intent, f)]
        if named:
            text = max(named, key=len)
            source = PageItems(css=css, contains=text, key=key_css, fields=dict(fields))
            return source, None, f'{noun} showing "{text}"'
    if fields:
        raise _NoLoop(
            "the rounds read values from their items, and which items to do is not clear "
            "(a loop over a list of keys cannot read them)"
        )
    name = unique_name(snake_case(noun + "s", fallback="items"), list(taken))
    parameter = Parameter(
        name=name,
        type=ParameterType.LIST,
        default="\n".join(keys),
        description=f"Which {noun}s to do, one per line, each by the text that tells it apart",
    )
    return ListItems(value="{" + name + "}"), parameter, f"{noun} in {{{name}}}"


def _why_not_page(
    items: Sequence[tuple[ItemContext, Step]], keys: Sequence[str], intent: str, css: str
) -> str:
    if not _page_readable(items, css):
        return "the recording could not read the whole list, so not every item on the page"
    shared = _filters(items, keys)
    if shared:
        quoted = " or ".join(repr(s) for s in shared[:3])
        return (
            f"the demonstrated items, and no other, show {quoted}, but the stated intent does "
            "not say so; not every item showing it (say it in the intent to loop over them)"
        )
    return "nothing the page showed tells the demonstrated items from the others"


def _limit(source: PageItems | ListItems, items: Sequence[tuple[ItemContext, Step]]) -> int:
    listed = items[0][0].list
    if isinstance(source, PageItems) and listed is not None:
        return max(MIN_LIMIT, 4 * len(listed.texts))
    return 100


def drop_item_checks(
    checks: Sequence[Expectation], loop: Loop
) -> tuple[tuple[Expectation, ...], list[str]]:
    """The success checks that hold whichever items a run did: not one naming a demonstrated
    item, nor one using a value that went; and notes on the rest."""
    kept, notes = [], []
    for check in checks:
        text = check.model_dump_json()
        names = set(placeholders(text))
        mentions = [t for t in loop.item_texts if len(t) >= 2 and _whole(t).search(text)]
        if names & loop.dropped or mentions:
            notes.append(
                f"the success check {text[:80]} described one of the items the loop does; left out"
            )
        else:
            kept.append(check)
    return tuple(kept), notes
