"""Recorded values and where they recur: a value becomes its parameter's ``{placeholder}``
wherever it shows up again, but only as a whole value.

* In texts a person reads (step titles, messages, page titles, accessible names, text locators,
  the text an item is told by): as a whole word sequence, never inside another word ("Jane" is
  not templated in "Janet").
* In addresses: as a whole path segment, query value or segment of a route in the fragment
  (``#/items/Jane``), plain or URL-quoted; never where the same segment or value was already
  part of an address recorded before the value was entered: that is the site's own structure
  (the user name ``admin`` leaves ``/admin/`` alone).
* In CSS and XPath selectors: as a whole quoted value (``[name="Jane Doe"]``).
* In test ids: as the whole id.
* Never a value shorter than three characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final
from urllib.parse import unquote, unquote_plus

from desktop_app.core.models.target import ItemScope, Locator, LocatorStrategy, Target
from desktop_app.core.models.workflow import Parameter, ParameterType
from desktop_app.core.templating import escape

__all__ = ["MIN_VALUE", "Slot", "Templater", "url_parts"]

#: A recorded value shorter than this is never looked for elsewhere: too likely by chance.
MIN_VALUE: Final = 3
#: A message part shorter than this, once the numbers that vary are cut out, checks nothing.
_MIN_MESSAGE: Final = 8
_PLACEHOLDER: Final = re.compile(r"\{[a-z_][a-z0-9_]*\}")
_DIGITS: Final = re.compile(r"\d+")
_QUOTED: Final = re.compile(r"""(["'])((?:\\.|(?!\1).)*)\1""")
_URL: Final = re.compile(r"^(?P<base>[^?#]*)(?P<query>\?[^#]*)?(?P<fragment>#.*)?$", re.DOTALL)
_WORD: Final = re.compile(r"\w")
#: Locator strategies whose value is a text a person reads.
_HUMAN: Final = frozenset(
    {LocatorStrategy.LABEL, LocatorStrategy.PLACEHOLDER, LocatorStrategy.TEXT}
)


@dataclass
class Slot:
    """A parameter and the value recorded for it.

    Attributes:
        parameter: the parameter.
        value: the recorded value (None for a secret or a checkbox's state).
        since: the index of the event that entered (or clicked) it.
        in_urls: whether it may be templated in addresses (False when it was part of an
            address recorded before it was entered).
    """

    parameter: Parameter
    value: str | None
    since: int = 0
    in_urls: bool = True

    @property
    def placeholder(self) -> str:
        """``{name}``."""
        return "{" + self.parameter.name + "}"

    @property
    def wanted(self) -> str | None:
        """The value to look for elsewhere, if it is long enough to be told apart."""
        value = self.value.strip() if self.value is not None else ""
        return value if len(value) >= MIN_VALUE else None


def _map_url(url: str, segment: Callable[[str], str], value: Callable[[str], str]) -> str:
    """*url* with each path segment, query value and fragment route segment passed through
    *segment* or *value* (both get the raw text and return the text to put there); anything
    else (scheme, host, query keys, a fragment that is no route) comes back escaped."""
    match = _URL.match(url)
    if match is None:  # pragma: no cover - the pattern matches any string
        return escape(url)
    base, query, fragment = match.group("base", "query", "fragment")
    origin_end = base.find("/", base.find("://") + 3) if "://" in base else 0
    if origin_end < 0:
        origin_end = len(base)
    out = escape(base[:origin_end]) + _map_path(base[origin_end:], segment)
    if query is not None:
        out += "?" + _map_query(query[1:], value)
    if fragment is not None:
        route = fragment[1:]
        if route.startswith(("/", "!/")):
            path, mark, rest = route.partition("?")
            out += "#" + _map_path(path, segment) + (mark + _map_query(rest, value) if mark else "")
        else:
            out += "#" + escape(route)
    return out


def _map_path(path: str, segment: Callable[[str], str]) -> str:
    return "/".join(segment(part) if part else part for part in path.split("/"))


def _map_query(query: str, value: Callable[[str], str]) -> str:
    pairs = []
    for pair in query.split("&"):
        key, equals, raw = pair.partition("=")
        pairs.append(escape(key) + equals + value(raw) if equals else escape(pair))
    return "&".join(pairs)


def url_parts(url: str) -> set[str]:
    """The path segments, query values and fragment route segments of *url*, unquoted."""
    found: set[str] = set()

    def segment(raw: str) -> str:
        found.add(unquote(raw))
        return raw

    def value(raw: str) -> str:
        found.add(unquote_plus(raw))
        return raw

    _map_url(url, segment, value)
    return found


class Templater:
    """The slots found so far, and texts, addresses and locators with their values templated."""

    def __init__(self) -> None:
        self.slots: list[Slot] = []
        self._cache: tuple[int, re.Pattern[str] | None, dict[str, str]] | None = None

    def add(self, slot: Slot) -> str:
        """Add *slot*; its placeholder."""
        self.slots.append(slot)
        return slot.placeholder

    def slot(self, name: str) -> Slot | None:
        """The slot of the parameter called *name*."""
        return next((s for s in self.slots if s.parameter.name == name), None)

    def choices(self) -> set[str]:
        """The placeholders of choice parameters (an option's own label shows it anyway)."""
        return {s.placeholder for s in self.slots if s.parameter.type is ParameterType.CHOICE}

    def _lookup(self, *, urls: bool = False) -> dict[str, str]:
        """Value → placeholder, the first slot of a value winning."""
        found: dict[str, str] = {}
        for slot in self.slots:
            value = slot.wanted
            if value is not None and (slot.in_urls or not urls):
                found.setdefault(value, slot.placeholder)
        return found

    def _words(self) -> tuple[re.Pattern[str] | None, dict[str, str]]:
        """A pattern finding any value as a whole word sequence, longest first, and the
        placeholder of each; worked out again only when slots were added."""
        if self._cache is None or self._cache[0] != len(self.slots):
            lookup = self._lookup()
            alternatives = []
            for value in sorted(lookup, key=len, reverse=True):
                left = r"(?<!\w)" if _WORD.match(value[0]) else ""
                right = r"(?!\w)" if _WORD.match(value[-1]) else ""
                alternatives.append(left + re.escape(value) + right)
            pattern = re.compile("|".join(alternatives)) if alternatives else None
            self._cache = (len(self.slots), pattern, lookup)
        return self._cache[1], self._cache[2]

    def text(self, text: str) -> str:
        """*text*, a text a person reads, as a template: values found as whole words."""
        pattern, lookup = self._words()
        if pattern is None:
            return escape(text)
        out, at = [], 0
        for match in pattern.finditer(text):
            out += [escape(text[at : match.start()]), lookup[match.group(0)]]
            at = match.end()
        return "".join([*out, escape(text[at:])])

    def url(self, url: str) -> str:
        """*url* as a template: values found as whole segments or query values."""
        lookup = self._lookup(urls=True)
        return _map_url(
            url,
            lambda raw: lookup.get(unquote(raw), escape(raw)),
            lambda raw: lookup.get(unquote_plus(raw), escape(raw)),
        )

    def selector(self, selector: str) -> str:
        """A CSS or XPath *selector* as a template: values found as whole quoted values."""
        lookup = self._lookup()
        out, at = [], 0
        for match in _QUOTED.finditer(selector):
            quote, inner = match.group(1), match.group(2)
            if inner in lookup:
                out += [escape(selector[at : match.start()]), quote + lookup[inner] + quote]
                at = match.end()
        return "".join([*out, escape(selector[at:])])

    def whole(self, value: str) -> str:
        """*value* as a template: a placeholder when it is a recorded value as a whole."""
        return self._lookup().get(value, escape(value))

    def locator(self, loc: Locator) -> Locator:
        """*loc* with recorded values in its value, name and item scope made slots."""
        value, name, within = loc.value, loc.name, loc.within
        match loc.strategy:
            case LocatorStrategy.IMAGE_ANCHOR | LocatorStrategy.ACCESSIBLE:
                return loc  # desktop locators are never templated
            case LocatorStrategy.CSS | LocatorStrategy.XPATH:
                value = self.selector(value)
            case LocatorStrategy.TEST_ID:
                value = self.whole(value)
            case strategy if strategy in _HUMAN:
                value = self.text(value)
            case _:
                value = escape(value)
        if name is not None:
            name = self.text(name)
        if within is not None:
            within = self.scope(within)
        return loc.model_copy(update={"value": value, "name": name, "within": within})

    def scope(self, scope: ItemScope) -> ItemScope:
        """*scope* with recorded values in its items' selectors and texts made slots."""
        outer = self.scope(scope.outer) if scope.outer is not None else None
        return ItemScope(css=self.selector(scope.css), text=self.text(scope.text), outer=outer)

    def target(self, target: Target) -> Target:
        """*target* with recorded values in its locators made slots (the fingerprint is what
        was recorded, never a template)."""
        locators = tuple(self.locator(loc) for loc in target.locators)
        return target.model_copy(update={"locators": locators})

    def checkable(self, text: str) -> str | None:
        """*text* templated, as a check that holds next time: numbers that are no entered
        value (a new record's number: "Ticket #12 created") are cut out, keeping the longest
        part between them; None when too little is left to check anything."""
        templated = self.text(text.strip())
        if not _DIGITS.search(_PLACEHOLDER.sub("", templated)):
            return templated
        parts = [""]  # the text between numbers, placeholders kept whole
        for piece in re.split(f"({_PLACEHOLDER.pattern})", templated):
            if _PLACEHOLDER.fullmatch(piece):
                parts[-1] += piece
                continue
            literal = _DIGITS.split(piece)
            parts[-1] += literal[0]
            parts.extend(literal[1:])
        best = max((p.strip(" #:.,;-") for p in parts), key=len)
        return best if len(_PLACEHOLDER.sub("", best)) >= _MIN_MESSAGE else None
