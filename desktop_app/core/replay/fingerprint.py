"""Rung 2 of the healing ladder: find the recorded element again by its fingerprint.

When every recorded locator fails, replay lists the page's visible actionable elements (the
capture script's ``candidates()``) and compares the recorded :class:`Fingerprint` with each:

* **kind** is a hard gate: a text field never matches a button, a select never matches a
  checkbox. Clickables (buttons, links, menu items, tabs…) may match one another, since a button
  restyled as a link is common drift, but an exact role scores better.
* **accessible name** and **visible text**: fuzzy, token-based (rapidfuzz), so word order and
  case do not matter and a relabeled control ("Save" → "Save contact") still scores something.
* **stable attributes**: form ``name``, ``type``, test ids (``data-testid``, ``data-test``,
  ``data-qa``), the ``href`` path (never the origin: a site moves between hosts and ports),
  ``placeholder``, ``aria-label``, ``title``, ``alt``, ``autocomplete``. ``id``, ``for`` and
  ``class`` weigh little: front-end builds churn them.
* **context**: the nearby texts (label, heading, legend, row), the ancestor chain, and (a little)
  the position on the page.

A feature that is missing on either side is neutral: it is left out of the weighted mean, never
counted as a mismatch. The score is that mean, in [0, 1].

:func:`best_match` accepts the best candidate only when its score reaches ``threshold``, it
rests on something that identifies an element (a name, a text, a test id, a link, a form name…:
``IDENTIFYING_FEATURES``, not only kind, class and context), and it leads the runner-up by
``margin``: never a coin toss between near-equals.

The defaults come from the demo app (``tests/test_fingerprint_match.py``): the 21 key targets of
its tasks, recorded on the original site (described live, and as stored in the fixtures), looked
for on the original and 14 drift variants and combinations, 630 decisions in all:

* the right element scores 0.58–1.0 (10th percentile 0.71, median 0.96); the lowest are selects
  and fields relabeled, renamed and moved at once (only role and form ``name`` still agree);
* with the right element present, the best other candidate scores at most 0.84 (the navigation's
  "New contact" link, a same-path twin of the page's "New contact" link), else at most 0.39 for
  90 % of targets; the right element leads it by 0.13 at least (10th percentile 0.46);
* with the right element removed, the best remaining one scores at most 0.45 (another contact
  link, 0.06 ahead of the next one), and the similar-sibling decoys (Save draft, Full name
  (legal), Payment status) at most 0.38, thanks to ``CONFLICT_FACTOR``.

Hence ``DEFAULT_THRESHOLD`` 0.5, between 0.45 (the best wrong choice when the target is gone) and
0.58 (the worst right one), and ``DEFAULT_MARGIN`` 0.1, under the smallest lead of a right
element (0.13) and over the gaps between wrong near-equals (0.01–0.06; without test ids and form
names, "Save draft" and "Save contact" for a recorded "Save" are 0.01 apart).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final
from urllib.parse import parse_qsl, urlsplit

from rapidfuzz import fuzz, utils
from rapidfuzz.distance import Indel

from desktop_app.core.models.common import BoundingBox
from desktop_app.core.models.target import Fingerprint

__all__ = [
    "CONFLICT_FACTOR",
    "DEFAULT_MARGIN",
    "DEFAULT_THRESHOLD",
    "IDENTIFYING_FEATURES",
    "Feature",
    "Match",
    "MatchScore",
    "best_match",
    "href_similarity",
    "score",
    "text_similarity",
]

DEFAULT_THRESHOLD: Final = 0.5
"""The least score :func:`best_match` accepts (the module docstring gives the data behind it)."""

DEFAULT_MARGIN: Final = 0.1
"""How far the best candidate must lead the runner-up for :func:`best_match` to accept it."""

#: Features that tell which element it is (not only of which kind, or where): a match must rest
#: on at least one of them.
IDENTIFYING_FEATURES: Final = frozenset(
    {"name", "text", "testid", "href", "attr name", "attr id", "attr option-value", "item"}
    | {"attr placeholder", "attr aria-label", "attr title", "attr alt"}
)

# ── weights ───────────────────────────────────────────────────────────────────────────────────

W_ROLE: Final = 1.0
W_TAG: Final = 0.5
W_NAME: Final = 3.0
W_TEXT: Final = 1.0
W_NEARBY: Final = 1.5
W_ANCESTORS: Final = 1.0
W_POSITION: Final = 0.5
#: The texts of the repeated item (row, list item, card) the element is in.
W_ITEM: Final = 2.0

#: Attributes compared for equality (after trimming and, where it makes sense, lowercasing).
EXACT_ATTRIBUTES: Final[dict[str, float]] = {
    "name": 4.0,
    "option-value": 3.0,
    "type": 0.5,
    "autocomplete": 0.5,
    "id": 0.5,
    "for": 0.25,
}
#: Attributes compared fuzzily (human text that may be reworded).
TEXT_ATTRIBUTES: Final[dict[str, float]] = {
    "placeholder": 1.0,
    "aria-label": 1.0,
    "title": 0.5,
    "alt": 0.5,
}
TEST_ID_ATTRIBUTES: Final = ("data-testid", "data-test", "data-qa")
W_TEST_ID: Final = 5.0
W_HREF: Final = 2.0
W_CLASS: Final = 0.25

#: What the score is multiplied by when both sides carry a test id, or both a form ``name``, and
#: they differ: those are set on purpose and rarely change, so a conflict means another element
#: far more often than a rebuild (a look-alike decoy such as "Save draft" next to "Save").
CONFLICT_FACTOR: Final = 0.6
#: The features whose disagreement is a conflict (an option's own value tells the options of
#: one radio group apart: their ``name`` is the group's).
_IDENTIFIERS: Final = frozenset({"testid", "attr name", "attr option-value"})

#: Pixels at which the position similarity has dropped to 1/e.
POSITION_SCALE_PX: Final = 250.0

# ── kinds: the hard gate ──────────────────────────────────────────────────────────────────────

_TEXT_ROLES: Final = frozenset({"textbox", "searchbox", "spinbutton"})
_CHOICE_ROLES: Final = frozenset({"combobox", "listbox"})
_TOGGLE_ROLES: Final = frozenset({"checkbox", "switch", "menuitemcheckbox"})
_RADIO_ROLES: Final = frozenset({"radio", "menuitemradio"})
_TEXT_INPUT_TYPES: Final = frozenset(
    {"", "text", "email", "tel", "url", "search", "password", "number"}
    | {"date", "time", "datetime-local", "month", "week"}
)


def _kind(fp: Fingerprint) -> str:
    """What one can do with the element: text, choice, toggle, radio, slider, file, label, press."""
    role = (fp.role or "").lower()
    tag = (fp.tag or "").lower()
    input_type = fp.attributes.get("type", "").strip().lower() if tag == "input" else ""
    if tag == "input" and input_type == "file":
        return "file"
    editable = fp.attributes.get("contenteditable", "false").strip().lower()
    if editable in ("", "true", "plaintext-only") and role in ("", "textbox", "searchbox"):
        return "text"
    if role in _TEXT_ROLES or (role == "combobox" and tag == "input"):
        return "text"
    if role in _CHOICE_ROLES:
        return "choice"
    if role in _TOGGLE_ROLES:
        return "toggle"
    if role in _RADIO_ROLES:
        return "radio"
    if role == "slider":
        return "slider"
    if not role:
        if tag == "textarea" or (tag == "input" and input_type in _TEXT_INPUT_TYPES):
            return "text"
        if tag == "select":
            return "choice"
        if tag == "label":
            return "label"
    return "press"


# ── results ───────────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class Feature:
    """One compared feature: its weight, how similar the two sides are, and a short note."""

    name: str
    weight: float
    similarity: float
    note: str


@dataclass(frozen=True, slots=True)
class MatchScore:
    """How much a candidate looks like the recorded element.

    ``score`` is the weighted mean of the compared ``features`` (0 when the kinds are
    incompatible), ``evidence`` their total weight, and ``breakdown`` a short human summary of
    what agreed, e.g. ``role=textbox, name~0.86, attr name=full_name, near 'Email'``.
    """

    score: float
    breakdown: str
    features: tuple[Feature, ...] = ()
    compatible: bool = True

    @property
    def evidence(self) -> float:
        """The total weight of the features compared."""
        return sum(f.weight for f in self.features)

    @property
    def identifying(self) -> bool:
        """Whether a feature that tells elements apart was compared (see IDENTIFYING_FEATURES)."""
        return any(f.name in IDENTIFYING_FEATURES for f in self.features)


@dataclass(frozen=True, slots=True)
class Match:
    """What :func:`best_match` decided.

    ``index`` is the accepted candidate, or None when it declined; ``reason`` then says why
    ("no candidates", "below threshold 0.50: best 0.42", "ambiguous: 0.71 vs 0.69"…).
    ``best_index`` is the best-scoring candidate either way (for reports and for the next
    rungs), ``score`` its score and ``runner_up`` the second-best score (0 when there is none).
    """

    index: int | None
    score: float
    runner_up: float
    reason: str | None
    best_index: int | None = None
    best: MatchScore | None = None

    @property
    def accepted(self) -> bool:
        """Whether a candidate was chosen."""
        return self.index is not None


# ── similarity helpers ────────────────────────────────────────────────────────────────────────


def _clean(text: str | None) -> str:
    """Whitespace collapsed; "" for None."""
    return " ".join((text or "").split())


#: What two unrelated short texts score anyway on rapidfuzz's 0–100 scale (shared letters:
#: "Next" and "Cancel" score 40); :func:`text_similarity` maps it to 0.
TEXT_NOISE_FLOOR: Final = 40.0


def text_similarity(a: str, b: str) -> float:
    """Token-based similarity of two human texts in [0, 1], ignoring case, punctuation, order.

    The mean of rapidfuzz's token-sort ratio (every word counts) and token-set ratio (one text's
    words all found in the other count fully), so "Save" → "Save contact" keeps some credit
    (0.58), rescaled so that the noise floor of unrelated words is 0.
    """
    if a == b:
        return 1.0
    sort = fuzz.token_sort_ratio(a, b, processor=utils.default_process)
    token_set = fuzz.token_set_ratio(a, b, processor=utils.default_process)
    mean = (sort + token_set) / 2.0
    return max(0.0, (mean - TEXT_NOISE_FLOOR) / (100.0 - TEXT_NOISE_FLOOR))


def _href_parts(href: str) -> tuple[str, frozenset[tuple[str, str]], str]:
    """The path, query pairs and fragment of a link (its origin left out on purpose)."""
    parts = urlsplit(href.strip())
    query = frozenset(parse_qsl(parts.query, keep_blank_values=True))
    path = parts.path.rstrip("/") or ("/" if parts.path else "")  # "" for "#top": this page
    return path, query, parts.fragment


def href_similarity(a: str, b: str) -> float:
    """Links compared by path (1/2), then query pairs and fragment; 0 when the paths differ."""
    path_a, query_a, fragment_a = _href_parts(a)
    path_b, query_b, fragment_b = _href_parts(b)
    if path_a != path_b:
        return 0.0
    union = query_a | query_b
    query = len(query_a & query_b) / len(union) if union else 1.0
    fragment = 1.0 if fragment_a == fragment_b else 0.0
    return 0.5 + 0.35 * query + 0.15 * fragment


def _class_similarity(a: str, b: str) -> float:
    """Jaccard similarity of two class lists."""
    set_a, set_b = set(a.split()), set(b.split())
    union = set_a | set_b
    return len(set_a & set_b) / len(union) if union else 1.0


def _nearby_similarity(recorded: Sequence[str], candidate: Sequence[str]) -> tuple[float, str]:
    """How much of the recorded nearby text is near the candidate; and the best-kept text."""
    best_sum = 0.0
    kept = ""
    kept_similarity = 0.0
    for text in recorded:
        similarity = max((text_similarity(text, other) for other in candidate), default=0.0)
        best_sum += similarity
        if similarity > kept_similarity:
            kept, kept_similarity = text, similarity
    return best_sum / len(recorded), kept if kept_similarity >= 0.8 else ""


def _ancestor_similarity(recorded: Sequence[str], candidate: Sequence[str]) -> float:
    """The ancestor chains compared by tags (mostly) and by their id/class labels."""
    tags = Indel.normalized_similarity(
        [label.split("#")[0].split(".")[0] for label in recorded],
        [label.split("#")[0].split(".")[0] for label in candidate],
    )
    labels = Indel.normalized_similarity(list(recorded), list(candidate))
    return 0.7 * float(tags) + 0.3 * float(labels)


def _center(box: BoundingBox) -> tuple[float, float]:
    """The centre of a box."""
    return box.x + box.width / 2, box.y + box.height / 2


def _position_similarity(a: BoundingBox, b: BoundingBox) -> float:
    """exp(-distance / POSITION_SCALE_PX) between the boxes' centres."""
    (ax, ay), (bx, by) = _center(a), _center(b)
    return math.exp(-math.hypot(ax - bx, ay - by) / POSITION_SCALE_PX)


