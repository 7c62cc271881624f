"""Blocks as they run: an ``if`` takes one way, a loop goes round, a ``try`` falls back.

The run record shows which: a loop's round begins with a record of its own ("Item 2 of 7:
INV-002") and the steps of that round follow, their ids ``<loop id>#2/<step
id>`` and their ``iteration`` 2; the steps an ``if`` or a ``try`` did carry the way it took
(``branch``). Each block ends with a record of its own saying what it did, after those of its
steps, or where it failed.

Safety: a loop reads its items once, before its first round, and refuses (before doing
anything) more items than its limit or two items it cannot tell apart; a ``try`` never falls
back once an irreversible step was done; Stop works between any two steps, rounds included.
"""

from __future__ import annotations

import asyncio
import csv
import time
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Final, Literal, Protocol

from desktop_app.core.describe import describe_condition, item_noun
from desktop_app.core.models.common import utcnow
from desktop_app.core.models.run import FailureKind, Resolution, RunStep, StepStatus
from desktop_app.core.models.workflow import (
    Block,
    Condition,
    CsvRows,
    ForEachStep,
    IfStep,
    ListItems,
    PageItems,
    RepeatUntilStep,
    Step,
    TryStep,
)
from desktop_app.core.redaction import mask_secrets
from desktop_app.core.replay.browser import ActionFailed, BrowserPort
from desktop_app.core.replay.context import Context, ReplayEvent
from desktop_app.core.replay.ladder import StepFailed, public_title
from desktop_app.core.replay.render import render_source

__all__ = ["BlockHost", "Blocks", "Round"]

#: The largest CSV file a loop reads (a loop over more rows than this is a batch's work).
MAX_CSV_BYTES: Final = 20 * 1024 * 1024


class BlockHost(Protocol):
    """What the blocks need of the engine that runs them."""

    @property
    def browser(self) -> BrowserPort: ...

    @property
    def secrets(self) -> tuple[str, ...]: ...

    def next_index(self) -> int:
        """The index the next record gets."""
        ...

    def record(self, step: RunStep) -> RunStep:
        """Append *step* to the run record and save it."""
        ...

    def emit(self, event: ReplayEvent) -> None:
        """Tell the front end."""
        ...

    async def run_steps(self, steps: tuple[Step, ...], context: Context) -> None:
        """Run *steps* in *context* (blocks among them included)."""
        ...

    async def holds(self, condition: Condition, context: Context, *, timeout_s: float) -> bool:
        """Whether *condition* holds within *timeout_s*, once the page is ready."""
        ...

    async def ready(self, *, timeout_s: float) -> None:
        """Wait for the page to be ready for a person to act on it."""
        ...


class Round:
    """One round of a loop: its number, how many there are, what names the item, and the
    values it sets."""

    __slots__ = ("count", "label", "number", "values")

    def __init__(self, number: int, count: int | None, label: str, values: dict[str, str]):
        self.number = number
        self.count = count
        self.label = label
        self.values = values


