"""The other half of the benchmarks runs end to end at smoke size (see tests/bench_support.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench_support import SECOND_HALF, run_smoke

pytestmark = pytest.mark.slow


@pytest.mark.timeout(600)
def test_the_second_half_of_the_benchmarks_runs_and_reports_against_its_goals(
    tmp_path: Path,
) -> None:
    run_smoke(SECOND_HALF, tmp_path)
