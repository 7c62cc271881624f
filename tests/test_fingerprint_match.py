"""Rung 2 of the healing ladder: fingerprint matching, on its own and on the demo app's drift.

The unit tests pin the rules of ``desktop_app.core.replay.fingerprint``. The browser tests take
the fingerprints of the demo tasks' key targets as recorded on the original Acme CRM (described
there with ``__procedura.describe``, and as stored in ``tests/data/*.trajectory.json``, recorded on
port 8765), then, on each drift variant and some combinations, list the page's ``candidates()``
and check that ``best_match`` picks the same logical element (known by its form ``name`` or
``data-testid``, which no variant changes, or a contact link's path) or declines: never another
element, and above all never a look-alike decoy of ``similar-sibling``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar
from urllib.parse import urlsplit

import pytest
from browser_support import BrowserLoop
from playwright.async_api import Page

from desktop_app.core.models.common import BoundingBox
from desktop_app.core.models.target import Fingerprint
from desktop_app.core.replay.fingerprint import (
    CONFLICT_FACTOR,
    DEFAULT_MARGIN,
    DEFAULT_THRESHOLD,
    best_match,
    href_similarity,
    score,
    text_similarity,
)
from desktop_app.demo_site import DEMO_PASSWORD, DEMO_USERNAME, DemoSite

T = TypeVar("T")

ROOT = Path(__file__).resolve().parents[1]
CAPTURE_SCRIPT = ROOT / "resources" / "recorder" / "capture.js"
TRAJECTORIES = ROOT / "tests" / "data"

# ── unit tests: the rules ─────────────────────────────────────────────────────────────────────


def fp(**fields: Any) -> Fingerprint:
    """A fingerprint from keyword fields (``attributes`` as a dict)."""
    return Fingerprint.model_validate(fields)


SAVE = fp(
    tag="button",
    role="button",
    name="Save",
    text="Save",
    attributes={"type": "submit", "class": "btn btn-primary", "data-testid": "save"},
    bbox={"x": 168, "y": 759, "width": 75, "height": 41},
    nearby_text=["New contact"],
    ancestors=["div.form-actions", "form.contact-form", "main#main", "body.app"],
)
FULL_NAME = fp(
    tag="input",
    role="textbox",
    name="Full name",
    attributes={"id": "full_name", "name": "full_name", "type": "text"},
    bbox={"x": 168, "y": 189, "width": 560, "height": 42},
    nearby_text=["Full name", "New contact"],
    ancestors=["div.field", "div.form-stack", "form.contact-form", "main#main", "body.app"],
)


def test_an_identical_fingerprint_scores_one() -> None:
    result = score(SAVE, SAVE)
    assert result.score == 1.0
    assert result.compatible
    assert "role=button" in result.breakdown and "testid=save" in result.breakdown


def test_kinds_are_a_hard_gate() -> None:
    textbox = FULL_NAME.model_copy(update={"name": "Save"})
    result = score(SAVE, textbox)
    assert (result.score, result.compatible) == (0.0, False)
    assert result.breakdown == "incompatible: press vs text"
    checkbox = fp(tag="input", role="checkbox", name="Save", attributes={"type": "checkbox"})
    assert score(SAVE, checkbox).score == 0.0
    select = fp(tag="select", role="combobox", name="Full name")
    assert score(FULL_NAME, select).score == 0.0
    editor = fp(tag="div", name="Full name", attributes={"contenteditable": "true"})
    assert score(FULL_NAME, editor).compatible
    assert not score(SAVE, editor).compatible
    # Clickables may stand in for one another (a button restyled as a link), for less.
    link = SAVE.model_copy(update={"tag": "a", "role": "link"})
    assert 0.8 < score(SAVE, link).score < 1.0


def test_missing_features_are_neutral() -> None:
    bare = fp(tag="button", role="button", name="Save")
    result = score(SAVE, bare)
    assert result.score == 1.0  # no test id, class, box or context on one side: not held against
    assert {f.name for f in result.features} == {"role", "tag", "name"}
    assert score(bare, SAVE).score == 1.0


def test_names_are_compared_by_tokens() -> None:
    assert text_similarity("Full name", "name  FULL") == 1.0
    assert text_similarity("Next", "Cancel") == 0.0  # shared letters are noise
    assert 0.5 < text_similarity("Save", "Save contact") < 0.7
    assert text_similarity("Full name", "Full name (legal)") > text_similarity("Full name", "Name")


def test_links_are_compared_by_path_not_origin() -> None:
    assert href_similarity("http://127.0.0.1:8765/contacts/new", "/contacts/new") == 1.0
    assert href_similarity("/orders?status=shipped&page=2", "/orders?page=2&status=shipped") == 1.0
    half_the_query = href_similarity("/orders?status=shipped&page=2", "/orders?page=2")
    assert half_the_query == pytest.approx(0.5 + 0.35 / 2 + 0.15)  # path, query, fragment
    assert href_similarity("/contacts/1", "/contacts/2") == 0.0


def test_a_conflicting_test_id_or_form_name_weighs_heavily() -> None:
    decoy = SAVE.model_copy(
        update={
            "name": "Save draft",
            "text": "Save draft",
            "attributes": {**SAVE.attributes, "data-testid": "save-draft"},
        }
    )
    result = score(SAVE, decoy)
    assert "identifier conflict" in result.breakdown
    assert result.score < DEFAULT_THRESHOLD
    legal = FULL_NAME.model_copy(
        update={"name": "Full name (legal)", "attributes": {"name": "legal_name", "type": "text"}}
    )
    result = score(FULL_NAME, legal)
    assert result.score < DEFAULT_THRESHOLD
    mean = sum(f.weight * f.similarity for f in result.features) / result.evidence
    assert result.score == pytest.approx(mean * CONFLICT_FACTOR, abs=1e-4)
    assert "attr name≠" in result.breakdown


def test_best_match_accepts_a_clear_winner() -> None:
    relabeled = SAVE.model_copy(update={"name": "Save contact", "text": "Save contact"})
    decoy = SAVE.model_copy(
        update={"name": "Save draft", "attributes": {"type": "submit", "data-testid": "save-draft"}}
    )
    cancel = fp(tag="a", role="link", name="Cancel", text="Cancel", attributes={"href": "/c"})
    match = best_match(SAVE, [decoy, cancel, relabeled, FULL_NAME])
    assert match.accepted and match.index == match.best_index == 2
    assert match.reason is None
    assert match.score - match.runner_up >= DEFAULT_MARGIN
    assert match.best is not None and "testid=save" in match.best.breakdown


def test_best_match_declines_near_equals_and_weak_matches() -> None:
    twin = SAVE.model_copy(update={"bbox": BoundingBox(x=300, y=759, width=75, height=41)})
    match = best_match(SAVE, [SAVE, twin])
    assert match.index is None and match.best_index == 0
    assert match.reason is not None and match.reason.startswith("ambiguous: 1.00 vs 0.")

    other = fp(tag="button", role="button", name="Delete everything", text="Delete everything")
    match = best_match(SAVE, [other])
    assert match.index is None
    assert match.reason == f"below threshold {DEFAULT_THRESHOLD:.2f}: best {match.score:.2f}"

    only_a_tag = fp(tag="button")
    match = best_match(only_a_tag, [fp(tag="button", role="button", name="Save")])
    assert match.index is None and match.reason is not None
    assert match.reason.startswith("too little evidence")
    # Same kind, place and surroundings, but nothing that says which element it is.
    unnamed = SAVE.model_copy(update={"name": None, "text": None, "attributes": {}})
    match = best_match(unnamed, [unnamed])
    assert match.score == 1.0 and match.index is None
    assert match.reason is not None and match.reason.startswith("too little evidence")

    assert best_match(SAVE, []).reason == "no candidates"
    assert best_match(SAVE, [FULL_NAME]).reason == "no compatible candidate"
    assert best_match(SAVE, [SAVE, twin], margin=0.0).index == 0


# ── the demo app: what to find, where ─────────────────────────────────────────────────────────

#: Page states of the demo tasks and the logical targets on each (see ``identity``).
TARGETS: Final[dict[str, tuple[str, ...]]] = {
    "login": ("name:username", "name:password", "testid:sign-in"),
    "contacts": ("testid:new-contact", "href:/contacts/1"),
    "contact-form": (
        "name:full_name",
        "name:email",
        "name:company",
        "name:newsletter",
        "testid:save",
    ),
    "expense-details": ("name:title", "name:category", "testid:wizard-next"),
    "expense-items": ("name:description", "name:amount", "testid:add-item", "testid:wizard-next"),
    "expense-review": ("testid:submit-report",),
    "orders": ("name:status", "testid:orders-filter-apply", "testid:page-next"),
}
#: Where each state is (for the trajectories' events).
STATE_PATHS: Final = {
    "/login": "login",
    "/contacts": "contacts",
    "/contacts/new": "contact-form",
    "/expenses/new": "expense-details",
    "/expenses/new/items": "expense-items",
    "/expenses/new/review": "expense-review",
    "/orders": "orders",
}
#: The drift under test: every variant, and combinations of the ones that change targets.
VARIANTS: Final[tuple[tuple[str, ...], ...]] = (
    ("renamed-ids",),
    ("relabeled",),
    ("reordered",),
    ("consent-banner",),
    ("announcement",),
    ("slow",),
    ("list-layout",),
    ("similar-sibling",),
    ("relabeled", "renamed-ids"),
    ("similar-sibling", "relabeled"),
    ("reordered", "relabeled"),
    ("similar-sibling", "relabeled", "renamed-ids"),
    ("list-layout", "relabeled", "renamed-ids"),
    ("reordered", "similar-sibling", "relabeled", "renamed-ids", "consent-banner", "announcement"),
)
#: The share of targets a variant must match (the rest may be declined, none may be wrong).
MIN_MATCHED: Final = 0.9

READY: Final = "() => !document.querySelector('template[data-js=deferred], [data-js=spinner]')"

Key = tuple[str, str]  # (state, logical target)


def identity(fingerprint: Fingerprint) -> str | None:
    """The logical element: form name, else test id, else a link's path; None for the rest."""
    attributes = fingerprint.attributes
    tag = fingerprint.tag or ""
    if tag in ("input", "select", "textarea") and attributes.get("name"):
        return f"name:{attributes['name']}"
    if attributes.get("data-testid"):
        return f"testid:{attributes['data-testid']}"
    if tag == "a" and attributes.get("href"):
        return f"href:{urlsplit(attributes['href']).path}"
    return None


