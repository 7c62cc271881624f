"""The demo app's tasks performed the way a person does them, for recording tests and fixtures.

Clicks hold the button down as long as a person does, and typing goes key by key, so the
recorder sees what it sees with a human at the keyboard.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Final

from playwright.async_api import Page

from desktop_app.app import Services, record_web
from desktop_app.core.models import Trajectory
from desktop_app.demo_site import DEMO_PASSWORD, DEMO_USERNAME

HUMAN_CLICK_MS: Final = 120
KEY_DELAY_MS: Final = 15


async def click(page: Page, locator_text: str) -> None:
    """Click something by its accessible role text, e.g. ``"button:Sign in"``."""
    role, _, name = locator_text.partition(":")
    await page.get_by_role(role, name=name, exact=True).click(delay=HUMAN_CLICK_MS)  # type: ignore[arg-type]


async def type_into(page: Page, label: str, text: str) -> None:
    """Click into the field labelled *label* and type *text*."""
    field = page.get_by_label(label, exact=True)
    await field.click(delay=HUMAN_CLICK_MS)
    await field.press_sequentially(text, delay=KEY_DELAY_MS)


async def sign_in(page: Page) -> None:
    """Sign in on the login page."""
    await type_into(page, "Username", DEMO_USERNAME)
    await type_into(page, "Password", DEMO_PASSWORD)
    await click(page, "button:Sign in")
    await page.wait_for_url("**/contacts")


async def create_contact(page: Page) -> None:
    """Sign in and create "Jane Doe" at Globex, subscribed to the newsletter."""
    await sign_in(page)
    await page.get_by_test_id("new-contact").click(delay=HUMAN_CLICK_MS)
    await page.wait_for_url("**/contacts/new")
    await type_into(page, "Full name", "Jane Doe")
    await type_into(page, "Email", "jane@example.test")
    await page.get_by_label("Company").select_option("Globex")
    await page.get_by_label("Subscribe to newsletter").check()
    await click(page, "button:Save")
    await page.get_by_text("Contact Jane Doe created").wait_for()


async def _create_contact_for(
    page: Page, full_name: str, email: str, company: str, *, newsletter: bool
) -> None:
    """Sign in and create a contact the way ``create_contact`` does, with other values."""
    await sign_in(page)
    await page.get_by_test_id("new-contact").click(delay=HUMAN_CLICK_MS)
    await page.wait_for_url("**/contacts/new")
    await type_into(page, "Full name", full_name)
    await type_into(page, "Email", email)
    await page.get_by_label("Company").select_option(company)
    if newsletter:
        await page.get_by_label("Subscribe to newsletter").check()
    await click(page, "button:Save")
    await page.get_by_text(f"Contact {full_name} created").wait_for()


async def create_contact_2(page: Page) -> None:
    """Create "Ann Lee" at Initech, not subscribed: a second demonstration of create-contact."""
    await _create_contact_for(page, "Ann Lee", "ann.lee@example.test", "Initech", newsletter=False)


async def create_contact_3(page: Page) -> None:
    """Create "Li Wei" at Globex, subscribed: a third demonstration of create-contact."""
    await _create_contact_for(page, "Li Wei", "li.wei@example.test", "Globex", newsletter=True)


async def submit_expense_report(page: Page) -> None:
    """Sign in and submit a two-item travel expense report (an irreversible submit)."""
    await sign_in(page)
    await click(page, "link:Expenses")
    await page.get_by_test_id("new-report").click(delay=HUMAN_CLICK_MS)
    await page.wait_for_url("**/expenses/new")
    await type_into(page, "Report title", "Client visit Berlin")
    await page.get_by_label("Date").fill("2026-11-24")
    await page.get_by_label("Category").select_option("Travel")
    await click(page, "button:Next")
    await page.wait_for_url("**/expenses/new/items")
    await type_into(page, "Description", "Train ticket")
    await type_into(page, "Amount (USD)", "129.90")
    await click(page, "button:Add item")
    await page.get_by_label("Description").nth(1).wait_for()
    description = page.get_by_label("Description").nth(1)
    await description.click(delay=HUMAN_CLICK_MS)
    await description.press_sequentially("Hotel", delay=KEY_DELAY_MS)
    amount = page.get_by_label("Amount (USD)").nth(1)
    await amount.click(delay=HUMAN_CLICK_MS)
    await amount.press_sequentially("310.00", delay=KEY_DELAY_MS)
    await click(page, "button:Next")
    await page.wait_for_url("**/expenses/new/review")
    await click(page, "button:Submit report")
    await page.get_by_text("Report submitted").first.wait_for()


async def filter_orders(page: Page) -> None:
    """Sign in, show the shipped orders and go to their second page."""
    await sign_in(page)
    await click(page, "link:Orders")
    await page.wait_for_url("**/orders")
    await page.get_by_label("Status").select_option("Shipped")
    await click(page, "button:Filter")
    await page.wait_for_url("**/orders?status=shipped*")
    await click(page, "link:Next")
    await page.wait_for_url("**page=2*")


async def open_contact(page: Page) -> None:
    """Sign in, search for Maria Garcia and open her contact from the results."""
    await sign_in(page)
    search = page.get_by_test_id("search")
    await search.click(delay=HUMAN_CLICK_MS)
    await search.press_sequentially("Maria Garcia", delay=KEY_DELAY_MS)
    await search.press("Enter")
    await page.wait_for_url("**q=Maria*")
    await click(page, "link:Maria Garcia")
    await page.get_by_role("heading", name="Maria Garcia").wait_for()


#: Every task, by the name its fixture file carries, with its stated intent.
TASKS: Final[dict[str, tuple[str, Callable[[Page], Awaitable[None]]]]] = {
    "create-contact": ("Create a contact for Jane Doe at Globex", create_contact),
    "create-contact-2": ("Create a contact for Ann Lee at Initech", create_contact_2),
    "create-contact-3": ("Create a contact for Li Wei at Globex", create_contact_3),
    "expense-report": (
        "Submit an expense report for the client visit in Berlin",
        submit_expense_report,
    ),
    "filter-orders": ("Show the shipped orders", filter_orders),
    "open-contact": ("Open the contact of Maria Garcia", open_contact),
}


async def record_task(
    services: Services,
    url: str,
    user: Callable[[Page], Awaitable[None]],
    *,
    intent: str = "",
    profile: str | None = None,
) -> Trajectory:
    """Record, in headless Chromium, while *user* acts on the page; stop when it is done."""
    stop = asyncio.Event()
    tasks: list[asyncio.Task[None]] = []

    async def act(page: Page) -> None:
        try:
            await user(page)
        finally:
            stop.set()

    trajectory = await record_web(
        services,
        url=url,
        intent=intent,
        profile=profile,
        headless=True,
        stop=stop,
        on_started=lambda _id, page: tasks.append(asyncio.create_task(act(page))),
    )
    await tasks[0]  # re-raises what went wrong in the user's actions
    return trajectory
