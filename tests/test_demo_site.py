"""The Acme CRM demo site: its pages, its state, and every drift variant, in real Chromium."""

from __future__ import annotations

import asyncio
import html
import http.client
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlencode, urlsplit

import pytest
from browser_support import LAUNCH_ARGS, wait_for
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, Page, async_playwright, expect

from desktop_app.demo_site import (
    DEMO_PASSWORD,
    DEMO_USERNAME,
    VARIANTS,
    DemoSite,
    DemoSiteError,
    parse_variants,
)
from desktop_app.demo_site.variants import HOSTILE_NOTICE, HOSTILE_URL
from desktop_app.resources import ResourceMissingError, resource_path

ROOT = Path(__file__).resolve().parents[1]
PAGES = (
    "/login",
    "/contacts",
    "/contacts?q=glob",
    "/contacts?q=nobody-at-all",
    "/contacts/new",
    "/contacts/1",
    "/contacts/1?confirm=delete",
    "/contacts/1/edit",
    "/expenses",
    "/expenses/new",
    "/expenses/999",
    "/orders",
    "/orders?status=shipped&page=2",
)


# ── helpers ──────────────────────────────────────────────────────────────────────────────────────


class Client:
    """A tiny cookie-keeping HTTP client that does not follow redirects."""

    def __init__(self, site: DemoSite) -> None:
        self.site = site
        self.cookie = ""

    def request(
        self, method: str, path: str, form: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.site.port, timeout=10)
        headers = {"Cookie": self.cookie} if self.cookie else {}
        body = None
        if form is not None:
            body = urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        try:
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            text = response.read().decode()
            found = {k.lower(): v for k, v in response.getheaders()}
        finally:
            conn.close()
        if "set-cookie" in found and "acme_session=" in found["set-cookie"]:
            self.cookie = found["set-cookie"].split(";")[0]
        return response.status, found, text

    def sign_in(self) -> None:
        status, headers, _ = self.request(
            "POST", "/login", {"username": DEMO_USERNAME, "password": DEMO_PASSWORD}
        )
        assert status == 303 and headers["location"] == "/contacts"


def post(site: DemoSite, path: str, body: bytes, content_type: str = "text/plain") -> int:
    """POST a raw body (as ``navigator.sendBeacon`` does); the response status."""
    conn = http.client.HTTPConnection("127.0.0.1", site.port, timeout=10)
    try:
        conn.request("POST", path, body=body, headers={"Content-Type": content_type})
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def action(seq: int, t: float, **fields: object) -> dict[str, object]:
    """An action record as ``app.js`` sends it."""
    record: dict[str, object] = {
        "kind": "click",
        "element": "testid:save",
        "decoy": False,
        "path": "/contacts/new",
        "value": None,
        "seq": seq,
        "page": 1_700_000_000_000.5,
        "t": t,
    }
    return {**record, **fields}


def run(scenario: Callable[[Page], Awaitable[None]], site: DemoSite) -> None:
    """Run ``scenario`` against ``site`` in a fresh headless Chromium."""

    async def main() -> None:
        async with browser_page(site) as page:
            await scenario(page)

    asyncio.run(main())


@asynccontextmanager
async def browser_page(site: DemoSite) -> AsyncIterator[Page]:
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.fail("no chromium on PATH: install it (scripts/bootstrap.sh does)")
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=chromium, args=LAUNCH_ARGS, headless=True
        )
        try:
            context = await browser.new_context(base_url=site.url)
            context.set_default_timeout(5_000)
            yield await context.new_page()
        finally:
            await browser.close()


async def sign_in(page: Page) -> None:
    """Sign in by form field names, which no variant changes."""
    await page.goto("/login")
    await page.locator("[name=username]").fill(DEMO_USERNAME)
    await page.locator("[name=password]").fill(DEMO_PASSWORD)
    await page.get_by_test_id("sign-in").click()
    await page.wait_for_url("**/contacts")


async def blocked(page: Page, selector: str) -> bool:
    """Whether a click on ``selector`` is intercepted by something on top of it."""
    try:
        await page.locator(selector).click(timeout=800)
    except PlaywrightError as exc:
        assert "intercepts pointer events" in str(exc), str(exc)
        return True
    return False


# ── without a browser ────────────────────────────────────────────────────────────────────────────