def selector_of(target: str) -> str:
    """A CSS selector for a logical target on the original site."""
    kind, _, value = target.partition(":")
    attribute = {"name": "name", "testid": "data-testid", "href": "href"}[kind]
    return f'[{attribute}="{value}"]'


def trajectory_fingerprints() -> dict[Key, Fingerprint]:
    """The key targets' fingerprints as recorded in tests/data (the first one of each)."""
    found: dict[Key, Fingerprint] = {}
    for path in sorted(TRAJECTORIES.glob("*.trajectory.json")):
        for event in json.loads(path.read_text(encoding="utf-8"))["events"]:
            target = event.get("target")
            if not target or not target.get("fingerprint"):
                continue
            fingerprint = Fingerprint.model_validate(target["fingerprint"])
            state = STATE_PATHS.get(urlsplit(event["before"]["url"]).path)
            logical = identity(fingerprint)
            if state and logical in TARGETS[state]:
                found.setdefault((state, logical), fingerprint)
    return found


# ── the browser ───────────────────────────────────────────────────────────────────────────────


class DemoBrowser(BrowserLoop):
    """One headless Chromium for the module, with its own event loop; walks the demo tasks."""

    def walk(self, variants: Sequence[str], *, describe: bool = False) -> Walk:
        """The candidates of every state of the demo tasks on a site with ``variants``."""
        with DemoSite(variants=list(variants)) as site:
            return self.run(self._walk(site.url, describe))

    async def _walk(self, base: str, describe: bool) -> Walk:
        context = await self.browser.new_context(viewport={"width": 1280, "height": 800})
        try:
            page = await context.new_page()
            walk = Walk(page, describe)
            await walk.through_the_tasks(base)
            return walk
        finally:
            await context.close()


