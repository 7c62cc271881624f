"""What a page says is wrong, as a person sees it when a replayed step fails: its alerts and
error messages, and the validation messages of the form fields a person (or a submit) touched.

The conventions read are the web's own (ARIA alerts and invalid fields, the constraint
validation API's ``:user-invalid``) and the error classes of the common form libraries
(Django's ``errorlist``, Bootstrap's ``invalid-feedback`` and ``alert-danger``, Bulma's
``is-danger``, WTForms' and Rails' ``error`` blocks). Only visible text counts.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from playwright.async_api import Page

__all__ = ["page_messages"]

_MESSAGES_JS: Final = r"""() => {
  const out = [];
  const seen = new Set();
  const shown = (el) => {
    if (!el || !el.isConnected) return false;
    const box = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    return box.width > 0 && box.height > 0 && style.visibility !== "hidden"
      && style.display !== "none" && style.opacity !== "0";
  };
  const add = (text) => {
    text = (text || "").replace(/\s+/g, " ").trim();
    if (!text || text.length > 400 || seen.has(text)) return;
    if ([...seen].some((known) => known.includes(text))) return;
    seen.add(text);
    out.push(text);
  };
  const nameOf = (field) => {
    const label = field.labels && field.labels[0];
    const words = (label ? label.innerText : field.getAttribute("aria-label")
      || field.getAttribute("placeholder") || field.name || "").replace(/\s+/g, " ").trim();
    return words.replace(/[:*]\s*$/, "");
  };
  const byIds = (ids) => (ids || "").split(/\s+/).map((id) => document.getElementById(id))
    .filter((el) => el && shown(el)).map((el) => el.innerText).join(" ");
  // Fields a person or a submit touched that the browser finds invalid.
  for (const field of document.querySelectorAll("input, select, textarea")) {
    let touched = false;
    try { touched = field.matches(":user-invalid"); } catch (e) { touched = false; }
    if (touched && shown(field) && field.validationMessage) {
      const name = nameOf(field);
      add(name ? `${name}: ${field.validationMessage}` : field.validationMessage);
    }
  }
  // Fields the page itself marks invalid, with the message it ties to them.
  for (const field of document.querySelectorAll("[aria-invalid=true]")) {
    if (!shown(field)) continue;
    const said = byIds(field.getAttribute("aria-errormessage"))
      || byIds(field.getAttribute("aria-describedby"));
    const name = nameOf(field);
    if (said) add(name ? `${name}: ${said}` : said);
  }
  // Alerts, and the error blocks of the common form libraries.
  const css = [
    "[role=alert]", "[aria-live=assertive]", ".errorlist", ".errors", ".error-message",
    ".invalid-feedback", ".alert-danger", ".alert-error", ".notification.is-danger",
    ".help.is-danger", ".field-error", ".form-error", ".help-block.error", ".error",
    ".flash-error", ".text-danger",
  ].join(", ");
  for (const el of document.querySelectorAll(css)) {
    if (el.closest("script, style, template") || !shown(el)) continue;
    add(el.innerText);
  }
  return out.slice(0, 10);
}"""


async def page_messages(page: Page) -> list[str]:
    """What :data:`_MESSAGES_JS` reads on *page*'s main frame (nothing if it cannot)."""
    try:
        found = await asyncio.wait_for(page.evaluate(_MESSAGES_JS), timeout=3)
    except Exception:
        return []
    return [str(m) for m in found] if isinstance(found, list) else []
