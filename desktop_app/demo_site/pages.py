"""What the demo site's pages share: the page frame, flash messages and form fields."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from desktop_app.demo_site.markup import Markup, Templates, html_attrs
from desktop_app.demo_site.messages import CONSENT_COOKIE, Request, Response
from desktop_app.demo_site.store import State
from desktop_app.demo_site.variants import HOSTILE_NOTICE, HOSTILE_URL, SLOW_DELAY_MS, Look
from desktop_app.resources import resource_path

__all__ = ["Pages"]


class Pages:
    """What every page of the demo site shares: its look, state and templates, the page frame
    around its content, and form fields."""

    def __init__(self, look: Look) -> None:
        self.look = look
        self.state = State()
        self.templates = Templates(resource_path("demo_site", "templates"), look)
        self.static = resource_path("demo_site", "static")

    # ── page frame ──

    def _page(
        self, req: Request, title: str, body: Markup, *, status: int = 200, active: str = ""
    ) -> Response:
        render = self.templates.render
        session = req.session
        if session is not None:
            current = {
                f"current_{key}": html_attrs(aria_current="page" if key == active else None)
                for key in ("contacts", "new_contact", "expenses", "orders")
            }
            header = render(
                "header_signed_in",
                username=session.username,
                hostile=self._hostile(),
                **current,
            )
            flashes = Markup(
                "".join(render("flash", kind=k, message=m) for k, m in session.flashes)
            )
            session.flashes.clear()
            body = Markup(flashes + body)
        else:
            header = render("header_signed_out")
        overlays = ""
        if self.look.has("announcement") and session is not None and session.announcement_pending:
            overlays += render("announcement", next=req.target)
        if self.look.has("consent-banner") and req.cookies.get(CONSENT_COOKIE) != "accepted":
            overlays += render("consent_banner", next=req.target)
        main = body
        if self.look.has("slow"):
            main = render("deferred", content=body, delay_ms=SLOW_DELAY_MS)
        page = render("layout", title=title, header=header, main=main, overlays=Markup(overlays))
        return Response(status, self.look.html(page).encode())

    def _hostile(self) -> Markup:
        """The ``hostile`` variant's bait in the top bar: hidden orders and an off-site link."""
        if not self.look.has("hostile"):
            return Markup("")
        return self.templates.render("hostile", notice=HOSTILE_NOTICE, url=HOSTILE_URL)

    def _flash(self, req: Request, message: str, kind: str = "success") -> None:
        assert req.session is not None
        req.session.flashes.append((kind, message))

    # ── form fields ──

    def _field_attrs(
        self, name: str, errors: Mapping[str, str], **extra: str | bool | None
    ) -> Markup:
        invalid = name in errors
        return html_attrs(
            **extra,
            aria_invalid="true" if invalid else None,
            aria_describedby=f"{name}-error" if invalid else None,
        )

    def _field_error(self, name: str, errors: Mapping[str, str]) -> Markup:
        if name not in errors:
            return Markup("")
        return self.templates.render("field_error", id=name, message=errors[name])

    def _required_mark(self, required: bool) -> Markup:
        return self.templates.render("required_mark") if required else Markup("")

    def _input(
        self,
        name: str,
        text_key: str,
        kind: str,
        value: object,
        errors: Mapping[str, str],
        *,
        required: bool = False,
        **extra: str | bool | None,
    ) -> Markup:
        attrs = self._field_attrs(
            name, errors, required=required, aria_required="true" if required else None, **extra
        )
        return self.templates.render(
            "field_input",
            id=name,
            name=name,
            type=kind,
            label=self.look.text(text_key),
            required=self._required_mark(required),
            value="" if value is None else value,
            attrs=attrs,
            invalid=" field-invalid" if name in errors else "",
            error=self._field_error(name, errors),
        )

    def _select(
        self,
        name: str,
        text_key: str,
        choices: Sequence[tuple[str, str]],
        selected: str,
        errors: Mapping[str, str],
        *,
        required: bool = False,
    ) -> Markup:
        options = self.templates.join(
            "option",
            (
                {"value": v, "label": label, "selected": html_attrs(selected=v == selected)}
                for v, label in choices
            ),
        )
        attrs = self._field_attrs(
            name, errors, required=required, aria_required="true" if required else None
        )
        return self.templates.render(
            "field_select",
            id=name,
            name=name,
            label=self.look.text(text_key),
            required=self._required_mark(required),
            options=options,
            attrs=attrs,
            invalid=" field-invalid" if name in errors else "",
            error=self._field_error(name, errors),
        )

    def _error_summary(self, errors: Mapping[str, str]) -> Markup:
        if not errors:
            return Markup("")
        items = self.templates.join(
            "error_summary_item", ({"id": k, "message": m} for k, m in errors.items())
        )
        return self.templates.render("error_summary", items=items)