@dataclass
class Walk:
    """The demo tasks walked through (by the hooks no variant changes, overlays left open)."""

    page: Page
    describe: bool
    candidates: dict[str, list[Fingerprint]] = field(default_factory=dict)
    described: dict[Key, Fingerprint] = field(default_factory=dict)

    async def through_the_tasks(self, base: str) -> None:
        page = self.page
        await page.goto(f"{base}/login")
        await self.look("login")
        await page.locator("[name=username]").fill(DEMO_USERNAME)
        await page.locator("[name=password]").fill(DEMO_PASSWORD)
        await self.submit("[data-testid=sign-in]")
        await self.look("contacts")
        await page.goto(f"{base}/contacts/new")
        await self.look("contact-form")
        await page.goto(f"{base}/expenses/new")
        await self.look("expense-details")
        await page.locator("[name=title]").fill("Client visit Berlin")
        await page.locator("[name=date]").fill("2026-11-24")
        await page.locator("[name=category]").select_option("Travel")
        await self.submit("[data-testid=wizard-next]")
        await self.look("expense-items")
        await page.locator("[name=description]").fill("Train ticket")
        await page.locator("[name=amount]").fill("129.90")
        await self.submit("[data-testid=wizard-next]")
        await self.look("expense-review")
        await page.goto(f"{base}/orders")
        await self.look("orders")
        assert await page.evaluate("() => window.__procedura.errors()") == []

    async def submit(self, selector: str) -> None:
        """Submit a form with its button, whatever overlay covers it (as the server sees it)."""
        async with self.page.expect_navigation():
            await self.page.locator(selector).evaluate("(b) => b.form.requestSubmit(b)")

    async def look(self, state: str) -> None:
        """Inject the script as replay does; keep the candidates (and describe the targets)."""
        page = self.page
        await page.wait_for_function(READY)
        await page.evaluate("() => { window.__proceduraDescribeOnly = true; }")
        await page.evaluate(CAPTURE_SCRIPT.read_text(encoding="utf-8"))
        found = await page.evaluate("() => window.__procedura.candidates()")
        self.candidates[state] = [Fingerprint.model_validate(c["fingerprint"]) for c in found]
        if not self.describe:
            return
        for target in TARGETS[state]:
            element = page.locator(selector_of(target)).first
            described = await element.evaluate("(el) => window.__procedura.describe(el)")
            self.described[(state, target)] = Fingerprint.model_validate(described["fingerprint"])


