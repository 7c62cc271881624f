"""Guides for people: plain-language steps, screenshots, what shows it is done, no secrets,
everything escaped."""

from __future__ import annotations

import asyncio
import re
import struct
import zlib
from pathlib import Path

import pytest
from conftest import EXAMPLES, Cli
from factories import button, full_workflow, target

from desktop_app.adapters.media_store import FileMediaStore
from desktop_app.core.exports.guide import describe_step, render_html, render_markdown
from desktop_app.core.models import (
    AgentStep,
    CallStep,
    CheckStep,
    ClickStep,
    CsvRows,
    DesktopClickStep,
    DesktopTypeStep,
    ElementHidden,
    ElementVisible,
    ExtractStep,
    FillStep,
    Fingerprint,
    ForEachStep,
    GotoStep,
    HotkeyStep,
    IfStep,
    ItemScope,
    Locator,
    LocatorStrategy,
    Parameter,
    ParameterType,
    Point,
    PressStep,
    ScrollStep,
    SelectStep,
    Target,
    TextPresent,
    TryStep,
    UrlMatches,
    ValueCompare,
    Workflow,
)


def _png(width: int = 2, height: int = 2) -> bytes:
    """A real (tiny, grey) PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


@pytest.fixture
def media(tmp_path: Path) -> FileMediaStore:
    return FileMediaStore(tmp_path / "media")


def _sentences(workflow: Workflow) -> list[str]:
    return [describe_step(workflow, i) for i in range(len(workflow.steps))]


def _step_block(markdown: str, number: int) -> str:
    """The Markdown of step *number*, from its heading to the next one."""
    start = markdown.index(f"### Step {number}\n")
    ends = [markdown.find(mark, start + 1) for mark in ("\n### Step ", "\n## ", "\n---\n")]
    return markdown[start : min(end for end in ends if end != -1)]


def _signup_with_newsletter() -> Workflow:
    """The shapes an induced create-contact workflow has: a bool flag, a choice, a secret."""
    checkbox = Target(
        locators=(
            Locator(
                strategy=LocatorStrategy.ROLE, value="checkbox", name="Subscribe to newsletter"
            ),
            Locator(strategy=LocatorStrategy.CSS, value="#newsletter"),
        ),
        fingerprint=Fingerprint(tag="input", role="checkbox", name="Subscribe to newsletter"),
    )
    return Workflow(
        name="Create a contact",
        description="Add a contact to the CRM.",
        parameters=(
            Parameter(name="full_name", description="Their full name", default="Jane Doe"),
            Parameter(name="password", type=ParameterType.SECRET),
            Parameter(
                name="company",
                type=ParameterType.CHOICE,
                choices=("Acme", "Globex"),
                default="Globex",
            ),
            Parameter(name="subscribe_to_newsletter", type=ParameterType.BOOL, default=True),
        ),
        steps=(
            GotoStep(title="Open the login", url="http://127.0.0.1:8765/login"),
            FillStep(
                title="Fill 'Password'",
                target=target("Password", password=True),
                value="{password}",
            ),
            FillStep(title="Fill 'Full name'", target=target("Full name"), value="{full_name}"),
            SelectStep(title="Select", target=target("Company"), value="{company}"),
            CheckStep(title="Set", target=checkbox, checked="{subscribe_to_newsletter}"),
            ClickStep(
                title="Click 'Save'",
                target=button("Save"),
                expectations=(
                    TextPresent(text="Contact {full_name} created"),
                    UrlMatches(pattern="http://127.0.0.1:8765/contacts/*"),
                ),
            ),
        ),
    )


# ── sentences ───────────────────────────────────────────────────────────────────────────────


def test_every_step_kind_in_plain_words() -> None:
    assert _sentences(full_workflow()) == [
        "Go to https://app.example.test/signup?plan={plan} (put Plan in place of {plan}).",
        "Type the User (parameter user) into Email.",
        "Type your password (kept secret) into Password.",
        "Choose the Plan (parameter plan) in Plan.",
        "Tick I agree.",
        "Press Tab.",
        "Scroll down the page.",
        "Wait until the page shows “Summary”.",
        "Make sure Price is shown.",
        "Read Price and note it as Price.",
        "Click Sign up.",
        "Do the procedure Invite the team, giving it the User (parameter user) as its Email.",
        "Pick the cheapest add-on. Note the result as Addon.",
        "Click the place that looks like the recorded picture in the Installer window.",
        "Type “Note Addon” in the Notes window.",
        "Press Ctrl+S.",
        "If Coupon is on the page:",
        "For each line of the Teammates (parameter teammates), do these steps with the line as "
        "the Mate (at most 100; if there are more, stop before the first):",
        "For each row on the page showing “Unpaid”, do these steps with its td.number as the "
        "Invoice and its td.amount as the Amount (at most 100; if there are more, stop before "
        "the first):",
        "Until the page shows “No more results”, repeat these steps (look before each round; "
        "give up after 5):",
        "Try these steps:",
    ]


def test_blocks_are_sections_numbered_under_their_step(media: FileMediaStore) -> None:
    png = _png()
    shot = media.put(png, "png")
    workflow = _blocks_workflow(shot)
    markdown, images = render_markdown(workflow, media)
    assert images == {"step-02-01.png": png}
    assert re.findall(r"^#+ Step [\d.]+$", markdown, re.MULTILINE) == [
        "### Step 1",
        "### Step 2",
        "#### Step 2.1",
        "##### Step 2.1.1",
        "##### Step 2.1.2",
        "##### Step 2.1.3",
        "### Step 3",
        "#### Step 3.1",
        "#### Step 3.2",
    ]
    loop = markdown[markdown.index("### Step 2\n") : markdown.index("### Step 3\n")]
    assert (
        "For each row of the file the *Orders* (parameter `orders`), do these steps with its "
        "“Order” column as the *Order* and its “Total” column as the *Total* (at most 20; if "
        "there are more, stop before the first):"
    ) in loop
    assert "![Step 2.1](images/step-02-01.png)" in loop
    assert "If the *Total* is more than “100”:" in loop
    assert "Type the *Order* into **Order**." in loop
    assert "**Otherwise:**\n\n##### Step 2.1.3\n\nType “small” into **Note**." in loop
    tried = markdown[markdown.index("### Step 3\n") :]
    assert "Try these steps:" in tried
    assert (
        "**If one of those steps fails, and nothing that cannot be undone was done, do these "
        "steps instead:**\n\n#### Step 3.2"
    ) in tried
    assert "Do the procedure **Sign in**." in tried

    page = render_html(workflow, media)
    assert page.count('<li class="step"') == 9
    assert '<p class="action"><span class="number">Step 2.1.2.</span> Click' in page
    assert '<p class="otherwise">Otherwise:</p>' in page
    assert 'alt="Step 2.1: If the Total is more than “100”:"' in page
    _assert_self_contained(page)


def _blocks_workflow(shot: str) -> Workflow:
    """A loop over a CSV file holding an if (and otherwise), then a try."""
    return Workflow(
        name="Orders",
        parameters=(Parameter(name="orders", description="A CSV file"),),
        steps=(
            GotoStep(title="Open", url="https://shop.example.test/"),
            ForEachStep(
                title="For each order",
                over=CsvRows(path="{orders}", column="Order", fields={"total": "Total"}),
                item="order",
                limit=20,
                steps=(
                    IfStep(
                        title="If it is big",
                        condition=ValueCompare(value="{total}", op="greater", to="100"),
                        screenshot=shot,
                        steps=(
                            FillStep(title="Fill", target=target("Order"), value="{order}"),
                            ClickStep(title="Flag", target=button("Flag")),
                        ),
                        otherwise=(FillStep(title="Note", target=target("Note"), value="small"),),
                    ),
                ),
            ),
            TryStep(
                title="Try saving",
                steps=(ClickStep(title="Save", target=button("Save")),),
                otherwise=(CallStep(title="Run 'Sign in'", workflow_id="sign-in"),),
            ),
        ),
    )


def test_sentences_of_a_recorded_form_in_markdown(media: FileMediaStore) -> None:
    markdown, _ = render_markdown(_signup_with_newsletter(), media)

    assert "Go to `http://127.0.0.1:8765/login`." in _step_block(markdown, 1)
    assert "Type your password (kept secret) into **Password**." in _step_block(markdown, 2)
    assert "Type the *Full name* (parameter `full_name`) into **Full name**." in _step_block(
        markdown, 3
    )
    assert "Choose the *Company* (parameter `company`) in **Company**." in _step_block(markdown, 4)
    assert (
        "Tick **Subscribe to newsletter** if the *Subscribe to newsletter* (parameter "
        "`subscribe_to_newsletter`) is yes; otherwise leave it unticked."
    ) in _step_block(markdown, 5)
    save = _step_block(markdown, 6)
    assert "Click **Save**." in save
    assert "- You should see “Contact *Full name* created”." in save
    assert (
        "- You should see the address `http://127.0.0.1:8765/contacts/…` in the address bar."
    ) in save


def test_variants_of_each_kind() -> None:
    radio = Target(
        locators=(Locator(strategy=LocatorStrategy.LABEL, value="Express"),),
        fingerprint=Fingerprint(tag="input", role="radio", name="Express"),
    )
    result_link = Target(
        locators=(
            Locator(strategy=LocatorStrategy.ROLE, value="link", name="{full_name}"),
            Locator(strategy=LocatorStrategy.TEXT, value="{full_name}"),
        ),
        fingerprint=Fingerprint(tag="a", role="link", name="Jane Doe"),  # as recorded
    )
    anonymous = Target(locators=(Locator(strategy=LocatorStrategy.CSS, value="div > span"),))
    recorded_braces = Target(
        locators=(Locator(strategy=LocatorStrategy.CSS, value="#pay"),),
        fingerprint=Fingerprint(tag="button", name="Pay {amount}"),  # literal, not a template
    )
    workflow = Workflow(
        name="Variants",
        parameters=(
            Parameter(name="full_name"),
            Parameter(name="token", type=ParameterType.SECRET),
        ),
        steps=(
            ClickStep(title="a", target=button("Open"), click_count=2),
            ClickStep(title="b", target=button("Row"), button="right"),
            ClickStep(title="c", target=button("Item"), modifiers=("Control", "Shift")),
            ClickStep(title="d", target=result_link),
            ClickStep(title="e", target=anonymous),
            ClickStep(title="e2", target=recorded_braces),
            FillStep(title="f", target=target("Email"), value="jane@example.test"),
            FillStep(title="g", target=target("Notes"), value=""),
            FillStep(title="h", target=target("Greeting"), value="Dear {full_name},"),
            SelectStep(title="i", target=target("Country"), value="France"),
            CheckStep(title="j", target=target("Subscribe"), checked=False),
            CheckStep(title="k", target=radio, checked=True),
            PressStep(title="l", target=target("Search"), key="Enter"),
            PressStep(title="m", key="Control+Shift+ArrowDown"),
            ScrollStep(title="n", dy=-300, target=target("Results")),
            ScrollStep(title="o", target=target("Footer")),
            ExtractStep(title="p", target=target("Order number"), variable="order_number"),
            FillStep(title="q", target=target("Reference"), value="{order_number}"),
            CallStep(
                title="Run 'Sign in'",
                workflow_id="sign-in",
                version=2,
                arguments={"user": "{full_name}", "secret": "{token}"},
            ),
            AgentStep(title="r", instruction="Find the invoice of {full_name}"),
            DesktopClickStep(title="s", window_title="Calc*", point=Point(x=10, y=20)),
            DesktopClickStep(title="t", app="Files", target=button("Open")),
            DesktopTypeStep(title="u", text="{token}"),
            HotkeyStep(title="v", window_title="Notes", keys=("ctrl", "shift", "s")),
        ),
    )
    assert _sentences(workflow) == [
        "Double-click Open.",
        "Right-click Row.",
        "Hold Ctrl+Shift and click Item.",
        "Click the link showing the Full name (parameter full_name).",
        "Click the highlighted element.",
        "Click Pay {amount}.",
        "Type “jane@example.test” into Email.",
        "Clear Notes.",
        "Type “Dear Full name,” into Greeting.",
        "Choose “France” in Country.",
        "Untick Subscribe.",
        "Select Express.",
        "Press Enter in Search.",
        "Press Ctrl+Shift+Down arrow.",
        "Scroll up in Results.",
        "Scroll until Footer is in view.",
        "Read Order number and note it as Order number.",
        "Type the Order number you noted in step 17 into Reference.",
        "Do the procedure Sign in (version 2), giving it the Full name (parameter full_name) "
        "as its User, and your token (kept secret) as its Secret.",
        "Find the invoice of Full name.",
        "Click at 10, 20 from the window's top left corner in the Calc… window.",
        "Click Open in Files.",
        "Type your token (kept secret).",
        "Press Ctrl+Shift+S in the Notes window.",
    ]


def test_expectations_and_flags(media: FileMediaStore) -> None:
    workflow = Workflow(
        name="Flags",
        steps=(
            ClickStep(
                title="Submit",
                target=button("Submit report"),
                irreversible=True,
                expectations=(
                    UrlMatches(pattern=r"^http://x\.test/reports/\d+$", match="regex"),
                    UrlMatches(pattern="http://x.test/done", match="exact"),
                    ElementVisible(target=button("Download")),
                ),
            ),
            ClickStep(title="Dismiss", target=button("Later"), optional=True),
        ),
    )
    markdown, _ = render_markdown(workflow, media)
    first, second = _step_block(markdown, 1), _step_block(markdown, 2)
    assert "> ⚠ **This cannot be undone.**" in first
    assert (
        r"- You should see an address matching `^http://x\.test/reports/\d+$` in the address bar."
    ) in first
    assert "- You should see the address `http://x.test/done` in the address bar." in first
    assert "- You should see **Download**." in first
    assert "cannot be undone" not in second and "*This step is optional" in second


def test_the_guide_ends_with_what_shows_the_task_is_done(media: FileMediaStore) -> None:
    workflow = _signup_with_newsletter().model_copy(
        update={
            "success": (
                TextPresent(text="Contact {full_name} created"),
                UrlMatches(pattern="http://127.0.0.1:8765/contacts/*"),
                ElementHidden(target=button("Save")),
            )
        }
    )
    markdown, _ = render_markdown(workflow, media)
    done = markdown[markdown.index("## Check that it worked") : markdown.index("\n---\n")]
    assert markdown.index("### Step 6") < markdown.index("## Check that it worked")
    assert done.splitlines() == [
        "## Check that it worked",
        "",
        "You are done when:",
        "",
        "- the page shows “Contact *Full name* created”",
        "- the page address is `http://127.0.0.1:8765/contacts/…`",
        "- **Save** is gone",
    ]
    page = render_html(workflow, media)
    assert (
        '<section class="done"><h2>Check that it worked</h2><p>You are done when:</p>'
        '<ul class="expect"><li>the page shows “Contact <em>Full name</em> created”</li>'
    ) in page
    assert page.index('class="done"') < page.index("<footer>")

    without, _ = render_markdown(_signup_with_newsletter(), media)
    assert "You are done when" not in without and "Check that it worked" not in without
    assert "You are done when" not in render_html(_signup_with_newsletter(), media)


def test_an_element_inside_a_row_is_named_with_the_row() -> None:
    in_row = Locator(
        strategy=LocatorStrategy.ROLE,
        value="button",
        name="Edit",
        within=ItemScope(css="tr", text="{full_name}"),
    )
    workflow = _signup_with_newsletter()
    steps = (*workflow.steps, ClickStep(title="Edit", target=Target(locators=(in_row,))))
    workflow = workflow.model_copy(update={"steps": steps})
    assert describe_step(workflow, len(steps) - 1) == (
        "Click Edit in the row showing the Full name (parameter full_name)."
    )
    card = in_row.model_copy(update={"within": ItemScope(css="div.card", text="Maria Garcia")})
    in_card = steps[-1].model_copy(update={"target": Target(locators=(card,))})
    workflow = workflow.model_copy(update={"steps": (*steps[:-1], in_card)})
    sentence = describe_step(workflow, len(steps) - 1)
    assert sentence == "Click Edit in the card showing “Maria Garcia”."
    # A field's wrapper inside a line item: the guide names the line item, which tells it.
    wrapper = ItemScope(css="div.field", text="Notes", outer=ItemScope(css="tr", text="Item 2"))
    nested = in_row.model_copy(update={"within": wrapper})
    in_line = steps[-1].model_copy(update={"target": Target(locators=(nested,))})
    workflow = workflow.model_copy(update={"steps": (*steps[:-1], in_line)})
    assert describe_step(workflow, len(steps) - 1) == "Click Edit in the row showing “Item 2”."


# ── parameters and secrets ──────────────────────────────────────────────────────────────────


def test_parameters_table(media: FileMediaStore) -> None:
    markdown, _ = render_markdown(full_workflow(), media)
    table = markdown[markdown.index("## Before you start") : markdown.index("## Steps")]
    assert "| Name | What it is | Type | Default |" in table
    assert "| User (`user`) | Who signs in | email address | — |" in table
    assert "| Plan (`plan`) | — | one of: free, pro | free |" in table
    assert "| Agree (`agree`) | — | yes or no | yes |" in table
    assert "| Start (`start`) | — | date | — (optional) |" in table
    assert "| Password (`password`) | — | secret | — |" in table
    assert "secrets are asked for when the procedure runs and are never written here" in table

    bare, _ = render_markdown(Workflow(name="Nothing to ask"), media)
    assert "| Name |" not in bare and "needs no values from you" in bare


def test_secret_values_never_appear(media: FileMediaStore) -> None:
    workflow = Workflow(
        name="Secrets",
        parameters=(
            Parameter(name="user", default="ann"),
            Parameter(name="password", type=ParameterType.SECRET, description="The login"),
        ),
        steps=(
            GotoStep(title="Open", url="https://x.test/login?u={user}&p={password}"),
            FillStep(
                title="Fill 'Password' with hunter2",  # a careless title: never shown
                target=target("Password", password=True),
                value="{password}",
            ),
            DesktopTypeStep(title="Type", text="pw: {password}"),
        ),
    )
    markdown, _ = render_markdown(workflow, media)
    page = render_html(workflow, media)
    for text in (markdown, page):
        assert "hunter2" not in text
        assert text.count("your password (kept secret)") == 3
    assert "put *User* in place of `{user}`; put your password (kept secret) in place of" in (
        markdown
    )


# ── images ──────────────────────────────────────────────────────────────────────────────────


def test_images_only_for_steps_with_a_stored_screenshot(media: FileMediaStore) -> None:
    png = _png()
    webp = b"RIFF\x0c\x00\x00\x00WEBPVP8 "  # the store keeps bytes as given
    shot_png, shot_webp = media.put(png, "png"), media.put(webp, "webp")
    missing = "f" * 64 + ".jpg"  # referenced but not in the store: left out, never invented
    workflow = Workflow(
        name="Shots",
        steps=(
            ClickStep(title="a", target=button("A"), screenshot=shot_png),
            ClickStep(title="b", target=button("B")),
            ClickStep(title="c", target=button("C"), screenshot=shot_webp),
            ClickStep(title="d", target=button("D"), screenshot=missing),
        ),
    )
    markdown, images = render_markdown(workflow, media, image_dir="my guide_images")
    assert images == {"step-01.png": png, "step-03.webp": webp}
    assert re.findall(r"^!\[.*$", markdown, re.MULTILINE) == [
        "![Step 1](<my guide_images/step-01.png>)",
        "![Step 3](<my guide_images/step-03.webp>)",
    ]
    assert "![" not in _step_block(markdown, 2) and "![" not in _step_block(markdown, 4)

    page = render_html(workflow, media)
    assert page.count("data:image") == 2
    assert 'src="data:image/png;base64,' in page and 'src="data:image/webp;base64,' in page
    assert 'alt="Step 3: Click C."' in page


# ── escaping and self-containment ───────────────────────────────────────────────────────────

_HOSTILE = "<script>alert('x')</script>"


def _hostile_workflow() -> Workflow:
    return Workflow(
        name=f"Pay {_HOSTILE} **now**",
        description=f"# Not a heading\n- not a list\n[click](javascript:alert(1)) {_HOSTILE}"
        " &amp; <img src=x onerror=alert(1)>",
        parameters=(Parameter(name="note", description=f"A note {_HOSTILE} | pipe"),),
        steps=(
            ClickStep(title="Click", target=button(f"Save {_HOSTILE}")),
            FillStep(
                title="Fill", target=target("Note"), value="**bold** `tick` <b>x</b>\n# heading"
            ),
            AgentStep(title="Agent", instruction=f"Do {_HOSTILE} [x](http://evil.test)"),
        ),
    )


def test_markdown_escapes_workflow_text(media: FileMediaStore) -> None:
    markdown, _ = render_markdown(_hostile_workflow(), media)
    assert re.search(r"(?<!\\)<", markdown) is None  # every < escaped: no raw HTML
    assert markdown.startswith(r"# Pay \<script\>alert('x')\</script\> \*\*now\*\*")
    markdown_it = pytest.importorskip("markdown_it")
    rendered = markdown_it.MarkdownIt("commonmark").enable("table").render(markdown)
    assert "<script" not in rendered and "<img" not in rendered and "<a " not in rendered
    assert "<b>" not in rendered and "<h1>Not a heading" not in rendered
    assert "<h1>heading" not in rendered and "<li>not a list" not in rendered
    assert rendered.count("<h1>") == 1 and rendered.count("<table>") == 1
    assert "&lt;script&gt;alert('x')&lt;/script&gt;" in rendered
    assert "&amp;amp;" in rendered  # the text "&amp;" shows as written


def test_html_escapes_workflow_text(media: FileMediaStore) -> None:
    page = render_html(_hostile_workflow(), media)
    assert "<script" not in page and "<img" not in page and "<b>" not in page
    assert "<title>Pay &lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; **now**</title>" in page
    assert "<strong>Save &lt;script&gt;" in page
    assert "&amp;amp;" in page


def test_html_is_one_printable_self_contained_file(media: FileMediaStore) -> None:
    workflow = full_workflow().model_copy(update={"steps": full_workflow().steps[:11]})
    page = render_html(workflow, media)
    assert page.startswith('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">')
    assert page.count('<li class="step"') == 11
    assert "break-inside: avoid" in page and "page-break-inside: avoid" in page
    assert "@media print" in page
    assert "⚠ This cannot be undone." in page
    _assert_self_contained(page)
    assert "Generated by Procedura" in page and "version 1" in page


def _assert_self_contained(page: str) -> None:
    lowered = page.lower()
    for reference in ("<link", "<script", "@import", "url(", "href=", "<iframe", "<object"):
        assert reference not in lowered, reference
    sources = re.findall(r"""\bsrc\s*=\s*["']?([^"'\s>]*)""", lowered)
    assert all(src.startswith("data:image/") for src in sources), sources


# ── end to end: a recorded demonstration exported through the CLI ───────────────────────────

_MAGIC = {"jpg": (b"\xff\xd8\xff",), "png": (b"\x89PNG\r\n\x1a\n",), "webp": (b"RIFF",)}


@pytest.mark.slow
def test_a_recorded_demonstration_as_markdown_and_html(procedura: Cli, tmp_path: Path) -> None:
    from demo_tasks import create_contact, record_task

    from desktop_app.app import open_services
    from desktop_app.core.induction.heuristic import induce
    from desktop_app.demo_site import DEMO_PASSWORD, DemoSite
    from desktop_app.settings import load_settings

    async def record(url: str) -> Workflow:
        with open_services(load_settings(), write=True) as services:
            trajectory = await record_task(
                services, url, create_contact, intent="Create a contact for Jane Doe at Globex"
            )
            workflow = induce(trajectory).workflow
            services.workflows.save(workflow, actor="tester")
            return workflow

    with DemoSite() as site:
        workflow = asyncio.run(record(site.url + "/login"))
    with_shots = [i + 1 for i, s in enumerate(workflow.steps) if s.screenshot is not None]
    assert len(with_shots) >= len(workflow.steps) - 1  # every action has its screenshot

    out = tmp_path / "out"
    md_path, html_path = out / "guide.md", out / "guide.html"
    result = procedura("export", workflow.id, "--format", "markdown", "--out", str(md_path))
    assert result.exit_code == 0, result.output
    result = procedura("export", workflow.id, "--format", "html", "--out", str(html_path))
    assert result.exit_code == 0, result.output

    markdown = md_path.read_text(encoding="utf-8")
    linked = re.findall(r"^!\[Step (\d+)\]\((guide_images/step-\d+\.(\w+))\)$", markdown, re.M)
    assert [int(n) for n, _, _ in linked] == with_shots
    for _, path, ext in linked:
        data = (out / path).read_bytes()
        assert data.startswith(_MAGIC[ext]), path
    assert sorted(p.name for p in (out / "guide_images").iterdir()) == sorted(
        Path(p).name for _, p, _ in linked
    )
    assert "Type your password (kept secret) into **Password**." in markdown
    assert "Tick **Subscribe to newsletter** if the *Subscribe to newsletter*" in markdown
    assert "- You should see “Contact *Full name* created”." in markdown
    assert "\nWhere: 127.0.0.1\n" in markdown

    page = html_path.read_text(encoding="utf-8")
    assert page.count("data:image") == len(with_shots)
    _assert_self_contained(page)

    for path in out.rglob("*"):
        if path.is_file():
            assert DEMO_PASSWORD.encode() not in path.read_bytes(), path


def test_the_documented_example_is_whole() -> None:
    guide = EXAMPLES / "guide-create-contact.md"
    markdown = guide.read_text(encoding="utf-8")
    linked = re.findall(r"^!\[Step \d+\]\(([^)]+)\)$", markdown, re.MULTILINE)
    assert linked and all((EXAMPLES / path).is_file() for path in linked)
    assert "Type your password (kept secret) into **Password**." in markdown
    for path in [guide, *(EXAMPLES / "guide-create-contact_images").iterdir()]:
        assert b"demo-pass" not in path.read_bytes(), path