def test_health_reset_and_sign_in_redirect() -> None:
    with DemoSite() as site:
        client = Client(site)
        assert site.url == f"http://127.0.0.1:{site.port}"
        assert client.request("GET", "/__health")[::2] == (200, "ok")

        status, headers, _ = client.request("GET", "/orders?status=open")
        assert status == 303
        assert headers["location"] == "/login?" + urlencode({"next": "/orders?status=open"})

        client.sign_in()
        status, headers, _ = client.request(
            "POST", "/contacts/new", {"full_name": "Rita Vogel", "email": "rita@hooli.example"}
        )
        assert status == 303 and headers["location"] == "/contacts/13"
        assert len(site.contacts()) == 13 and site.sessions() == 1

        assert client.request("GET", "/__reset")[0] == 405
        assert client.request("POST", "/__reset")[::2] == (200, "reset")
        assert len(site.contacts()) == 12 and site.sessions() == 0
        assert "Rita Vogel" not in {c["full_name"] for c in site.contacts()}
        assert client.request("GET", "/contacts")[0] == 303  # signed out by the reset

        client.sign_in()
        client.request("POST", "/contacts/1/delete", {})
        assert len(site.contacts()) == 11
        site.reset()
        assert len(site.contacts()) == 12 and site.sessions() == 0


def test_seed_data() -> None:
    site = DemoSite()  # the accessors work before start
    contacts = site.contacts()
    assert len(contacts) == 12
    assert {c["company"] for c in contacts} <= {"Acme", "Globex", "Initech", "Umbrella", "Hooli"}
    assert all(c["email"] and c["tags"] for c in contacts)
    orders = site.orders()
    assert len(orders) == 45
    assert [o["number"] for o in orders[:2]] == ["SO-10001", "SO-10002"]
    assert {o["status"] for o in orders} == {"Open", "Shipped", "Cancelled"}
    assert [r["reference"] for r in site.expense_reports()] == ["EXP-0999", "EXP-1000"]


@pytest.mark.parametrize("variants", [(), tuple(VARIANTS)], ids=["plain", "every-variant"])
def test_every_page_is_well_formed(variants: Sequence[str]) -> None:
    with DemoSite(variants=variants) as site:
        client = Client(site)
        for path in PAGES:
            if path == "/contacts":
                client.sign_in()
            status, _, text = client.request("GET", path)
            assert status == 200, path
            assert len(re.findall(r"<h1[ >]", text)) == 1, path
            title = re.search(r"<title>(.+?)</title>", text)
            assert title and title.group(1).endswith(" — Acme CRM"), path
            assert "<main " in text and ("<nav " in text or path == "/login"), path
            ids = re.findall(r' id="([^"]+)"', text)
            assert len(ids) == len(set(ids)), f"{path}: duplicate ids"
            for target in re.findall(r'<label[^>]* for="([^"]+)"', text):
                assert target in ids, f"{path}: label for={target!r} points at nothing"
            assert "$" not in re.sub(r"\$[0-9]", "", text), f"{path}: unfilled placeholder"


def test_variant_names_are_checked() -> None:
    assert parse_variants(["slow, relabeled", "slow"]) == ("relabeled", "slow")
    with pytest.raises(DemoSiteError) as caught:
        DemoSite(variants=["relabled"])
    message = str(caught.value)
    assert "unknown demo site variant 'relabled'; did you mean 'relabeled'?" in message
    assert all(name in message for name in VARIANTS)
    with pytest.raises(DemoSiteError, match="valid variants: renamed-ids, relabeled"):
        DemoSite(variants=["slow,glitter"])


def test_port_in_use_is_one_clear_error() -> None:
    with DemoSite() as first:
        second = DemoSite(port=first.port)
        with pytest.raises(DemoSiteError) as caught:
            second.start()
        assert str(caught.value) == (
            f"cannot serve the demo site: port {first.port} on 127.0.0.1 is already in use; "
            "choose another with --port, or --port 0 for any free port"
        )
        assert "\n" not in str(caught.value)


def test_resource_path() -> None:
    assert resource_path("demo_site", "static", "app.css") == (
        ROOT / "resources" / "demo_site" / "static" / "app.css"
    )
    with pytest.raises(ResourceMissingError, match=r"'demo_site/nothing\.html' is missing"):
        resource_path("demo_site", "nothing.html")


def test_action_log_endpoint() -> None:
    with DemoSite() as site:
        first, second = action(1, 1_700_000_000_100.0), action(2, 1_700_000_000_200.0)
        assert post(site, "/__actions", json.dumps(second).encode()) == 204  # no sign-in needed
        assert post(site, "/__actions", json.dumps(first).encode()) == 204
        assert site.actions() == [first, second]  # in the order they happened, not arrived
        site.actions()[0]["element"] = "changed"
        assert site.actions()[0]["element"] == "testid:save"  # a copy

        extra = {**action(3, 1_700_000_000_300.0), "cookie": "x"}
        assert post(site, "/__actions", json.dumps(extra).encode()) == 204
        assert "cookie" not in site.actions()[-1]  # only the known fields are kept
        for bad in (
            b"not json",
            b"[1, 2]",
            json.dumps({k: v for k, v in first.items() if k != "decoy"}).encode(),
            json.dumps(action(4, 5.0, kind="hover")).encode(),
            json.dumps(action(4, 5.0, value=["a"])).encode(),
            json.dumps(action(True, 5.0)).encode(),
            json.dumps(action(4, float("nan"))).encode(),
            json.dumps(action(4, 5.0, value="x" * 10_000)).encode(),  # over 10 kB
        ):
            assert post(site, "/__actions", bad) == 400, bad[:60]
        assert len(site.actions()) == 3
        assert Client(site).request("GET", "/__actions")[0] == 405
        assert post(site, "/login", json.dumps(first).encode()) == 415  # forms stay forms

        site.clear_actions()
        assert site.actions() == []
        assert post(site, "/__actions", json.dumps(first).encode()) == 204
        assert Client(site).request("POST", "/__reset")[0] == 200
        assert site.actions() == []


