"""The Review screen's HTML: a diff, what healed and why; and how it writes times and statuses."""

from __future__ import annotations

import html
from collections.abc import Sequence
from datetime import datetime
from typing import Final

from desktop_app.core.diff import FieldChange, LocatorChange, StepChange, WorkflowDiff, step_heading
from desktop_app.core.models.run import Resolution, Run, StepStatus
from desktop_app.core.models.workflow import WorkflowStatus, WorkflowVersion, status_label
from desktop_app.core.outcomes import failure_lines, outcome_words, verification_words, verified
from desktop_app.core.replay.learning import REPLAY_ACTOR
from desktop_app.core.replay.online import ONLINE_ACTOR
from desktop_app.core.scores import VersionRecord
from desktop_app.ui import theme
from desktop_app.ui.scores_html import record_html

__all__ = [
    "RUNGS",
    "css",
    "diff_html",
    "escape",
    "healed_html",
    "page",
    "status_colour",
    "status_words",
    "verification_html",
    "version_html",
    "when",
]

#: The rungs of the healing ladder, as a reviewer reads them.
RUNGS: Final = {
    Resolution.ALTERNATE: "an alternate recorded locator (rung 1)",
    Resolution.FINGERPRINT: "fingerprint match (rung 2)",
    Resolution.EXPERIENCE: "experience memory (rung 3)",
    Resolution.LLM: "the LLM (rung 4)",
    Resolution.PERSON: "a person (rung 5)",
}

# The diff's tints, by what happened; the theme gives each a background and a text colour for
# the scheme in force (dark text on light tints, light text on dark ones).
_ADDED: Final = "added"
_REMOVED: Final = "removed"
_CHANGED: Final = "changed"
_MOVED: Final = "moved"
_PLAIN: Final = "plain"
_STATUS_TONES: Final[dict[WorkflowStatus, theme.Tone]] = {
    WorkflowStatus.DRAFT: "muted",
    WorkflowStatus.IN_REVIEW: "warning",
    WorkflowStatus.APPROVED: "ok",
    WorkflowStatus.ARCHIVED: "muted",
}


def _pair(kind: str) -> tuple[str, str]:
    """The background and text colour of a diff tint in the current scheme."""
    c = theme.colours()
    return {
        _ADDED: (c.ok_bg, c.ok_fg),
        _REMOVED: (c.error_bg, c.error_fg),
        _CHANGED: (c.warning_bg, c.warning_fg),
        _MOVED: (c.info_bg, c.info_fg),
    }.get(kind, (c.plain_bg, c.plain_fg))


def status_colour(status: WorkflowStatus) -> str:
    """The colour a version's status is written in (current scheme)."""
    return theme.color(_STATUS_TONES[status]).name()


def when(moment: datetime) -> str:
    """*moment* in local time, to the minute."""
    return f"{moment.astimezone():%Y-%m-%d %H:%M}"


def status_words(status: WorkflowStatus) -> str:
    """*status* as words in a sentence (``in review``): :func:`status_label`, lower case."""
    return status_label(status).lower()


def css() -> str:
    """The review page's style sheet (its muted grey from the current scheme)."""
    return (
        "h2 { margin-top: 14px; margin-bottom: 4px; font-size: large; }\n"
        f".muted {{ color: {theme.colours().muted}; }}\n"
        ".code { font-family: monospace; }\n"
        "td { vertical-align: top; }\n"
    )


def escape(text: str | None) -> str:
    """*text* escaped for HTML (None: empty)."""
    return html.escape(text or "")


def _tint(kind: str, text: str, *, strike: bool = False) -> str:
    background, foreground = _pair(kind)
    deco = " text-decoration: line-through;" if strike else ""
    return (
        f'<span style="background-color: {background}; color: {foreground};{deco}">'
        f"&nbsp;{text}&nbsp;</span>"
    )


def _before_after(before: str | None, after: str | None) -> str:
    if before is None:
        return _tint(_ADDED, escape(after))
    if after is None:
        return _tint(_REMOVED, escape(before), strike=len(before) <= _LONG)
    if len(before) + len(after) > _LONG:  # long text: one above the other, easier to compare
        return f"{_tint(_REMOVED, escape(before))}<br>→ {_tint(_ADDED, escape(after))}"
    return f"{_tint(_REMOVED, escape(before), strike=True)} → {_tint(_ADDED, escape(after))}"


