"""Bundles: export a workflow with what it calls and its screenshots; import it safely elsewhere."""

from __future__ import annotations

import hashlib
import io
import json
import re
import stat
import struct
import warnings
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES, Cli
from factories import button, target
from replay_support import services

from desktop_app.app import Services
from desktop_app.core.errors import DocumentError, StoreError
from desktop_app.core.exports.bundle import (
    MAX_MEMBER_BYTES,
    BundleConflictError,
    BundleError,
    BundleWriteError,
    build_bundle,
    import_bundle,
    media_refs,
    plan_import,
    read_bundle,
)
from desktop_app.core.models import Parameter, ParameterType, WorkflowStatus
from desktop_app.core.models.workflow import (
    CallStep,
    ClickStep,
    FillStep,
    ForEachStep,
    GotoStep,
    IfStep,
    ImageVisible,
    ListItems,
    TryStep,
    Workflow,
    WorkflowVersion,
    walk,
)


def _png(tag: str) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + tag.encode() * 40


def _webp(tag: str) -> bytes:
    body = b"WEBPVP8 " + tag.encode() * 40
    return b"RIFF" + len(body).to_bytes(4, "little") + body


@dataclass
class Library:
    """Three workflows: "Create a contact" calls "Sign in" (pinned v2), which calls "Open"."""

    main: WorkflowVersion
    sign_in: WorkflowVersion
    open: WorkflowVersion
    media: dict[str, bytes]


def _library(s: Services) -> Library:
    lib = s.workflows
    blobs = {
        "open": _png("open"),
        "sign": _webp("sign-in"),
        "anchor": _png("anchor"),
        "main": _png("main"),
    }
    refs = {
        key: s.media.put(data, "webp" if key == "sign" else "png") for key, data in blobs.items()
    }
    opener = Workflow(
        name="Open the CRM",
        domains=("crm.example.test",),
        steps=(GotoStep(title="Open", url="https://crm.example.test/", screenshot=refs["open"]),),
    )
    lib.save(opener, actor="ann")
    opened = lib.approve(opener.id, actor="bob")
    sign_in = Workflow(
        name="Sign in",
        parameters=(
            Parameter(name="user", type=ParameterType.EMAIL),
            Parameter(name="password", type=ParameterType.SECRET),
        ),
        steps=(
            CallStep(title="Open the CRM", workflow_id=opener.id),
            FillStep(
                title="Fill 'Email'",
                target=target("Email"),
                value="{user}",
                screenshot=refs["sign"],
            ),
            FillStep(
                title="Fill 'Password'",
                target=target("Password", password=True),
                value="{password}",
            ),
        ),
    )
    lib.save(sign_in, actor="ann")
    lib.approve(sign_in.id, actor="bob")
    lib.save(sign_in.model_copy(update={"description": "Signs in."}), actor="ann")
    signed = lib.approve(sign_in.id, actor="bob", version=2, comment="looks right")
    main = Workflow(
        name="Create a contact",
        parameters=(
            Parameter(name="user", type=ParameterType.EMAIL),
            Parameter(name="password", type=ParameterType.SECRET),
            Parameter(name="full_name"),
        ),
        steps=(
            CallStep(
                title="Sign in",
                workflow_id=sign_in.id,
                version=2,
                arguments={"user": "{user}", "password": "{password}"},
            ),
            FillStep(
                title="Fill 'Full name'",
                target=target("Full name"),
                value="{full_name}",
                screenshot=refs["main"],
            ),
            ClickStep(
                title="Click 'Save'",
                target=button("Save"),
                irreversible=True,
                expectations=(ImageVisible(anchor=refs["anchor"]),),
            ),
        ),
    )
    lib.save(main, actor="ann")
    approved = lib.approve(main.id, actor="bob")
    return Library(approved, signed, opened, {refs[k]: blobs[k] for k in blobs})


def _export(home: Path) -> tuple[Library, bytes]:
    with services(home=home) as s:
        made = _library(s)
        return made, build_bundle(s.workflows, s.media, made.main)


@pytest.fixture
def exported(tmp_path: Path) -> tuple[Library, bytes]:
    """A library in another data directory, and its bundle of "Create a contact"."""
    return _export(tmp_path / "source")


def _counts(s: Services) -> tuple[tuple[int, int], tuple[int, int]]:
    return s.workflows.count(), s.media.count()


# ── round trip ──────────────────────────────────────────────────────────────────────────────


