"""A remembered repair: what drifted on a page and what worked instead."""

from __future__ import annotations

from typing import Final, Literal
from urllib.parse import urlsplit

from pydantic import AwareDatetime, Field

from desktop_app.core.models.common import SCHEMA_VERSION, FrozenModel, Point, new_id, utcnow
from desktop_app.core.models.run import Resolution
from desktop_app.core.models.target import Fingerprint, Locator

__all__ = ["EXPIRES_AFTER_FAILURES", "Experience", "site_of"]

#: A remembered repair that led this many runs in a row to a step that did not hold is not
#: used again.
EXPIRES_AFTER_FAILURES: Final = 2


def site_of(url: str | None) -> str:
    """The site a page belongs to: its host, in lower case ("" when there is none)."""
    try:
        return (urlsplit(url or "").hostname or "").lower()
    except ValueError:
        return ""


class Experience(FrozenModel):
    """What a repair taught, retrieved first the next time a similar step fails."""

    schema_version: Literal[1] = SCHEMA_VERSION
    document: Literal["experience"] = "experience"
    id: str = Field(default_factory=new_id)
    created_at: AwareDatetime = Field(default_factory=utcnow)
    workflow_id: str
    workflow_version: int = Field(ge=1)
    step_id: str
    step_title: str
    step_kind: str
    page_url: str | None = None
    page_title: str | None = None
    failed_locators: tuple[Locator, ...] = ()
    repaired_locator: Locator
    fingerprint: Fingerprint | None = None
    point: Point | None = None
    """For a desktop click: where the repair clicked, relative to its window (the anchor's box
    is the fingerprint's ``bbox``)."""
    resolution: Resolution
    reason: str = ""
    proven: bool | None = None
    """Whether a run this repair helped succeeded since it was found (set for repairs the LLM
    found, which are not used where no LLM or person could be asked before that; None: stored
    before this was tracked)."""
    successes: int = Field(default=0, ge=0)
    """Runs that used it and whose step then held (its checks passed)."""
    failures: int = Field(default=0, ge=0)
    """Runs that used it and whose step then did not hold."""
    failed_in_row: int = Field(default=0, ge=0)
    """Uses since the last one after which the step held."""
    last_used_at: AwareDatetime | None = None
    retired_at: AwareDatetime | None = None
    """When a run found the step by its recorded locators again (the page changed back): the
    repair is not used after that."""

    @property
    def utility(self) -> float:
        """How useful it has been (0–1): uses after which the step held, out of all, with one
        of each assumed before the first (a new repair is 0.5)."""
        return (self.successes + 1) / (self.successes + self.failures + 2)

    @property
    def expired(self) -> bool:
        """Whether it is no longer used: it kept failing, or the page changed back."""
        return self.retired_at is not None or self.failed_in_row >= EXPIRES_AFTER_FAILURES

    @property
    def trusted(self) -> bool:
        """Whether unattended runs without an LLM may use it: found by the fingerprint or a
        person, or found by the LLM and proven by a run since."""
        if self.proven is not None:
            return self.proven
        return self.resolution is not Resolution.LLM

    def search_text(self) -> str:
        """The text the experience is indexed by for retrieval."""
        parts = [self.step_title, self.step_kind, self.page_title or "", self.page_url or ""]
        parts += [loc.describe() for loc in self.failed_locators]
        return " | ".join(p for p in parts if p)
