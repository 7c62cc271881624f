"""SQLAdmin (PyPI ``sqladmin``): an admin for Starlette/FastAPI over SQLAlchemy, served by uvicorn.

The glue anyone writes (a Starlette app, a ``Contact`` model, its ``ModelView``, SQLAdmin's own
``AuthenticationBackend`` checking a ``user`` table, an ``on_model_change`` hook that stores the
signed-in user in ``created_by``) lives as a string here and is written into each variant's cached
environment, where a template SQLite database is made once (tables, two users); every instance
copies it and runs ``python app.py DATABASE PORT`` on 127.0.0.1.

Variants: SQLAdmin **0.16.1** (with the Starlette 0.36, SQLAlchemy 2.0 and WTForms 3.1 of its
time) and **0.32.0** (the newest release pip offers). Both have the same Tabler layout, list,
Actions menu, row checkboxes and delete modal; what a replay sees differ in: the required field's
label (``*Name`` in 0.32), the Vip checkbox (a box vs. a switch), the notes textarea (0.32
auto-resizes it and counts its characters below it), icon glyphs in 0.16's accessible names (the
row's delete link is named ``""``, Logout ``" Logout"``; 0.32: ``Delete``, ``Logout``), the
Export button (a link vs. a menu) and where a save or a delete returns (0.32 keeps the list's
search, 0.16 drops it).

Tasks (each starts at the login page and signs in with ``username`` and the secret
``password``): ``create``, ``search-edit`` (open the row whose name is exactly the value, among
look-alikes in a replay, change its e-mail), ``bulk-delete`` (tick the row's checkbox, Actions ›
"Delete selected items", confirm in the modal), ``every-input`` (text, number, a flatpickr date
typed in, a native select, a checkbox, a textarea) and ``sign-in-as`` (the other user creates a
contact; judged by ``created_by``).
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.error import URLError
from urllib.request import urlopen

from browser_support import free_port
from demonstrations import Demonstrator
from playwright.async_api import Locator
from third_party import installed

from realapps.harness import App, Instance, State, Task, Values, Variant

#: Each variant's exact packages, all of them pinned (an install is the same every time).
PINS: Final = {
    "0.16.1": (  # with the Starlette, SQLAlchemy and WTForms of its time
        "sqladmin==0.16.1 starlette==0.36.3 SQLAlchemy==2.0.25 WTForms==3.1.2 Jinja2==3.1.3"
        " MarkupSafe==2.1.5 python-multipart==0.0.9 itsdangerous==2.1.2 uvicorn==0.27.1"
        " h11==0.14.0 click==8.1.7 anyio==4.2.0 sniffio==1.3.0 idna==3.6"
        " typing_extensions==4.9.0 greenlet==3.0.3"
    ),
    "0.32.0": (
        "sqladmin==0.32.0 starlette==1.10.0 SQLAlchemy==2.1.9 WTForms==3.2.2 Jinja2==3.1.6"
        " MarkupSafe==3.0.4 python-multipart==0.0.34 itsdangerous==2.2.0 uvicorn==0.54.0"
        " h11==0.16.0 click==8.5.1 anyio==4.16.0 idna==3.20 typing_extensions==4.16.0"
        " greenlet==3.5.6"
    ),
}
USERS: Final = {"ann.keeper": "Amber-Heron-4127", "bo.lindqvist": "Quiet-Fjord-8361"}
COLUMNS: Final = (
    "name",
    "email",
    "phone",
    "score",
    "birthday",
    "status",
    "vip",
    "notes",
    "created_by",
)
_INSTALL_TIMEOUT_S: Final = 600
TEMPLATE_DB: Final = "template.db"

# ── the site, as anyone writes it ─────────────────────────────────────────────────────────

_APP: Final = f'''"""Contacts in SQLAdmin: python app.py DATABASE PORT
(python app.py --init DATABASE makes the tables and the users)."""
import enum
import hashlib
import sys

import uvicorn
from sqladmin import Admin, ModelView
from sqladmin.authentication import AuthenticationBackend
from sqlalchemy import Boolean, Column, Date, Enum, Integer, String, Text, create_engine, select
from sqlalchemy.orm import declarative_base, sessionmaker
from starlette.applications import Starlette
from starlette.responses import RedirectResponse
from starlette.routing import Route

Base = declarative_base()


class Status(enum.Enum):
    Lead = "Lead"
    Customer = "Customer"
    Former = "Former"


class Contact(Base):
    __tablename__ = "contact"
    id = Column(Integer, primary_key=True)
    name = Column(String(100), nullable=False)
    email = Column(String(100))
    phone = Column(String(40))
    score = Column(Integer)
    birthday = Column(Date)
    status = Column(Enum(Status), nullable=False, default=Status.Lead)
    vip = Column(Boolean, nullable=False, default=False)
    notes = Column(Text)
    created_by = Column(String(50))


class User(Base):
    __tablename__ = "user"
    id = Column(Integer, primary_key=True)
    username = Column(String(50), unique=True, nullable=False)
    password_hash = Column(String(64), nullable=False)


def digest(password):
    return hashlib.sha256(("contacts:" + password).encode()).hexdigest()


engine = create_engine("sqlite:///" + (sys.argv[2] if sys.argv[1] == "--init" else sys.argv[1]))
Session = sessionmaker(engine)


class UsersTable(AuthenticationBackend):
    async def login(self, request):
        form = await request.form()
        username, password = form.get("username", ""), form.get("password", "")
        with Session() as session:
            user = session.scalars(select(User).where(User.username == username)).first()
        if user is None or user.password_hash != digest(password):
            return False
        request.session.update({{"username": user.username}})
        return True

    async def logout(self, request):
        request.session.clear()
        return True

    async def authenticate(self, request):
        return "username" in request.session


class ContactAdmin(ModelView, model=Contact):
    column_list = [Contact.name, Contact.email, Contact.status, Contact.vip]
    column_searchable_list = [Contact.name, Contact.email]
    form_excluded_columns = [Contact.created_by]

    async def on_model_change(self, data, model, is_created, request):
        if is_created:
            model.created_by = request.session["username"]


if sys.argv[1] == "--init":
    Base.metadata.create_all(engine)
    with Session() as session:
        for username, password in {sorted(USERS.items())!r}:
            session.add(User(username=username, password_hash=digest(password)))
        session.commit()
    sys.exit()


async def home(request):
    return RedirectResponse("/admin/")


app = Starlette(routes=[Route("/", home)])
admin = Admin(app, engine, title="Address Book", authentication_backend=UsersTable("test-only"))
admin.add_view(ContactAdmin)
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
'''
_DIGEST: Final = hashlib.sha256((_APP + repr(PINS)).encode()).hexdigest()[:8]


def _install(version: str, folder: Path) -> None:
    run = functools.partial(
        subprocess.run, cwd=folder, check=True, capture_output=True, timeout=_INSTALL_TIMEOUT_S
    )
    run([sys.executable, "-m", "venv", "venv"])
    python = str(folder / "venv" / "bin" / "python")
    pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    run([*pip, *PINS[version].split()])
    (folder / "app.py").write_text(_APP, encoding="utf-8")
    run([python, "app.py", "--init", TEMPLATE_DB])


def sqladmin_env(version: str) -> Path:
    """The folder of SQLAdmin *version*: its venv, ``app.py`` and the template database."""
    return installed(f"sqladmin-{version}-{_DIGEST}", functools.partial(_install, version))


# ── instances ─────────────────────────────────────────────────────────────────────────────


@dataclass
class SqlAdminSite:
    """A running instance: its URL and its own copy of the database."""

    url: str
    database: Path

    def connect(self) -> contextlib.closing[sqlite3.Connection]:
        return contextlib.closing(sqlite3.connect(self.database))

    def state(self) -> State:
        """The contacts as stored, every field but the id (``vip`` as a bool)."""
        with self.connect() as db:
            rows = db.execute(f"SELECT {', '.join(COLUMNS)} FROM contact").fetchall()
        contacts = [dict(zip(COLUMNS, row, strict=True)) for row in rows]
        for contact in contacts:
            contact["vip"] = bool(contact["vip"])
        return _sorted(contacts)


def _sorted(contacts: list[dict[str, Any]]) -> State:
    return {"contacts": sorted(contacts, key=lambda c: (c["name"], c["email"] or ""))}


@contextlib.contextmanager
def sqladmin_site(version: str) -> Iterator[SqlAdminSite]:
    """A fresh SQLAdmin site of *version* on a free port, over a copy of the template DB."""
    env_folder = sqladmin_env(version)
    scratch = Path(tempfile.mkdtemp(prefix="sqladmin-"))
    database = scratch / "contacts.db"
    shutil.copyfile(env_folder / TEMPLATE_DB, database)
    port = free_port()
    site = SqlAdminSite(f"http://127.0.0.1:{port}", database)
    process = subprocess.Popen(
        [str(env_folder / "venv" / "bin" / "python"), "app.py", str(database), str(port)],
        cwd=env_folder,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urlopen(site.url + "/admin/login", timeout=2):
                    break
            except (URLError, OSError):
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(f"SQLAdmin {version} did not start") from None
                time.sleep(0.05)
        yield site
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(scratch, ignore_errors=True)


# ── data the tasks need ───────────────────────────────────────────────────────────────────

#: Contacts every task starts with: a lone "Tobias Rennick" and "Henrike Vos" for the recorded
#: searches, look-alikes "Maria Garcia" / "Maria Garcia-Lopez" for a replay.
SEED: Final = (
    (
        "Tobias Rennick",
        "tobias.rennick@example.test",
        "+44 20 7946 0311",
        71,
        "1984-02-09",
        "Customer",
        1,
        "Prefers phone calls",
        "ann.keeper",
    ),
    ("Henrike Vos", "henrike.vos@example.test", None, 35, None, "Lead", 0, None, "bo.lindqvist"),
    (
        "Maria Garcia",
        "maria.garcia@example.test",
        "+34 91 555 0142",
        64,
        "1990-07-14",
        "Customer",
        0,
        "Spanish office",
        "ann.keeper",
    ),
    (
        "Maria Garcia-Lopez",
        "m.garcia-lopez@example.test",
        None,
        None,
        "1987-03-02",
        "Former",
        1,
        None,
        "bo.lindqvist",
    ),
    (
        "Oskar Lindgren",
        "oskar.lindgren@example.test",
        "+46 8 555 019 20",
        12,
        None,
        "Lead",
        0,
        "Met at the Malmö meetup",
        "ann.keeper",
    ),
)


def _seed(instance: Instance) -> None:
    assert isinstance(instance, SqlAdminSite)
    with instance.connect() as db:
        db.executemany(
            f"INSERT INTO contact ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * 9)})", SEED
        )
        db.commit()


def _contact(**fields: Any) -> dict[str, Any]:
    """A contact as SQLAdmin stores what the form left empty (``None``, vip false)."""
    return {column: fields.get(column, False if column == "vip" else None) for column in COLUMNS}


def _added(before: State, row: dict[str, Any]) -> State:
    return _sorted([*before["contacts"], row])


# ── demonstrations ────────────────────────────────────────────────────────────────────────


async def _sign_in(do: Demonstrator, values: Values) -> None:
    """Sign in on the login page and open the contact list from the menu."""
    page = do.page
    await do.type_into(page.get_by_placeholder("Enter username"), values["username"])
    await do.type_into(page.get_by_placeholder("Password"), values["password"])
    await do.click(page.get_by_role("button", name="Login", exact=True))
    await page.wait_for_url("**/admin/")
    await do.click(page.get_by_role("link", name="Contacts", exact=True))
    await page.wait_for_url("**/admin/contact/list")


async def _search(do: Demonstrator, text: str) -> Locator:
    """Search the list for *text*; the row whose name is exactly *text*."""
    page = do.page
    search = page.get_by_placeholder("Search: name, email")
    await do.type_into(search, text)
    await do.press(search, "Enter")
    await page.wait_for_url("**search=*")
    return page.get_by_role("row").filter(has=page.get_by_role("cell", name=text, exact=True))


async def _new_contact(do: Demonstrator) -> None:
    page = do.page
    await do.click(page.get_by_role("link", name="New Contact"))
    await page.wait_for_url("**/admin/contact/create")


async def _save(do: Demonstrator, shown: str) -> None:
    """Save the form; wait for the list to show *shown*."""
    page = do.page
    await do.click(page.get_by_role("button", name="Save", exact=True))
    await page.wait_for_url("**/admin/contact/list**")
    await page.get_by_role("cell", name=shown, exact=True).wait_for()


async def create(do: Demonstrator, values: Values) -> None:
    """Sign in, create a contact with a name, an e-mail and a status."""
    page = do.page
    await _sign_in(do, values)
    await _new_contact(do)
    await do.type_into(page.get_by_label("Name"), values["name"])
    await do.type_into(page.get_by_label("Email"), values["email"])
    await do.select(page.get_by_label("Status"), values["status"])
    await _save(do, values["name"])


def create_expected(before: State, values: Values) -> State:
    return _added(
        before,
        _contact(
            name=values["name"],
            email=values["email"],
            status=values["status"],
            created_by=values["username"],
        ),
    )


async def search_edit(do: Demonstrator, values: Values) -> None:
    """Sign in, search the name, open exactly that row's edit form, change the e-mail."""
    page = do.page
    await _sign_in(do, values)
    row = await _search(do, values["name"])
    await do.click(row.get_by_role("link", name="Edit", exact=True))
    await page.wait_for_url("**/admin/contact/edit/**")
    await do.type_into(page.get_by_label("Email"), values["email"])
    await _save(do, values["email"])