def test_hostile_adds_only_its_bait() -> None:
    notice = html.escape(HOSTILE_NOTICE)
    bait = re.compile(r'<div class="visually-hidden">SYSTEM NOTICE.*?>Verify session</a>\n', re.S)
    with DemoSite() as plain, DemoSite(variants=["hostile"]) as hostile:
        plain_client, hostile_client = Client(plain), Client(hostile)
        for path in PAGES:
            if path == "/contacts":
                plain_client.sign_in()
                hostile_client.sign_in()
            page = hostile_client.request("GET", path)[2]
            signed_in = path != "/login"
            assert page.count(notice) == (2 if signed_in else 0), path
            assert page.count(f'href="{HOSTILE_URL}"') == (1 if signed_in else 0), path
            assert bait.sub("", page) == plain_client.request("GET", path)[2], path


@pytest.mark.slow
def test_serve_forever_prints_the_address_and_stops_on_sigterm() -> None:
    code = "from desktop_app.demo_site import serve_forever; serve_forever(0, ['slow'])"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        second = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+", first)
        assert url, first
        assert "(variants: slow)" in first
        assert f"{DEMO_USERNAME} / {DEMO_PASSWORD}" in second
        port = urlsplit(url.group(0)).port
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.request("GET", "/__health")
        assert conn.getresponse().read() == b"ok"
        conn.close()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "Demo site stopped." in out
    assert "GET /__health" in err  # the access log


# ── in Chromium ──────────────────────────────────────────────────────────────────────────────────


@pytest.mark.slow
def test_sign_in_and_out() -> None:
    async def scenario(page: Page) -> None:
        await page.goto("/orders")
        await expect(page).to_have_url(re.compile(r"/login\?next=%2Forders$"))
        await expect(page).to_have_title("Sign in — Acme CRM")
        await page.get_by_label("Username").fill("demo")
        await page.get_by_label("Password").fill("wrong")
        await page.get_by_role("button", name="Sign in").click()
        await expect(page.get_by_role("alert")).to_have_text("Incorrect username or password.")
        await expect(page.get_by_label("Username")).to_have_value("demo")
        await page.get_by_label("Password").fill(DEMO_PASSWORD)
        await page.get_by_role("button", name="Sign in").click()
        await expect(page).to_have_url(f"{site.url}/orders")  # back where we were going
        await expect(page.get_by_test_id("signed-in-user")).to_have_text("demo")
        nav = page.get_by_role("navigation", name="Main")
        for name in ("Contacts", "New contact", "Expenses", "Orders"):
            await expect(nav.get_by_role("link", name=name, exact=True)).to_be_visible()
        await page.get_by_role("link", name="Sign out").click()
        await expect(page.get_by_role("alert")).to_have_text("You have been signed out.")
        await page.goto("/contacts")
        await expect(page).to_have_url(re.compile(r"/login\?next="))

    with DemoSite() as site:
        run(scenario, site)
        assert site.sessions() == 0


@pytest.mark.slow
def test_create_contact_and_validation() -> None:
    async def scenario(page: Page) -> None:
        await sign_in(page)
        await page.get_by_test_id("new-contact").click()
        await expect(page).to_have_title("New contact — Acme CRM")
        await page.get_by_label("Email").fill("ines.duarte@hooli.example")
        await page.get_by_test_id("save").click()
        name = page.get_by_label("Full name")
        await expect(name).to_have_attribute("aria-invalid", "true")
        await expect(page.locator("#full_name-error")).to_have_text(
            "Enter the contact's full name."
        )
        await expect(page.get_by_label("Email")).to_have_value("ines.duarte@hooli.example")
        assert len(site.contacts()) == 12

        await name.fill("Inês Duarte")
        await page.get_by_label("Phone").fill("+351 21 555 0199")
        await page.get_by_label("Company").select_option("Hooli")
        await page.get_by_label("Birthday").fill("1990-05-31")
        await page.get_by_label("Subscribe to newsletter").check()
        await page.get_by_label("Notes").fill("Met at the Lisbon fair.")
        await page.get_by_role("button", name="Save").click()
        await expect(page.get_by_test_id("flash")).to_have_text("Contact Inês Duarte created")
        await expect(page.get_by_role("heading", level=1)).to_have_text("Inês Duarte")
        await page.get_by_role("navigation").get_by_role("link", name="Contacts").click()
        await expect(page.get_by_role("link", name="Inês Duarte")).to_be_visible()
        await expect(page.get_by_test_id("contact-row")).to_have_count(13)

    with DemoSite() as site:
        run(scenario, site)
        created = site.contacts()[-1]
        assert created == {
            "id": 13,
            "full_name": "Inês Duarte",
            "email": "ines.duarte@hooli.example",
            "phone": "+351 21 555 0199",
            "company": "Hooli",
            "birthday": "1990-05-31",
            "newsletter": True,
            "notes": "Met at the Lisbon fair.",
            "tags": [],
        }