@dataclass
class Tally:
    """What ``best_match`` did for one variant."""

    matched: int = 0
    declined: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    right_scores: list[float] = field(default_factory=list)
    margins: list[float] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.matched + len(self.declined) + len(self.wrong)

    def summary(self, name: str) -> str:
        return (
            f"{name}: {self.matched} matched, {len(self.declined)} declined, "
            f"{len(self.wrong)} wrong; right scores >= {min(self.right_scores):.2f}, "
            f"margins >= {min(self.margins):.2f}"
        )


@pytest.fixture(scope="module")
def demo() -> Iterator[DemoBrowser]:
    browser = DemoBrowser()
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture(scope="module")
def recorded(demo: DemoBrowser) -> dict[str, dict[Key, Fingerprint]]:
    """The targets' fingerprints from the original site and from the stored recordings."""
    original = demo.walk([], describe=True)
    for (state, target), fingerprint in original.described.items():
        # describe() and candidates() give the same fingerprint for the same element (a
        # candidate's item has its texts in page order, and no locator inside the item).
        shown = [_item_texts_as_a_set(c) for c in original.candidates[state]]
        assert _item_texts_as_a_set(fingerprint) in shown, (state, target)
    from_files = trajectory_fingerprints()
    assert set(from_files) == set(original.described)
    return {"described": original.described, "trajectories": from_files}


