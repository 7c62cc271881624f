"""The demo site's data: who signs in, what forms offer, the seed records, how values read."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from decimal import Decimal
from typing import Any, Final

__all__ = [
    "CATEGORIES",
    "COMPANIES",
    "DEMO_PASSWORD",
    "DEMO_USERNAME",
    "ORDERS_PER_PAGE",
    "ORDER_STATUSES",
    "date_text",
    "money",
    "reference",
    "seed_contacts",
    "seed_orders",
    "seed_reports",
    "total",
]

DEMO_USERNAME: Final = "demo"
DEMO_PASSWORD: Final = "demo-pass"  # published: printed by serve_forever, in the docs

COMPANIES: Final = ("Acme", "Globex", "Initech", "Umbrella", "Hooli")
CATEGORIES: Final = ("Travel", "Meals", "Lodging", "Office supplies", "Software", "Training")
ORDER_STATUSES: Final = ("Open", "Shipped", "Cancelled")
ORDERS_PER_PAGE: Final = 10


# ── seed data ────────────────────────────────────────────────────────────────────────────────────

# name | email | phone | company | birthday | tags
_SEED_CONTACTS: Final = """
Maria Garcia | maria.garcia@globex.example | +1 555 0142 | Globex | 1986-04-12 | customer vip
James Okafor | james.okafor@initech.example | +1 555 0178 | Initech |  | lead
Priya Raman | priya.raman@hooli.example | +1 555 0113 | Hooli | 1991-09-03 | customer
Lukas Schmidt | lukas.schmidt@umbrella.example | +49 30 5550 1234 | Umbrella |  | supplier
Chen Wei | chen.wei@acme.example | +1 555 0190 | Acme | 1979-01-27 | partner
Sofia Rossi | sofia.rossi@globex.example | +39 02 5550 7788 | Globex |  | lead events
Daniel Kim | daniel.kim@initech.example | +1 555 0167 | Initech | 1988-07-19 | customer
Amara Nwosu | amara.nwosu@hooli.example | +44 20 7946 0321 | Hooli |  | vip
Olivia Brown | olivia.brown@acme.example | +1 555 0125 | Acme | 1995-11-30 | internal
Mateo Fernández | mateo.fernandez@umbrella.example | +34 91 555 0456 | Umbrella |  | customer
Hannah Müller | hannah.mueller@globex.example | +49 89 5550 2211 | Globex | 1983-02-14 | partner
Noah Williams | noah.williams@initech.example | +1 555 0156 | Initech |  | lead
"""

_ORDER_CUSTOMERS: Final = (
    *COMPANIES,
    "Stark Industries",
    "Wayne Enterprises",
    "Vandelay Industries",
    "Soylent Corp",
    "Wonka Industries",
    "Cyberdyne Systems",
    "Tyrell Corporation",
)


def seed_contacts() -> dict[int, dict[str, Any]]:
    contacts: dict[int, dict[str, Any]] = {}
    lines = _SEED_CONTACTS.strip().splitlines()
    for number, line in enumerate(lines, 1):
        name, email, phone, company, birthday, tags = (part.strip() for part in line.split("|"))
        contacts[number] = {
            "id": number,
            "full_name": name,
            "email": email,
            "phone": phone,
            "company": company,
            "birthday": birthday or None,
            "newsletter": number % 3 == 0,
            "notes": "",
            "tags": tags.split(),
        }
    contacts[1]["notes"] = "Prefers email. Renewal due in Q3."
    contacts[4]["notes"] = "Ships from the Hamburg warehouse."
    return contacts


def seed_orders() -> list[dict[str, Any]]:
    """45 orders, oldest first: numbers SO-10001…SO-10045 from 6 Jan 2025, every third day."""
    orders = []
    for i in range(45):
        # Stable, random-looking choices (the same on every platform and Python version).
        noise = hashlib.sha256(f"acme-order-{i}".encode()).digest()
        if noise[5] % 7 == 0:
            status = "Cancelled"
        elif i >= 36 or noise[6] % 6 == 0:  # recent orders are still open
            status = "Open"
        else:
            status = "Shipped"
        cents = 1_900 + int.from_bytes(noise[1:4], "big") % 240_000
        orders.append(
            {
                "number": f"SO-{10_001 + i}",
                "customer": _ORDER_CUSTOMERS[noise[4] % len(_ORDER_CUSTOMERS)],
                "date": (date(2025, 1, 6) + timedelta(days=3 * i)).isoformat(),
                "status": status,
                "total": Decimal(cents) / 100,
            }
        )
    return orders


def seed_reports() -> dict[int, dict[str, Any]]:
    reports: list[dict[str, Any]] = [
        {
            "number": 999,
            "title": "Client visit — Globex, Berlin",
            "date": "2025-05-14",
            "category": "Travel",
            "items": [
                {"description": "Flight LHR–BER", "amount": Decimal("212.40")},
                {"description": "Taxi to Globex office", "amount": Decimal("38.00")},
            ],
            "submitted_by": DEMO_USERNAME,
            "submitted_at": "2025-05-16T09:12:00+00:00",
        },
        {
            "number": 1000,
            "title": "Team lunch after the launch",
            "date": "2025-06-02",
            "category": "Meals",
            "items": [{"description": "Lunch for six", "amount": Decimal("186.75")}],
            "submitted_by": DEMO_USERNAME,
            "submitted_at": "2025-06-03T14:40:00+00:00",
        },
    ]
    return {r["number"]: r for r in reports}


def reference(number: int) -> str:
    return f"EXP-{number:04d}"


def total(items: Sequence[Mapping[str, Any]]) -> Decimal:
    return sum((item["amount"] for item in items), Decimal("0.00"))


def money(amount: Decimal) -> str:
    return f"${amount:,.2f}"


_MONTHS: Final = (
    "Jan",
    "Feb",
    "Mar",
    "Apr",
    "May",
    "Jun",
    "Jul",
    "Aug",
    "Sep",
    "Oct",
    "Nov",
    "Dec",
)


def date_text(iso: str) -> str:
    """``2025-03-07`` → ``7 Mar 2025`` (the same in every locale)."""
    day = date.fromisoformat(iso)
    return f"{day.day} {_MONTHS[day.month - 1]} {day.year}"
