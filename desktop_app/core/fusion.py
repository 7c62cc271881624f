"""Reciprocal rank fusion: one ranking from several, each item scored by its ranks alone.

Cormack, Clarke and Büttcher, "Reciprocal rank fusion outperforms Condorcet and individual rank
learning methods" (SIGIR 2009): an item's score is the sum over the rankings it appears in of
``1 / (k + rank)``, ranks counted from 1, with ``k = 60``. Only ranks count, so rankings whose
scores are on different scales (cosine similarity, BM25) fuse without calibration.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

__all__ = ["RRF_K", "reciprocal_rank_fusion"]

#: The constant of the original paper, used unchanged.
RRF_K: Final = 60


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]], *, k: int = RRF_K
) -> list[tuple[str, float]]:
    """The items of *rankings* (each best first) with their fused scores, best first.

    An item repeated within one ranking counts at its first place there. Ties keep the order in
    which the items were first met, ranking by ranking, so the result is deterministic.

    Raises:
        ValueError: *k* is negative.
    """
    if k < 0:
        raise ValueError(f"k must be 0 or more, not {k}")
    scores: dict[str, float] = {}
    for ranking in rankings:
        seen: set[str] = set()
        for rank, item in enumerate(ranking, start=1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    order = {item: n for n, item in enumerate(scores)}
    return sorted(scores.items(), key=lambda pair: (-pair[1], order[pair[0]]))