def _item_texts_as_a_set(fp: Fingerprint) -> Fingerprint:
    if fp.item is None:
        return fp
    texts = tuple(sorted(fp.item.texts))
    return fp.model_copy(
        update={
            "item": fp.item.model_copy(
                update={
                    "texts": texts,
                    "inner": None,
                    "text_css": (),
                    "own_css": None,
                    "list": None,
                }
            )
        }
    )


def judge(
    recorded: Mapping[Key, Fingerprint], candidates: Mapping[str, list[Fingerprint]]
) -> Tally:
    """Run ``best_match`` for every target and sort the outcomes."""
    tally = Tally()
    for (state, target), fingerprint in recorded.items():
        found = candidates[state]
        right = [i for i, c in enumerate(found) if identity(c) == target]
        assert len(right) == 1, f"{target} on {state}: {len(right)} candidates"
        scores = [score(fingerprint, c).score for c in found]
        tally.right_scores.append(scores[right[0]])
        tally.margins.append(
            scores[right[0]] - max(s for i, s in enumerate(scores) if i != right[0])
        )
        match = best_match(fingerprint, found)
        if match.index is None:
            tally.declined.append(f"{target} ({match.reason})")
        elif match.index == right[0]:
            tally.matched += 1
        else:
            assert match.best is not None
            chosen = found[match.index]
            tally.wrong.append(
                f"{target} on {state} -> {identity(chosen)} {chosen.name!r} "
                f"{match.score:.2f} vs {match.runner_up:.2f}: {match.best.breakdown}"
            )
    return tally


@pytest.mark.slow
def test_the_original_site_matches_itself(
    demo: DemoBrowser, recorded: dict[str, dict[Key, Fingerprint]]
) -> None:
    walk = demo.walk([])
    for source, fingerprints in recorded.items():
        tally = judge(fingerprints, walk.candidates)
        print(tally.summary(f"original ({source})"))
        assert tally.wrong == [] and tally.declined == []


@pytest.mark.slow
@pytest.mark.parametrize("variants", VARIANTS, ids=lambda v: "+".join(v))
def test_drift_finds_the_same_element_or_declines(
    demo: DemoBrowser, recorded: dict[str, dict[Key, Fingerprint]], variants: tuple[str, ...]
) -> None:
    walk = demo.walk(variants)
    for source, fingerprints in recorded.items():
        tally = judge(fingerprints, walk.candidates)
        print(tally.summary(f"{'+'.join(variants)} ({source})"))
        assert tally.wrong == []
        assert tally.matched >= MIN_MATCHED * tally.total, tally.declined


@pytest.mark.slow
def test_a_vanished_target_is_never_replaced_by_another_control(
    demo: DemoBrowser, recorded: dict[str, dict[Key, Fingerprint]]
) -> None:
    """With the target gone, nothing bearing another name or test id is chosen (decoys!).

    What may be chosen is a hook-less twin that does the same: the navigation's "New contact"
    link for the page's "New contact" button-link (same path).
    """
    for variants in (("similar-sibling",), ("similar-sibling", "relabeled", "renamed-ids")):
        walk = demo.walk(variants)
        for (state, target), fingerprint in recorded["described"].items():
            rest = [c for c in walk.candidates[state] if identity(c) != target]
            match = best_match(fingerprint, rest)
            if match.index is None:
                continue
            chosen = rest[match.index]
            hooks = {"name", "data-testid"} & set(chosen.attributes)
            assert not hooks, (target, identity(chosen), match.best)
            assert chosen.attributes.get("href") == fingerprint.attributes.get("href")
