"""Workflows that call workflows: how deep a run goes, where it starts and where it may go,
one rule for the engine and for preparing a run (core/replay/calls.py)."""

from __future__ import annotations

from desktop_app.core.errors import NotFoundError
from desktop_app.core.models.workflow import (
    CallStep,
    GotoStep,
    Workflow,
    WorkflowStatus,
    WorkflowVersion,
)
from desktop_app.core.replay.calls import MAX_CALL_DEPTH, call_tree, domains_of, origin_of


def _workflow(name: str, *, calls: tuple[str, ...] = (), opens: str | None = None) -> Workflow:
    steps: list[CallStep | GotoStep] = []
    if opens is not None:
        steps.append(GotoStep(title=f"Open {opens}", url=opens))
    steps += [CallStep(title=f"Do {callee}", workflow_id=callee) for callee in calls]
    domain = f"{name}.example.test"
    return Workflow(id=name, name=name, domains=(domain,), steps=tuple(steps))


def _library(*workflows: Workflow):  # type: ignore[no-untyped-def]
    stored = {w.id: w for w in workflows}

    def load(workflow_id: str, version: int | None) -> WorkflowVersion:
        if workflow_id not in stored:
            raise NotFoundError(f"no workflow {workflow_id!r}")
        return WorkflowVersion(
            workflow=stored[workflow_id], status=WorkflowStatus.APPROVED, created_by="tester"
        )

    return load


def test_a_run_goes_as_deep_as_calls_may_nest_and_no_deeper() -> None:
    chain = [_workflow(f"w{i}", calls=(f"w{i + 1}",)) for i in range(MAX_CALL_DEPTH + 3)]
    tree = [w.name for w in call_tree(chain[0], _library(*chain))]
    assert tree == [f"w{i}" for i in range(MAX_CALL_DEPTH + 1)]


def test_where_a_run_starts_and_where_it_may_go_include_what_it_calls() -> None:
    sign_in = _workflow("signin", opens="https://login.example.test/start")
    report = _workflow("report", calls=("missing", "signin"), opens=None)
    load = _library(sign_in, report)
    assert origin_of(report, load) == "https://login.example.test"
    assert domains_of(report, load) == ("report.example.test", "signin.example.test")
