"""What a step acts on: ranked locators plus a fingerprint of the element as recorded."""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import StrEnum
from typing import Final

from pydantic import Field, model_validator

from desktop_app.core.models.common import BoundingBox, FrozenModel

__all__ = [
    "Fingerprint",
    "ItemContext",
    "ItemList",
    "ItemScope",
    "Locator",
    "LocatorStrategy",
    "Target",
]


#: An XPath step picked by its index (``tr[2]``, ``*[local-name()='svg'][1]``).
_INDEXED_XPATH: Final = re.compile(r"\[\d+\]")
#: A CSS step picked by its position among siblings.
_POSITIONAL_CSS: Final = re.compile(r":(?:nth-(?:last-)?(?:of-type|child)|first-|last-|only-)")


class LocatorStrategy(StrEnum):
    """How a locator finds its element, most user-facing first."""

    ROLE = "role"
    LABEL = "label"
    PLACEHOLDER = "placeholder"
    TEST_ID = "test_id"
    TEXT = "text"
    CSS = "css"
    XPATH = "xpath"
    IMAGE_ANCHOR = "image_anchor"
    ACCESSIBLE = "accessible"


class ItemScope(FrozenModel):
    """The one item of a repeated structure (a table row, a list item, a card, a group of
    options) a locator looks inside: of the elements ``css`` matches, the one holding an element
    whose whole text is ``text`` (a cell, a title: "{full_name}", "Maria Garcia").

    Items are told apart by what they show, never by their position or a per-record key: with
    no such item, or more than one, the locator finds nothing.

    ``outer`` is the item this one is looked for in, when its own text does not tell it apart on
    the page: the field wrapper showing "Description" in the line item showing "Item 2". An
    outer item has no outer item of its own.
    """

    css: str = Field(min_length=1)
    text: str = Field(min_length=1)
    outer: ItemScope | None = None

    @model_validator(mode="after")
    def _one_outer(self) -> ItemScope:
        if self.outer is not None and self.outer.outer is not None:
            raise ValueError("an item's outer item has no outer item of its own")
        return self

    @property
    def scopes(self) -> tuple[ItemScope, ...]:
        """The items to look inside, outermost first (each without its outer)."""
        own = self.model_copy(update={"outer": None}) if self.outer is not None else self
        return (self.outer, own) if self.outer is not None else (own,)

    @property
    def texts(self) -> tuple[str, ...]:
        """The items' texts, outermost first."""
        return tuple(scope.text for scope in self.scopes)

    def with_texts(self, change: Callable[[str], str]) -> ItemScope:
        """This scope with each item's text changed by *change* (a run's values put in)."""
        outer = self.outer.with_texts(change) if self.outer is not None else None
        return self.model_copy(update={"text": change(self.text), "outer": outer})

    def describe(self) -> str:
        """A short human form, e.g. ``tr with "Maria Garcia"`` or ``fieldset with "Item 2" >>
        div.field with "Description"``."""
        own = f'{self.css} with "{self.text}"'
        return f"{self.outer.describe()} >> {own}" if self.outer is not None else own