def _short(text: str, limit: int = 24) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis, for breakdowns."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ── features ──────────────────────────────────────────────────────────────────────────────────


def _attribute(fp: Fingerprint, name: str) -> str:
    """An attribute's trimmed value ("" when absent); an input's missing type is "text"."""
    value = fp.attributes.get(name, "").strip()
    if name == "type" and not value and (fp.tag or "").lower() == "input":
        return "text"
    return value


def _role_features(recorded: Fingerprint, candidate: Fingerprint) -> list[Feature]:
    """Role (a different clickable role gets half) and tag."""
    features = []
    if recorded.role and candidate.role:
        same = recorded.role == candidate.role
        note = f"role={candidate.role}" if same else f"role {recorded.role}→{candidate.role}"
        features.append(Feature("role", W_ROLE, 1.0 if same else 0.5, note))
    if recorded.tag and candidate.tag:
        same = recorded.tag.lower() == candidate.tag.lower()
        features.append(Feature("tag", W_TAG, 1.0 if same else 0.0, f"tag={candidate.tag}"))
    return features


def _text_features(recorded: Fingerprint, candidate: Fingerprint) -> list[Feature]:
    """Accessible name and visible text, fuzzily."""
    features = []
    pairs = (
        ("name", W_NAME, recorded.name, candidate.name),
        ("text", W_TEXT, recorded.text, candidate.text),
    )
    for label, weight, mine, theirs in pairs:
        a, b = _clean(mine), _clean(theirs)
        if a and b:
            similarity = text_similarity(a, b)
            note = f"{label}={_short(b)!r}" if similarity == 1.0 else f"{label}~{similarity:.2f}"
            features.append(Feature(label, weight, similarity, note))
    return features