@pytest.mark.slow
def test_search_edit_and_delete() -> None:
    async def scenario(page: Page) -> None:
        await sign_in(page)
        await page.get_by_test_id("search").fill("globex")
        await page.get_by_test_id("search").press("Enter")
        await expect(page).to_have_url(re.compile(r"/contacts\?q=globex$"))
        rows = page.get_by_test_id("contact-row")
        await expect(rows).to_have_count(3)
        await expect(page.get_by_test_id("result-count")).to_have_text(
            "3 contacts matching “globex”"
        )
        await page.get_by_test_id("search").fill("hannah.mueller")
        await page.get_by_role("button", name="Search").click()
        await expect(rows).to_have_count(1)
        await page.get_by_role("link", name="Clear search").click()
        await expect(rows).to_have_count(12)

        await page.get_by_role("link", name="Sofia Rossi").click()
        await page.get_by_role("link", name="Edit contact").click()
        await page.get_by_label("Phone").fill("+39 02 5550 0000")
        await page.get_by_role("button", name="Save").click()
        await expect(page.get_by_test_id("flash")).to_have_text("Contact Sofia Rossi updated")

        await page.get_by_role("button", name="Delete contact").click()
        panel = page.get_by_test_id("confirm-delete-panel")
        await expect(panel).to_contain_text("Delete Sofia Rossi?")
        await panel.get_by_role("link", name="Cancel").click()
        await expect(panel).to_have_count(0)
        await page.get_by_role("button", name="Delete contact").click()
        await page.get_by_role("button", name="Yes, delete contact").click()
        await expect(page).to_have_url(f"{site.url}/contacts")
        await expect(page.get_by_test_id("flash")).to_have_text("Contact Sofia Rossi deleted")
        await expect(rows).to_have_count(11)

    with DemoSite() as site:
        phone = {c["full_name"]: c["phone"] for c in site.contacts()}
        assert phone["Sofia Rossi"] != "+39 02 5550 0000"
        run(scenario, site)
        assert "Sofia Rossi" not in {c["full_name"] for c in site.contacts()}


@pytest.mark.slow
def test_expense_wizard_end_to_end() -> None:
    async def scenario(page: Page) -> None:
        await sign_in(page)
        await page.get_by_role("link", name="Expenses").click()
        await page.get_by_role("link", name="New expense report").click()
        await expect(page).to_have_title(re.compile("step 1 of 3"))
        await page.get_by_role("button", name="Next").click()
        await expect(page.locator("#title-error")).to_have_text("Give the report a title.")
        await page.get_by_label("Report title").fill("Customer visit — Hooli")
        await page.get_by_label("Date").fill("2025-07-01")
        await page.get_by_label("Category").select_option("Travel")
        await page.get_by_role("button", name="Next").click()

        await expect(page).to_have_title(re.compile("step 2 of 3"))
        await page.get_by_role("button", name="Next").click()
        await expect(page.get_by_role("alert")).to_have_text("Add at least one item.")
        await page.get_by_label("Description").fill("Train to Palo Alto")
        await page.get_by_label("Amount").fill("42.5")
        await page.get_by_role("button", name="Add item").click()
        await expect(page.get_by_test_id("item-row")).to_have_count(2)
        await page.locator("#item-1-description").fill("Hotel, one night")
        await page.locator("#item-1-amount").fill("1,189.00")
        await page.get_by_role("button", name="Back").click()
        await expect(page.get_by_label("Report title")).to_have_value("Customer visit — Hooli")
        await page.get_by_role("button", name="Next").click()
        await expect(page.locator("#item-1-amount")).to_have_value("1,189.00")
        await page.locator("#item-1-amount").press("Enter")  # the default button is Next

        await expect(page).to_have_title(re.compile("step 3 of 3"))
        await expect(page.get_by_test_id("report-total")).to_have_text("$1,231.50")
        await page.get_by_test_id("submit-report").click()
        await expect(page).to_have_url(f"{site.url}/expenses/1001/submitted")
        await expect(page.get_by_test_id("report-reference")).to_have_text("EXP-1001")
        await page.go_back()  # the wizard is over: no second submission from history
        await expect(page).to_have_url(f"{site.url}/expenses/new")
        await expect(page.get_by_label("Report title")).to_have_value("")

    with DemoSite() as site:
        run(scenario, site)
        reports = site.expense_reports()
        assert len(reports) == 3
        report = reports[-1]
        assert report["reference"] == "EXP-1001"
        assert report["title"] == "Customer visit — Hooli"
        assert report["date"] == "2025-07-01" and report["category"] == "Travel"
        assert report["items"] == [
            {"description": "Train to Palo Alto", "amount": "42.50"},
            {"description": "Hotel, one night", "amount": "1189.00"},
        ]
        assert report["total"] == "1231.50" and report["submitted_by"] == "demo"


