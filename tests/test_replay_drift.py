"""Replay on the demo app's drift variants without an LLM: heal, and never touch a wrong element.

The demo app reports which element received each click, change and submit (keys that do not
change across variants); a replay on a variant must give the same sequence as on the original,
apart from clearing overlays, and never touch a look-alike decoy.
"""

from __future__ import annotations

from typing import Any

import pytest
from replay_support import approved, run, services

from desktop_app.core.models.run import RunStatus
from desktop_app.demo_site import DemoSite

pytestmark = pytest.mark.slow

_OVERLAY_KEYS = ("consent", "announcement")

# Each variant alone where no combination below has it; bench/healing.py mutates every target
# element of every task, one way at a time, outside the test suite.
CASES = [
    ("create-contact", ("renamed-ids",)),
    ("create-contact", ("slow",)),
    ("create-contact", ("hostile",)),
    ("create-contact", ("relabeled", "renamed-ids")),
    ("create-contact", ("similar-sibling", "relabeled", "reordered")),
    ("expense-report", ("relabeled",)),
    ("expense-report", ("renamed-ids", "consent-banner", "announcement")),
    ("filter-orders", ("similar-sibling", "relabeled")),
    ("open-contact", ("list-layout", "relabeled", "consent-banner")),
]

_REFERENCE: dict[str, list[tuple[str, str]]] = {}


def _actions(site: DemoSite) -> list[dict[str, Any]]:
    return [a for a in site.actions() if not any(k in a["element"] for k in _OVERLAY_KEYS)]


def _keys(actions: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(a["kind"], a["element"]) for a in actions]


def _reference(task: str) -> list[tuple[str, str]]:
    """What the app reports when the task replays on the original site."""
    if task not in _REFERENCE:
        with DemoSite() as site, services() as sv:
            result = run(sv, approved(sv, task), site.url, assume_yes=True)
            assert result.run.status is RunStatus.SUCCEEDED, result.run.error
            _REFERENCE[task] = _keys(_actions(site))
    return _REFERENCE[task]


def wrong_actions(expected: list[tuple[str, str]], got: list[tuple[str, str]]) -> int:
    """Actions that reached another element than on the original (missing or extra ones too)."""
    return sum(1 for a, b in zip(expected, got, strict=False) if a != b) + abs(
        len(expected) - len(got)
    )


@pytest.mark.parametrize(
    ("task", "variants"), CASES, ids=lambda c: c if isinstance(c, str) else "+".join(c)
)
def test_drift_heals_without_an_llm_and_touches_no_wrong_element(
    task: str, variants: tuple[str, ...]
) -> None:
    expected = _reference(task)
    with DemoSite(variants=list(variants)) as site, services() as sv:
        version = approved(sv, task)
        result = run(sv, version, site.url, assume_yes=True)  # as bench/healing.py runs
        record = result.run
        assert record.status is RunStatus.SUCCEEDED, record.error
        assert record.llm_calls == 0
        actions = _actions(site)
        assert not [a for a in site.actions() if a["decoy"]]
        assert wrong_actions(expected, _keys(actions)) == 0, (expected, _keys(actions))
        healed = record.healed
        # Each healed step (an alternate locator's too) keeps the picture its reviewer sees.
        assert all(s.screenshot for s in healed), [(s.title, s.resolution) for s in healed]
        if healed:
            assert result.learned.proposed is not None, [
                (s.title, s.resolution, s.locator, s.error) for s in healed
            ]
            assert result.learned.proposed.status.value == "in_review"