def test_a_bundle_carries_the_workflow_its_calls_history_and_media(
    exported: tuple[Library, bytes],
) -> None:
    made, data = exported
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = archive.namelist()
        manifest = json.loads(archive.read("manifest.json"))
    main, sign, opener = made.main.workflow_id, made.sign_in.workflow_id, made.open.workflow_id
    assert names[0] == "manifest.json"
    assert sorted(names[1:]) == sorted(
        [
            f"workflows/{main}/v1.json",
            f"workflows/{main}/versions.json",
            f"workflows/{sign}/v2.json",
            f"workflows/{sign}/versions.json",
            f"workflows/{opener}/v1.json",
            f"workflows/{opener}/versions.json",
            *(f"media/{ref}" for ref in made.media),
        ]
    )
    assert set(manifest) == {
        "schema_version",
        "document",
        "created_at",
        "generator",
        "workflow_id",
        "workflow_version",
        "members",
        "missing_media",
    }
    assert manifest["document"] == "procedura-bundle"
    assert (manifest["workflow_id"], manifest["workflow_version"]) == (main, 1)
    assert manifest["missing_media"] == []
    bundle = read_bundle(data, source="contact.procedura")
    history = bundle.histories[sign]
    assert [(v.version, v.status) for v in history.versions] == [
        (1, WorkflowStatus.APPROVED),
        (2, WorkflowStatus.APPROVED),
    ]
    assert history.versions[1].transitions[-1].comment == "looks right"
    assert bundle.main.name == "Create a contact"


def test_round_trip_into_a_fresh_data_dir_arrives_as_drafts(
    exported: tuple[Library, bytes],
) -> None:
    made, data = exported
    bundle = read_bundle(data, source="contact.procedura")
    with services() as s:
        report = import_bundle(s.workflows, s.media, bundle, on_conflict="ask", actor="carol")
        assert [(o.name, o.action, o.local_version) for o in report.workflows] == [
            ("Open the CRM", "imported", 1),
            ("Sign in", "imported", 1),
            ("Create a contact", "imported", 1),
        ]
        assert report.main.local_id == made.main.workflow_id
        assert sorted(report.media_stored) == sorted(made.media)
        for ref, blob in made.media.items():
            assert s.media.get(ref) == blob
        assert s.workflows.count() == (3, 3)
        for original in (made.main, made.sign_in, made.open):
            (arrived,) = s.workflows.versions_by_id(original.workflow_id)
            assert arrived.status is WorkflowStatus.DRAFT
            assert arrived.created_by == "carol"
            assert "contact.procedura" in arrived.transitions[-1].comment
            assert arrived.workflow.name == original.workflow.name
        main = s.workflows.get(made.main.workflow_id).workflow
        call = main.steps[0]
        assert isinstance(call, CallStep)
        # Version 2 of "Sign in" there is version 1 here: the pin follows it.
        assert (call.workflow_id, call.version) == (made.sign_in.workflow_id, 1)
        password = main.parameter("password")
        assert password is not None and password.default is None
        with pytest.raises(Exception, match="no approved version"):
            s.workflows.runnable(made.main.workflow_id)

        # The same bundle again: everything is already here, nothing is written.
        before = _counts(s)
        again = import_bundle(s.workflows, s.media, bundle, on_conflict="ask", actor="carol")
        assert {o.action for o in again.workflows} == {"unchanged"}
        assert again.media_stored == ()
        assert _counts(s) == before


def test_reimport_into_the_library_it_came_from_writes_nothing(
    exported: tuple[Library, bytes], tmp_path: Path
) -> None:
    _, data = exported
    with services(home=tmp_path / "source") as s:
        before = _counts(s)
        report = import_bundle(
            s.workflows, s.media, read_bundle(data), on_conflict="ask", actor="ann"
        )
        assert {o.action for o in report.workflows} == {"unchanged"}
        sign = next(o for o in report.workflows if o.name == "Sign in")
        assert sign.local_version == 2
        assert _counts(s) == before


# ── conflicts ───────────────────────────────────────────────────────────────────────────────


def _import_then_change_main(data: bytes) -> tuple[Any, WorkflowVersion]:
    bundle = read_bundle(data, source="contact.procedura")
    with services() as s:
        import_bundle(s.workflows, s.media, bundle, on_conflict="ask", actor="carol")
        local = s.workflows.get(bundle.manifest.workflow_id).workflow
        changed = s.workflows.save(
            local.model_copy(update={"description": "Changed here."}), actor="carol"
        ).version
    return bundle, changed