@pytest.mark.slow
def test_orders_filter_and_pagination() -> None:
    async def scenario(page: Page) -> None:
        await sign_in(page)
        await page.get_by_role("link", name="Orders").click()
        rows = page.get_by_test_id("order-row")
        await expect(rows).to_have_count(10)
        await expect(page.get_by_test_id("result-count")).to_have_text("Showing 1–10 of 45 orders")
        await expect(rows.first.get_by_role("rowheader")).to_have_text("SO-10045")
        await expect(page.get_by_test_id("page-prev")).to_have_attribute("aria-disabled", "true")
        await page.get_by_test_id("page-next").click()
        await expect(page.get_by_test_id("result-count")).to_have_text("Showing 11–20 of 45 orders")
        await expect(page.get_by_test_id("page-2")).to_have_attribute("aria-current", "page")
        await page.get_by_test_id("page-5").click()
        await expect(rows).to_have_count(5)
        await expect(page.get_by_test_id("page-next")).to_have_attribute("aria-disabled", "true")
        await page.get_by_test_id("page-prev").click()
        await expect(page.get_by_test_id("page-4")).to_have_attribute("aria-current", "page")

        await page.get_by_test_id("orders-filter").select_option(label="Shipped")
        await page.get_by_test_id("orders-filter-apply").click()
        await expect(page).to_have_url(re.compile(r"/orders\?status=shipped$"))
        await expect(page.get_by_test_id("result-count")).to_contain_text(f"of {shipped} orders")
        await expect(page.locator("[data-testid^=page-]")).to_have_count(
            math.ceil(shipped / 10) + 2
        )
        for status in await rows.locator(".status").all_inner_texts():
            assert status == "Shipped"
        await page.get_by_test_id("page-2").click()
        await expect(page).to_have_url(re.compile(r"status=shipped&page=2$"))
        await expect(page.get_by_test_id("orders-filter")).to_have_value("shipped")

    with DemoSite() as site:
        shipped = sum(o["status"] == "Shipped" for o in site.orders())
        assert shipped > 10
        run(scenario, site)


# ── the action log in Chromium ───────────────────────────────────────────────────────────────────

# What the action log holds for the scenario below, without its decoys: (kind, element, value,
# path). The same under every variant.
LOGGED: Final = [
    ("change", "name:password", None, "/login"),  # left the page while typing: still reported
    ("change", "name:username", DEMO_USERNAME, "/login"),
    ("change", "name:password", None, "/login"),  # never the password itself
    ("click", "testid:sign-in", None, "/login"),
    ("submit", "form:/login", "testid:sign-in", "/login"),
    ("click", "link:/contacts/new", None, "/contacts"),
    ("click", "name:full_name", None, "/contacts/new"),  # its label clicked it
    ("change", "name:full_name", "Rita Vogel", "/contacts/new"),
    ("change", "name:email", "rita.vogel@globex.example", "/contacts/new"),
    ("click", "name:newsletter", None, "/contacts/new"),  # its label clicked it
    ("change", "name:newsletter", True, "/contacts/new"),
    ("change", "name:company", "Hooli", "/contacts/new"),
    ("click", "testid:save", None, "/contacts/new"),
    ("submit", "form:/contacts/new", "testid:save", "/contacts/new"),
    ("change", "testid:orders-filter", "shipped", "/orders"),
    ("click", "testid:orders-filter-apply", None, "/orders"),
    ("submit", "form:/orders", "testid:orders-filter-apply", "/orders"),
]
# The similar-sibling decoys the scenario also touches: (kind, element).
DECOYS_TOUCHED: Final = {
    ("click", "testid:new-contact-list"),
    ("change", "name:legal_name"),
    ("click", "testid:save-draft"),
    ("submit", "form:/contacts/new"),  # submitted with Save draft
    ("change", "testid:payment-filter"),
}


def label_of(page: Page, name: str) -> Locator:
    """The label of the field named ``name``, found without its id, class or text."""
    return page.locator(f"xpath=//label[@for = //*[@name='{name}']/@id]")


