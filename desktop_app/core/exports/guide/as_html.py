"""The guide as one self-contained HTML page: styles inline, screenshots as data: URIs."""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Iterable
from typing import Final

from desktop_app.core.exports.guide.build import build_guide
from desktop_app.core.exports.guide.model import GuideStep, Run, _one_line, _plain
from desktop_app.core.models.workflow import Workflow
from desktop_app.core.ports import MediaStore

__all__ = ["render_html"]

_MIME: Final = {"png": "image/png", "jpg": "image/jpeg", "webp": "image/webp"}

_CSS: Final = """
:root { color-scheme: light; }
body { font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: #1d232a; background: #fff; margin: 0; }
main { max-width: 52rem; margin: 0 auto; padding: 2rem 1.25rem 3rem; }
h1 { font-size: 1.9rem; line-height: 1.2; margin: 0 0 .75rem; }
h2 { font-size: 1.3rem; margin: 2.2rem 0 .8rem; padding-bottom: .3rem;
  border-bottom: 1px solid #dde2e7; }
.description p { margin: .4rem 0; }
.where { color: #56606b; }
table { border-collapse: collapse; width: 100%; font-size: .95rem; }
th, td { text-align: left; vertical-align: top; padding: .45rem .6rem;
  border-bottom: 1px solid #e4e8ec; }
th { background: #f4f6f8; font-weight: 600; }
code { font: .9em/1.4 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace;
  background: #f1f3f5; padding: .05em .3em; border-radius: 4px; overflow-wrap: anywhere; }
ol.steps { padding-left: 0; list-style: none; }
ol.steps.inner { margin: 1rem 0 0; }
li.step { margin: 0 0 1.6rem; padding: 1rem 1.1rem;
  border: 1px solid #e1e5ea; border-radius: 10px; break-inside: avoid;
  page-break-inside: avoid; }
li.step > .action { margin: 0; font-size: 1.05rem; }
li.step > .action > .number { font-weight: 700; color: #2f5d8a; }
li.step li.step { margin-bottom: 1rem; border-left: 4px solid #c9d6e3; }
.otherwise { margin: 1rem 0 0; font-weight: 600; color: #2f5d8a; }
.optional { color: #56606b; font-style: italic; margin: .4rem 0 0; }
.irreversible { margin: .6rem 0 0; padding: .45rem .7rem; border-left: 4px solid #c0392b;
  background: #fdf0ee; color: #8e2a1f; font-weight: 600; }
ul.expect { margin: .7rem 0 0; padding-left: 1.2rem; color: #2c5132; }
figure { margin: .8rem 0 0; }
figure img { display: block; max-width: 100%; height: auto; border: 1px solid #d5dae0;
  border-radius: 6px; }
footer { margin-top: 2.5rem; padding-top: .8rem; border-top: 1px solid #dde2e7;
  color: #6a737d; font-size: .85rem; }
@media print {
  body { font-size: 11pt; }
  main { max-width: none; padding: 0; }
  li.step { border-color: #bbb; }
  figure img { max-height: 14cm; width: auto; }
  h2 { break-after: avoid; page-break-after: avoid; }
}
"""


def _h(text: str) -> str:
    return html.escape(text, quote=True)


def _html_runs(runs: Iterable[Run]) -> str:
    tags = {"strong": "strong", "em": "em", "code": "code"}
    out = []
    for run in runs:
        tag = tags.get(run.style)
        text = _h(run.text).replace("\n", "<br>")
        out.append(f"<{tag}>{text}</{tag}>" if tag else text)
    return "".join(out)


def _html_description(text: str) -> str:
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    return "".join(f"<p>{_h(p).replace(chr(10), '<br>')}</p>" for p in paragraphs)


def _html_step(step: GuideStep) -> list[str]:
    """*step* as an ``<li>``; a block's steps in a list of their own inside it."""
    number = step.shown_number
    out = [f'<li class="step" id="step-{number.replace(".", "-")}">']
    out.append(
        f'<p class="action"><span class="number">Step {number}.</span> '
        f"{_html_runs(step.action)}</p>"
    )
    if step.optional:
        out.append('<p class="optional">This step is optional: skip it if it does not apply.</p>')
    if step.irreversible:
        out.append(
            '<p class="irreversible">⚠ This cannot be undone. '
            "Check everything before you do it.</p>"
        )
    if step.image_name is not None and step.image is not None:
        mime = _MIME[step.image_name.rsplit(".", 1)[-1]]
        data = base64.b64encode(step.image).decode("ascii")
        alt = _h(f"Step {number}: {_plain(step.action)}")
        out.append(f'<figure><img src="data:{mime};base64,{data}" alt="{alt}"></figure>')
    if step.expectations:
        items = "".join(f"<li>{_html_runs(e)}</li>" for e in step.expectations)
        out.append(f'<ul class="expect">{items}</ul>')
    if step.steps:
        out.append('<ol class="steps inner">')
        for inner in step.steps:
            out += _html_step(inner)
        out.append("</ol>")
    if step.otherwise:
        out.append(f'<p class="otherwise">{_html_runs(step.otherwise_intro)}</p>')
        out.append('<ol class="steps inner">')
        for inner in step.otherwise:
            out += _html_step(inner)
        out.append("</ol>")
    out.append("</li>")
    return out


def render_html(workflow: Workflow, media: MediaStore) -> str:
    """*workflow* as one self-contained HTML guide: styles inline, screenshots as data: URIs."""
    guide = build_guide(workflow, media)
    title = _h(_one_line(guide.title))
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="generator" content="Procedura">',
        f"<title>{title}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        "<main>",
        f"<h1>{title}</h1>",
    ]
    if guide.description.strip():
        out.append(f'<div class="description">{_html_description(guide.description)}</div>')
    if guide.domains:
        out.append(f'<p class="where">Where: {_h(", ".join(guide.domains))}</p>')
    out.append('<section class="before"><h2>Before you start</h2>')
    if guide.parameters:
        out += [
            "<p>Have these at hand. In the steps, a value in <em>italics</em> stands for the "
            "one you use; secrets are asked for when the procedure runs and are never written "
            "here.</p>",
            "<table><thead><tr><th>Name</th><th>What it is</th><th>Type</th><th>Default</th>"
            "</tr></thead><tbody>",
        ]
        for name, what, kind, default in guide.parameters:
            cells = (_html_runs(name), _h(what) or "—", _h(kind), _h(default))
            out.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        out.append("</tbody></table>")
    else:
        out.append("<p>This procedure needs no values from you.</p>")
    out += ["</section>", "<section><h2>Steps</h2>", '<ol class="steps">']
    for step in guide.steps:
        out += _html_step(step)
    out += ["</ol>", "</section>"]
    if guide.done_when:
        items = "".join(f"<li>{_html_runs(e)}</li>" for e in guide.done_when)
        out.append(
            '<section class="done"><h2>Check that it worked</h2><p>You are done when:</p>'
            f'<ul class="expect">{items}</ul></section>'
        )
    out += [
        f"<footer>{title}, version {guide.version} (workflow {_h(guide.workflow_id[:8])}). "
        "Generated by Procedura.</footer>",
        "</main>",
        "</body>",
        "</html>",
        "",
    ]
    return "\n".join(out)
