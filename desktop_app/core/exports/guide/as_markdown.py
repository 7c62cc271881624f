"""The guide as Markdown: workflow text escaped, screenshots as image files beside it."""

from __future__ import annotations

import re
from collections.abc import Iterable

from desktop_app.core.exports.guide.build import build_guide
from desktop_app.core.exports.guide.model import GuideStep, Run, _one_line
from desktop_app.core.models.workflow import Workflow
from desktop_app.core.ports import MediaStore

__all__ = ["render_markdown"]

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")
_MD_ENTITY = re.compile(r"&(?=#?[A-Za-z0-9]+;)")
_MD_BLOCK_START = re.compile(r"(^|\n)([ \t]*)([-+=#]|\d+(?=[.)]))")


def _md_text(text: str, *, at_line_start: bool = False) -> str:
    """*text* escaped so Markdown shows it as written: no markup, no HTML, no new blocks.

    A line that would start a list, heading or quote gets its first mark escaped: every line
    after a newline, and the first one too when *text* begins a line.
    """
    escaped = _MD_ENTITY.sub(r"\\&", _MD_SPECIAL.sub(r"\\\1", text))

    def _block(m: re.Match[str]) -> str:
        if m.start() == 0 and not m.group(1) and not at_line_start:
            return m.group(0)
        mark = m.group(3)
        return m.group(1) + m.group(2) + (mark + "\\" if mark[0].isdigit() else "\\" + mark)

    return _MD_BLOCK_START.sub(_block, escaped)


def _md_code(text: str) -> str:
    text = _one_line(text)
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or longest else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _md_runs(runs: Iterable[Run], *, at_line_start: bool = False) -> str:
    out = []
    for i, run in enumerate(runs):
        if run.style == "code":
            out.append(_md_code(run.text))
        elif run.style in ("strong", "em") and _one_line(run.text):
            mark = "**" if run.style == "strong" else "*"
            out.append(f"{mark}{_md_text(_one_line(run.text))}{mark}")
        else:
            out.append(_md_text(run.text, at_line_start=at_line_start and i == 0))
    return "".join(out)


def _md_cell(text: str) -> str:
    return _md_text(_one_line(text)) or "—"


def _md_link_target(path: str) -> str:
    return f"<{path}>" if re.search(r"[\s()<>]", path) else path


def _md_step(step: GuideStep, image_dir: str, images: dict[str, bytes]) -> list[str]:
    """*step* (and, for a block, its steps: ``#### Step 4.1``…) as Markdown lines."""
    number = step.shown_number
    heading = "#" * min(3 + step.depth, 6)
    lines = [f"{heading} Step {number}", "", _md_runs(step.action, at_line_start=True), ""]
    if step.optional:
        lines += ["*This step is optional: skip it if it does not apply.*", ""]
    if step.irreversible:
        lines += ["> ⚠ **This cannot be undone.** Check everything before you do it.", ""]
    if step.image_name is not None and step.image is not None:
        images[step.image_name] = step.image
        target = _md_link_target(f"{image_dir}/{step.image_name}")
        lines += [f"![Step {number}]({target})", ""]
    if step.expectations:
        lines += [f"- {_md_runs(e)}" for e in step.expectations] + [""]
    for inner in step.steps:
        lines += _md_step(inner, image_dir, images)
    if step.otherwise:
        lines += [f"**{_md_runs(step.otherwise_intro)}**", ""]
        for inner in step.otherwise:
            lines += _md_step(inner, image_dir, images)
    return lines


def render_markdown(
    workflow: Workflow, media: MediaStore, *, image_dir: str = "images"
) -> tuple[str, dict[str, bytes]]:
    """*workflow* as a Markdown guide, and its screenshots by file name.

    Images are referenced as ``<image_dir>/step-03.jpg``; the caller writes the returned bytes
    there. Steps without a screenshot get no image line.
    """
    guide = build_guide(workflow, media)
    lines = [f"# {_md_text(_one_line(guide.title))}", ""]
    if guide.description.strip():
        lines += [_md_text(guide.description.strip(), at_line_start=True), ""]
    if guide.domains:
        lines += ["Where: " + ", ".join(_md_text(d) for d in guide.domains), ""]
    lines += ["## Before you start", ""]
    if guide.parameters:
        lines += [
            "Have these at hand. In the steps, a value in *italics* stands for the one you use;",
            "secrets are asked for when the procedure runs and are never written here.",
            "",
            "| Name | What it is | Type | Default |",
            "|---|---|---|---|",
        ]
        for name, what, kind, default in guide.parameters:
            cells = (_md_runs(name), _md_cell(what), _md_cell(kind), _md_cell(default))
            lines.append("| " + " | ".join(cells) + " |")
    else:
        lines.append("This procedure needs no values from you.")
    lines += ["", "## Steps", ""]
    images: dict[str, bytes] = {}
    for step in guide.steps:
        lines += _md_step(step, image_dir, images)
    if guide.done_when:
        lines += ["## Check that it worked", "", "You are done when:", ""]
        lines += [f"- {_md_runs(e)}" for e in guide.done_when] + [""]
    lines += [
        "---",
        "",
        f"*{_md_text(_one_line(guide.title))}, version {guide.version} "
        f"(workflow {guide.workflow_id[:8]}). Generated by Procedura.*",
        "",
    ]
    return "\n".join(lines), images