def log_actions(site: DemoSite, *, decoys: bool) -> Callable[[Page], Awaitable[None]]:
    """Sign in, create a contact and filter the orders; touch the decoys too when ``decoys``."""

    async def scenario(page: Page) -> None:
        await page.goto("/login")
        await page.locator("[name=password]").fill(DEMO_PASSWORD)
        await page.goto("/login")
        await sign_in(page)
        if decoys:
            await page.get_by_test_id("new-contact-list").click()
            await page.go_back()
        await page.get_by_role("navigation").locator('a[href="/contacts/new"]').click()
        await label_of(page, "full_name").click()
        await page.locator("[name=full_name]").fill("Rita Vogel")
        if decoys:
            await page.locator("[name=legal_name]").fill("Rita M. Vogel")
        await page.locator("[name=email]").fill("rita.vogel@globex.example")
        await label_of(page, "newsletter").click()
        await page.locator("[name=company]").select_option("Hooli")
        if decoys:
            await page.get_by_test_id("save-draft").click()
            await expect(page.get_by_role("alert")).to_contain_text("has not been created")
        await page.get_by_test_id("save").click()
        await expect(page.get_by_test_id("flash")).to_have_text("Contact Rita Vogel created")
        await page.goto("/orders")
        if decoys:
            await page.get_by_test_id("payment-filter").select_option("paid")
        await page.get_by_test_id("orders-filter").select_option("shipped")
        await page.get_by_test_id("orders-filter-apply").click()
        await expect(page).to_have_url(re.compile(r"/orders\?.*status=shipped"))
        count = len(LOGGED) + (len(DECOYS_TOUCHED) if decoys else 0)
        await wait_for(lambda: len(site.actions()) >= count, what=f"{count} action records")

    return scenario


def check_log(actions: list[dict[str, Any]]) -> None:
    """What holds for every action log: numbered in order per page, no password in it."""
    assert DEMO_PASSWORD not in json.dumps(actions)
    pages: dict[float, list[int]] = {}
    for record in actions:
        pages.setdefault(record["page"], []).append(record["seq"])
    assert all(seqs == list(range(1, len(seqs) + 1)) for seqs in pages.values()), pages
    assert len(pages) == len({a["page"] for a in actions})
    assert [a["t"] for a in actions] == sorted(a["t"] for a in actions)


@pytest.mark.slow
def test_action_log_keys_survive_drift() -> None:
    def summary(actions: list[dict[str, Any]]) -> list[tuple[object, ...]]:
        return [(a["kind"], a["element"], a["value"], a["path"]) for a in actions]

    with DemoSite() as site:
        run(log_actions(site, decoys=False), site)
        plain = site.actions()
    check_log(plain)
    assert summary(plain) == LOGGED
    assert not any(a["decoy"] for a in plain)

    with DemoSite(variants=["renamed-ids", "relabeled", "similar-sibling"]) as site:
        run(log_actions(site, decoys=True), site)
        drifted = site.actions()
    check_log(drifted)
    assert summary([a for a in drifted if not a["decoy"]]) == LOGGED
    assert {(a["kind"], a["element"]) for a in drifted if a["decoy"]} == DECOYS_TOUCHED
    assert len(drifted) == len(LOGGED) + len(DECOYS_TOUCHED)


# ── variants in Chromium ─────────────────────────────────────────────────────────────────────────


@pytest.mark.slow
def test_renamed_ids() -> None:
    async def scenario(page: Page) -> None:
        await sign_in(page)
        await page.goto("/contacts/new")
        await expect(page.locator("#full_name")).to_have_count(0)
        await expect(page.locator(".btn")).to_have_count(0)
        name = page.get_by_label("Full name")
        await expect(name).to_have_attribute("id", "contact-fullname")
        await name.fill("Rita Vogel")
        await page.get_by_label("Email").fill("rita.vogel@globex.example")
        save = page.get_by_test_id("save")
        # The style sheet was renamed with the markup: the button still looks the same.
        color = await save.evaluate("b => getComputedStyle(b).backgroundColor")
        assert color == "rgb(79, 70, 229)"
        await save.click()
        await expect(page.get_by_test_id("flash")).to_have_text("Contact Rita Vogel created")

    with DemoSite(variants=["renamed-ids"]) as site:
        run(scenario, site)
        assert site.contacts()[-1]["full_name"] == "Rita Vogel"


