"""Scripted demonstrations done at any pace: at machine speed (no pause at all) or at a person's.

A :class:`Demonstrator` acts on a page the way a person does (press and release a button,
type key by key, a click into a field before typing) and only the pace differs between
recordings of one demonstration: the pause before each action, between keystrokes, how long
a button is held. Waiting for the page to show something (the next page's address, a result)
is what the person does at either pace: the scripted person looks before acting, they do not
sleep.

The demonstrations cover the bundled demo app and apps nobody here wrote
(:mod:`third_party`): TodoMVC in several frameworks and a Flask-Admin site.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

from playwright.async_api import Locator, Page

from desktop_app.demo_site import DEMO_PASSWORD, DEMO_USERNAME


@dataclass(frozen=True)
class Pace:
    """How fast the scripted person goes (milliseconds)."""

    name: str
    think_ms: int  # before each action: reading the page, finding the control
    key_ms: int  # between keystrokes
    hold_ms: int  # how long a click holds the button down


MACHINE: Final = Pace("machine", 0, 0, 0)
PERSON: Final = Pace("person", 300, 40, 90)


class Demonstrator:
    """Acts on *page* at *pace*."""

    def __init__(self, page: Page, pace: Pace) -> None:
        self.page = page
        self.pace = pace

    async def _think(self) -> None:
        if self.pace.think_ms:
            await asyncio.sleep(self.pace.think_ms / 1000)

    async def click(self, target: Locator) -> None:
        """Bring *target* into view (a person sees what they click), then click it."""
        await self._think()
        await target.scroll_into_view_if_needed()
        await target.click(delay=self.pace.hold_ms)

    async def type_into(self, field: Locator, text: str) -> None:
        """Click into *field* and type *text*, key by key (over what it still holds: at
        machine speed an app may not have cleared it yet, as Vue 0.10's TodoMVC does not when
        Enter comes before its deferred unlock of the field)."""
        await self.click(field)
        if await field.input_value():
            await field.select_text()
        await field.press_sequentially(text, delay=self.pace.key_ms)

    async def press(self, target: Locator, key: str) -> None:
        await self._think()
        await target.press(key)

    async def select(self, field: Locator, label: str) -> None:
        await self._think()
        await field.select_option(label=label)

    async def check(self, box: Locator) -> None:
        await self._think()
        await box.check()


Demonstration = Callable[[Demonstrator], Awaitable[None]]


# ── the demo app ───────────────────────────────────────────────────────────────────────────


async def _demo_sign_in(do: Demonstrator) -> None:
    page = do.page
    await do.type_into(page.get_by_label("Username"), DEMO_USERNAME)
    await do.type_into(page.get_by_label("Password"), DEMO_PASSWORD)
    await do.click(page.get_by_role("button", name="Sign in"))
    await page.wait_for_url("**/contacts")


async def demo_create_contact(do: Demonstrator) -> None:
    """Sign in and create "Jane Doe" at Globex, subscribed to the newsletter."""
    page = do.page
    await _demo_sign_in(do)
    await do.click(page.get_by_test_id("new-contact"))
    await page.wait_for_url("**/contacts/new")
    await do.type_into(page.get_by_label("Full name", exact=True), "Jane Doe")
    await do.type_into(page.get_by_label("Email", exact=True), "jane@example.test")
    await do.select(page.get_by_label("Company"), "Globex")
    await do.check(page.get_by_label("Subscribe to newsletter"))
    await do.click(page.get_by_role("button", name="Save", exact=True))
    await page.get_by_text("Contact Jane Doe created").wait_for()


async def demo_open_contact(do: Demonstrator) -> None:
    """Sign in, search for Maria Garcia and open her contact from the results."""
    page = do.page
    await _demo_sign_in(do)
    search = page.get_by_test_id("search")
    await do.type_into(search, "Maria Garcia")
    await do.press(search, "Enter")
    await page.wait_for_url("**q=Maria*")
    await do.click(page.get_by_role("link", name="Maria Garcia", exact=True))
    await page.get_by_role("heading", name="Maria Garcia").wait_for()


async def demo_filter_orders(do: Demonstrator) -> None:
    """Sign in, show the shipped orders and go to their second page."""
    page = do.page
    await _demo_sign_in(do)
    await do.click(page.get_by_role("link", name="Orders", exact=True))
    await page.wait_for_url("**/orders")
    await do.select(page.get_by_label("Status"), "Shipped")
    await do.click(page.get_by_role("button", name="Filter", exact=True))
    await page.wait_for_url("**/orders?status=shipped*")
    await do.click(page.get_by_role("link", name="Next", exact=True))
    await page.wait_for_url("**page=2*")


# ── TodoMVC ────────────────────────────────────────────────────────────────────────────────


async def todomvc_add_complete_filter(do: Demonstrator) -> None:
    """Add two to-dos, complete the first, show the active ones, then clear the completed."""
    page = do.page
    new = page.get_by_placeholder("What needs to be done?")
    for title in ("Buy milk", "Walk the dog"):
        await do.type_into(new, title)
        await do.press(new, "Enter")
        await page.get_by_text(title, exact=True).wait_for()
    first = page.get_by_role("listitem").filter(has_text="Buy milk")
    await do.check(first.get_by_role("checkbox"))
    await do.click(page.get_by_role("link", name="Active", exact=True))
    await page.wait_for_url("**#/active")
    # What the person sees before going on: the completed to-do filtered out (some versions
    # re-render on the hashchange event, which comes after the address changed) ...
    await page.get_by_text("Buy milk", exact=True).wait_for(state="hidden")
    clear = page.get_by_role("button", name="Clear completed")
    await do.click(clear)
    # ... and the button gone with what it cleared, before the recording stops.
    await clear.wait_for(state="hidden")


# ── Flask-Admin ────────────────────────────────────────────────────────────────────────────


async def flask_admin_create(do: Demonstrator) -> None:
    """Create a contact through the admin's form: text, e-mail, a choice, a box, notes."""
    page = do.page
    await do.click(page.get_by_role("link", name="Create", exact=True))
    await page.wait_for_url("**/new/**")
    await do.type_into(page.get_by_label("Name"), "Jane Doe")
    await do.type_into(page.get_by_label("Email"), "jane@example.test")
    # The status is a Select2 widget: open it, pick the option from its list.
    await do.click(page.get_by_role("link", name="lead", exact=True))
    await do.click(page.get_by_role("option", name="customer", exact=True))
    await do.check(page.get_by_label("Vip"))
    await do.type_into(page.get_by_label("Notes"), "Met at the fair")
    await do.click(page.get_by_role("button", name="Save", exact=True))
    await page.get_by_text("Record was successfully created.").wait_for()


