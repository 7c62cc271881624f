"""Targets (locators and fingerprint) from what the in-page capture script describes."""

from __future__ import annotations

import contextlib
from typing import Any

from pydantic import ValidationError

from desktop_app.core.items import with_item_locator
from desktop_app.core.models.common import BoundingBox
from desktop_app.core.models.target import Fingerprint, ItemContext, ItemList, Locator, Target

__all__ = ["fingerprint_from_payload", "target_from_payload"]


def fingerprint_from_payload(fp: Any) -> Fingerprint | None:
    """A Fingerprint from the script's description, or None when it does not validate."""
    if not isinstance(fp, dict):
        return None
    with contextlib.suppress(ValidationError, TypeError, ValueError):
        attributes = {
            str(k): str(v) for k, v in (fp.get("attributes") or {}).items() if k != "value"
        }
        bbox = fp.get("bbox")
        return Fingerprint(
            item=_item(fp.get("item")),
            tag=fp.get("tag"),
            role=fp.get("role"),
            name=fp.get("name"),
            text=fp.get("text"),
            attributes=attributes,
            bbox=BoundingBox.model_validate(bbox) if isinstance(bbox, dict) else None,
            nearby_text=tuple(str(t) for t in fp.get("nearby_text") or ()),
            ancestors=tuple(str(t) for t in fp.get("ancestors") or ()),
        )
    return None


def _item(data: Any) -> ItemContext | None:
    """The repeated item the element is in, or None (also when it does not validate)."""
    if not isinstance(data, dict):
        return None
    with contextlib.suppress(ValidationError, TypeError, ValueError):
        inner = data.get("inner")
        texts = tuple(str(t) for t in data.get("texts") or ())[:12]
        text_css = tuple(str(c) if c else None for c in data.get("text_css") or ())
        listed = data.get("list")
        return ItemContext(
            css=str(data.get("css") or ""),
            texts=texts,
            inner=Locator.model_validate(inner) if isinstance(inner, dict) else None,
            text_css=text_css[: len(texts)] if len(text_css) >= len(texts) else (),
            own_css=str(data["own_css"]) if data.get("own_css") else None,
            list=_item_list(listed),
        )
    return None


def _item_list(data: Any) -> ItemList | None:
    """The list an item was one of, or None (also when it does not validate)."""
    if not isinstance(data, dict):
        return None
    with contextlib.suppress(ValidationError, TypeError, ValueError):
        return ItemList.model_validate(data)
    return None


def target_from_payload(data: Any) -> Target | None:
    """A Target from the capture script's description, keeping only what validates."""
    if not isinstance(data, dict):
        return None
    locators = []
    for raw in data.get("locators") or []:
        with contextlib.suppress(ValidationError, TypeError):
            locators.append(Locator.model_validate(raw))
    if not locators:
        return None
    fingerprint = fingerprint_from_payload(data.get("fingerprint"))
    if data.get("sensitive") and fingerprint is not None:
        fingerprint = fingerprint.model_copy(
            update={"attributes": {**fingerprint.attributes, "data-procedura-sensitive": "true"}}
        )
    # An element in a repeated item can also be found through the item showing its text.
    return with_item_locator(Target(locators=tuple(locators), fingerprint=fingerprint))
