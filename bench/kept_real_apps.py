"""Rows on apps nobody here wrote, one after another on one kept page (as a fleet worker and a
headless batch run them), each judged by the app's own data.

Each task is recorded at machine speed and at a person's pace (``bench/real_apps.py``'s
recorder), then replayed with each of its values on a fresh instance of the app; every replay
borrows the same :class:`~desktop_app.adapters.browser.kept.KeptBrowser`, so each row runs on
the page the last one left, wiped. A row's sign-in, cookies and storage from the row before
would show here as a wrong verdict or a failed run.

    .venv/bin/python bench/kept_real_apps.py
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests"), str(ROOT)]

#: (app, variant index, tasks): a server-rendered app with a sign-in, a client-side app whose
#: state is the page's localStorage, and another server-rendered app.
CASES = (
    ("django-admin", -1, ("bulk-delete", "sign-in-as")),
    ("todomvc", 1, ("bulk-delete", "complete-all")),
    ("flask-admin", 0, ("create", "search-edit")),
)


def main() -> int:
    os.environ["PROCEDURA_HOME"] = tempfile.mkdtemp(prefix="bench-kept-")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    import real_apps
    from browser_support import CHROMIUM
    from realapps.corpus import APPS

    from desktop_app.adapters.browser.kept import KeptBrowser, KeptPage
    from desktop_app.app import replay
    from desktop_app.core.replay.parameters import bind_parameters

    assert CHROMIUM, "Chromium is not installed"
    runner = asyncio.Runner()
    kept = KeptBrowser(configured=Path(CHROMIUM), withheld=())
    pages: list[Any] = []

    def replay_once(services: Any, version: Any, task: Any, instance: Any, values: Any) -> Any:
        given, secrets = real_apps.bound_values(version.workflow, task, values)
        params = bind_parameters(version.workflow, given, secrets=secrets)

        async def lend() -> KeptPage:
            lent = await kept.run_context()
            pages.append(lent.page)
            return lent

        async def go() -> Any:
            return await replay(
                services,
                version,
                params,
                options=real_apps.OPTIONS,
                base_url=instance.url,
                headless=True,
                browser_factory=lend,
            )

        return runner.run(go()).run

    real_apps.replay_once = replay_once  # every replay on the one kept page
    report = real_apps.Report()
    try:
        for name, variant_index, tasks in CASES:
            app = next(a for a in APPS if a.name == name)
            variant = app.variants[variant_index]
            for task in (t for t in app.tasks if t.name in tasks):
                for pace in (real_apps.MACHINE, real_apps.PERSON):
                    real_apps.run_task(
                        app, variant, task, pace, replays=task.replays, other_variants=(),
                        report=report,
                    )  # fmt: skip
    finally:
        runner.run(kept.close())
        runner.close()
    right = sum(r.verdict == "right" for r in report.replays)
    for r in report.replays:
        said = f"{r.status.value} {r.error or ''}"
        print(f"{r.variant:30} {r.task:14} {r.pace:8} {r.verdict:6} {said}")
    print(f"failures: {report.failures or 'none'}")
    print(
        f"{right} of {len(report.replays)} rows right; pages lent {len(pages)}, "
        f"distinct pages {len({id(p) for p in pages})}"
    )
    return 0 if right == len(report.replays) and not report.failures else 1


if __name__ == "__main__":
    sys.exit(main())
