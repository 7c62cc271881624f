"""Loop overhead: what a ``for_each`` round costs beyond the steps it does.

On a page of our own served on 127.0.0.1 (``tests/invoices_site.py``: a table of invoices, a
"Remind" button in each row that posts to the server), two workflows remind the same N
invoices: one is a loop over the page's rows (the rows read once, a round record each, the
invoice put in ``{invoice}``, the button found inside its row by that text), the other N
recorded clicks, one per row, each with the row's number written in. They run in alternation
within one process, each with a fresh browser, and each run is checked by the server: every
invoice reminded once, in order.

Reported: the median run time of each, the loop's overhead per round (the difference over N),
the median time of one click step (from the flat runs' records), and their ratio (goal: a
round costs no more than one step).

    .venv/bin/python bench/loops.py [--smoke]
"""

from __future__ import annotations

from common import Section, isolated_home, main, median
from invoices_site import Invoices, invoices_site
from replay_support import approve, run, services
from test_replay_blocks import _remind_in_row

from desktop_app.core.models.run import RunStatus
from desktop_app.core.models.workflow import ClickStep, ForEachStep, GotoStep, PageItems, Workflow


def _loop(url: str) -> Workflow:
    return Workflow(
        name="Remind every invoice (loop)",
        domains=("127.0.0.1",),
        steps=(
            GotoStep(title="Open the invoices", url=f"{url}/"),
            ForEachStep(
                title="Each invoice",
                over=PageItems(css="tr.invoice", key="td.number"),
                item="invoice",
                limit=1000,
                steps=(ClickStep(title="Remind {invoice}", target=_remind_in_row("{invoice}"),
                                 reacts=True),),
            ),
        ),
    )  # fmt: skip


def _flat(url: str, numbers: list[str]) -> Workflow:
    return Workflow(
        name="Remind every invoice (steps)",
        domains=("127.0.0.1",),
        steps=(
            GotoStep(title="Open the invoices", url=f"{url}/"),
            *(
                ClickStep(title=f"Remind {n}", target=_remind_in_row(n), reacts=True)
                for n in numbers
            ),
        ),
    )


def measure(*, smoke: bool = False) -> Section:
    """The loop's overhead per round against one step's time."""
    count, rounds = (5, 1) if smoke else (20, 5)
    section = Section("loops", "Loops: what a round costs beyond its steps")
    data = Invoices(count, unpaid_every=1)
    loop_s: list[float] = []
    flat_s: list[float] = []
    step_ms: list[float] = []
    wrong = 0
    with isolated_home(), invoices_site(data) as (_, url), services() as sv:
        numbers = data.unpaid()
        loop, flat = approve(sv, _loop(url)), approve(sv, _flat(url, numbers))
        for _ in range(rounds):
            for version, times in ((loop, loop_s), (flat, flat_s)):
                data.reminded.clear()
                outcome = run(sv, version, url).run
                done = outcome.status is RunStatus.UNVERIFIED and data.reminded == numbers
                wrong += not done
                assert outcome.finished_at is not None
                times.append((outcome.finished_at - outcome.started_at).total_seconds())
                if version is flat:
                    step_ms += [s.duration_ms for s in outcome.steps if s.title.startswith("Rem")]
    per_round_ms = (median(loop_s) - median(flat_s)) / count * 1000
    one_step_ms = median(step_ms)
    section.add("invoices per run", count)
    section.add("runs not right (by the server's data)", wrong, goal="== 0")
    section.add("loop run, median", median(loop_s), "s")
    section.add("flat run, median", median(flat_s), "s")
    section.add("loop overhead per round", per_round_ms, "ms")
    section.add("one click step, median", one_step_ms, "ms")
    section.add(
        "overhead per round / one step", per_round_ms / one_step_ms, "x", goal="<= 1",
        note="a round: its items read once, its record, its values; then its steps",
    )  # fmt: skip
    section.notes.append(
        f"{count} rows, {rounds} runs of each workflow in alternation, a fresh browser per run"
    )
    return section


if __name__ == "__main__":
    main(__doc__, measure, smoke_help="5 invoices, one run of each")