#: Values longer than this are shown before-above-after, without strike-through.
_LONG: Final = 90


def _field_row(change: FieldChange) -> str:
    return (
        f'<tr><td class="muted" width="130">{escape(change.label)}</td>'
        f'<td class="code">{_before_after(change.before, change.after)}</td></tr>'
    )


def _locator_row(change: LocatorChange) -> str:
    if change.change == "added":
        label = f"locator #{change.new_rank}"
        text = _tint(_ADDED, "+ " + escape(change.after))
    elif change.change == "removed":
        label = f"locator #{change.old_rank}"
        text = _tint(_REMOVED, "− " + escape(change.before), strike=True)
    elif change.change == "changed":
        label = (
            f"locator #{change.new_rank}"
            if change.old_rank == change.new_rank
            else f"locator #{change.old_rank} → #{change.new_rank}"
        )
        text = _before_after(change.before, change.after)
    else:
        label = f"locator #{change.old_rank} → #{change.new_rank}"
        text = _tint(_MOVED, "↕ " + escape(change.after)) + " <span class='muted'>re-ranked</span>"
    return f'<tr><td class="muted" width="130">{label}</td><td class="code">{text}</td></tr>'


def _step_block(step: StepChange) -> str:
    if step.status == "added":
        colours, mark, what = _ADDED, "+", "added"
    elif step.status == "removed":
        colours, mark, what = _REMOVED, "−", "removed"
    elif step.status == "changed":
        colours, mark, what = _CHANGED, "~", "changed"
    elif step.moved:
        colours, mark, what = _MOVED, "↕", "moved"
    else:
        colours, mark, what = _PLAIN, " ", "unchanged"
    if step.moved and step.status == "changed":
        what = "changed and moved"
    background, foreground = _pair(colours)
    title = escape(step_heading(step))
    if step.old_title is not None:
        title += f' <span class="muted">(was “{escape(step.old_title)}”)</span>'
    rows = [f'<tr><td colspan="2" class="code muted">{escape(step.summary)}</td></tr>']
    if step.moved:
        assert step.old_index is not None and step.new_index is not None
        rows.append(
            '<tr><td class="muted" width="130">position</td><td>'
            + _tint(_MOVED, f"moved from {step.old_index + 1} to {step.new_index + 1}")
            + "</td></tr>"
        )
    if step.old_step_id is not None:
        rows.append(
            '<tr><td class="muted" width="130">matched</td><td>by likeness to step '
            f"<span class='code'>{escape(step.old_step_id)}</span> (its id changed)</td></tr>"
        )
    rows += [_field_row(c) for c in step.fields if c.field != "title"]
    if step.old_title is not None:
        rows.insert(
            1,
            _field_row(
                FieldChange(field="title", label="title", before=step.old_title, after=step.title)
            ),
        )
    rows += [_locator_row(c) for c in step.locators]
    if step.fingerprint:
        rows.append(
            '<tr><td class="muted" width="130">fingerprint</td>'
            f"<td>{escape(step.fingerprint)}</td></tr>"
        )
    return (
        '<table width="100%" cellspacing="0" cellpadding="4" style="margin-top: 6px;">'
        f'<tr><td width="22" align="center" style="background-color: {foreground}; '
        f'color: {background};"><b>{mark}</b></td>'  # the tint's colours swapped: light or dark
        f'<td style="background-color: {background}; color: {foreground};">'
        f'<b>{title}</b> &nbsp;<span style="color: {foreground};">{what}</span>'
        f'<table cellspacing="0" cellpadding="2" style="margin-top: 2px;">{"".join(rows)}'
        "</table></td></tr></table>"
    )


