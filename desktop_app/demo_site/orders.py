"""The demo site's orders page: filtered by status, ten to a page."""

from __future__ import annotations

import math
from urllib.parse import urlencode

from desktop_app.demo_site.data import ORDER_STATUSES, ORDERS_PER_PAGE, date_text, money
from desktop_app.demo_site.markup import Markup, html_attrs
from desktop_app.demo_site.messages import Request, Response
from desktop_app.demo_site.pages import Pages

__all__ = ["OrderPages"]


class OrderPages(Pages):
    """The orders: a table filtered by status, with pagination."""

    def _orders(self, req: Request) -> Response:
        render = self.templates.render
        status = req.arg("status").strip().lower()
        if status not in {s.lower() for s in ORDER_STATUSES}:
            status = "all"
        matching = [
            o
            for o in reversed(self.state.orders)
            if status == "all" or o["status"].lower() == status
        ]
        pages = max(1, math.ceil(len(matching) / ORDERS_PER_PAGE))
        try:
            page = min(max(1, int(req.arg("page") or "1")), pages)
        except ValueError:
            page = 1
        shown = matching[(page - 1) * ORDERS_PER_PAGE : page * ORDERS_PER_PAGE]
        rows = [
            {
                "number": o["number"],
                "customer": o["customer"],
                "date": o["date"],
                "date_text": date_text(o["date"]),
                "status": o["status"],
                "status_key": o["status"].lower(),
                "total": money(o["total"]),
            }
            for o in shown
        ]
        if rows:
            listing = render("orders_table", rows=self.templates.join("order_row", rows))
            first = (page - 1) * ORDERS_PER_PAGE + 1
            summary = f"Showing {first}–{first + len(rows) - 1} of {len(matching)} orders"
        else:
            listing = render("empty", message="No orders with this status.")
            summary = "No orders"
        choices = [("all", "All"), *((s.lower(), s) for s in ORDER_STATUSES)]
        options = self.templates.join(
            "option",
            (
                {"value": v, "label": t, "selected": html_attrs(selected=v == status)}
                for v, t in choices
            ),
        )
        decoy = Markup("")
        if self.look.has("similar-sibling"):
            payment = req.arg("payment")
            decoy_options = self.templates.join(
                "option",
                (
                    {"value": v, "label": t, "selected": html_attrs(selected=v == payment)}
                    for v, t in (("", "Any"), ("paid", "Paid"), ("unpaid", "Unpaid"))
                ),
            )
            decoy = render("decoy_payment_filter", options=decoy_options)
        body = render(
            "orders",
            options=options,
            decoy_filter=decoy,
            summary=summary,
            listing=listing,
            pagination=self._pagination(status, page, pages),
        )
        title = "Orders" if page == 1 else f"Orders (page {page} of {pages})"
        return self._page(req, title, body, active="orders")

    def _pagination(self, status: str, page: int, pages: int) -> Markup:
        def href(number: int) -> str:
            query = {"page": str(number)}
            if status != "all":
                query = {"status": status, **query}
            return "/orders?" + urlencode(query)

        def link(
            number: int, label: str, test_id: str, rel: str = "", disabled: bool = False
        ) -> Markup:
            if disabled:
                return self.templates.render(
                    "page_disabled", label=label, test_id=test_id, extra_class=""
                )
            current = number == page and not rel
            attrs = html_attrs(rel=rel or None, aria_current="page" if current else None)
            if not rel:
                attrs = Markup(attrs + html_attrs(aria_label=f"Page {number}"))
            return self.templates.render(
                "page_link",
                href=href(number),
                label=label,
                test_id=test_id,
                attrs=attrs,
                extra_class="",
            )

        items = [
            link(page - 1, self.look.text("previous_page"), "page-prev", "prev", disabled=page == 1)
        ]
        items += [link(n, str(n), f"page-{n}") for n in range(1, pages + 1)]
        items.append(
            link(page + 1, self.look.text("next_page"), "page-next", "next", disabled=page == pages)
        )
        return self.templates.render("pagination", items=Markup("".join(items)))
