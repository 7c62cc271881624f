"""The items of a list or table on a page, read once when a loop over them begins."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from desktop_app.core.replay.browser import ActionFailed, PageItem

if TYPE_CHECKING:
    from playwright.async_api import Page

__all__ = ["read_items"]

#: Reads every shown item in one go: its key's text and its fields' texts, spaces collapsed
#: (as Playwright's exact text match compares them, so a locator finds the item again).
_READ: Final = """
([css, contains, key, fields]) => {
  const norm = (t) => (t || "").replace(/\\s+/g, " ").trim();
  const shown = (el) => !!(el.offsetWidth || el.offsetHeight || el.getClientRects().length);
  const wanted = contains ? contains.toLowerCase() : null;
  const found = [];
  for (const el of document.querySelectorAll(css)) {
    if (!shown(el)) continue;
    if (wanted !== null && !norm(el.innerText).toLowerCase().includes(wanted)) continue;
    const named = key ? el.querySelector(key) : el;
    const values = {};
    for (const [name, selector] of Object.entries(fields)) {
      const inner = el.querySelector(selector);
      values[name] = inner ? norm(inner.innerText || inner.value) : "";
    }
    found.push([named ? norm(named.innerText || named.value) : "", values]);
  }
  return found;
}
"""


async def read_items(
    page: Page, css: str, *, contains: str | None, key: str | None, fields: dict[str, str]
) -> list[PageItem]:
    """See :meth:`desktop_app.core.replay.browser.BrowserPort.items`.

    Raises:
        ActionFailed: *css* or a field's selector is no CSS selector, or the page went.
    """
    from playwright.async_api import Error

    try:
        rows: list[Any] = await page.evaluate(_READ, [css, contains, key, fields])
    except Error as exc:
        message = str(exc).splitlines()[0]
        raise ActionFailed(f"could not read the items {css!r}: {message}") from None
    return [
        PageItem(key=str(k), fields={n: str(v) for n, v in values.items()}) for k, values in rows
    ]
