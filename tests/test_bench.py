"""The benchmarks run end to end (tiny sizes): ``make bench`` works on a fresh machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

pytestmark = pytest.mark.slow

sys.path.insert(0, str(REPO / "bench"))
from run_all import BENCHMARKS  # noqa: E402


@pytest.mark.timeout(600)
def test_every_benchmark_runs_and_reports_its_figures_against_its_goals(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    # The real apps' smoke is tests/test_realapps.py (it asserts the verdicts, not only that
    # figures come out); here every other benchmark.
    others = [name for name in BENCHMARKS if name != "real_apps"]
    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "run_all.py"),
            "--smoke",
            "--only",
            ",".join(others),
            "--out",
            str(out),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=540,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["smoke"] is True and report["machine"]["cpus"]
    sections = {s["key"]: s for s in report["sections"]}
    assert list(sections) == others
    for key, section in sections.items():
        measured = [m for m in section["metrics"] if m["value"] is not None]
        assert measured, key  # a figure that could not be measured says why in its note
        assert all(m["note"] for m in section["metrics"] if m["value"] is None), key
        for metric in section["metrics"]:
            if metric["goal"]:
                assert metric["met"] in (True, False), (key, metric)
        assert f"## {section['title']}" in result.stdout  # the table was printed
    assert "goals met in" in result.stdout


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