def search_edit_expected(before: State, values: Values) -> State:
    return _sorted(
        [
            {**c, "email": values["email"]} if c["name"] == values["name"] else c
            for c in before["contacts"]
        ]
    )


async def bulk_delete(do: Demonstrator, values: Values) -> None:
    """Sign in, search the name, tick exactly that row, delete it through the Actions menu and
    confirm in the modal."""
    page = do.page
    await _sign_in(do, values)
    row = await _search(do, values["name"])
    await do.check(row.get_by_role("checkbox", name="Select item"))
    await do.click(page.get_by_role("button", name="Actions", exact=True))
    await do.click(page.get_by_role("link", name="Delete selected items", exact=True))
    dialog = page.get_by_role("dialog")
    # The modal fills in its text when it has opened; its Delete button is armed then.
    await dialog.get_by_text("This will permanently delete").wait_for()
    await do.click(dialog.get_by_role("button", name="Delete", exact=True))
    await page.get_by_role("cell", name=values["name"], exact=True).wait_for(state="detached")
    await page.wait_for_load_state()


def bulk_delete_expected(before: State, values: Values) -> State:
    return _sorted([c for c in before["contacts"] if c["name"] != values["name"]])


async def every_input(do: Demonstrator, values: Values) -> None:
    """Sign in and fill every kind of field the form has, then save."""
    page = do.page
    await _sign_in(do, values)
    await _new_contact(do)
    await do.type_into(page.get_by_label("Name"), values["name"])
    await do.type_into(page.get_by_label("Email"), values["email"])
    await do.type_into(page.get_by_label("Phone"), values["phone"])
    await do.type_into(page.get_by_label("Score"), values["score"])
    # A flatpickr field: type the date, Tab out (closes its calendar, keeps the typed date).
    birthday = page.get_by_label("Birthday")
    await do.type_into(birthday, values["birthday"])
    await do.press(birthday, "Tab")
    await do.select(page.get_by_label("Status"), values["status"])
    await do.check(page.get_by_label("Vip"))
    await do.type_into(page.get_by_label("Notes"), values["notes"])
    await _save(do, values["name"])


