"""What a step acts on: ranked locators plus a fingerprint of the element as recorded."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, model_validator

from desktop_app.core.models.common import BoundingBox, FrozenModel

__all__ = ["Fingerprint", "Locator", "LocatorStrategy", "Target"]


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


class Locator(FrozenModel):
    """One way to find an element.

    ``value`` is the role for ``role`` (with the accessible name in ``name``), the label text for
    ``label``, the selector for ``css`` and ``xpath``, and a media ref for ``image_anchor``.
    Values may contain ``{parameter}`` placeholders. ``nth`` picks one of several matches (in
    document order) where the strategy alone is ambiguous; such a locator ranks last.
    """

    strategy: LocatorStrategy
    value: str = Field(min_length=1)
    name: str | None = None
    exact: bool = True
    nth: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _name_only_for_role(self) -> Locator:
        if self.name is not None and self.strategy is not LocatorStrategy.ROLE:
            raise ValueError("an accessible name goes only with the 'role' strategy")
        return self

    def describe(self) -> str:
        """A short human form, e.g. ``role=button[name="Save"]``."""
        if self.strategy is LocatorStrategy.ROLE and self.name is not None:
            text = f'role={self.value}[name="{self.name}"]'
        else:
            text = f"{self.strategy.value}={self.value}"
        return text if self.nth is None else f"{text} >> nth={self.nth}"


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


class Target(FrozenModel):
    """The element a step acts on: locators in rank order and the recorded fingerprint."""

    locators: tuple[Locator, ...] = Field(min_length=1)
    fingerprint: Fingerprint | None = None

    @property
    def is_sensitive(self) -> bool:
        """Whether the element is a password field (its value must never be stored)."""
        fp = self.fingerprint
        return fp is not None and fp.attributes.get("type", "").lower() == "password"