def _attribute_features(recorded: Fingerprint, candidate: Fingerprint) -> list[Feature]:
    """Stable attributes, exactly or fuzzily; test ids, link, and (a little) the classes."""
    features = []
    for name, weight in EXACT_ATTRIBUTES.items():
        a, b = _attribute(recorded, name), _attribute(candidate, name)
        if a and b:
            same = a.lower() == b.lower() if name in ("type", "autocomplete") else a == b
            note = f"attr {name}={_short(b)}" if same else f"attr {name}≠"
            features.append(Feature(f"attr {name}", weight, 1.0 if same else 0.0, note))
    for name, weight in TEXT_ATTRIBUTES.items():
        a, b = _clean(recorded.attributes.get(name)), _clean(candidate.attributes.get(name))
        if a and b:
            similarity = text_similarity(a, b)
            features.append(Feature(f"attr {name}", weight, similarity, f"{name}~{similarity:.2f}"))
    features.extend(_test_id_features(recorded, candidate))
    href_a, href_b = _attribute(recorded, "href"), _attribute(candidate, "href")
    if href_a and href_b:
        similarity = href_similarity(href_a, href_b)
        features.append(Feature("href", W_HREF, similarity, f"href~{similarity:.2f}"))
    class_a, class_b = _attribute(recorded, "class"), _attribute(candidate, "class")
    if class_a and class_b:
        similarity = _class_similarity(class_a, class_b)
        features.append(Feature("class", W_CLASS, similarity, f"class~{similarity:.2f}"))
    return features


