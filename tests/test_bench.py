"""The benchmarks run end to end (tiny sizes): ``make bench`` works on a fresh machine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_support import FIRST_HALF, run_smoke

pytestmark = pytest.mark.slow


@pytest.mark.timeout(600)
def test_the_first_half_of_the_benchmarks_runs_and_reports_against_its_goals(
    tmp_path: Path,
) -> None:
    run_smoke(FIRST_HALF, tmp_path)


def test_the_mutation_suite_counts_only_the_actions_of_its_own_pages() -> None:
    """A page of the case before reports a field it left mid-edit as it closes; its record
    arriving after the next case began is not that case's (it read as a wrong action)."""
    import asyncio
    import time
    import urllib.request

    import healing

    from desktop_app.demo_site import DemoSite

    def post(url: str, page: float) -> None:
        record = {
            "kind": "change",
            "element": "name:description[1]",
            "decoy": False,
            "path": "/expenses/new/items",
            "value": "Hotel",
            "seq": 1,
            "page": page,
            "t": page + 5,
        }
        request = urllib.request.Request(
            f"{url}/__actions", data=json.dumps(record).encode(), method="POST"
        )
        with urllib.request.urlopen(request, timeout=10):
            pass

    with DemoSite() as site:
        began = time.time() * 1000
        post(site.url, began - 4000)  # the last case's page, closing late
        post(site.url, began + 10)
        log = asyncio.run(healing._settled_log(site, 1, began))
    assert [r["page"] for r in log] == [began + 10]
