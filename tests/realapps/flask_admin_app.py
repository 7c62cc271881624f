"""Flask-Admin (PyPI ``flask-admin``) with Flask-SQLAlchemy: server-rendered CRUD screens over a
SQLite database, through the few lines of glue anyone using it writes (``_APP``: a ``Contact``
table with a ``Company`` relation and a ``ModelView`` searchable by name and e-mail, its list
showing name, e-mail, status and VIP, no details view, the default bulk "Delete" action).

Each variant is installed once into a cached virtual environment of its own with every package
pinned; a template SQLite database (the tables and three companies) is made there and every
instance copies it and runs the glue on 127.0.0.1 on a port of its own.

Variants (what a replay sees differ; the report says more):

* **Flask-Admin 1.6.1, Bootstrap 3** (``template_mode="bootstrap3"``; Flask 2.2, SQLAlchemy 1.4,
  WTForms 3.0): the search field is a ``searchbox`` with the placeholder "Search: name, email",
  submitted by Enter only; "With selected" is a ``link`` opening a ``ul.dropdown-menu``; the
  row's edit link is named "✏" by its Glyphicon (its title is "Edit Record").
* **Flask-Admin 2.2.1, Bootstrap 4** (the ``Bootstrap4Theme``; Flask 3.1, SQLAlchemy 2.1,
  WTForms 3.3): the search field is a ``textbox`` with the placeholder "name, email" and a
  "Search" button; "With selected" is a ``button`` (``role="button"``, ``aria-haspopup``) opening
  a ``div.dropdown-menu`` of ``a.dropdown-item``; the edit link is named by a Font Awesome
  private-use glyph (its title is "Edit Record"); the form is wrapped in a ``fieldset``
  (a ``group``) and labels sit above their fields.

Both use the same Select2 3.5-style widget for the status and the company (a ``link`` named by
the current choice, a hidden ``listbox`` of ``option``s) and the same bootstrap-daterangepicker
1.3 calendar for the birthday, which rewrites the field on every key-up (typing "1" turns it into
"0001-01-01"), so the date is picked through the calendar: year and month from its two selects,
then the day.

Tasks: ``create`` (name, e-mail, status through Select2, VIP), ``search-edit`` (search a name,
open the exact one among look-alikes by its "Edit Record" icon, change the e-mail),
``bulk-delete`` (search, tick the exact row, "With selected" → "Delete", accept the browser's
own ``confirm()``) and ``every-input`` (text, e-mail, phone, number, the date picker, two Select2
selects, a checkbox, a textarea).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final
from urllib.error import URLError
from urllib.request import urlopen

from browser_support import free_port
from demonstrations import Demonstrator
from playwright.async_api import Dialog, Locator
from third_party import installed

from realapps.harness import App, Instance, State, Task, Values, Variant

COMPANIES: Final = ("Globex Works", "Initech Labs", "Umbrella Foods")
#: Every package of each variant's environment, pinned (the 1.x line needs Flask 2 and
#: SQLAlchemy 1.4: it breaks on Flask 3's and SQLAlchemy 2's removals).
PINS: Final = {
    "1.6.1": ("flask-admin==1.6.1", "Flask==2.2.5", "Werkzeug==2.2.3", "Flask-SQLAlchemy==2.5.1",
              "SQLAlchemy==1.4.52", "greenlet==3.5.6", "WTForms==3.0.1", "Jinja2==3.1.4",
              "MarkupSafe==2.1.5", "itsdangerous==2.1.2", "click==8.1.7"),
    "2.2.1": ("flask-admin==2.2.1", "Flask==3.1.3", "Werkzeug==3.1.9", "Flask-SQLAlchemy==3.1.1",
              "SQLAlchemy==2.1.9", "typing_extensions==4.16.0", "WTForms==3.3.2",
              "Jinja2==3.1.6", "MarkupSafe==3.0.4", "itsdangerous==2.2.0", "click==8.5.1",
              "blinker==1.9.0"),
}  # fmt: skip
_INSTALL_TIMEOUT_S: Final = 600
_START_TIMEOUT_S: Final = 90

_APP: Final = f'''"""Flask-Admin over contacts: python app.py DATABASE PORT (or DATABASE init)."""
import enum
import sys

from flask import Flask, redirect
from flask_admin import Admin
from flask_admin.contrib.sqla import ModelView
from flask_sqlalchemy import SQLAlchemy


class Status(enum.Enum):
    Lead = "Lead"
    Customer = "Customer"
    Former = "Former"


app = Flask(__name__)
app.config["SQLALCHEMY_DATABASE_URI"] = "sqlite:///" + sys.argv[1]
app.config["SQLALCHEMY_TRACK_MODIFICATIONS"] = False
app.config["SECRET_KEY"] = "test-only"
db = SQLAlchemy(app)


class Company(db.Model):
    id = db.Column(db.Integer, primary_key=True)
    name = db.Column(db.String(100), nullable=False, unique=True)

    def __str__(self):
        return self.name


class Contact(db.Model):
    id = db.Column(db.Integer, primary_key=True)
    name = db.Column(db.String(100), nullable=False)
    email = db.Column(db.String(100))
    phone = db.Column(db.String(40))
    score = db.Column(db.Integer)
    birthday = db.Column(db.Date)
    status = db.Column(db.Enum(Status), nullable=False, default=Status.Lead)
    vip = db.Column(db.Boolean, nullable=False, default=False)
    notes = db.Column(db.Text)
    company_id = db.Column(db.Integer, db.ForeignKey("company.id"))
    company = db.relationship(Company)


class ContactView(ModelView):
    can_view_details = False
    column_searchable_list = ["name", "email"]
    column_list = ["name", "email", "status", "vip"]
    form_columns = [
        "name", "email", "phone", "score", "birthday", "status", "vip", "notes", "company"
    ]
    form_args = {{"company": {{"blank_text": "No company"}}}}


try:
    from flask_admin.theme import Bootstrap4Theme
except ImportError:  # Flask-Admin 1.x
    admin = Admin(app, name="Contacts admin", template_mode="bootstrap3")
else:
    admin = Admin(app, name="Contacts admin", theme=Bootstrap4Theme())
admin.add_view(ContactView(Contact, db.session))
admin.add_view(ModelView(Company, db.session))


@app.route("/")
def home():
    return redirect("/admin/contact/")


if sys.argv[2] == "init":
    with app.app_context():
        db.create_all()
        db.session.add_all(Company(name=name) for name in {list(COMPANIES)!r})
        db.session.commit()
else:
    app.run(host="127.0.0.1", port=int(sys.argv[2]), threaded=True, use_reloader=False)
'''
TEMPLATE_DB: Final = "template.sqlite3"


def _install(version: str, folder: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "venv", str(folder / "venv")], check=True, capture_output=True
    )
    python = str(folder / "venv" / "bin" / "python")
    subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *PINS[version]],
        check=True,
        capture_output=True,
        timeout=_INSTALL_TIMEOUT_S,
    )
    (folder / "app.py").write_text(_APP, encoding="utf-8")
    subprocess.run(
        [python, str(folder / "app.py"), str(folder / TEMPLATE_DB), "init"],
        check=True,
        capture_output=True,
        timeout=_INSTALL_TIMEOUT_S,
    )


def environment(version: str) -> Path:
    """The cached folder of *version*: its venv, the glue and the template database."""
    digest = hashlib.sha256((_APP + "\n".join(PINS[version])).encode()).hexdigest()[:8]
    return installed(
        f"realapps-flask-admin-{version}-{digest}", functools.partial(_install, version)
    )


class Site:
    """A running Flask-Admin instance over its own copy of the template database."""

    def __init__(self, url: str, database: Path) -> None:
        self._url = url
        self.database = database

    @property
    def url(self) -> str:
        return self._url

    def state(self) -> State:
        """Every contact (its company by name; "" read as no value), sorted by name, e-mail."""
        with contextlib.closing(sqlite3.connect(self.database)) as db:
            db.row_factory = sqlite3.Row
            rows = db.execute(
                "SELECT c.name, c.email, c.phone, c.score, c.birthday, c.status, c.vip, c.notes,"
                " co.name AS company FROM contact c LEFT JOIN company co ON co.id = c.company_id"
            ).fetchall()
        contacts = [
            {k: (None if v == "" else v) for k, v in dict(r).items()} | {"vip": bool(r["vip"])}
            for r in rows
        ]
        return {"contact": sorted(contacts, key=_contact_key)}


def _contact_key(contact: dict[str, Any]) -> tuple[str, str]:
    return (contact["name"] or "", contact["email"] or "")


@contextlib.contextmanager
def _start(version: str) -> Iterator[Site]:
    env = environment(version)
    folder = Path(tempfile.mkdtemp(prefix="realapps-flask-admin-"))
    database = folder / "contacts.sqlite3"
    shutil.copyfile(env / TEMPLATE_DB, database)
    port = free_port()
    process = subprocess.Popen(
        [str(env / "venv" / "bin" / "python"), str(env / "app.py"), str(database), str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    site = Site(f"http://127.0.0.1:{port}", database)
    try:
        deadline = time.monotonic() + _START_TIMEOUT_S
        while True:
            try:
                with urlopen(site.url + "/admin/", timeout=2):
                    break
            except (URLError, OSError):
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(f"Flask-Admin {version} did not start") from None
                time.sleep(0.05)
        yield site
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(folder, ignore_errors=True)


# ── the data the tasks need ────────────────────────────────────────────────────────────────

#: Contacts every task starts with (name, email, phone, score, birthday, status, vip, notes,
#: company): the look-alikes "Maria Garcia" / "Maria Garcia-Lopez" and "Bartholomew Quince" /
#: "Bartholomew Quincey"; the recorded searches ("Henrietta Vos", "Cornelius Abernathy") find
#: one row each.
SEED: Final = (
    ("Henrietta Vos", "henrietta@vos.test", "+31 20 555 0101", 71, "1975-04-12", "Customer",
     True, "Prefers phone calls", "Globex Works"),
    ("Cornelius Abernathy", "cornelius@abernathy.test", "+44 20 7946 0321", 12, "1968-09-30",
     "Former", False, "Moved to Leeds", "Umbrella Foods"),
    ("Maria Garcia", "maria@garcia.test", "+34 91 555 0147", 58, "1982-01-23", "Lead", False,
     "Asked for a quote", "Initech Labs"),
    ("Maria Garcia-Lopez", "maria@garcia-lopez.test", "+34 93 555 0190", 34, "1990-06-15",
     "Customer", True, "Signed in March", "Globex Works"),
    ("Bartholomew Quince", "bart@quince.test", "+1 415 555 0133", 77, "1979-12-03", "Customer",
     False, "Orders every quarter", None),
    ("Bartholomew Quincey", "bart@quincey.test", "+1 617 555 0175", 25, "1986-08-21", "Lead",
     True, "Met at the expo", "Initech Labs"),
)  # fmt: skip
_FIELDS: Final = ("name", "email", "phone", "score", "birthday", "status", "vip", "notes")


def _prepare(instance: Instance) -> None:
    assert isinstance(instance, Site)
    with contextlib.closing(sqlite3.connect(instance.database)) as db, db:
        for *row, company in SEED:
            db.execute(
                f"INSERT INTO contact ({', '.join(_FIELDS)}, company_id) VALUES"
                " (?, ?, ?, ?, ?, ?, ?, ?, (SELECT id FROM company WHERE name = ?))",
                (*row, company),
            )


def _contact(**fields: Any) -> dict[str, Any]:
    blank: dict[str, Any] = dict.fromkeys((*_FIELDS, "company"))
    return blank | {"vip": False} | fields


def _with(before: State, contact: dict[str, Any]) -> State:
    return {"contact": sorted([*before["contact"], contact], key=_contact_key)}


# ── tasks ──────────────────────────────────────────────────────────────────────────────────

_MONTHS: Final = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
                  "Dec")  # fmt: skip


async def _pick_select2(do: Demonstrator, shown: str, option: str) -> None:
    """Open the Select2 box showing *shown* and click *option* in its list."""
    page = do.page
    await do.click(page.get_by_role("link", name=shown, exact=True))
    await do.click(page.get_by_role("option", name=option, exact=True))


async def _pick_date(do: Demonstrator, label: str, iso: str) -> None:
    """Open the date field's calendar, choose the year and month from its selects, click the
    day (the grey days of the previous month come before it, of the next month after it)."""
    page = do.page
    year, month, day = iso.split("-")
    await do.click(page.get_by_label(label))
    await do.select(page.get_by_role("combobox").filter(has_text=year), year)
    await do.select(page.get_by_role("combobox").filter(has_text="Jan"), _MONTHS[int(month) - 1])
    days = page.get_by_role("cell", name=str(int(day)), exact=True)
    await do.click(days.first if int(day) < 23 else days.last)


async def _search(do: Demonstrator, name: str) -> None:
    page = do.page
    search = page.get_by_placeholder("name, email")
    await do.type_into(search, name)
    await do.press(search, "Enter")
    await page.wait_for_url("**search=*")


def _row(do: Demonstrator, name: str) -> Locator:
    """The list row whose name cell is exactly *name* (not its look-alikes)."""
    page = do.page
    return page.get_by_role("row").filter(has=page.get_by_role("cell", name=name, exact=True))


async def _save(do: Demonstrator, message: str) -> None:
    await do.click(do.page.get_by_role("button", name="Save", exact=True))
    await do.page.get_by_text(message).wait_for()


async def create(do: Demonstrator, values: Values) -> None:
    """Create a VIP contact with a name, an e-mail and a status picked in Select2."""
    page = do.page
    await do.click(page.get_by_role("link", name="Create", exact=True))
    await page.wait_for_url("**/new/**")
    await do.type_into(page.get_by_label("Name"), values["name"])
    await do.type_into(page.get_by_label("Email"), values["email"])
    await _pick_select2(do, "Lead", values["status"])
    await do.check(page.get_by_label("Vip"))
    await _save(do, "Record was successfully created.")


async def search_edit(do: Demonstrator, values: Values) -> None:
    """Search the name, open that exact row's edit form, change the e-mail, save."""
    page = do.page
    await _search(do, values["name"])
    await do.click(_row(do, values["name"]).get_by_title("Edit Record"))
    await page.wait_for_url("**/edit/**")
    await do.type_into(page.get_by_label("Email"), values["email"])
    await _save(do, "Record was successfully saved.")