class Locator(FrozenModel):
    """One way to find an element.

    ``value`` is the role for ``role`` (with the accessible name in ``name``), the label text for
    ``label``, the selector for ``css`` and ``xpath``, and a media ref for ``image_anchor``.
    ``accessible`` finds a desktop element by its accessibility API: ``value`` is its role
    ("push button", AT-SPI's names) and ``name`` its accessible name or label.
    Values may contain ``{parameter}`` placeholders. ``nth`` picks one of several matches (in
    document order) where the strategy alone is ambiguous, and ``nth_of`` says how many there
    were when recorded; such a locator ranks last, and decides between look-alikes only while
    the page has as many of them as when recorded (the second of two line items is still the
    second of two; the first of two search results, where there was one, is anybody's guess).
    ``within`` looks only inside one item of a repeated structure (the row of the contact named
    "{full_name}"), where ``value`` is relative to that item.
    """

    strategy: LocatorStrategy
    value: str = Field(min_length=1)
    name: str | None = None
    exact: bool = True
    nth: int | None = Field(default=None, ge=0)
    nth_of: int | None = Field(default=None, ge=2)
    within: ItemScope | None = None

    @model_validator(mode="after")
    def _name_only_for_role(self) -> Locator:
        if self.name is not None and self.strategy not in (
            LocatorStrategy.ROLE,
            LocatorStrategy.ACCESSIBLE,
        ):
            raise ValueError(
                "an accessible name goes only with the 'role' or 'accessible' strategy"
            )
        if self.nth_of is not None and (self.nth is None or self.nth >= self.nth_of):
            raise ValueError("nth_of goes with an nth below it")
        if self.within is not None and self.strategy in (
            LocatorStrategy.XPATH,
            LocatorStrategy.IMAGE_ANCHOR,
            LocatorStrategy.ACCESSIBLE,
        ):
            raise ValueError(f"a {self.strategy.value} locator cannot look inside an item")
        return self

    @property
    def texts(self) -> tuple[str, ...]:
        """What may hold ``{parameter}`` placeholders: the value (not an image anchor's media
        ref), the name, the items' texts."""
        value = () if self.strategy is LocatorStrategy.IMAGE_ANCHOR else (self.value,)
        name = (self.name,) if self.name is not None else ()
        return (*value, *name, *(self.within.texts if self.within is not None else ()))

    def with_texts(self, change: Callable[[str], str]) -> Locator:
        """This locator with each of :attr:`texts` changed by *change* (a run's values put in,
        or recorded values made placeholders). An image anchor's media ref is not text."""
        update: dict[str, object] = {}
        if self.strategy is not LocatorStrategy.IMAGE_ANCHOR:
            update["value"] = change(self.value)
        if self.name is not None:
            update["name"] = change(self.name)
        if self.within is not None:
            update["within"] = self.within.with_texts(change)
        return self.model_copy(update=update)

    def describe(self) -> str:
        """A short human form, e.g. ``role=button[name="Save"]``."""
        if self.name is not None and (
            self.strategy is LocatorStrategy.ROLE
            or (self.strategy is LocatorStrategy.ACCESSIBLE and self.name)
        ):
            text = f'{self.strategy.value}={self.value}[name="{self.name}"]'
        else:
            text = f"{self.strategy.value}={self.value}"
        if self.within is not None:
            text = f"{self.within.describe()} >> {text}"
        return text if self.nth is None else f"{text} >> nth={self.nth}"

    @property
    def positional(self) -> bool:
        """Whether it tells elements apart by their place in the page (``nth``, an indexed
        XPath step, an ``:nth-of-type``/``:nth-child`` CSS step): such a locator must never
        decide between look-alikes."""
        if self.nth is not None:
            return True
        if self.strategy is LocatorStrategy.XPATH:
            return _INDEXED_XPATH.search(self.value) is not None
        if self.strategy is LocatorStrategy.CSS:
            return _POSITIONAL_CSS.search(self.value) is not None
        return False


class ItemList(FrozenModel):
    """The list an item was one of when an element in it was recorded, as a loop over it reads
    it: ``css`` matches the item and its siblings and nothing else on the page, ``texts`` are
    the shown items' whole texts (spaces collapsed) in page order, ``at`` is the item's own
    place among them; ``complete`` is False when an item was left out or cut short."""

    css: str = Field(min_length=1)
    texts: tuple[str, ...] = Field(default=(), max_length=100)
    at: int = Field(ge=0)
    complete: bool = True


class ItemContext(FrozenModel):
    """The repeated item (table row, list item, card) an element was recorded in.

    ``css`` matches the item and its siblings; ``texts`` are the item's own short texts (its
    cells, its title), those that told it from its siblings first; ``inner`` finds the element
    inside the item (None for a candidate on a page being healed, which is described cheaply).
    ``inner`` may itself look inside an item of its own there (the field's wrapper showing
    "Description" in the line item showing "Item 2", where every line item has one).
    ``text_css`` says, for each text, a selector whose first match inside the item holds it
    (None where none was found; empty in recordings made before it was recorded), ``own_css``
    one for the element itself when it shows a text (a link named after its record); ``list`` is
    the list the item was one of (None when it could not be told from the rest of the page).
    """

    css: str = Field(min_length=1)
    texts: tuple[str, ...] = Field(default=(), max_length=12)
    inner: Locator | None = None
    text_css: tuple[str | None, ...] = Field(default=(), max_length=12)
    own_css: str | None = None
    list: ItemList | None = None


class Fingerprint(FrozenModel):
    """The element as it was when recorded, for fuzzy matching when every locator fails.

    Every field is optional: what was not observed is ``None`` or empty, never guessed.
    """

    tag: str | None = None
    role: str | None = None
    name: str | None = None
    text: str | None = None
    attributes: dict[str, str] = Field(default_factory=dict)
    bbox: BoundingBox | None = None
    nearby_text: tuple[str, ...] = ()
    ancestors: tuple[str, ...] = ()
    item: ItemContext | None = None


class Target(FrozenModel):
    """The element a step acts on: locators in rank order and the recorded fingerprint."""

    locators: tuple[Locator, ...] = Field(min_length=1)
    fingerprint: Fingerprint | None = None

    @property
    def is_sensitive(self) -> bool:
        """Whether the element is a password field (its value must never be stored): a web
        input of type password, or a desktop field whose accessible role says so."""
        fp = self.fingerprint
        return fp is not None and (
            fp.attributes.get("type", "").lower() == "password" or fp.role == "password text"
        )
