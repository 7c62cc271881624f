"""Shared building blocks of every model: the frozen base, ids, timestamps, media references."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Annotated, Final

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

__all__ = [
    "MEDIA_REF_PATTERN",
    "SCHEMA_VERSION",
    "WORKFLOW_SCHEMA_VERSION",
    "BoundingBox",
    "DocumentPathError",
    "FrozenModel",
    "Identifier",
    "JsonScalar",
    "MediaRef",
    "Point",
    "new_id",
    "utcnow",
]

#: The version of the persisted documents this release writes and reads (trajectories, runs,
#: experiences), workflows excepted.
SCHEMA_VERSION: Final = 1
#: The version of workflow documents: 2 added blocks (``if``, ``for_each``, ``repeat_until``,
#: ``try``), conditions, ``list`` parameters. A version 1 workflow is read as version 2 (it
#: is one: version 2 only added).
WORKFLOW_SCHEMA_VERSION: Final = 2

#: A content-addressed media file: the sha256 of its bytes and its extension.
MEDIA_REF_PATTERN: Final = r"^[0-9a-f]{64}\.(png|jpg|webp)$"
#: What a document's id may be (a workflow's, a trajectory's): a file name and a path member
#: of a bundle as it is, never a path, a space or a line break.
ID_CHARACTERS: Final = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"
ID_PATTERN: Final = rf"^{ID_CHARACTERS}$"

MediaRef = Annotated[str, StringConstraints(pattern=MEDIA_REF_PATTERN)]
"""A screenshot or image in the media store, e.g. ``"3f2a…9c.webp"``."""

Identifier = Annotated[str, StringConstraints(pattern=r"^[a-z_][a-z0-9_]*$", max_length=64)]
"""A snake_case name usable in a ``{placeholder}``: parameters and extracted variables."""

JsonScalar = str | int | float | bool | None


def new_id() -> str:
    """A new random id (32 lowercase hex characters)."""
    return uuid.uuid4().hex


def utcnow() -> datetime:
    """The current time, timezone-aware, in UTC."""
    return datetime.now(UTC)


class FrozenModel(BaseModel):
    """Base of models that cross a boundary: immutable, strict about unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class Point(FrozenModel):
    """A point in CSS pixels (web) or screen pixels (desktop)."""

    x: float
    y: float


class BoundingBox(FrozenModel):
    """An element's box: left, top, width and height."""

    x: float
    y: float
    width: float = Field(ge=0)
    height: float = Field(ge=0)

    @property
    def center(self) -> Point:
        """The middle of the box."""
        return Point(x=self.x + self.width / 2, y=self.y + self.height / 2)


class DocumentPathError(ValueError):
    """A model invariant broken at a known place, e.g. ``steps[3].value``.

    Raised inside validators; the document loader reads ``path`` back out of pydantic's error so
    the message names where the problem is.
    """

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}" if path else message)
