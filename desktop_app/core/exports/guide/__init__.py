"""A workflow as a guide for people: numbered plain-language steps with their screenshots.

The guide is the standard operating procedure a team would file: title, description, the values
to have at hand, then each step as a sentence ("Type the *Full name* (parameter ``full_name``)
into **Full name**"), the screenshot recorded for it (the target outlined, sensitive fields
covered), and what you should see after it; it ends with the workflow's success check, "You are
done when: …". Secret values are never in a workflow, and the guide never names one: a secret is
"your password (kept secret)".

Blocks are sections: "If the page shows “Cookies”:", "For each row on the page showing
“Unpaid”, do these steps with its ``td.number`` as the *Invoice* (at most 100; …):", "Until …,
repeat these steps …:", "Try these steps:", and their steps follow numbered under them (4.1,
4.2; Markdown headings one level deeper, HTML lists inside the block's), with "Otherwise:" or
"If one of those steps fails, …, do these steps instead:" before an ``otherwise``. Screenshots
of steps inside blocks are kept (``step-04-02.png``).

Both outputs are built from one :class:`Guide` of styled text runs, so Markdown and HTML say the
same thing and each escapes workflow text its own way.

The modules: ``model`` (the guide, format-neutral), ``writer`` (steps as sentences), ``build``
(a workflow made into a guide), ``as_markdown`` and ``as_html`` (the two outputs).
"""

from desktop_app.core.exports.guide.as_html import render_html
from desktop_app.core.exports.guide.as_markdown import render_markdown
from desktop_app.core.exports.guide.build import build_guide, describe_step
from desktop_app.core.exports.guide.model import Guide, GuideStep, Run

__all__ = [
    "Guide",
    "GuideStep",
    "Run",
    "build_guide",
    "describe_step",
    "render_html",
    "render_markdown",
]