def diff_html(diff: WorkflowDiff, *, unchanged: bool = False) -> str:
    """*diff* as the HTML the review screen shows (added green, removed red, changes amber)."""
    parts: list[str] = []
    if diff.old_version is None:
        parts.append(
            "<p>Compared with nothing (a first version, or no base chosen): the whole version "
            "is shown as new.</p>"
        )
    elif diff.is_empty:
        parts.append(
            f"<p>Version {diff.new_version} has the same content as version {diff.old_version}.</p>"
        )
    fields = [c for c in diff.fields if c.field != "success"]
    success = [c for c in diff.fields if c.field == "success"]
    if fields:
        parts.append("<h2>Workflow</h2><table cellspacing='0' cellpadding='2'>")
        parts += [_field_row(c) for c in fields]
        parts.append("</table>")
    if success:
        parts.append(
            "<h2>Done when</h2><p class='muted'>The success check: what shows the task was "
            "done, checked after the last step. A run succeeds only when it holds.</p>"
            "<table cellspacing='0' cellpadding='2'>"
        )
        parts += [_field_row(c) for c in success]
        parts.append("</table>")
    if diff.parameters:
        parts.append("<h2>Parameters</h2><table cellspacing='0' cellpadding='3'>")
        for p in diff.parameters:
            if p.change == "added":
                head = _tint(_ADDED, "+ " + escape(p.summary))
            elif p.change == "removed":
                head = _tint(_REMOVED, "− " + escape(p.summary), strike=True)
            elif p.change == "renamed":
                head = (
                    f"{_tint(_REMOVED, escape('{' + (p.old_name or '') + '}'), strike=True)} → "
                    f"{_tint(_ADDED, escape('{' + p.name + '}'))} renamed"
                )
            else:
                head = _tint(_CHANGED, "~ " + escape(p.name))
            parts.append(f"<tr><td colspan='2' class='code'>{head}</td></tr>")
            parts += [_field_row(c) for c in p.fields]
        parts.append("</table>")
    steps = diff.steps if unchanged else diff.changed_steps
    if steps:
        parts.append("<h2>Steps</h2>")
        parts += [_step_block(s) for s in steps]
        hidden = len(diff.steps) - len(steps)
        if hidden:
            parts.append(
                f"<p class='muted'>{hidden} other step{'s' if hidden != 1 else ''} unchanged.</p>"
            )
    return "".join(parts)


def _image_url(ref: str) -> str:
    return f"media:{ref}"


def _induced_html(runs: Sequence[Run]) -> str:
    """What the run that proposed a version of online induction did (its agent steps' actions);
    the change note names the runs that did the same before it."""
    parts = [
        "<h2>What the runs did</h2>",
        "<p>Proposed by online induction (the change note above says from which runs and "
        "why). Check each new step against what the agent did:</p>",
    ]
    for run in runs:
        parts.append(
            f"<p>Run <span class='code'>{escape(run.id[:8])}</span> of version "
            f"{run.workflow_version} on {when(run.started_at)} "
            f"({escape(outcome_words(run.status))}):</p><ul>"
        )
        for step in run.steps:
            if step.actions:
                parts.append(f"<li>{escape(step.title)}: {escape(step.detail or '')}</li>")
        parts.append("</ul>")
    return "".join(parts)


def healed_html(version: WorkflowVersion, runs: Sequence[Run], images: Sequence[str] = ()) -> str:
    """What healed in the run(s) that proposed *version*, and why.

    Args:
        version: a version a replay proposed.
        runs: the runs whose ``proposed_version`` is this version.
        images: media refs of screenshots available as ``media:<ref>`` document resources.
    """
    if version.created_by == ONLINE_ACTOR:
        return _induced_html(runs)
    parts = ["<h2>What healed and why</h2>"]
    if not runs:
        parts.append(
            "<p>The run that proposed this version is no longer in the run history; its "
            "change note above says what healed.</p>"
        )
        return "".join(parts)
    by_id = {s.id: s for s in version.workflow.steps}
    available = set(images)
    for run in runs:
        healed = run.healed
        llm = f", {run.llm_calls} LLM call(s), {run.tokens} tokens" if run.llm_calls else ""
        parts.append(
            f"<p>Run <span class='code'>{escape(run.id[:8])}</span> of version "
            f"{run.workflow_version} on {when(run.started_at)} "
            f"({escape(outcome_words(run.status))}{llm}) "
            f"healed {len(healed)} step{'s' if len(healed) != 1 else ''}:</p>"
        )
        if not healed:
            continue
        parts.append(
            "<table width='100%' cellspacing='0' cellpadding='4' border='1' "
            f"style='border-color: {theme.colours().line}; border-style: solid;'>"
            "<tr><th align='left'>Step</th><th align='left'>Healed by</th>"
            "<th align='left'>Locator used</th><th align='left'>Why</th></tr>"
        )
        for s in healed:
            assert s.resolution is not None
            step = by_id.get(s.step_id)
            target = step.target_or_none if step is not None else None
            if s.locator is not None:
                locator = escape(s.locator.describe())
            elif target is not None:
                locator = (
                    f"{escape(target.locators[0].describe())}"
                    "<br><span class='muted'>(first in this version)</span>"
                )
            else:
                locator = "<span class='muted'>—</span>"
            why = escape(s.detail or s.error or "—")
            if s.llm_calls:
                why += f"<br><span class='muted'>{s.llm_calls} LLM call(s)</span>"
            shot = (
                f"<br><img src='{_image_url(s.screenshot)}' width='220'>"
                if s.screenshot is not None and s.screenshot in available
                else ""
            )
            parts.append(
                f"<tr><td>{s.index + 1}. {escape(s.title)}{shot}</td>"
                f"<td>{_tint(_CHANGED, escape(RUNGS[s.resolution]))}</td>"
                f"<td class='code'>{locator}</td><td>{why}</td></tr>"
            )
        parts.append("</table>")
    return "".join(parts)