def _test_id_features(recorded: Fingerprint, candidate: Fingerprint) -> list[Feature]:
    """Test ids compared across the three usual attributes (a site may switch between them)."""
    mine = {v for v in (_attribute(recorded, a) for a in TEST_ID_ATTRIBUTES) if v}
    theirs = {v for v in (_attribute(candidate, a) for a in TEST_ID_ATTRIBUTES) if v}
    if not mine or not theirs:
        return []
    shared = mine & theirs
    note = f"testid={_short(min(shared))}" if shared else "testid≠"
    return [Feature("testid", W_TEST_ID, 1.0 if shared else 0.0, note)]


def _context_features(recorded: Fingerprint, candidate: Fingerprint) -> list[Feature]:
    """Nearby texts, the ancestor chain and the position."""
    features = []
    mine = [t for t in (_clean(t) for t in recorded.nearby_text) if t]
    theirs = [t for t in (_clean(t) for t in candidate.nearby_text) if t]
    if mine and theirs:
        similarity, kept = _nearby_similarity(mine, theirs)
        note = f"near {_short(kept)!r}" if kept else f"near~{similarity:.2f}"
        features.append(Feature("nearby", W_NEARBY, similarity, note))
    if recorded.ancestors and candidate.ancestors:
        similarity = _ancestor_similarity(recorded.ancestors, candidate.ancestors)
        features.append(
            Feature("ancestors", W_ANCESTORS, similarity, f"ancestors~{similarity:.2f}")
        )
    if recorded.bbox is not None and candidate.bbox is not None:
        similarity = _position_similarity(recorded.bbox, candidate.bbox)
        features.append(Feature("position", W_POSITION, similarity, f"pos~{similarity:.2f}"))
    if recorded.item is not None and candidate.item is not None and recorded.item.texts:
        similarity, kept = _item_similarity(recorded.item.texts, candidate.item.texts)
        note = f"in item {_short(kept)!r}" if kept else f"item~{similarity:.2f}"
        features.append(Feature("item", W_ITEM, similarity, note))
    return features