def test_a_conflict_without_a_choice_is_refused_and_nothing_is_written(
    exported: tuple[Library, bytes],
) -> None:
    _, data = exported
    bundle, changed = _import_then_change_main(data)
    assert changed.version == 2
    with services() as s:
        before = _counts(s)
        plan = plan_import(s.workflows, bundle)
        assert [c.name for c in plan.unresolved] == ["Create a contact"]
        assert plan.unresolved[0].local_is_newer
        with pytest.raises(BundleConflictError, match="newer than the bundle's version 1") as err:
            import_bundle(s.workflows, s.media, bundle, on_conflict="ask", actor="carol")
        assert "--on-conflict" in str(err.value)
        assert isinstance(err.value, DocumentError)  # the command line exits 2
        assert _counts(s) == before


def test_skip_leaves_the_local_workflow(exported: tuple[Library, bytes]) -> None:
    _, data = exported
    bundle, _ = _import_then_change_main(data)
    with services() as s:
        before = _counts(s)
        report = import_bundle(s.workflows, s.media, bundle, on_conflict="skip", actor="carol")
        assert report.main.action == "skipped"
        assert "newer" in report.main.reason
        assert _counts(s) == before


def test_replace_adds_the_bundle_content_as_the_latest_draft(
    exported: tuple[Library, bytes],
) -> None:
    made, data = exported
    bundle, changed = _import_then_change_main(data)
    with services() as s:
        report = import_bundle(s.workflows, s.media, bundle, on_conflict="replace", actor="carol")
        assert (report.main.action, report.main.local_version) == ("new version", 3)
        versions = s.workflows.versions_by_id(made.main.workflow_id)
        assert [v.version for v in versions] == [1, 2, 3]
        assert versions[1].workflow == changed.workflow  # never overwritten
        assert versions[2].status is WorkflowStatus.DRAFT
        assert versions[2].workflow.description == made.main.workflow.description
        assert "contact.procedura" in versions[2].change_note


def test_keep_both_imports_a_copy_under_a_new_id(exported: tuple[Library, bytes]) -> None:
    made, data = exported
    bundle, changed = _import_then_change_main(data)
    with services() as s:
        report = import_bundle(s.workflows, s.media, bundle, on_conflict="keep-both", actor="carol")
        copy = report.main
        assert copy.action == "copied"
        assert copy.local_id != made.main.workflow_id
        assert copy.local_version == 1
        assert s.workflows.versions_by_id(made.main.workflow_id)[-1] == changed
        arrived = s.workflows.get(copy.local_id)
        assert arrived.status is WorkflowStatus.DRAFT
        assert arrived.workflow.name == "Create a contact"
        call = arrived.workflow.steps[0]
        assert isinstance(call, CallStep)
        assert (call.workflow_id, call.version) == (made.sign_in.workflow_id, 1)


def test_keep_both_for_a_callee_moves_its_callers_too(exported: tuple[Library, bytes]) -> None:
    made, data = exported
    bundle = read_bundle(data, source="contact.procedura")
    with services() as s:
        import_bundle(s.workflows, s.media, bundle, on_conflict="ask", actor="carol")
        # "Sign in" here becomes another workflow with the same id.
        sign = s.workflows.get(made.sign_in.workflow_id).workflow
        s.workflows.delete(sign.id, confirmed=True)
        s.workflows.save(sign.model_copy(update={"description": "Mine."}), actor="carol")

        plan = plan_import(s.workflows, bundle, choices={sign.id: "keep-both"})
        # Once "Sign in" is a copy, the bundle's "Create a contact" calls the copy: a new conflict.
        assert [c.name for c in plan.unresolved] == ["Create a contact"]
        assert not plan.unresolved[0].local_is_newer
        assert "differs" in plan.unresolved[0].describe()

        report = import_bundle(s.workflows, s.media, bundle, on_conflict="keep-both", actor="carol")
        by_name = {o.name: o for o in report.workflows}
        assert by_name["Open the CRM"].action == "unchanged"
        sign_copy, main_copy = by_name["Sign in"], by_name["Create a contact"]
        assert sign_copy.action == main_copy.action == "copied"
        call = s.workflows.get(main_copy.local_id).workflow.steps[0]
        assert isinstance(call, CallStep)
        assert (call.workflow_id, call.version) == (sign_copy.local_id, 1)
        inner = s.workflows.get(sign_copy.local_id).workflow.steps[0]
        assert isinstance(inner, CallStep)
        assert inner.workflow_id == made.open.workflow_id  # unchanged: the local one