def every_input_expected(before: State, values: Values) -> State:
    return _added(
        before,
        _contact(
            name=values["name"],
            email=values["email"],
            phone=values["phone"],
            score=int(values["score"]),
            birthday=values["birthday"],
            status=values["status"],
            vip=True,
            notes=values["notes"],
            created_by=values["username"],
        ),
    )


async def sign_in_as(do: Demonstrator, values: Values) -> None:
    """Sign in as the given user and create a contact (SQLAdmin records who created it)."""
    page = do.page
    await _sign_in(do, values)
    await _new_contact(do)
    await do.type_into(page.get_by_label("Name"), values["name"])
    await do.type_into(page.get_by_label("Email"), values["email"])
    await _save(do, values["name"])


def sign_in_as_expected(before: State, values: Values) -> State:
    return _added(
        before,
        _contact(
            name=values["name"],
            email=values["email"],
            status="Lead",
            created_by=values["username"],
        ),
    )


# ── the app ───────────────────────────────────────────────────────────────────────────────

ANN: Final = {"username": "ann.keeper", "password": USERS["ann.keeper"]}
BO: Final = {"username": "bo.lindqvist", "password": USERS["bo.lindqvist"]}
_SECRET: Final = frozenset({"password"})
_START: Final = "/admin/login"