async def bulk_delete(do: Demonstrator, values: Values) -> None:
    """Search the name, tick that exact row, "With selected" → "Delete", accept confirm()."""
    page = do.page
    await _search(do, values["name"])
    await do.check(_row(do, values["name"]).get_by_role("checkbox", name="Select record"))
    await do.click(page.get_by_text("With selected", exact=True))

    async def accept(dialog: Dialog) -> None:
        await dialog.accept()

    page.once("dialog", accept)
    await do.click(page.get_by_role("link", name="Delete", exact=True))
    await page.get_by_text("Record was successfully deleted.").wait_for()


async def every_input(do: Demonstrator, values: Values) -> None:
    """Create a contact filling every field: text, e-mail, phone, number, the date picker,
    Select2 status, checkbox, textarea, Select2 company."""
    page = do.page
    await do.click(page.get_by_role("link", name="Create", exact=True))
    await page.wait_for_url("**/new/**")
    await do.type_into(page.get_by_label("Name"), values["name"])
    await do.type_into(page.get_by_label("Email"), values["email"])
    await do.type_into(page.get_by_label("Phone"), values["phone"])
    await do.type_into(page.get_by_label("Score"), values["score"])
    await _pick_date(do, "Birthday", values["birthday"])
    await _pick_select2(do, "Lead", values["status"])
    await do.check(page.get_by_label("Vip"))
    await do.type_into(page.get_by_label("Notes"), values["notes"])
    await _pick_select2(do, "No company", values["company"])
    await _save(do, "Record was successfully created.")


