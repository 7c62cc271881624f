"""Schema migrations keep a user's data, and the tables match the migrations exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from conftest import EXAMPLES
from sqlalchemy import text

from desktop_app.adapters.sql.database import (
    HEAD_REVISION,
    current_revision,
    head_revision,
    migrate,
    open_database,
)
from desktop_app.adapters.sql.tables import is_text_index_table, metadata
from desktop_app.adapters.sql.workflow_store import SqlWorkflowStore, content_hash
from desktop_app.core.documents import load_workflow
from desktop_app.core.errors import StoreError
from desktop_app.core.models.workflow import Workflow


def test_a_database_made_by_the_first_schema_migrates_with_its_data(tmp_path: Path) -> None:
    engine = open_database(tmp_path / "procedura.db")
    migrate(engine, "0001")
    assert current_revision(engine) == "0001"
    wf = load_workflow((EXAMPLES / "create-contact.workflow.json").read_bytes())
    # Rows exactly as the first release wrote them (no 'pinned' column existed).
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO workflows (id, name, description, domains, parameters, status, "
                "latest_version, latest_status, approved_version, created_at, updated_at) VALUES "
                "(:id, :name, :d, :domains, :params, 'approved', 1, 'approved', 1, "
                "'2026-11-01 10:00:00.000000', '2026-11-01 10:05:00.000000')"
            ),
            {
                "id": wf.id,
                "name": wf.name,
                "d": wf.description,
                "domains": json.dumps(list(wf.domains)),
                "params": json.dumps([p.name for p in wf.parameters]),
            },
        )
        conn.execute(
            text(
                "INSERT INTO workflow_versions (workflow_id, version, status, created_at, "
                "created_by, parent_version, change_note, content_hash, document) VALUES "
                "(:id, 1, 'approved', '2026-11-01 10:00:00.000000', 'ann', NULL, '', :h, :doc)"
            ),
            {"id": wf.id, "h": "as-the-first-release-hashed-it", "doc": _as_version_1(wf)},
        )

    migrate(engine)

    assert current_revision(engine) == head_revision()
    store = SqlWorkflowStore(engine)
    summary = store.summary(wf.id)
    assert summary.approved_version == 1
    assert summary.pinned is False
    assert store.get_version(wf.id).workflow == wf
    with engine.connect() as conn:
        stored, digest = conn.execute(
            text("SELECT document, content_hash FROM workflow_versions")
        ).one()
    assert json.loads(stored)["schema_version"] == 2, "the stored document is version 2 now"
    assert digest == content_hash(wf)
    store.set_pinned(wf.id, True)
    assert store.summary(wf.id).pinned


def _as_version_1(wf: Workflow) -> str:
    """*wf* as a release before blocks wrote it."""
    return json.dumps({**wf.model_dump(mode="json"), "schema_version": 1})


def test_migrations_match_the_tables(tmp_path: Path) -> None:
    engine = open_database(tmp_path / "procedura.db")
    migrate(engine)
    with engine.connect() as conn:
        context = MigrationContext.configure(
            conn,
            opts={
                "compare_type": True,
                "compare_server_default": True,
                # FTS5 virtual tables are beyond SQLAlchemy's metadata; the word index's own
                # tests cover them.
                "include_name": lambda name, kind, _parent: (
                    kind != "table" or not is_text_index_table(name)
                ),
            },
        )
        assert compare_metadata(context, metadata) == []


def test_the_known_head_is_the_migrations_head() -> None:
    assert head_revision() == HEAD_REVISION, "update HEAD_REVISION with the new migration"


def test_migrating_twice_is_a_no_op(tmp_path: Path) -> None:
    engine = open_database(tmp_path / "procedura.db")
    migrate(engine)
    migrate(engine)
    assert current_revision(engine) == head_revision()


def test_a_database_from_a_newer_release_is_refused(tmp_path: Path) -> None:
    engine = open_database(tmp_path / "procedura.db")
    migrate(engine)
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    with pytest.raises(StoreError, match="written by a newer Procedura"):
        migrate(engine)


def test_remembered_repairs_get_their_site_when_migrated(tmp_path: Path) -> None:
    engine = open_database(tmp_path / "procedura.db")
    migrate(engine, "0004")
    wf = load_workflow((EXAMPLES / "create-contact.workflow.json").read_bytes())
    # Rows as release 0004 wrote them (no 'site' column).
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO workflows (id, name, description, domains, parameters, status, "
                "latest_version, latest_status, approved_version, created_at, updated_at, "
                "pinned) VALUES (:id, 'W', '', '[]', '[]', 'draft', 1, 'draft', NULL, "
                "'2026-11-01 10:00:00.000000', '2026-11-01 10:05:00.000000', 0)"
            ),
            {"id": wf.id},
        )
        for n, url in enumerate(("https://CRM.example.test/contacts/4", None)):
            document = json.dumps({"page_url": url, "id": f"e{n}"})
            conn.execute(
                text(
                    "INSERT INTO experiences (id, workflow_id, step_id, created_at, uses, "
                    "document) VALUES (:id, :w, 's', '2026-11-01 10:00:00.000000', 0, :doc)"
                ),
                {"id": f"e{n}", "w": wf.id, "doc": document},
            )
    migrate(engine)
    with engine.connect() as conn:
        sites = dict(conn.execute(text("SELECT id, site FROM experiences")).all())
    assert sites == {"e0": "crm.example.test", "e1": ""}