TASKS: Final = (
    Task(
        "create",
        "Create a contact for {name} with status {status}",
        _START,
        create,
        {
            **ANN,
            "name": "Jane Holloway",
            "email": "jane.holloway@example.test",
            "status": "Customer",
        },
        (
            {**BO, "name": "Ravi Menon", "email": "ravi.menon@example.test", "status": "Former"},
            {
                **BO,
                "name": "Lucia Ferreira",
                "email": "lucia.ferreira@example.test",
                "status": "Lead",
            },
        ),
        create_expected,
        _SECRET,
        _seed,
    ),
    Task(
        "search-edit",
        "Change the e-mail of {name} to {email}",
        _START,
        search_edit,
        {**ANN, "name": "Tobias Rennick", "email": "t.rennick@harbourline.test"},
        (
            {**BO, "name": "Maria Garcia", "email": "maria@vistamar.test"},
            {**BO, "name": "Oskar Lindgren", "email": "oskar@fjellgard.test"},
        ),
        search_edit_expected,
        _SECRET,
        _seed,
    ),
    Task(
        "bulk-delete",
        "Delete the contact {name}",
        _START,
        bulk_delete,
        {**ANN, "name": "Henrike Vos"},
        ({**BO, "name": "Maria Garcia"}, {**BO, "name": "Oskar Lindgren"}),
        bulk_delete_expected,
        _SECRET,
        _seed,
    ),
    Task(
        "every-input",
        "Add {name}, born {birthday}, as a VIP {status}",
        _START,
        every_input,
        {
            **ANN,
            "name": "Gunnar Aasen",
            "email": "gunnar.aasen@example.test",
            "phone": "+47 912 34 567",
            "score": "88",
            "birthday": "1979-11-23",
            "status": "Customer",
            "notes": "Met at the Bergen trade fair",
        },
        (
            {
                **BO,
                "name": "Amara Okafor",
                "email": "amara.okafor@example.test",
                "phone": "+234 803 555 0190",
                "score": "42",
                "birthday": "1991-06-05",
                "status": "Former",
                "notes": "Referred by a former colleague",
            },
            {
                **BO,
                "name": "Kenji Watanabe",
                "email": "kenji.watanabe@example.test",
                "phone": "+81 3 5550 2231",
                "score": "63",
                "birthday": "2001-01-30",
                "status": "Lead",
                "notes": "Asked for a quote in March",
            },
        ),
        every_input_expected,
        _SECRET,
        _seed,
    ),
    Task(
        "sign-in-as",
        "Sign in as {username} and add the contact {name}",
        _START,
        sign_in_as,
        {**ANN, "name": "Ingrid Solberg", "email": "ingrid.solberg@example.test"},
        (
            {**BO, "name": "Felix Brandt", "email": "felix.brandt@example.test"},
            {**BO, "name": "Nadia Haddad", "email": "nadia.haddad@example.test"},
        ),
        sign_in_as_expected,
        _SECRET,
        _seed,
    ),
)

APP: Final = App(
    name="sqladmin",
    variants=tuple(
        Variant("sqladmin", f"sqladmin {version}", functools.partial(sqladmin_site, version))
        for version in PINS
    ),
    tasks=TASKS,
    notes=(
        "Search auto-submits 1 s after the last keyup (both versions): a replay that pauses"
        " mid-typing navigates to a partial search.",
        "The delete modal arms its Delete button when it has finished opening (its text appears"
        " then); a click before that sends DELETE to the list page and alert()s its error.",
        "Row actions are icon links: View/Edit get their names from tooltips set by script;"
        " 0.16's row delete link has no name at all (an icon glyph).",
        "Birthday is a flatpickr text field: typing opens a calendar over the fields below it;"
        " Tab closes it and keeps the typed date.",
        "Login fields have no labels: only their placeholders name them.",
    ),
)