def test_a_skipped_callee_unpins_the_call_and_says_so(exported: tuple[Library, bytes]) -> None:
    made, data = exported
    bundle = read_bundle(data, source="contact.procedura")
    sign_id = made.sign_in.workflow_id
    with services() as s:
        other = made.sign_in.workflow.model_copy(update={"description": "Local one."})
        s.workflows.save(other.model_copy(update={"steps": other.steps[1:]}), actor="dan")
        report = import_bundle(
            s.workflows,
            s.media,
            bundle,
            on_conflict="ask",
            choices={sign_id: "skip"},
            actor="dan",
        )
        by_name = {o.name: o for o in report.workflows}
        assert by_name["Sign in"].action == "skipped"
        assert by_name["Create a contact"].action == "imported"
        call = s.workflows.get(made.main.workflow_id).workflow.steps[0]
        assert isinstance(call, CallStep)
        assert (call.workflow_id, call.version) == (sign_id, None)
        assert any("was skipped" in w for w in report.warnings)


def test_a_write_failing_midway_says_exactly_what_was_written(
    exported: tuple[Library, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    made, data = exported
    bundle = read_bundle(data, source="contact.procedura")
    with services() as s:
        save = s.workflows.save
        calls: list[str] = []

        def failing_save(workflow: Workflow, **kwargs: Any) -> Any:
            calls.append(workflow.name)
            if len(calls) == 2:
                raise StoreError("disk full")
            return save(workflow, **kwargs)

        monkeypatch.setattr(s.workflows, "save", failing_save)
        with pytest.raises(BundleWriteError) as err:
            import_bundle(s.workflows, s.media, bundle, on_conflict="ask", actor="carol")
        message = str(err.value)
        assert "contact.procedura stopped midway (disk full)" in message
        assert f"'Open the CRM' as {made.open.workflow_id} version 1" in message
        assert "Sign in" not in message
        assert len(err.value.written) == 1 + len(made.media)
        assert s.workflows.count() == (1, 1)


def test_a_call_to_a_workflow_neither_bundled_nor_local_is_refused(tmp_path: Path) -> None:
    with services(home=tmp_path / "source") as s:
        callee = Workflow(name="Callee", steps=(GotoStep(title="Go", url="https://a.test/"),))
        s.workflows.save(callee, actor="ann")
        caller = Workflow(
            name="Caller", steps=(CallStep(title="Call", workflow_id=callee.id, version=1),)
        )
        s.workflows.save(caller, actor="ann")
        data = build_bundle(s.workflows, s.media, s.workflows.get(caller.id))
    members = _members(data)
    del members[f"workflows/{callee.id}/v1.json"]
    del members[f"workflows/{callee.id}/versions.json"]
    doc = json.loads(members[f"workflows/{caller.id}/v1.json"])
    doc["steps"][0]["version"] = None
    members[f"workflows/{caller.id}/v1.json"] = json.dumps(doc).encode()
    bundle = read_bundle(_zip(members))
    with services() as s:
        before = _counts(s)
        with pytest.raises(BundleError, match="neither in the bundle nor in this library"):
            import_bundle(s.workflows, s.media, bundle, on_conflict="skip", actor="ann")
        assert _counts(s) == before


def test_a_version_1_workflow_in_a_bundle_imports_as_version_2(
    exported: tuple[Library, bytes],
) -> None:
    made, data = exported
    members = _members(data)
    for name in [n for n in members if re.fullmatch(r"workflows/[^/]+/v\d+\.json", n)]:
        doc = json.loads(members[name])
        assert doc["schema_version"] == 2
        members[name] = json.dumps({**doc, "schema_version": 1}).encode()
    bundle = read_bundle(_zip(members), source="old.procedura")
    with services() as s:
        report = import_bundle(s.workflows, s.media, bundle, on_conflict="ask", actor="carol")
        assert {o.action for o in report.workflows} == {"imported"}
        arrived = s.workflows.get(made.main.workflow_id).workflow
        assert arrived.schema_version == 2
        assert arrived.steps[1:] == made.main.workflow.steps[1:]


def _blocks_library(s: Services) -> tuple[WorkflowVersion, WorkflowVersion, dict[str, bytes]]:
    """ "Sign in" (approved), and "Invite everyone", whose only call to it and screenshots are
    inside blocks: a loop holding an if, a try."""
    blobs = {"callee": _png("callee"), "fill": _png("fill"), "anchor": _png("anchor2")}
    refs = {key: s.media.put(data, "png") for key, data in blobs.items()}
    sign_in = Workflow(
        name="Sign in",
        steps=(GotoStep(title="Open", url="https://crm.example.test/", screenshot=refs["callee"]),),
    )
    s.workflows.save(sign_in, actor="ann")
    signed = s.workflows.approve(sign_in.id, actor="bob")
    loop = ForEachStep(
        title="For each name",
        over=ListItems(value="{names}"),
        item="name",
        steps=(
            IfStep(
                title="If signed out",
                condition=ImageVisible(anchor=refs["anchor"]),
                steps=(CallStep(title="Sign in", workflow_id=sign_in.id, version=1),),
                otherwise=(
                    FillStep(
                        title="Fill 'Name'",
                        target=target("Name"),
                        value="{name}",
                        screenshot=refs["fill"],
                    ),
                ),
            ),
        ),
    )
    main = Workflow(
        name="Invite everyone",
        parameters=(Parameter(name="names", type=ParameterType.LIST),),
        steps=(
            loop,
            TryStep(
                title="Try saving",
                steps=(ClickStep(title="Click 'Save'", target=button("Save")),),
                otherwise=(CallStep(title="Sign in again", workflow_id=sign_in.id),),
            ),
        ),
    )
    s.workflows.save(main, actor="ann")
    return s.workflows.approve(main.id, actor="bob"), signed, {refs[k]: blobs[k] for k in blobs}


def test_calls_and_media_inside_blocks_travel_with_the_bundle(tmp_path: Path) -> None:
    with services(home=tmp_path / "source") as s:
        main, signed, media = _blocks_library(s)
        data = build_bundle(s.workflows, s.media, main)
    bundle = read_bundle(data, source="invite.procedura")
    assert sorted(bundle.workflows) == sorted([(main.workflow_id, 1), (signed.workflow_id, 1)])
    assert bundle.media == media

    with services() as s:
        # Here "Sign in" is another workflow with the same id: keeping both moves the calls
        # inside the blocks to the copy.
        s.workflows.save(signed.workflow.model_copy(update={"description": "Mine."}), actor="carol")
        report = import_bundle(s.workflows, s.media, bundle, on_conflict="keep-both", actor="carol")
        by_name = {o.name: o for o in report.workflows}
        copy = by_name["Sign in"]
        assert copy.action == "copied"
        arrived = s.workflows.get(by_name["Invite everyone"].local_id).workflow
        calls = [step for step in walk(arrived.steps) if isinstance(step, CallStep)]
        assert [(c.title, c.workflow_id) for c in calls] == [
            ("Sign in", copy.local_id),
            ("Sign in again", copy.local_id),
        ]
        assert calls[0].version == 1
        assert all(s.media.get(ref) == blob for ref, blob in media.items())


def test_a_bundle_names_a_missing_callee_inside_a_block_by_its_place(tmp_path: Path) -> None:
    with services(home=tmp_path / "source") as s:
        main, signed, _ = _blocks_library(s)
        data = build_bundle(s.workflows, s.media, main)
    members = _members(data)
    callee = [
        f"workflows/{signed.workflow_id}/",
        *(f"media/{r}" for r in media_refs(signed.workflow)),
    ]
    for name in [n for n in members if n.startswith(tuple(callee))]:
        del members[name]
    doc = json.loads(members[f"workflows/{main.workflow_id}/v1.json"])
    doc["steps"][0]["steps"][0]["steps"][0]["version"] = None
    members[f"workflows/{main.workflow_id}/v1.json"] = json.dumps(doc).encode()
    bundle = read_bundle(_zip(members))
    with services() as s, pytest.raises(BundleError) as err:
        import_bundle(s.workflows, s.media, bundle, on_conflict="skip", actor="ann")
    assert "at steps[0].steps[0].steps[0].workflow_id" in str(err.value)

    with services(home=tmp_path / "source") as s:
        s.workflows.delete(signed.workflow_id, confirmed=True)
        with pytest.raises(BundleError, match=r"step 1\.1\.1 \('Sign in'\) of 'Invite everyone'"):
            build_bundle(s.workflows, s.media, main)


# ── building ────────────────────────────────────────────────────────────────────────────────


def test_an_unpinned_call_carries_the_approved_version_and_missing_media_is_listed(
    tmp_path: Path,
) -> None:
    with services(home=tmp_path / "source") as s:
        callee = Workflow(name="Callee", steps=(GotoStep(title="Go", url="https://a.test/"),))
        s.workflows.save(callee, actor="ann")
        s.workflows.approve(callee.id, actor="bob")
        s.workflows.save(callee.model_copy(update={"description": "draft"}), actor="ann")
        missing = "c" * 64 + ".png"
        caller = Workflow(
            name="Caller",
            steps=(CallStep(title="Call", workflow_id=callee.id, screenshot=missing),),
        )
        s.workflows.save(caller, actor="ann")
        data = build_bundle(s.workflows, s.media, s.workflows.get(caller.id))
    bundle = read_bundle(data)
    assert sorted(bundle.workflows) == sorted([(caller.id, 1), (callee.id, 1)])
    assert bundle.manifest.missing_media == (missing,)
    assert bundle.media == {}


def test_export_refuses_a_secret_with_a_default(tmp_path: Path) -> None:
    with services(home=tmp_path / "source") as s:
        leaky = Workflow.model_construct(
            id="leaky",
            name="Leaky",
            parameters=(
                Parameter.model_construct(
                    name="password", type=ParameterType.SECRET, default="hunter2"
                ),
            ),
        )
        saved = WorkflowVersion.model_construct(workflow=leaky, created_by="ann")
        with pytest.raises(BundleError, match="secret"):
            build_bundle(s.workflows, s.media, saved)


def test_export_through_the_command_line_and_import_elsewhere(
    procedura: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with services(home=tmp_path / "source") as s:
        made = _library(s)
    out = tmp_path / "contact.procedura"
    exported = procedura(
        "--home", str(tmp_path / "source"), "export", made.main.workflow_id[:8],
        "--format", "bundle", "--out", str(out),
    )  # fmt: skip
    assert exported.exit_code == 0, exported.output
    imported = procedura("workflows", "import", str(out))
    assert imported.exit_code == 0, imported.output
    lines = imported.stdout.splitlines()
    assert lines[0] == "bundle contact.procedura: 'Create a contact' and 2 called workflows"
    main8 = made.main.workflow_id[:8]
    assert f"  'Create a contact' ({main8} v1): imported as {main8} version 1 (draft)" in lines
    assert "media: 4 stored, 0 already here" in lines
    assert lines[-1] == f"review it with: procedura workflows show {main8}"

    with services() as s:
        main = s.workflows.get(made.main.workflow_id).workflow
        s.workflows.save(main.model_copy(update={"description": "mine"}), actor="x")
    refused = procedura("workflows", "import", str(out))
    assert refused.exit_code == 2
    assert "'Create a contact'" in refused.stderr
    assert "--on-conflict keep-both" in refused.stderr

    skipped = procedura("workflows", "import", str(out), "--on-conflict", "skip")
    assert skipped.exit_code == 0, skipped.output
    assert f"'Create a contact' ({main8} v1): skipped" in skipped.stdout

    monkeypatch.setattr("desktop_app.cli.workflows.stdin_is_terminal", lambda: True)
    asked = procedura("workflows", "import", str(out), input="replace\n")
    assert asked.exit_code == 0, asked.output
    assert "conflict: 'Create a contact'" in asked.stderr
    assert f"replaced: now {main8} version 3 (draft)" in asked.stdout

    json_flag = procedura("workflows", "import", "-", "--on-conflict", "skip", input="{}")
    assert json_flag.exit_code == 2
    assert "applies to bundles" in json_flag.stderr


# ── hostile and broken archives ─────────────────────────────────────────────────────────────


def _members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _zip(
    members: dict[str, bytes],
    *,
    fix_manifest: bool = True,
    extra: list[tuple[zipfile.ZipInfo | str, bytes]] | None = None,
) -> bytes:
    """A bundle of *members*, the manifest's list recomputed unless *fix_manifest* is false."""
    members = dict(members)
    if fix_manifest:
        manifest = json.loads(members["manifest.json"])
        manifest["members"] = [
            {"name": n, "sha256": hashlib.sha256(d).hexdigest(), "size": len(d)}
            for n, d in members.items()
            if n != "manifest.json"
        ]
        members["manifest.json"] = json.dumps(manifest).encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # duplicate names are the point of one case
            for info, data in extra or []:
                archive.writestr(info, data)
    return buffer.getvalue()


def _main_member(members: dict[str, bytes], what: str = "v") -> str:
    manifest = json.loads(members["manifest.json"])
    wid = manifest["workflow_id"]
    return f"workflows/{wid}/v1.json" if what == "v" else f"workflows/{wid}/versions.json"


def _declare_size(data: bytes, name: str, size: int) -> bytes:
    """*data* with *name*'s uncompressed size forged to *size* in both of its headers."""
    raw = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        offset = archive.getinfo(name).header_offset
    struct.pack_into("<I", raw, offset + 22, size)
    position = raw.find(b"PK\x01\x02")
    while position != -1:
        length = struct.unpack_from("<H", raw, position + 28)[0]
        if raw[position + 46 : position + 46 + length] == name.encode():
            struct.pack_into("<I", raw, position + 24, size)
        position = raw.find(b"PK\x01\x02", position + 4)
    return bytes(raw)


def _bomb(_: bytes) -> bytes:
    """200 MB of zeros, deflated to a few hundred KB and declared as 1000 bytes."""
    name = "media/" + "0" * 64 + ".png"
    buffer = io.BytesIO()
    with (
        zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive,
        archive.open(name, "w") as member,
    ):
        for _ in range(200):
            member.write(bytes(1024 * 1024))
    return _declare_size(buffer.getvalue(), name, 1000)


def _honest_bomb(valid: bytes) -> bytes:
    """30 MB of zeros, under the member limit but expanding about 1000×."""
    return _zip(_members(valid), extra=[("media/" + "1" * 64 + ".png", bytes(30 * 1024 * 1024))])


def _oversized(valid: bytes) -> bytes:
    info = zipfile.ZipInfo("media/" + "2" * 64 + ".png")
    info.compress_type = zipfile.ZIP_STORED
    return _zip(_members(valid), extra=[(info, bytes(MAX_MEMBER_BYTES + 2**20))])


def _symlink(valid: bytes) -> bytes:
    info = zipfile.ZipInfo("media/" + "3" * 64 + ".png")
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return _zip(_members(valid), extra=[(info, b"/etc/passwd")])


def _edit_main(valid: bytes, edit: Callable[[dict[str, Any]], None]) -> bytes:
    members = _members(valid)
    name = _main_member(members)
    doc = json.loads(members[name])
    edit(doc)
    members[name] = json.dumps(doc).encode()
    return _zip(members)


def _digits(valid: bytes) -> bytes:
    members = _members(valid)
    name = _main_member(members)
    members[name] = members[name].rstrip()[:-1] + b', "x": ' + b"7" * 5_000 + b"}"
    return _zip(members)


def _secret_default(doc: dict[str, Any]) -> None:
    doc["parameters"][1]["default"] = "hunter2"


def _wrong_schema(doc: dict[str, Any]) -> None:
    doc["steps"][1]["kind"] = "clik"


def _sha_mismatch(valid: bytes) -> bytes:
    members = _members(valid)
    name = _main_member(members)
    members[name] = members[name].replace(b"Create a contact", b"Create a kontact")
    return _zip(members, fix_manifest=False)


def _missing_media(valid: bytes) -> bytes:
    members = _members(valid)
    del members[next(n for n in members if n.startswith("media/"))]
    return _zip(members)


def _not_in_manifest(valid: bytes) -> bytes:
    members = _members(valid)
    manifest = json.loads(members["manifest.json"])
    manifest["members"] = manifest["members"][:-1]
    members["manifest.json"] = json.dumps(manifest).encode()
    return _zip(members, fix_manifest=False)


HOSTILE: dict[str, tuple[Callable[[bytes], bytes], str]] = {
    "path traversal": (
        lambda v: _zip(_members(v), extra=[("../x", b"owned")]),
        r"\.\./x in evil\.procedura: climbs out of the bundle",
    ),
    "nested traversal": (
        lambda v: _zip(_members(v), extra=[("media/../../x.png", b"owned")]),
        "climbs out of the bundle",
    ),
    "absolute path": (
        lambda v: _zip(_members(v), extra=[("/etc/cron.d/x", b"owned")]),
        r"/etc/cron\.d/x in evil\.procedura: is an absolute path",
    ),
    "backslash": (
        lambda v: _zip(_members(v), extra=[("media\\..\\x", b"owned")]),
        "backslash",
    ),
    "symlink": (_symlink, "is a symbolic link"),
    "duplicate": (
        lambda v: _zip(_members(v), extra=[("manifest.json", b"{}")]),
        "manifest.json in evil.procedura: appears twice",
    ),
    "unknown member": (
        lambda v: _zip(_members(v), extra=[("notes.txt", b"hello")]),
        "notes.txt in evil.procedura: is not part of a Procedura bundle",
    ),
    "oversized member": (
        _oversized,
        "is 33.0 MiB uncompressed, more than the 32.0 MiB a member may be",
    ),
    "zip bomb": (_bomb, "declares 1000 bytes but holds"),
    "honest zip bomb": (_honest_bomb, "refused as a zip bomb"),
    "truncated": (lambda v: v[: len(v) // 2], "truncated or damaged"),
    "not a zip": (lambda v: b"hello, world", "not a zip archive"),
    "wrong schema": (
        lambda v: _edit_main(v, _wrong_schema),
        r"v1\.json in evil\.procedura at steps\[1\]\.kind: unknown step kind 'clik'",
    ),
    "manifest sha mismatch": (_sha_mismatch, "does not match its sha256 in manifest.json"),
    "unlisted member": (_not_in_manifest, "is not listed in manifest.json"),
    "missing media": (_missing_media, "which the bundle does not hold"),
    "secret default": (
        lambda v: _edit_main(v, _secret_default),
        r"at parameters\[1\]: a secret parameter cannot have a default",
    ),
    "deep manifest": (
        lambda v: _zip(
            {**_members(v), "manifest.json": b'{"a": ' + b"[" * 60_000 + b"]" * 60_000 + b"}"},
            fix_manifest=False,
        ),
        "manifest.json in evil.procedura: not a document: arrays or objects nested too deep",
    ),
    "number of 5,000 digits": (
        _digits,
        r"v1\.json in evil\.procedura: not a document: a number with more digits than any",
    ),
    "no manifest": (
        lambda v: _zip(
            {k: d for k, d in _members(v).items() if k != "manifest.json"}, fix_manifest=False
        ),
        "has no manifest.json",
    ),
}


@pytest.fixture(scope="module")
def valid_bundle(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    home = tmp_path_factory.mktemp("bundle-source")
    with pytest.MonkeyPatch.context() as mp:
        for var in ("OPENAI_API_KEY", "PROCEDURA_LLM_API_KEY", "PROCEDURA_EMBEDDING"):
            mp.delenv(var, raising=False)
        mp.setenv("PROCEDURA_ACTOR", "tester")
        mp.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
        mp.setenv("ANONYMIZED_TELEMETRY", "False")
        return _export(home)[1]


def _snapshot(home: Path) -> dict[str, int]:
    return {
        str(p.relative_to(home)): p.stat().st_size
        for p in home.rglob("*")
        if p.is_file() and not p.name.startswith("writer.")
    }


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_archives_are_refused_and_nothing_is_written(
    case: str, valid_bundle: bytes, procedura: Cli, home: Path, tmp_path: Path
) -> None:
    make, message = HOSTILE[case]
    assert (
        procedura("workflows", "import", str(EXAMPLES / "create-contact.workflow.json")).exit_code
        == 0
    )
    evil = tmp_path / "evil.procedura"
    evil.write_bytes(make(valid_bundle))
    before = _snapshot(home)
    with services() as s:
        counts = _counts(s)

    result = procedura("workflows", "import", str(evil))

    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    error = result.stderr.strip()
    assert error.startswith("error: ") and "\n" not in error, error
    assert re.search(message, error), error
    assert _snapshot(home) == before
    with services() as s:
        assert _counts(s) == counts
    assert not (tmp_path / "x").exists()


def test_the_valid_bundle_of_the_hostile_cases_is_accepted(valid_bundle: bytes) -> None:
    assert read_bundle(valid_bundle).main.name == "Create a contact"
    assert read_bundle(_zip(_members(valid_bundle))).main.name == "Create a contact"


@pytest.mark.parametrize(
    ("limits", "message"),
    [
        ({"max_member_bytes": 100}, "more than the 100 bytes a member may be"),
        ({"max_members": 3}, "a bundle may have at most 3"),
        ({"max_total_bytes": 1000}, "more than a bundle may be"),
    ],
)
def test_limits_can_be_tightened(valid_bundle: bytes, limits: dict[str, int], message: str) -> None:
    with pytest.raises(BundleError, match=message):
        read_bundle(valid_bundle, **limits)


def test_errors_are_document_errors_naming_the_member(valid_bundle: bytes) -> None:
    with pytest.raises(DocumentError) as err:
        read_bundle(_zip(_members(valid_bundle), extra=[("../x", b"")]), source="b.procedura")
    assert isinstance(err.value, BundleError)
    assert err.value.member == "../x"
    assert str(err.value) == "../x in b.procedura: climbs out of the bundle ('..'); refused"


def test_folder_entries_of_the_layout_are_accepted_others_refused(valid_bundle: bytes) -> None:
    members = _members(valid_bundle)
    wid = json.loads(members["manifest.json"])["workflow_id"]
    folders: list[tuple[zipfile.ZipInfo | str, bytes]] = [
        (name, b"") for name in ("workflows/", f"workflows/{wid}/", "media/")
    ]
    assert read_bundle(_zip(members, extra=folders)).main.name == "Create a contact"
    with pytest.raises(BundleError, match=r"evil/ in b\.procedura: is a folder outside"):
        read_bundle(_zip(members, extra=[("evil/", b"")]), source="b.procedura")


def test_export_refuses_workflows_that_call_each_other_in_a_loop(tmp_path: Path) -> None:
    with services(home=tmp_path / "source") as s:
        first = Workflow(name="First", steps=(CallStep(title="Second", workflow_id="b" * 32),))
        second = Workflow(
            id="b" * 32, name="Second", steps=(CallStep(title="First", workflow_id=first.id),)
        )
        s.workflows.save(first, actor="ann")
        s.workflows.save(second, actor="ann")
        with pytest.raises(
            BundleError,
            match=r"call each other in a loop \('(First|Second)' → '(First|Second)' → '\1'\)",
        ):
            build_bundle(s.workflows, s.media, s.workflows.get(first.id))