def _created(before: State, values: Values) -> State:
    return _with(
        before,
        _contact(name=values["name"], email=values["email"], status=values["status"], vip=True),
    )


def _edited(before: State, values: Values) -> State:
    edited = [
        c | {"email": values["email"]} if c["name"] == values["name"] else c
        for c in before["contact"]
    ]
    return {"contact": sorted(edited, key=_contact_key)}


def _deleted(before: State, values: Values) -> State:
    return {"contact": [c for c in before["contact"] if c["name"] != values["name"]]}


def _filled(before: State, values: Values) -> State:
    fields = {k: values[k] for k in ("name", "email", "phone", "birthday", "status", "notes")}
    return _with(
        before,
        _contact(**fields, score=int(values["score"]), vip=True, company=values["company"]),
    )


#: The every-input task's values: recorded, then the replays (the replays' days recur in the
#: calendar among the grey days of the month before or after).
_EVERY_INPUT: Final = (
    ("Ingrid Solberg", "ingrid@solberg-fjord.test", "+47 912 30 455", "63", "1994-07-18",
     "Customer", "Met at the Bergen trade fair", "Globex Works"),
    ("Rafael Okonkwo", "rafael@okonkwo-studio.test", "+234 803 111 2020", "41", "1991-11-05",
     "Former", "Prefers e-mail over calls", "Initech Labs"),
    ("Yuki Tanabe", "yuki@tanabe-works.test", "+81 90 7788 1122", "95", "1998-02-27", "Lead",
     "Interested in the spring catalogue", "Umbrella Foods"),
)  # fmt: skip