class Blocks:
    """Runs the blocks of one run for *host*."""

    def __init__(self, host: BlockHost) -> None:
        self._host = host

    async def run(self, block: Block, context: Context) -> None:
        """Run *block*; its record follows those of the steps it did.

        Raises:
            StepFailed: the block failed (a step inside it did, a loop refused its items, a
                ``repeat_until`` ran out of rounds); its record says so first.
        """
        host = self._host
        title = public_title(block, context.params)
        host.emit(ReplayEvent(index=host.next_index(), title=title, depth=context.level))
        started, clock = utcnow(), time.monotonic()
        branch: Literal["steps", "otherwise"] | None = None
        try:
            match block:
                case IfStep():
                    detail, branch = await self._if(block, context)
                case ForEachStep():
                    detail = await self._for_each(block, context, title)
                case RepeatUntilStep():
                    detail = await self._repeat(block, context, title)
                case TryStep():
                    detail, branch = await self._try(block, context)
        except StepFailed as exc:
            self._record(block, context, title, started, clock, error=str(exc), kind=exc.kind)
            raise
        self._record(block, context, title, started, clock, detail=detail, branch=branch)

    # ── the kinds of block ────────────────────────────────────────────────────────────────

    async def _if(
        self, block: IfStep, context: Context
    ) -> tuple[str, Literal["steps", "otherwise"]]:
        await self._host.ready(timeout_s=max(block.timeout_s, 5.0))
        held = await self._host.holds(block.condition, context, timeout_s=block.timeout_s)
        branch: Literal["steps", "otherwise"] = "steps" if held else "otherwise"
        body = block.steps if held else block.otherwise
        said = describe_condition(block.condition)
        inner = context.inside(f"{context.prefix}{block.id}/", branch=branch)
        await self._inside(body, inner, context)
        how = "held" if held else "did not hold"
        done = f"did {len(body)} step(s)" if body else "nothing to do"
        return f"{said}: {how}; {done}", branch

    async def _for_each(self, block: ForEachStep, context: Context, title: str) -> str:
        rounds = await self._rounds(block, context)
        if len(rounds) > block.limit:
            raise StepFailed(
                f"found {len(rounds)} items, more than the loop's limit of {block.limit}; "
                "none was done",
                kind=FailureKind.REFUSED,
            )
        confirmed: set[str] | None = set() if block.confirm == "once" else None
        for one in rounds:
            await self._round(block, context, title, one, confirmed)
        if not rounds:
            return "no items: nothing to do"
        return f"did {len(rounds)} item(s)"

    async def _repeat(self, block: RepeatUntilStep, context: Context, title: str) -> str:
        confirmed: set[str] | None = set() if block.confirm == "once" else None
        said = describe_condition(block.condition)
        for number in range(1, block.max_rounds + 2):
            await self._host.ready(timeout_s=block.timeout_s)
            if await self._host.holds(block.condition, context, timeout_s=block.timeout_s):
                return f"{said}: held after {number - 1} round(s)"
            if number > block.max_rounds:
                break
            await self._round(block, context, title, Round(number, None, "", {}), confirmed)
        raise StepFailed(
            f"still not {said} after {block.max_rounds} rounds",
            kind=FailureKind.NOT_AS_EXPECTED,
        )

    async def _try(
        self, block: TryStep, context: Context
    ) -> tuple[str, Literal["steps", "otherwise"]]:
        done_before = context.shared.irreversible_done
        prefix = f"{context.prefix}{block.id}/"
        try:
            await self._inside(block.steps, context.inside(prefix, branch="steps"), context)
        except StepFailed as exc:
            if context.shared.irreversible_done > done_before:
                raise StepFailed(
                    f"{exc}; not falling back to 'otherwise': an irreversible step was done",
                    kind=exc.kind,
                ) from None
            inner = context.inside(prefix, branch="otherwise")
            await self._inside(block.otherwise, inner, context)
            return f"failed ({exc}); did 'otherwise' instead", "otherwise"
        return f"did its {len(block.steps)} step(s)", "steps"

    # ── rounds ────────────────────────────────────────────────────────────────────────────

    async def _round(
        self,
        block: ForEachStep | RepeatUntilStep,
        context: Context,
        title: str,
        one: Round,
        confirmed: set[str] | None,
    ) -> None:
        host = self._host
        await asyncio.sleep(0)  # Stop between rounds, however quick they are
        of = f" of {one.count}" if one.count is not None else ""
        shown = mask_secrets(f": {one.label}", host.secrets) if one.label else ""
        noun = "Item" if isinstance(block, ForEachStep) else "Round"
        marker = f"{noun} {one.number}{of}{shown}"
        index = host.next_index()
        host.emit(ReplayEvent(index=index, title=marker, depth=context.level + 1))
        record = host.record(
            RunStep(
                index=index,
                step_id=f"{context.prefix}{block.id}#{one.number}",
                title=marker,
                status=StepStatus.SUCCEEDED,
                resolution=Resolution.NOT_NEEDED,
                started_at=utcnow(),
                duration_ms=0,
                depth=context.level + 1,
                iteration=one.number,
                branch=context.branch,
            )
        )
        host.emit(ReplayEvent(index=record.index, title=marker, step=record))
        params = context.params
        for name, value in one.values.items():
            params = params.with_variable(name, value)
        inner = context.inside(
            f"{context.prefix}{block.id}#{one.number}/",
            params=params,
            level=context.level + 2,
            iteration=one.number,
            branch=None,
            loop_values=context.loop_values | frozenset(one.values),
            confirmed=confirmed,
        )
        try:
            await self._inside(block.steps, inner, context)
        except StepFailed as exc:
            where = f"{one.number}{of}" + (f" ({one.label})" if one.label else "")
            noun = "item" if isinstance(block, ForEachStep) else "round"
            raise StepFailed(
                mask_secrets(f"{noun} {where}: {exc}", host.secrets), kind=exc.kind
            ) from None

    async def _inside(self, steps: tuple[Step, ...], inner: Context, outer: Context) -> None:
        """Run *steps* in *inner*; what they extract is known after the block."""
        try:
            await self._host.run_steps(steps, inner)
        finally:
            outer.params = inner.params.without(inner.loop_values - outer.loop_values)

    async def _rounds(self, block: ForEachStep, context: Context) -> list[Round]:
        """The loop's items, read once."""
        try:
            source = render_source(block.over, context.params.values)
        except KeyError as exc:
            raise StepFailed(f"{{{exc.args[0]}}} has no value here") from None
        match source:
            case ListItems(value=value):
                items = [line.strip() for line in value.splitlines() if line.strip()]
                return [
                    Round(n, len(items), item, {block.item: item})
                    for n, item in enumerate(items, 1)
                ]
            case CsvRows():
                rows = await asyncio.to_thread(_read_csv, source)
                return [
                    Round(n, len(rows), row[source.column], _named(block.item, source, row))
                    for n, row in enumerate(rows, 1)
                ]
            case PageItems():
                return await self._page_rounds(block, source)

    async def _page_rounds(self, block: ForEachStep, source: PageItems) -> list[Round]:
        host = self._host
        await host.ready(timeout_s=block.timeout_s)
        deadline = time.monotonic() + block.timeout_s
        try:
            found = await host.browser.items(
                source.css, contains=source.contains, key=source.key, fields=dict(source.fields)
            )
            # None yet on a page still drawing its list (rendered after load): a person waits
            # for it to come to rest before deciding there is nothing to do.
            while not found and time.monotonic() < deadline and not await host.browser.settled():
                await asyncio.sleep(0.1)
                found = await host.browser.items(
                    source.css, contains=source.contains, key=source.key, fields=dict(source.fields)
                )
        except ActionFailed as exc:
            raise StepFailed(str(exc)) from None
        noun = item_noun(source.css)
        seen: dict[str, int] = {}
        for n, item in enumerate(found, 1):
            if not item.key:
                raise StepFailed(
                    f"{noun} {n} shows nothing to find it again by; none was done",
                    kind=FailureKind.AMBIGUOUS,
                )
            if item.key in seen:
                raise StepFailed(
                    f'{noun}s {seen[item.key]} and {n} both show "{item.key}": the loop could '
                    "not tell them apart; none was done",
                    kind=FailureKind.AMBIGUOUS,
                )
            seen[item.key] = n
        return [
            Round(n, len(found), item.key, {block.item: item.key, **item.fields})
            for n, item in enumerate(found, 1)
        ]

    # ── the block's own record ────────────────────────────────────────────────────────────

    def _record(
        self,
        block: Block,
        context: Context,
        title: str,
        started: datetime,
        clock: float,
        *,
        detail: str = "",
        error: str | None = None,
        kind: FailureKind | None = None,
        branch: Literal["steps", "otherwise"] | None = None,
    ) -> None:
        host = self._host
        record = host.record(
            RunStep(
                index=host.next_index(),
                step_id=context.prefix + block.id,
                title=title,
                status=StepStatus.FAILED if error is not None else StepStatus.SUCCEEDED,
                resolution=Resolution.NOT_NEEDED,
                started_at=started,
                duration_ms=(time.monotonic() - clock) * 1000,
                error=error,
                failure=kind,
                detail=mask_secrets(detail, host.secrets) or None,
                depth=context.level,
                iteration=context.iteration,
                branch=branch or context.branch,
            )
        )
        host.emit(ReplayEvent(index=record.index, title=title, step=record))


def _named(item: str, source: CsvRows, row: Mapping[str, str]) -> dict[str, str]:
    values = {item: row[source.column]}
    values.update({name: row[header] for name, header in source.fields.items()})
    return values


def _read_csv(source: CsvRows) -> list[dict[str, str]]:
    """The rows of the loop's CSV file, checked: every column the loop names is there.

    Raises:
        StepFailed: the file cannot be read, is too large, or lacks a column.
    """
    path = Path(source.path).expanduser()
    try:
        if path.stat().st_size > MAX_CSV_BYTES:
            raise StepFailed(f"{path} is larger than the {MAX_CSV_BYTES // 2**20} MB a loop reads")
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            columns = reader.fieldnames or []
            wanted = [source.column, *source.fields.values()]
            missing = [c for c in wanted if c not in columns]
            if missing:
                raise StepFailed(
                    f"{path} has no column {missing[0]!r}; its columns: {', '.join(columns)}"
                )
            return [{k: (v or "").strip() for k, v in row.items() if k} for row in reader]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise StepFailed(f"cannot read {path}: {exc}") from None
