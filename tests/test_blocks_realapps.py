"""Blocks on an app nobody here wrote: TodoMVC (npm ``todomvc``), a loop over the 50 to-dos
that mention an invoice among 60, each ticked; judged by the app's own ``localStorage``."""

from __future__ import annotations

from typing import Any, cast

import pytest
from realapps.corpus import APPS
from replay_support import approve, run, services

from desktop_app.core.models.run import RunStatus
from desktop_app.core.models.target import ItemScope, Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import (
    CheckStep,
    ForEachStep,
    GotoStep,
    PageItems,
    TextPresent,
    Workflow,
)

pytestmark = pytest.mark.slow

_ROW = "#todo-list li"


def _todos() -> list[dict[str, Any]]:
    """60 to-dos: 50 invoices to pay, 10 calls, mixed; "Pay invoice 7" and "Pay invoice 70"
    look alike (one holds the other's title)."""
    todos = [{"title": f"Pay invoice {n}", "completed": False} for n in range(1, 51)]
    for n in range(10):
        todos.insert(n * 6, {"title": f"Call supplier {n}", "completed": False})
    return todos


def _tick_every_invoice(url: str) -> Workflow:
    toggle = Target(
        locators=(
            Locator(
                strategy=LocatorStrategy.CSS,
                value="input.toggle",
                within=ItemScope(css=_ROW, text="{todo}"),
            ),
        )
    )
    return Workflow(
        name="Tick every invoice",
        domains=("127.0.0.1",),
        steps=(
            GotoStep(title="Open the list", url=f"{url}/"),
            ForEachStep(
                title="Each invoice to-do",
                over=PageItems(css=_ROW, contains="invoice", key="label"),
                item="todo",
                limit=100,
                steps=(CheckStep(title="Tick {todo}", target=toggle, checked=True, reacts=True),),
            ),
        ),
        success=(TextPresent(text="Clear completed"),),
    )


#: Three implementations with different DOMs and timing: plain DOM, React rendering after
#: ``load``, Backbone re-rendering a row whole on every change (vue, angularjs and emberjs pass
#: too; left out to keep the suite short).
@pytest.mark.parametrize("implementation", ["vanillajs", "react", "backbone"])
def test_a_loop_ticks_each_of_50_matching_to_dos_and_no_other(implementation: str) -> None:
    todomvc = next(a for a in APPS if a.name == "todomvc")
    variant = next(v for v in todomvc.variants if v.name.endswith(f" {implementation}"))
    with variant.start() as app, services() as sv:
        cast(Any, app).seed(_todos())
        version = approve(sv, _tick_every_invoice(app.url))
        outcome = run(sv, version, app.url).run
        assert outcome.status is RunStatus.SUCCEEDED, outcome.error
        todos = app.state()["todos"]
    assert len(todos) == 60, "nothing added or removed"
    done = sorted(t["title"] for t in todos if t["completed"])
    assert done == sorted(f"Pay invoice {n}" for n in range(1, 51))
    rounds = [s for s in outcome.steps if s.iteration is not None and "/" not in s.step_id]
    assert len(rounds) == 50