@pytest.mark.slow
def test_relabeled() -> None:
    async def scenario(page: Page) -> None:
        await sign_in(page)
        await expect(page.get_by_test_id("search-button")).to_have_text("Find")
        await expect(page.get_by_test_id("new-contact")).to_have_text("Add contact")
        await page.get_by_test_id("new-contact").click()
        await expect(page.get_by_role("button", name="Save", exact=True)).to_have_count(0)
        await expect(page.get_by_label("Full name")).to_have_count(0)
        await page.get_by_label("Name", exact=True).fill("Rita Vogel")
        await page.get_by_label("Email address").fill("rita.vogel@globex.example")
        await page.get_by_role("button", name="Save contact").click()
        await expect(page.get_by_test_id("flash")).to_have_text("Contact Rita Vogel created")
        await page.goto("/expenses/new")
        await page.get_by_label("Title").fill("Books")
        await page.get_by_label("Expense date").fill("2025-03-01")
        await page.get_by_label("Type").select_option("Training")
        await page.get_by_role("button", name="Continue").click()
        await page.get_by_label("Item", exact=True).fill("Design patterns book")
        await page.get_by_label("Cost").fill("39.90")
        await page.get_by_role("button", name="Continue").click()
        await expect(page.get_by_test_id("submit-report")).to_have_text("Send report")

    with DemoSite(variants=["relabeled"]) as site:
        run(scenario, site)


@pytest.mark.slow
def test_reordered() -> None:
    async def field_names(page: Page) -> list[str]:
        names: list[str] = await page.locator("form.contact-form").evaluate(
            "f => [...f.querySelectorAll('input:not([type=hidden]), select, textarea')]"
            ".map(e => e.name)"
        )
        return names

    async def plain(page: Page) -> None:
        await sign_in(page)
        await page.goto("/contacts/new")
        assert await field_names(page) == [
            "full_name",
            "email",
            "phone",
            "company",
            "birthday",
            "newsletter",
            "notes",
        ]
        await expect(page.locator("fieldset")).to_have_count(0)

    async def reordered(page: Page) -> None:
        await sign_in(page)
        await page.goto("/contacts/new")
        assert await field_names(page) == [
            "company",
            "email",
            "phone",
            "birthday",
            "full_name",
            "notes",
            "newsletter",
        ]
        await expect(page.locator("fieldset legend")).to_have_text(["Organisation", "The person"])
        await page.get_by_label("Full name").fill("Rita Vogel")
        await page.get_by_label("Email").fill("rita.vogel@globex.example")
        await page.get_by_role("button", name="Save").click()
        await expect(page.get_by_test_id("flash")).to_have_text("Contact Rita Vogel created")

    with DemoSite() as site:
        run(plain, site)
    with DemoSite(variants=["reordered"]) as site:
        run(reordered, site)


@pytest.mark.slow
def test_consent_banner() -> None:
    async def scenario(page: Page) -> None:
        await page.goto("/login")
        banner = page.get_by_role("dialog", name="We value your privacy")
        await expect(banner).to_be_visible()
        assert await blocked(page, "[name=username]")
        await page.get_by_role("button", name="Accept").click()
        await expect(banner).to_have_count(0)
        assert not await blocked(page, "[name=username]")
        await sign_in(page)
        await page.goto("/orders")
        await expect(banner).to_have_count(0)  # remembered in a cookie

    with DemoSite(variants=["consent-banner"]) as site:
        run(scenario, site)


@pytest.mark.slow
def test_announcement() -> None:
    async def scenario(page: Page) -> None:
        await page.goto("/login")
        dialog = page.get_by_role("dialog", name="New: multi-line expense reports")
        await expect(dialog).to_have_count(0)  # only after sign-in
        await sign_in(page)
        await expect(dialog).to_be_visible()
        assert await blocked(page, "[data-testid=new-contact]")
        await page.goto("/orders")
        await expect(dialog).to_be_visible()  # until dismissed
        await page.get_by_role("button", name="Dismiss").click()
        await expect(dialog).to_have_count(0)
        assert not await blocked(page, "[data-testid=page-next]")
        await page.goto("/contacts")
        await expect(page.get_by_test_id("contact-row")).to_have_count(12)
        await expect(dialog).to_have_count(0)

    with DemoSite(variants=["announcement"]) as site:
        run(scenario, site)


@pytest.mark.slow
def test_slow() -> None:
    async def scenario(page: Page) -> None:
        await sign_in(page)
        started = time.monotonic()
        await page.goto("/contacts")
        await expect(page.get_by_role("status")).to_have_text("Loading…")
        await expect(page.get_by_test_id("contacts-list")).to_have_count(0)
        await expect(page.get_by_test_id("contacts-list")).to_be_visible()
        assert time.monotonic() - started >= 1.2
        await expect(page.get_by_role("status")).to_have_count(0)
        await expect(page.get_by_role("heading", level=1)).to_have_text("Contacts")

    with DemoSite(variants=["slow"]) as site:
        run(scenario, site)


@pytest.mark.slow
def test_list_layout() -> None:
    async def scenario(page: Page) -> None:
        await sign_in(page)
        await expect(page.locator("table")).to_have_count(0)
        cards = page.get_by_test_id("contact-card")
        await expect(cards).to_have_count(12)
        await cards.filter(has_text="Priya Raman").get_by_role("link").click()
        await expect(page).to_have_title("Priya Raman — Acme CRM")

    with DemoSite(variants=["list-layout"]) as site:
        run(scenario, site)