def page(body: str) -> str:
    """*body* as a whole HTML document, with the screen's style sheet."""
    return f"<html><head><style>{css()}</style></head><body>{body}</body></html>"


def version_html(
    compared: WorkflowVersion,
    base: WorkflowVersion | None,
    diff: WorkflowDiff,
    runs: Sequence[Run],
    images: Sequence[str],
    records: Sequence[VersionRecord] = (),
    *,
    stale: str | None = None,
    verification: Run | None = None,
) -> str:
    """A version's page: summary, change note, what healed, how its runs (and the base's) went,
    and what changes."""
    parts: list[str] = []
    against = f"version {base.version}" if base is not None else "nothing"
    parts.append(
        f"<p><b>{escape(diff.summary())}</b> <span class='muted'>(against {against})</span></p>"
    )
    if not compared.workflow.success:
        parts.append(
            f"<p style='color: {theme.colours().warning};'>"
            "⚠ No success check: runs of this version end “done, "
            "unverified”. <b>Done when</b> in the step editor adds what shows the task was "
            "done.</p>"
        )
    # A repair's note lists what healed; the table below says it better, when its run is known.
    if compared.change_note and (not runs or compared.created_by == ONLINE_ACTOR):
        parts.append(f"<h2>Change note</h2><p>{escape(compared.change_note)}</p>")
    if compared.created_by == REPLAY_ACTOR or runs:
        parts.append(healed_html(compared, runs, images))
    if compared.status in (WorkflowStatus.DRAFT, WorkflowStatus.IN_REVIEW) or verification:
        parts.append(verification_html(compared, verification))
    if records:
        parts.append("<h2>How its runs went</h2>" + record_html(records, stale=stale))
    parts.append("<h2>What changes</h2>" if not diff.is_empty else "")
    parts.append(diff_html(diff))
    return "".join(parts)


def verification_html(version: WorkflowVersion, run: Run | None) -> str:
    """The newest verification of *version*: each step it did, passed or not, and why; or how
    to verify it."""
    parts = ["<h2>Verification</h2>"]
    if run is None:
        parts.append(
            "<p class='muted'>Not verified yet. <b>Verify…</b> (or <span class='code'>procedura "
            f"workflows verify {escape(version.workflow_id[:8])} --version {version.version}"
            "</span>) replays it with its recorded values and stops before its first "
            "irreversible step.</p>"
        )
        return "".join(parts)
    good = verified(run)
    color = theme.colours().ok if good else theme.colours().error
    parts.append(
        f"<p style='color: {color};'>{'✓' if good else '✗'} {escape(verification_words(run))} "
        f"<span class='muted'>(run <span class='code'>{escape(run.id[:8])}</span>, "
        f"{when(run.started_at)})</span></p><ol>"
    )
    for step in run.steps:
        mark = {StepStatus.SUCCEEDED: "✓", StepStatus.FAILED: "✗"}.get(step.status, "–")
        lines = [step.error or "", *failure_lines(step)] if step.status is StepStatus.FAILED else []
        extra = "".join(f"<br><span class='muted'>{escape(line)}</span>" for line in lines if line)
        parts.append(f"<li>{mark} {escape(step.title)}{extra}</li>")
    parts.append("</ol>")
    return "".join(parts)