async def flask_admin_search(do: Demonstrator) -> None:
    """Search the contact list for a name and press Enter."""
    page = do.page
    search = page.get_by_role("textbox", name="name, email")
    await do.type_into(search, "Maria")
    await do.press(search, "Enter")
    await page.wait_for_url("**search=Maria*")
    await page.get_by_role("cell", name="maria@example.test").wait_for()


@dataclass(frozen=True)
class Scenario:
    """A demonstration on one app: where it starts, its intent, and how to run the app."""

    name: str
    app: str  # "demo", "todomvc:<implementation>", "flask-admin"
    path: str  # where the recording starts, relative to the app's URL ("" for its page)
    intent: str
    demonstrate: Demonstration


SCENARIOS: Final[tuple[Scenario, ...]] = (
    Scenario(
        "demo-create-contact",
        "demo",
        "/login",
        "Create a contact for Jane Doe at Globex",
        demo_create_contact,
    ),
    Scenario(
        "demo-open-contact", "demo", "/login", "Open the contact of Maria Garcia", demo_open_contact
    ),
    Scenario("demo-filter-orders", "demo", "/login", "Show the shipped orders", demo_filter_orders),
    *(
        Scenario(
            f"todomvc-{impl}",
            f"todomvc:{impl}",
            "",
            "Add Buy milk and Walk the dog, complete Buy milk, clear it",
            todomvc_add_complete_filter,
        )
        for impl in ("vanillajs", "react", "vue")
    ),
    Scenario(
        "flask-admin-create",
        "flask-admin",
        "/admin/contact/",
        "Create a contact for Jane Doe",
        flask_admin_create,
    ),
    Scenario(
        "flask-admin-search",
        "flask-admin",
        "/admin/contact/",
        "Find the contact Maria",
        flask_admin_search,
    ),
)


def signature(workflow: Any) -> dict[str, Any]:
    """What two inductions of one demonstration must share: the steps (kind, title, values,
    targets, checks, flags), the parameters and the intent template. Left out: ids, pictures,
    the recorded events' positions and the fingerprints' measurements."""
    steps = []
    for step in workflow.steps:
        dumped = step.model_dump(
            mode="json", exclude={"id", "screenshot", "source_events", "timeout_s"}
        )
        target = dumped.pop("target", None)
        if target is not None:
            fp = target.get("fingerprint") or {}
            dumped["target"] = {
                "locators": target["locators"],
                "element": [fp.get("tag"), fp.get("role"), fp.get("name")],
            }
        steps.append(dumped)
    return {
        "name": workflow.name,
        "intent_template": workflow.intent_template,
        "parameters": [p.model_dump(mode="json") for p in workflow.parameters],
        "steps": steps,
    }