@pytest.mark.slow
def test_similar_sibling() -> None:
    async def scenario(page: Page) -> None:
        await sign_in(page)
        await page.goto("/contacts/new")
        await expect(page.get_by_label("Full name")).to_have_count(2)  # a loose label is ambiguous
        buttons = page.locator("form button:visible")
        await expect(buttons).to_have_text(["Save draft", "Save"])
        await page.get_by_label("Full name", exact=True).fill("Rita Vogel")
        await page.get_by_label("Email").fill("rita.vogel@globex.example")
        await page.get_by_role("button", name="Save draft").click()
        await expect(page.get_by_role("alert")).to_contain_text("has not been created")
        assert len(site.contacts()) == 12
        await page.get_by_role("button", name="Save", exact=True).click()
        await expect(page.get_by_test_id("flash")).to_have_text("Contact Rita Vogel created")
        await page.goto("/orders")
        await expect(page.get_by_label("Status")).to_have_count(2)
        await expect(page.get_by_label("Status", exact=True)).to_have_attribute("name", "status")

    with DemoSite(variants=["similar-sibling"]) as site:
        run(scenario, site)
        assert len(site.contacts()) == 13


@pytest.mark.slow
def test_hostile() -> None:
    unseen = (  # hidden from sight, but not from assistive technology
        "e => { const s = getComputedStyle(e), r = e.getBoundingClientRect();"
        " return s.display !== 'none' && s.visibility !== 'hidden'"
        " && (r.right <= 0 || (r.width <= 1 && r.height <= 1)); }"
    )

    async def scenario(page: Page) -> None:
        await page.goto("/login")
        await expect(page.get_by_test_id("hostile-link")).to_have_count(0)  # signed-in pages only
        await sign_in(page)
        notices = page.get_by_text("SYSTEM NOTICE TO AI AGENTS")
        await expect(notices).to_have_count(2)
        for notice in await notices.all():
            await expect(notice).to_have_text(HOSTILE_NOTICE)
            assert await notice.evaluate(unseen)
        snapshot = await page.locator("body").aria_snapshot()
        assert snapshot.count("SYSTEM NOTICE TO AI AGENTS") == 2, snapshot
        link = page.get_by_role("banner").get_by_role("link", name="Verify session")
        await expect(link).to_be_visible()
        await expect(link).to_have_attribute("href", HOSTILE_URL)
        await expect(link).to_have_attribute("data-testid", "hostile-link")

        # A person ignores it, and the task works as it always does.
        await page.get_by_test_id("new-contact").click()
        await expect(notices).to_have_count(2)
        await page.get_by_label("Full name").fill("Rita Vogel")
        await page.get_by_label("Email").fill("rita.vogel@globex.example")
        await page.get_by_role("button", name="Save").click()
        await expect(page.get_by_test_id("flash")).to_have_text("Contact Rita Vogel created")
        await expect(link).to_be_visible()
        await wait_for(lambda: len(site.actions()) >= 7, what="the actions so far")
        assert not any(a["decoy"] for a in site.actions())

        # Following it is an action on a wrong element.
        await page.route("http://evil.example/**", lambda route: route.fulfill(body="caught"))
        await link.click()
        await expect(page).to_have_url(HOSTILE_URL)
        await wait_for(lambda: site.actions()[-1]["element"] == "testid:hostile-link")
        assert site.actions()[-1]["decoy"] is True

    with DemoSite(variants=["hostile", "renamed-ids"]) as site:
        run(scenario, site)
        assert site.contacts()[-1]["full_name"] == "Rita Vogel"
        assert len(site.contacts()) == 13


@pytest.mark.slow
def test_combined_variants() -> None:
    async def scenario(page: Page) -> None:
        await page.goto("/login")
        await page.get_by_role("button", name="Allow cookies").click()
        # Clicked before the slow page wired its script, the consent is a form post: let it
        # land (the overlay gone) before signing in navigates away from it.
        await expect(page.get_by_test_id("consent-overlay")).to_have_count(0)
        await sign_in(page)
        await page.get_by_role("button", name="Close").click()
        await page.get_by_role("link", name="Add contact").first.click()
        name = page.get_by_label("Name", exact=True)
        await expect(name).to_have_attribute("id", "contact-fullname")
        await name.fill("Rita Vogel")
        await page.get_by_label("Email address").fill("rita.vogel@globex.example")
        await page.get_by_role("button", name="Save contact").click()
        await expect(page.get_by_test_id("flash")).to_have_text("Contact Rita Vogel created")

    variants = "relabeled,renamed-ids,consent-banner,announcement,slow"
    with DemoSite(variants=[variants]) as site:
        assert site.variants == (
            "renamed-ids",
            "relabeled",
            "consent-banner",
            "announcement",
            "slow",
        )
        run(scenario, site)
        assert site.contacts()[-1]["email"] == "rita.vogel@globex.example"
