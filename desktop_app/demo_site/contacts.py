"""The demo site's contact pages: the list, the form to create or edit one, its details."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any, Final

from desktop_app.demo_site.data import COMPANIES, date_text
from desktop_app.demo_site.markup import Markup
from desktop_app.demo_site.messages import Request, Response, redirect
from desktop_app.demo_site.pages import Pages

__all__ = ["ContactPages"]

_EMAIL: Final = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_PHONE: Final = re.compile(r"^[0-9+()./ -]{5,30}$")

_CONTACT_FIELDS: Final = (
    "full_name",
    "email",
    "phone",
    "company",
    "birthday",
    "newsletter",
    "notes",
)
# The ``reordered`` variant: (legend, fields) for each of two fieldset columns.
_CONTACT_COLUMNS: Final = (
    ("Organisation", ("company", "email", "phone")),
    ("The person", ("birthday", "full_name", "notes", "newsletter")),
)


class ContactPages(Pages):
    """The contacts: list and search, create, edit, show and delete."""

    def _contacts(self, req: Request) -> Response:
        render = self.templates.render
        query = req.arg("q").strip()
        needle = query.casefold()
        found = [
            c
            for c in sorted(self.state.contacts.values(), key=lambda c: c["full_name"].casefold())
            if not needle
            or any(needle in (c[k] or "").casefold() for k in ("full_name", "email", "company"))
        ]
        rows = [
            {
                "id": c["id"],
                "full_name": c["full_name"],
                "email": c["email"],
                "company": c["company"] or "—",
                "phone": c["phone"] or "—",
                "tags": self._tags(c["tags"]),
            }
            for c in found
        ]
        if not found:
            what = f"No contacts match “{query}”." if query else "No contacts yet."
            listing = render("empty", message=what)
        elif self.look.has("list-layout"):
            listing = render("contacts_cards", cards=self.templates.join("contact_card", rows))
        else:
            listing = render("contacts_table", rows=self.templates.join("contact_row", rows))
        noun = "contact" if len(found) == 1 else "contacts"
        count = f"{len(found)} {noun}" + (f" matching “{query}”" if query else "")
        clear = render("clear_search") if query else None
        decoy = render("decoy_new_list") if self.look.has("similar-sibling") else None
        body = render(
            "contacts", q=query, count=count, listing=listing, clear=clear, decoy_action=decoy
        )
        return self._page(req, "Contacts", body, active="contacts")

    def _tags(self, tags: Sequence[str]) -> Markup:
        if not tags:
            return Markup("")
        items = self.templates.join("tag", ({"tag": t} for t in tags))
        return self.templates.render("tags", items=items)

    def _draft_notice(self, what: str) -> Markup:
        """The notice a "Save draft" decoy (similar-sibling variant) leaves on the form."""
        return self.templates.render(
            "alert", kind="info", id="draft-notice", message=f"Draft kept on this page. {what}"
        )

    def _contact_new(self, req: Request) -> Response:
        return self._contact_form_page(req, {}, {}, contact_id=None)

    def _contact_create(self, req: Request) -> Response:
        values, errors = self._read_contact(req)
        if req.field("action") == "draft":
            notice = self._draft_notice("The contact has not been created yet.")
            return self._contact_form_page(req, values, {}, contact_id=None, notice=notice)
        if errors:
            return self._contact_form_page(req, values, errors, contact_id=None, status=422)
        contact_id = self.state.next_contact_id
        self.state.next_contact_id += 1
        self.state.contacts[contact_id] = {"id": contact_id, **values, "tags": []}
        self._flash(req, f"Contact {values['full_name']} created")
        return redirect(f"/contacts/{contact_id}")

    def _contact_edit(self, req: Request, contact_id: int) -> Response:
        contact = self.state.contacts.get(contact_id)
        if contact is None:
            return self._missing_contact(req)
        return self._contact_form_page(req, contact, {}, contact_id=contact_id)

    def _contact_update(self, req: Request, contact_id: int) -> Response:
        contact = self.state.contacts.get(contact_id)
        if contact is None:
            return self._missing_contact(req)
        values, errors = self._read_contact(req)
        if req.field("action") == "draft":
            notice = self._draft_notice("The changes have not been saved yet.")
            return self._contact_form_page(req, values, {}, contact_id=contact_id, notice=notice)
        if errors:
            return self._contact_form_page(req, values, errors, contact_id=contact_id, status=422)
        contact.update(values)
        self._flash(req, f"Contact {values['full_name']} updated")
        return redirect(f"/contacts/{contact_id}")

    def _read_contact(self, req: Request) -> tuple[dict[str, Any], dict[str, str]]:
        values: dict[str, Any] = {
            "full_name": " ".join(req.field("full_name").split()),
            "email": req.field("email").strip(),
            "phone": req.field("phone").strip(),
            "company": req.field("company").strip() or None,
            "birthday": req.field("birthday").strip() or None,
            "newsletter": req.field("newsletter") == "yes",
            "notes": req.field("notes").replace("\r\n", "\n").strip(),
        }
        errors: dict[str, str] = {}
        if not values["full_name"]:
            errors["full_name"] = "Enter the contact's full name."
        elif len(values["full_name"]) > 100:
            errors["full_name"] = "Use at most 100 characters."
        if not values["email"]:
            errors["email"] = "Enter an email address."
        elif not _EMAIL.match(values["email"]):
            errors["email"] = "Enter an email address like name@company.com."
        if values["phone"] and not _PHONE.match(values["phone"]):
            errors["phone"] = "Use digits, spaces and + ( ) - only."
        if values["company"] is not None and values["company"] not in COMPANIES:
            errors["company"] = "Choose one of the listed companies."
        if values["birthday"] is not None:
            try:
                born = date.fromisoformat(values["birthday"])
            except ValueError:
                errors["birthday"] = "Enter a date like 1990-05-31."
            else:
                if born > date.today():
                    errors["birthday"] = "A birthday cannot be in the future."
        if len(values["notes"]) > 2000:
            errors["notes"] = "Use at most 2000 characters."
        return values, errors

    def _contact_form_page(
        self,
        req: Request,
        values: Mapping[str, Any],
        errors: Mapping[str, str],
        *,
        contact_id: int | None,
        notice: Markup | None = None,
        status: int = 200,
    ) -> Response:
        look = self.look
        render = self.templates.render
        fields = {name: self._contact_field(name, values, errors) for name in _CONTACT_FIELDS}
        if look.has("similar-sibling"):
            legal = req.field("legal_name")
            decoy = self._input(
                "legal_name", "legal_name", "text", legal, {}, autocomplete="off", data_decoy=True
            )
            fields["full_name"] = Markup(decoy + fields["full_name"])
        if look.has("reordered"):
            columns: dict[str, str] = {}
            for (legend, names), key in zip(_CONTACT_COLUMNS, ("first", "second"), strict=True):
                columns[key] = Markup("".join(fields[n] for n in names))
                columns[f"{key}_legend"] = legend
            body_fields = render("form_columns", **columns)
        else:
            body_fields = render("form_stack", fields=Markup("".join(fields.values())))
        draft = None
        if look.has("similar-sibling"):
            draft = render("draft_button", label=look.text("save_draft"), test_id="save-draft")
        if contact_id is None:
            title = heading = "New contact"
            action, cancel, active = "/contacts/new", "/contacts", "new_contact"
        else:
            heading = f"Edit {values.get('full_name') or 'contact'}"
            title = heading
            action, cancel, active = f"/contacts/{contact_id}/edit", f"/contacts/{contact_id}", ""
        body = render(
            "contact_form",
            heading=heading,
            notice=notice,
            action=action,
            summary=self._error_summary(errors),
            fields=body_fields,
            draft_button=draft,
            cancel_url=cancel,
        )
        return self._page(req, title, body, status=status, active=active)

    def _contact_field(
        self, name: str, values: Mapping[str, Any], errors: Mapping[str, str]
    ) -> Markup:
        value = values.get(name)
        if name == "full_name":
            return self._input(
                name, name, "text", value, errors, required=True, autocomplete="name"
            )
        if name == "email":
            return self._input(
                name,
                name,
                "email",
                value,
                errors,
                required=True,
                autocomplete="email",
                placeholder="name@company.com",
            )
        if name == "phone":
            return self._input(
                name, name, "tel", value, errors, autocomplete="tel", placeholder="+1 555 0100"
            )
        if name == "birthday":
            return self._input(name, name, "date", value, errors)
        if name == "company":
            choices = [("", self.look.text("choose_company")), *((c, c) for c in COMPANIES)]
            return self._select(name, name, choices, value or "", errors)
        if name == "newsletter":
            return self.templates.render(
                "field_checkbox",
                id=name,
                name=name,
                label=self.look.text(name),
                attrs=self._field_attrs(name, errors, checked=bool(value)),
                invalid=" field-invalid" if name in errors else "",
                error=self._field_error(name, errors),
            )
        if name == "notes":
            return self.templates.render(
                "field_textarea",
                id=name,
                name=name,
                label=self.look.text(name),
                required="",
                value=value or "",
                attrs=self._field_attrs(name, errors),
                invalid=" field-invalid" if name in errors else "",
                error=self._field_error(name, errors),
            )
        raise KeyError(name)

    def _contact_detail(self, req: Request, contact_id: int) -> Response:
        contact = self.state.contacts.get(contact_id)
        if contact is None:
            return self._missing_contact(req)
        confirm = Markup("")
        if req.arg("confirm") == "delete":
            confirm = self.templates.render(
                "contact_confirm_delete", id=contact_id, full_name=contact["full_name"]
            )
        birthday = contact["birthday"]
        body = self.templates.render(
            "contact_detail",
            id=contact_id,
            full_name=contact["full_name"],
            email=contact["email"],
            phone=contact["phone"] or "—",
            company=contact["company"] or "—",
            birthday=date_text(birthday) if birthday else "—",
            newsletter="Subscribed" if contact["newsletter"] else "Not subscribed",
            tags=self._tags(contact["tags"]) or "—",
            notes=contact["notes"] or "—",
            confirm=confirm,
        )
        title = f"Delete {contact['full_name']}?" if confirm else contact["full_name"]
        return self._page(req, title, body, active="contacts")

    def _contact_delete(self, req: Request, contact_id: int) -> Response:
        contact = self.state.contacts.pop(contact_id, None)
        if contact is None:
            return self._missing_contact(req)
        self._flash(req, f"Contact {contact['full_name']} deleted")
        return redirect("/contacts")

    def _missing_contact(self, req: Request) -> Response:
        body = self.templates.render("not_found", path=req.path)
        return self._page(req, "Contact not found", body, status=404, active="contacts")
