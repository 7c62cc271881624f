"""How a batch went: every row's result and the counts, in one line for the report."""

from __future__ import annotations

from dataclasses import dataclass, field

from desktop_app.core.batch.results import RowResult, RowStatus

__all__ = ["BatchSummary"]


@dataclass(frozen=True, slots=True)
class BatchSummary:
    """How a batch went: every row's result, in file order, and the counts."""

    results: tuple[RowResult, ...]
    skipped: frozenset[int] = field(default_factory=frozenset)

    def count(self, status: RowStatus) -> int:
        """How many rows ended with *status* (skipped rows count as succeeded)."""
        return sum(1 for r in self.results if r.status is status)

    @property
    def all_succeeded(self) -> bool:
        """Whether every row has succeeded (now or before)."""
        return all(r.status is RowStatus.SUCCEEDED for r in self.results)

    @property
    def not_done(self) -> int:
        """How many rows failed, were aborted or interrupted, or have not run (the rows done,
        unverified are not among them)."""
        return sum(
            self.count(s)
            for s in (RowStatus.FAILED, RowStatus.ABORTED, RowStatus.INTERRUPTED, RowStatus.PENDING)
        )

    @property
    def ran(self) -> int:
        """How many rows ran this time."""
        return sum(
            1
            for r in self.results
            if r.line not in self.skipped and r.status is not RowStatus.PENDING
        )

    def line(self) -> str:
        """``5 rows: 3 succeeded (1 in an earlier run), 1 done unverified, 1 failed``."""
        total = len(self.results)
        parts = [f"{self.count(RowStatus.SUCCEEDED)} succeeded"]
        if self.skipped:
            parts[0] += f" ({len(self.skipped)} in an earlier run)"
        if self.count(RowStatus.UNVERIFIED):
            parts.append(f"{self.count(RowStatus.UNVERIFIED)} done unverified")
        for status in (RowStatus.FAILED, RowStatus.ABORTED, RowStatus.INTERRUPTED):
            if self.count(status):
                parts.append(f"{self.count(status)} {status.value}")
        if self.count(RowStatus.PENDING):
            parts.append(f"{self.count(RowStatus.PENDING)} not run")
        return f"{total} row{'s' if total != 1 else ''}: " + ", ".join(parts)