def _every_input_values(index: int) -> Values:
    keys = ("name", "email", "phone", "score", "birthday", "status", "notes", "company")
    return dict(zip(keys, _EVERY_INPUT[index], strict=True))


TASKS: Final = (
    Task(
        name="create",
        intent="Create the VIP contact {name} ({email}) with the status {status}",
        start="/admin/contact/",
        demonstrate=create,
        recorded={
            "name": "Odile Brennan",
            "email": "odile@brennan-design.test",
            "status": "Customer",
        },
        replays=(
            {"name": "Kasimir Lindqvist", "email": "kasimir@lindqvist.test", "status": "Former"},
            {"name": "Priya Raghunathan", "email": "priya@raghunathan.test", "status": "Lead"},
        ),
        expected=_created,
        prepare=_prepare,
    ),
    Task(
        name="search-edit",
        intent="Change the e-mail of {name} to {email}",
        start="/admin/contact/",
        demonstrate=search_edit,
        recorded={"name": "Henrietta Vos", "email": "h.vos@harbourmail.test"},
        replays=(
            {"name": "Maria Garcia", "email": "maria.g@northwind.test"},
            {"name": "Bartholomew Quince", "email": "b.quince@orchard.test"},
        ),
        expected=_edited,
        prepare=_prepare,
    ),
    Task(
        name="bulk-delete",
        intent="Delete the contact {name}",
        start="/admin/contact/",
        demonstrate=bulk_delete,
        recorded={"name": "Cornelius Abernathy"},
        replays=({"name": "Maria Garcia"}, {"name": "Bartholomew Quince"}),
        expected=_deleted,
        prepare=_prepare,
    ),
    Task(
        name="every-input",
        intent="Add the VIP contact {name} ({email}, {phone}), score {score}, born {birthday},"
        " status {status}, at {company}, with the note {notes}",
        start="/admin/contact/",
        demonstrate=every_input,
        recorded=_every_input_values(0),
        replays=(_every_input_values(1), _every_input_values(2)),
        expected=_filled,
        prepare=_prepare,
    ),
)

APP: Final = App(
    name="flask-admin",
    variants=tuple(
        Variant("flask-admin", f"flask-admin {version} {theme}", functools.partial(_start, version))
        for version, theme in (("1.6.1", "bootstrap3"), ("2.2.1", "bootstrap4"))
    ),
    tasks=TASKS,
    notes=(
        "Bulk delete asks with the browser's own confirm() ('Are you sure you want to delete"
        " selected records?'); a replay must accept it (Playwright dismisses it otherwise).",
        "The birthday's daterangepicker rewrites the field on every key-up, so the date is"
        " picked through its calendar (year and month selects without names, then the day).",
        "The row's edit link is an icon: its accessible name is a glyph; its title is"
        " 'Edit Record'.",
    ),
)
