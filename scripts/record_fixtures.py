"""Record the demo app's tasks into tests/data/*.trajectory.json (the fixtures induction and
replay tests use), and report what recording cost.

    python scripts/record_fixtures.py [--port 8765] [--out tests/data]

Each task is done by a scripted "person" (tests/demo_tasks.py) in headless Chromium while the
real recorder runs, against the demo site served on 127.0.0.1:PORT, in a temporary data
directory. Screenshot references are dropped from the fixtures (the images are not shipped).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from demo_tasks import TASKS, record_task  # noqa: E402

from desktop_app.core.documents import dump_document  # noqa: E402
from desktop_app.core.models import Observation, Trajectory  # noqa: E402
from desktop_app.demo_site.server import DemoSite  # noqa: E402


def _without_screenshots(trajectory: Trajectory) -> Trajectory:
    def strip(obs: Observation | None) -> Observation | None:
        return obs.model_copy(update={"screenshot": None}) if obs is not None else None

    events = tuple(
        e.model_copy(update={"before": strip(e.before), "after": strip(e.after)})
        for e in trajectory.events
    )
    return trajectory.model_copy(update={"events": events})


async def _record_all(port: int, out: Path) -> None:
    from desktop_app.app import open_services
    from desktop_app.settings import load_settings

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as home:
        os.environ["PROCEDURA_HOME"] = home
        for name, (intent, task) in TASKS.items():
            with (
                DemoSite(port=port) as site,
                open_services(load_settings(), write=True) as services,
            ):
                started = time.monotonic()
                trajectory = await record_task(services, site.url + "/login", task, intent=intent)
                seconds = time.monotonic() - started
                media = {
                    ref
                    for e in services.trajectories.raw_events(trajectory.id)
                    for ref in ((e.before.screenshot if e.before else None),)
                    if ref
                }
                size = sum(services.media.path(r).stat().st_size for r in media)
                path = out / f"{name}.trajectory.json"
                path.write_text(dump_document(_without_screenshots(trajectory)), encoding="utf-8")
                print(
                    json.dumps(
                        {
                            "task": name,
                            "events": len(trajectory.events),
                            "raw_events": len(services.trajectories.raw_events(trajectory.id)),
                            "seconds": round(seconds, 1),
                            "screenshots": len(media),
                            "media_bytes": size,
                            "mb_per_minute": round(size / 1e6 / (seconds / 60), 2),
                            "file": str(path),
                        }
                    )
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data")
    args = parser.parse_args()
    asyncio.run(_record_all(args.port, args.out))


if __name__ == "__main__":
    main()