def _item_similarity(recorded: Sequence[str], candidate: Sequence[str]) -> tuple[float, str]:
    """How much of the recorded item's texts the candidate's item shows (exactly, ignoring
    case and spaces): the first text (the one that told the item from its siblings) counts for
    half; and that first text when it is shown."""
    shown = {_clean(t).casefold() for t in candidate}
    hits = [_clean(t).casefold() in shown for t in recorded]
    first = 1.0 if hits[0] else 0.0
    rest = sum(hits[1:]) / (len(hits) - 1) if len(hits) > 1 else first
    return 0.5 * first + 0.5 * rest, recorded[0] if hits[0] else ""


_FEATURE_GROUPS: Final[tuple[Callable[[Fingerprint, Fingerprint], list[Feature]], ...]] = (
    _role_features,
    _text_features,
    _attribute_features,
    _context_features,
)

#: Rounding slack for comparisons of scores (kept to 4 decimals).
_EPSILON: Final = 1e-6

#: A feature this similar agrees (its note goes into the breakdown).
_AGREES: Final = 0.75


def _breakdown(features: Sequence[Feature]) -> str:
    """The notes of the features that agreed (and of heavy ones that clearly did not)."""
    notes = [f.note for f in features if f.similarity >= _AGREES]
    notes += [f.note for f in features if f.similarity < 0.25 and f.weight >= W_NAME]
    return ", ".join(notes) if notes else "nothing agreed"


# ── public api ────────────────────────────────────────────────────────────────────────────────


def score(recorded: Fingerprint, candidate: Fingerprint) -> MatchScore:
    """How much ``candidate`` looks like the ``recorded`` element, in [0, 1] (see module doc)."""
    kind_a, kind_b = _kind(recorded), _kind(candidate)
    if kind_a != kind_b:
        return MatchScore(0.0, f"incompatible: {kind_a} vs {kind_b}", (), compatible=False)
    features = tuple(f for group in _FEATURE_GROUPS for f in group(recorded, candidate))
    weight = sum(f.weight for f in features)
    if weight <= 0:
        return MatchScore(0.0, "nothing to compare", features)
    value = sum(f.weight * f.similarity for f in features) / weight
    breakdown = _breakdown(features)
    if any(f.name in _IDENTIFIERS and f.similarity == 0.0 for f in features):
        value *= CONFLICT_FACTOR
        breakdown += f" (identifier conflict: ×{CONFLICT_FACTOR})"
    return MatchScore(round(min(max(value, 0.0), 1.0), 4), breakdown, features)


def best_match(
    recorded: Fingerprint,
    candidates: Sequence[Fingerprint],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    margin: float = DEFAULT_MARGIN,
) -> Match:
    """The candidate that is clearly the recorded element, or a reasoned refusal.

    Accepts the best-scoring candidate only if its score is at least ``threshold``, an
    identifying feature was compared, and it leads the runner-up by at least ``margin``.
    """
    if not candidates:
        return Match(None, 0.0, 0.0, "no candidates")
    scores = [score(recorded, candidate) for candidate in candidates]
    ranked = sorted(range(len(scores)), key=lambda i: scores[i].score, reverse=True)
    best_index = ranked[0]
    best = scores[best_index]
    runner_up = scores[ranked[1]].score if len(ranked) > 1 else 0.0
    reason = _decline_reason(best, runner_up, threshold, margin)
    return Match(
        None if reason else best_index,
        best.score,
        runner_up,
        reason,
        best_index,
        best,
    )


def _decline_reason(
    best: MatchScore, runner_up: float, threshold: float, margin: float
) -> str | None:
    """Why the best candidate is not accepted, or None when it is."""
    if not best.compatible:
        return "no compatible candidate"
    if best.score < threshold:
        return f"below threshold {threshold:.2f}: best {best.score:.2f}"
    if not best.identifying:
        return f"too little evidence: {best.breakdown}"
    if best.score - runner_up < margin - _EPSILON:
        return f"ambiguous: {best.score:.2f} vs {runner_up:.2f}"
    return None
