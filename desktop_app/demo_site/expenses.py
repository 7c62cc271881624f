"""The demo site's expense pages: the reports, and the three-step wizard that submits one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from desktop_app.demo_site.data import CATEGORIES, date_text, money, reference, total
from desktop_app.demo_site.markup import Markup, html_attrs
from desktop_app.demo_site.messages import Request, Response, redirect
from desktop_app.demo_site.pages import Pages

__all__ = ["ExpensePages"]

_WIZARD_FIELDS: Final = ("title", "date", "category")


class ExpensePages(Pages):
    """The expense reports: the list, the wizard (details, items, review), a report."""

    def _expenses(self, req: Request) -> Response:
        render = self.templates.render
        reports = sorted(self.state.reports.values(), key=lambda r: r["number"], reverse=True)
        rows = [
            {
                "number": r["number"],
                "reference": reference(r["number"]),
                "title": r["title"],
                "date": r["date"],
                "date_text": date_text(r["date"]),
                "category": r["category"],
                "total": money(total(r["items"])),
                "submitted_by": r["submitted_by"],
            }
            for r in reports
        ]
        if rows:
            listing = render("expenses_table", rows=self.templates.join("expense_row", rows))
        else:
            listing = render("empty", message="No expense reports yet.")
        assert req.session is not None
        wizard = req.session.wizard
        resume = render("resume_notice") if wizard and wizard["details_done"] else None
        body = render("expenses", listing=listing, resume=resume)
        return self._page(req, "Expense reports", body, active="expenses")

    def _wizard(self, req: Request) -> dict[str, Any]:
        assert req.session is not None
        if req.session.wizard is None:
            req.session.wizard = {
                "title": "",
                "date": "",
                "category": "",
                "items": [],
                "details_done": False,
                "items_done": False,
            }
        return req.session.wizard

    def _existing_wizard(self, req: Request) -> dict[str, Any] | None:
        assert req.session is not None
        return req.session.wizard

    def _steps(self, current: int) -> Markup:
        labels = ("Details", "Items", "Review")
        rows = []
        for number, label in enumerate(labels, 1):
            state = "current" if number == current else "done" if number < current else "todo"
            rows.append(
                {
                    "number": number,
                    "label": label,
                    "state": f" wizard-step-{state}",
                    "current": html_attrs(aria_current="step" if number == current else None),
                }
            )
        return self.templates.render("wizard_steps", items=self.templates.join("wizard_step", rows))

    def _wizard_details(
        self, req: Request, errors: Mapping[str, str] | None = None, status: int = 200
    ) -> Response:
        wizard = self._wizard(req)
        errors = errors or {}
        fields = {
            "title": self._input(
                "title", "report_title", "text", wizard["title"], errors, required=True
            ),
            "date": self._input(
                "date", "report_date", "date", wizard["date"], errors, required=True
            ),
            "category": self._select(
                "category",
                "category",
                [("", self.look.text("choose_category")), *((c, c) for c in CATEGORIES)],
                wizard["category"],
                errors,
                required=True,
            ),
        }
        if self.look.has("reordered"):
            body_fields = self.templates.render(
                "form_columns",
                first_legend="Classification",
                first=Markup(fields["category"] + fields["date"]),
                second_legend="Name",
                second=fields["title"],
            )
        else:
            body_fields = self.templates.render(
                "form_stack", fields=Markup("".join(fields[n] for n in _WIZARD_FIELDS))
            )
        body = self.templates.render(
            "expense_step1",
            steps=self._steps(1),
            summary=self._error_summary(errors),
            fields=body_fields,
        )
        title = "New expense report: details (step 1 of 3)"
        return self._page(req, title, body, status=status, active="expenses")

    def _wizard_details_post(self, req: Request) -> Response:
        wizard = self._wizard(req)
        wizard["title"] = " ".join(req.field("title").split())
        wizard["date"] = req.field("date").strip()
        wizard["category"] = req.field("category").strip()
        errors: dict[str, str] = {}
        if not wizard["title"]:
            errors["title"] = "Give the report a title."
        if not wizard["date"]:
            errors["date"] = "Enter the date of the expenses."
        else:
            try:
                date.fromisoformat(wizard["date"])
            except ValueError:
                errors["date"] = "Enter a date like 2025-05-31."
        if wizard["category"] not in CATEGORIES:
            errors["category"] = "Choose a category."
        if errors:
            wizard["details_done"] = False
            return self._wizard_details(req, errors, status=422)
        wizard["details_done"] = True
        return redirect("/expenses/new/items")

    def _wizard_items(
        self,
        req: Request,
        row_errors: Mapping[int, str] | None = None,
        summary: str = "",
        status: int = 200,
    ) -> Response:
        wizard = self._existing_wizard(req)
        if wizard is None or not wizard["details_done"]:
            return redirect("/expenses/new")
        row_errors = row_errors or {}
        items = wizard["items"] or [{"description": "", "amount": ""}]
        rows = []
        for index, item in enumerate(items):
            error = row_errors.get(index)
            described = f"item-{index}-error" if error else None
            rows.append(
                {
                    "index": index,
                    "number": index + 1,
                    "description": item["description"],
                    "amount": item["amount"],
                    "description_attrs": html_attrs(
                        aria_invalid="true" if error else None, aria_describedby=described
                    ),
                    "amount_attrs": html_attrs(
                        aria_invalid="true" if error else None, aria_describedby=described
                    ),
                    "invalid": " field-invalid" if error else "",
                    "error": self._field_error(f"item-{index}", {f"item-{index}": error})
                    if error
                    else "",
                }
            )
        summary_html = Markup("")
        if summary:
            summary_html = self.templates.render(
                "alert", kind="error", id="items-error", message=summary
            )
        body = self.templates.render(
            "expense_step2",
            steps=self._steps(2),
            title=wizard["title"],
            summary=summary_html,
            rows=self.templates.join("expense_item_row", rows),
        )
        title = "New expense report: items (step 2 of 3)"
        return self._page(req, title, body, status=status, active="expenses")

    def _wizard_items_post(self, req: Request) -> Response:
        wizard = self._existing_wizard(req)
        if wizard is None or not wizard["details_done"]:
            return redirect("/expenses/new")
        descriptions = req.form.get("description", [])
        amounts = req.form.get("amount", [])
        count = max(len(descriptions), len(amounts))
        items = [
            {
                "description": " ".join((descriptions[i] if i < len(descriptions) else "").split()),
                "amount": (amounts[i] if i < len(amounts) else "").strip(),
            }
            for i in range(count)
        ]
        wizard["items_done"] = False
        remove = req.field("remove")
        if remove.isdigit():
            index = int(remove)
            if index < len(items):
                del items[index]
            wizard["items"] = items
            return redirect("/expenses/new/items")
        action = req.field("action")
        if action == "add":
            wizard["items"] = [*items, {"description": "", "amount": ""}]
            return redirect("/expenses/new/items")
        if action == "back":
            wizard["items"] = items
            return redirect("/expenses/new")
        items = [i for i in items if i["description"] or i["amount"]]
        wizard["items"] = items
        row_errors: dict[int, str] = {}
        for index, item in enumerate(items):
            if not item["description"]:
                row_errors[index] = "Describe the item."
                continue
            amount = _parse_amount(item["amount"])
            if amount is None:
                row_errors[index] = "Enter an amount like 12.50 (more than 0, at most 2 decimals)."
            else:
                item["amount"] = f"{amount:.2f}"
        if not items:
            return self._wizard_items(req, {}, "Add at least one item.", status=422)
        if row_errors:
            return self._wizard_items(req, row_errors, "Correct the highlighted items.", status=422)
        wizard["items_done"] = True
        return redirect("/expenses/new/review")

    def _wizard_review(self, req: Request) -> Response:
        wizard = self._existing_wizard(req)
        if wizard is None or not wizard["details_done"]:
            return redirect("/expenses/new")
        if not wizard["items_done"]:
            return redirect("/expenses/new/items")
        items = [
            {"description": i["description"], "amount": Decimal(i["amount"])}
            for i in wizard["items"]
        ]
        draft = None
        if self.look.has("similar-sibling"):
            draft = self.templates.render(
                "draft_button",
                label=self.look.text("save_report_draft"),
                test_id="save-report-draft",
            )
        body = self.templates.render(
            "expense_review",
            steps=self._steps(3),
            title=wizard["title"],
            date=wizard["date"],
            date_text=date_text(wizard["date"]),
            category=wizard["category"],
            items=self._items_table(items),
            draft_button=draft,
        )
        title = "New expense report: review (step 3 of 3)"
        return self._page(req, title, body, active="expenses")

    def _items_table(self, items: Sequence[Mapping[str, Any]]) -> Markup:
        rows = self.templates.join(
            "expense_item_line",
            ({"description": i["description"], "amount": money(i["amount"])} for i in items),
        )
        return self.templates.render("expense_items_table", rows=rows, total=money(total(items)))

    def _wizard_review_post(self, req: Request) -> Response:
        wizard = self._existing_wizard(req)
        if wizard is None or not (wizard["details_done"] and wizard["items_done"]):
            return redirect("/expenses/new")
        action = req.field("action")
        if action == "back":
            return redirect("/expenses/new/items")
        if action == "draft":
            self._flash(req, "Draft saved. The report has not been submitted yet.", "info")
            return redirect("/expenses/new/review")
        if action != "submit":
            return redirect("/expenses/new/review")
        number = self.state.next_report_number
        self.state.next_report_number += 1
        assert req.session is not None
        self.state.reports[number] = {
            "number": number,
            "title": wizard["title"],
            "date": wizard["date"],
            "category": wizard["category"],
            "items": [
                {"description": i["description"], "amount": Decimal(i["amount"])}
                for i in wizard["items"]
            ],
            "submitted_by": req.session.username,
            "submitted_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        req.session.wizard = None
        return redirect(f"/expenses/{number}/submitted")

    def _missing_report(self, req: Request) -> Response:
        body = self.templates.render("not_found", path=req.path)
        return self._page(req, "Report not found", body, status=404)

    def _expense_submitted(self, req: Request, number: int) -> Response:
        report = self.state.reports.get(number)
        if report is None:
            return self._missing_report(req)
        body = self.templates.render(
            "expense_submitted",
            number=number,
            reference=reference(number),
            title=report["title"],
            total=money(total(report["items"])),
        )
        return self._page(req, f"Report {reference(number)} submitted", body, active="expenses")

    def _expense_detail(self, req: Request, number: int) -> Response:
        report = self.state.reports.get(number)
        if report is None:
            return self._missing_report(req)
        body = self.templates.render(
            "expense_detail",
            reference=reference(number),
            title=report["title"],
            date=report["date"],
            date_text=date_text(report["date"]),
            category=report["category"],
            submitted_by=report["submitted_by"],
            items=self._items_table(report["items"]),
        )
        return self._page(req, f"{reference(number)}: {report['title']}", body, active="expenses")


def _parse_amount(text: str) -> Decimal | None:
    cleaned = text.replace(",", "").replace("$", "").strip()
    try:
        amount = Decimal(cleaned)
    except InvalidOperation:
        return None
    if not amount.is_finite() or amount <= 0 or amount > 1_000_000:
        return None
    exponent = amount.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -2:
        return None
    return amount.quantize(Decimal("0.01"))
