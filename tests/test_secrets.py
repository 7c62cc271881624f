"""A secret entered by the user never reaches the data directory or an export."""

from __future__ import annotations

from pathlib import Path

from conftest import Cli
from factories import full_trajectory, full_workflow

from desktop_app.app import open_services
from desktop_app.core.models import Run, mask_parameters
from desktop_app.settings import load_settings

SECRET = "hunter2-Sup3r-S3cret"


def _grep(root: Path, needle: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def test_secrets_stay_out_of_the_stores_and_exports(
    home: Path, procedura: Cli, tmp_path: Path
) -> None:
    wf = full_workflow()
    with open_services(load_settings(), write=True) as services:
        saved = services.workflows.save(wf, actor="ann").version.workflow
        services.trajectories.import_json(full_trajectory().model_dump_json())
        values = {"user": "ann@example.test", "password": SECRET, "plan": "pro"}
        services.runs.save_run(
            Run(
                workflow_id=saved.id,
                workflow_version=saved.version,
                parameters=mask_parameters(saved, values),
                secret_parameters=("password",),
            )
        )
    out = tmp_path / "exports"
    procedura("workflows", "export", saved.id, "-o", str(out / "wf.json"))
    procedura("trajectories", "export", full_trajectory().id, "-o", str(out / "t.json"))
    assert _grep(home, "ann@example.test")  # the search really looks inside the files
    assert _grep(home, SECRET) == []
    assert _grep(out, SECRET) == []
