"""A remembered repair: what drifted on a page and what worked instead."""

from __future__ import annotations

from typing import Literal

from pydantic import AwareDatetime, Field

from desktop_app.core.models.common import SCHEMA_VERSION, FrozenModel, new_id, utcnow
from desktop_app.core.models.run import Resolution
from desktop_app.core.models.target import Fingerprint, Locator

__all__ = ["Experience"]


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
    resolution: Resolution
    reason: str = ""
    proven: bool | None = None
    """Whether a run this repair helped succeeded since it was found (set for repairs the LLM
    found, which are not used where no LLM or person could be asked before that; None: stored
    before this was tracked)."""

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
