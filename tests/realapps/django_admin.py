"""The Django admin (PyPI ``django``) over the smallest project anyone using Django writes.

The project (settings, urls, one app ``crm`` with ``Company`` and ``Contact`` and its
``admin.py``) lives as strings here and is written into each variant's cached environment, where
a template SQLite database is prepared once (migrated, two staff superusers, three companies);
every instance copies it and runs ``manage.py runserver --noreload`` on 127.0.0.1.

Variants: Django **4.2.30** (the LTS line) and **5.2.19** (the newest line pip offers for
Python 3.11). The forms, the date widget (a text field with "Today" / "Choose a Date" links),
the radios and the action bar ("Action:" select, "Go") are the same; what differs for a replay
(:data:`DOM_NOTES`): 5.2's landmarks (banner, main, search, contentinfo; the site name no longer
an h1), 4.2's nameless row checkboxes (5.2: "Select this object for an action - <name>"), the
link beside the company select (4.2: "Add", as the sidebar's; 5.2: "Add another company"), and
the delete confirmation's heading (4.2 "Are you sure?", 5.2 "Delete multiple objects"; both
confirm with "Yes, I’m sure").

Tasks (each starts at the admin's login page and signs in with ``username`` and the secret
``password``): ``create`` (add a contact), ``search-edit`` (search, open the exact name among
look-alikes, change its e-mail), ``bulk-delete`` (search, tick the row, the "Delete selected
contacts" action, its confirmation page), ``every-input`` (text, e-mail, phone, number, a date
typed into the date field, radio buttons, a select, a checkbox, a textarea) and ``sign-in-as``
(the other user creates a contact; judged by the user of Django's own ``django_admin_log``).
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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.error import URLError
from urllib.request import urlopen

from browser_support import free_port
from demonstrations import Demonstrator
from third_party import installed

from realapps.harness import App, Instance, State, Task, Values, Variant

VERSIONS: Final = ("4.2.30", "5.2.19")
USERS: Final = {"ann.keeper": "Quill-Harbor-482", "bo.lindqvist": "Fjord-Lantern-917"}
COMPANIES: Final = ("Globex Industries", "Initech Systems", "Umbrella Holdings")
_INSTALL_TIMEOUT_S: Final = 600

# ── the project, as anyone writes it ──────────────────────────────────────────────────────

_MANAGE: Final = """#!/usr/bin/env python
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mysite.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
"""

_SETTINGS: Final = """import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
SECRET_KEY = "test-only-not-a-secret"
DEBUG = True
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = [
    "django.contrib.admin", "django.contrib.auth", "django.contrib.contenttypes",
    "django.contrib.sessions", "django.contrib.messages", "django.contrib.staticfiles", "crm",
]
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
ROOT_URLCONF = "mysite.urls"
TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": [
        "django.template.context_processors.request",
        "django.contrib.auth.context_processors.auth",
        "django.contrib.messages.context_processors.messages",
    ]},
}]
DATABASES = {"default": {
    "ENGINE": "django.db.backends.sqlite3",
    "NAME": os.environ.get("CRM_DATABASE", BASE_DIR / "db.sqlite3"),
}}
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
"""

_URLS: Final = """from django.contrib import admin
from django.urls import path

urlpatterns = [path("admin/", admin.site.urls)]
"""

_MODELS: Final = """from django.db import models


class Company(models.Model):
    name = models.CharField(max_length=100)

    class Meta:
        verbose_name_plural = "companies"

    def __str__(self):
        return self.name


class Contact(models.Model):
    STATUS_CHOICES = [("lead", "Lead"), ("customer", "Customer"), ("former", "Former")]

    name = models.CharField(max_length=100)
    email = models.EmailField()
    phone = models.CharField(max_length=30, blank=True)
    score = models.IntegerField(default=0)
    birthday = models.DateField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=STATUS_CHOICES, default="lead")
    company = models.ForeignKey(Company, on_delete=models.CASCADE)
    vip = models.BooleanField(default=False)
    notes = models.TextField(blank=True)

    def __str__(self):
        return self.name
"""

_ADMIN: Final = """from django.contrib import admin

from .models import Company, Contact


@admin.register(Company)
class CompanyAdmin(admin.ModelAdmin):
    search_fields = ["name"]


@admin.register(Contact)
class ContactAdmin(admin.ModelAdmin):
    list_display = ["name", "email", "status", "company", "vip"]
    search_fields = ["name", "email"]
    radio_fields = {"status": admin.HORIZONTAL}
"""

#: Run once per variant by ``manage.py shell``: the two staff users and the companies.
_SEED: Final = f"""from django.contrib.auth.models import User
from crm.models import Company

for username, password in {sorted(USERS.items())!r}:
    User.objects.create_superuser(username, username + "@example.test", password)
for name in {list(COMPANIES)!r}:
    Company.objects.create(name=name)
"""

_FILES: Final = {
    "manage.py": _MANAGE,
    "mysite/__init__.py": "",
    "mysite/settings.py": _SETTINGS,
    "mysite/urls.py": _URLS,
    "crm/__init__.py": "",
    "crm/models.py": _MODELS,
    "crm/admin.py": _ADMIN,
}
_DIGEST: Final = hashlib.sha256(
    "".join(f"{k}\n{v}" for k, v in sorted(_FILES.items())).encode() + _SEED.encode()
).hexdigest()[:8]
TEMPLATE_DB: Final = "template.sqlite3"


def _install(version: str, folder: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", str(folder / "venv")], check=True)
    python = str(folder / "venv" / "bin" / "python")
    subprocess.run(
        [
            python,
            *["-m", "pip", "install", "--quiet", "--disable-pip-version-check"],
            f"django=={version}",
        ],
        check=True,
        capture_output=True,
        timeout=_INSTALL_TIMEOUT_S,
    )
    site = folder / "site"
    for relative, text in _FILES.items():
        (site / relative).parent.mkdir(parents=True, exist_ok=True)
        (site / relative).write_text(text, encoding="utf-8")
    env = {"CRM_DATABASE": str(folder / TEMPLATE_DB), "PATH": "/usr/bin:/bin"}
    for command in (["makemigrations", "crm"], ["migrate"], ["shell", "-c", _SEED]):
        subprocess.run(
            [python, "manage.py", *command],
            cwd=site,
            env=env,
            check=True,
            capture_output=True,
            timeout=_INSTALL_TIMEOUT_S,
        )


def django_env(version: str) -> Path:
    """The folder of Django *version*: its venv, the project (``site/``), the template DB."""
    return installed(f"django-{version}-{_DIGEST}", functools.partial(_install, version))


# ── instances ─────────────────────────────────────────────────────────────────────────────


@dataclass
class DjangoSite:
    """A running instance: its URL and its own copy of the database."""

    url: str
    database: Path

    def connect(self) -> contextlib.closing[sqlite3.Connection]:
        return contextlib.closing(sqlite3.connect(self.database))

    def state(self) -> State:
        """Contacts, companies and who did what (Django's ``django_admin_log``)."""
        with self.connect() as db:
            db.row_factory = sqlite3.Row
            contacts = [
                {**dict(r), "vip": bool(r["vip"])}
                for r in db.execute(
                    "SELECT c.name, c.email, c.phone, c.score, c.birthday, c.status,"
                    " k.name AS company, c.vip, c.notes"
                    " FROM crm_contact c JOIN crm_company k ON k.id = c.company_id"
                )
            ]
            companies = [dict(r) for r in db.execute("SELECT name FROM crm_company")]
            log = [
                dict(r)
                for r in db.execute(
                    "SELECT u.username AS user, l.action_flag AS action, l.object_repr AS object"
                    " FROM django_admin_log l JOIN auth_user u ON u.id = l.user_id"
                )
            ]
        return _sorted({"contacts": contacts, "companies": companies, "log": log})


def _sorted(state: State) -> State:
    return {
        "contacts": sorted(state["contacts"], key=lambda c: (c["name"], c["email"])),
        "companies": sorted(state["companies"], key=lambda c: c["name"]),
        "log": sorted(state["log"], key=lambda e: (e["user"], e["action"], e["object"])),
    }


@contextlib.contextmanager
def django_site(version: str) -> Iterator[DjangoSite]:
    """A fresh Django admin of *version* on a free port, over a copy of the template DB."""
    env_folder = django_env(version)
    scratch = Path(tempfile.mkdtemp(prefix="django-admin-"))
    database = scratch / "db.sqlite3"
    shutil.copyfile(env_folder / TEMPLATE_DB, database)
    port = free_port()
    site = DjangoSite(f"http://127.0.0.1:{port}", database)
    process = subprocess.Popen(
        [
            str(env_folder / "venv" / "bin" / "python"),
            *["manage.py", "runserver", "--noreload", "--skip-checks"],
            f"127.0.0.1:{port}",
        ],
        cwd=env_folder / "site",
        env={"CRM_DATABASE": str(database), "PATH": "/usr/bin:/bin"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urlopen(site.url + "/admin/login/", timeout=2):
                    break
            except (URLError, OSError):
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(f"Django {version} did not start") from None
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


def _variant(version: str) -> Variant:
    return Variant(
        "django-admin",
        f"django-admin {version.rsplit('.', 1)[0]}",
        functools.partial(django_site, version),
    )


# ── seeding and expectations ──────────────────────────────────────────────────────────────

#: Contacts seeded before a task, in this order (the change list shows the newest first).
_SEARCH_EDIT_ROWS: Final = (
    ("Henrietta Lindgren", "henrietta@lindgren.test", "Globex Industries"),
    ("Maria Garcia", "maria.garcia@example.test", "Initech Systems"),
    ("Maria Garcia-Lopez", "mgl@lopez.test", "Umbrella Holdings"),  # listed above Maria Garcia
    ("Oskar Brandtner", "oskar@brandtner.test", "Globex Industries"),
    ("Oskar Brandt", "ob@brandt.test", "Initech Systems"),  # listed above Oskar Brandtner
    ("Li Wei", "li.wei@example.test", "Globex Industries"),
)
_BULK_DELETE_ROWS: Final = (
    ("Wilhelmina Strand", "wilhelmina@strand.test", "Umbrella Holdings"),
    ("Jonas Becker", "jonas.becker@example.test", "Globex Industries"),
    ("Jonas Becker-Ross", "jbr@ross.test", "Initech Systems"),
    ("Priya Ramanathan", "priya@ramanathan.test", "Umbrella Holdings"),
    ("Priya Raman", "pr@raman.test", "Globex Industries"),
    ("Li Wei", "li.wei@example.test", "Globex Industries"),
)


def _seeder(rows: tuple[tuple[str, str, str], ...]) -> Callable[[Instance], None]:
    """Inserts *rows* (name, e-mail, company) as contacts through sqlite3."""

    def prepare(instance: Instance) -> None:
        assert isinstance(instance, DjangoSite)
        with instance.connect() as db, db:
            for name, email, company in rows:
                db.execute(
                    "INSERT INTO crm_contact (name, email, phone, score, birthday, status,"
                    " company_id, vip, notes) SELECT ?, ?, '', 0, NULL, 'lead', id, 0, ''"
                    " FROM crm_company WHERE name = ?",
                    (name, email, company),
                )

    return prepare


_ADDITION, _CHANGE, _DELETION = 1, 2, 3  # django_admin_log.action_flag


def _logged(before: State, values: Values, action: int, contacts: list[dict[str, Any]]) -> State:
    entry = {"user": values["username"], "action": action, "object": values["name"]}
    return _sorted({**before, "contacts": contacts, "log": [*before["log"], entry]})


def _added(before: State, values: Values, *, vip: bool = False) -> State:
    contact = {
        "name": values["name"],
        "email": values["email"],
        "phone": values.get("phone", ""),
        "score": int(values.get("score", "0")),
        "birthday": values.get("birthday"),
        "status": values.get("status", "Lead").lower(),
        "company": values["company"],
        "vip": vip,
        "notes": values.get("notes", ""),
    }
    return _logged(before, values, _ADDITION, [*before["contacts"], contact])


def _added_vip(before: State, values: Values) -> State:
    return _added(before, values, vip=True)


def _email_changed(before: State, values: Values) -> State:
    contacts = [
        {**c, "email": values["email"]} if c["name"] == values["name"] else c
        for c in before["contacts"]
    ]
    return _logged(before, values, _CHANGE, contacts)


def _deleted(before: State, values: Values) -> State:
    contacts = [c for c in before["contacts"] if c["name"] != values["name"]]
    return _logged(before, values, _DELETION, contacts)


# ── demonstrations ────────────────────────────────────────────────────────────────────────


async def _sign_in(do: Demonstrator, values: Values) -> None:
    page = do.page
    await do.type_into(page.get_by_label("Username:", exact=True), values["username"])
    await do.type_into(page.get_by_label("Password:", exact=True), values["password"])
    await do.click(page.get_by_role("button", name="Log in", exact=True))
    await page.get_by_role("heading", name="Select contact to change").wait_for()


async def _search(do: Demonstrator, name: str) -> None:
    page = do.page
    search = page.get_by_role("textbox", name="Search", exact=True)
    await do.type_into(search, name)
    await do.press(search, "Enter")
    await page.wait_for_url("**/admin/crm/contact/?q=*")


async def _save_and_wait(do: Demonstrator, message: str) -> None:
    page = do.page
    await do.click(page.get_by_role("button", name="Save", exact=True))
    await page.get_by_text(message, exact=True).wait_for()


async def _open_add_form(do: Demonstrator, values: Values) -> None:
    page = do.page
    await _sign_in(do, values)
    await do.click(page.get_by_role("link", name="Add contact", exact=True))
    await page.get_by_role("heading", name="Add contact", exact=True).wait_for()
    await do.type_into(page.get_by_label("Name:", exact=True), values["name"])
    await do.type_into(page.get_by_label("Email:", exact=True), values["email"])


async def add_contact(do: Demonstrator, values: Values) -> None:
    """Sign in, add a contact with a name, an e-mail and a company, save."""
    await _open_add_form(do, values)
    await do.select(do.page.get_by_label("Company:", exact=True), values["company"])
    await _save_and_wait(do, f"The contact “{values['name']}” was added successfully.")


async def add_contact_every_input(do: Demonstrator, values: Values) -> None:
    """Sign in and add a VIP contact filling every field of the form."""
    page = do.page
    await _open_add_form(do, values)
    await do.type_into(page.get_by_label("Phone:", exact=True), values["phone"])
    await do.type_into(page.get_by_label("Score:", exact=True), values["score"])
    await do.type_into(page.get_by_label("Birthday:", exact=True), values["birthday"])
    await do.check(page.get_by_role("radio", name=values["status"], exact=True))
    await do.select(page.get_by_label("Company:", exact=True), values["company"])
    await do.check(page.get_by_role("checkbox", name="Vip", exact=True))
    await do.type_into(page.get_by_label("Notes:", exact=True), values["notes"])
    await _save_and_wait(do, f"The contact “{values['name']}” was added successfully.")


async def search_and_edit(do: Demonstrator, values: Values) -> None:
    """Sign in, search a name, open the contact of exactly that name, change its e-mail."""
    page = do.page
    await _sign_in(do, values)
    await _search(do, values["name"])
    await do.click(page.get_by_role("link", name=values["name"], exact=True))
    await page.get_by_role("heading", name="Change contact", exact=True).wait_for()
    await do.type_into(page.get_by_label("Email:", exact=True), values["email"])
    await _save_and_wait(do, f"The contact “{values['name']}” was changed successfully.")


async def bulk_delete(do: Demonstrator, values: Values) -> None:
    """Sign in, search a name, tick its row, run "Delete selected contacts", confirm."""
    page = do.page
    await _sign_in(do, values)
    await _search(do, values["name"])
    row = page.get_by_role("row").filter(
        has=page.get_by_role("link", name=values["name"], exact=True)
    )
    await do.check(row.get_by_role("checkbox"))
    await do.select(page.get_by_role("combobox", name="Action"), "Delete selected contacts")
    await do.click(page.get_by_role("button", name="Go", exact=True))
    sure = page.get_by_role("button", name="Yes, I’m sure", exact=True)
    await sure.wait_for()
    await do.click(sure)
    await page.get_by_text("Successfully deleted 1 contact.", exact=True).wait_for()


# ── the tasks ─────────────────────────────────────────────────────────────────────────────

_ANN: Final = {"username": "ann.keeper", "password": USERS["ann.keeper"]}
_BO: Final = {"username": "bo.lindqvist", "password": USERS["bo.lindqvist"]}
_SECRETS: Final = frozenset({"password"})
_START: Final = "/admin/login/?next=/admin/crm/contact/"
_EVERY_INPUT: Final = ("name", "email", "phone", "score", "birthday", "status", "company", "notes")


def _add(user: dict[str, str], name: str, email: str, company: str) -> dict[str, str]:
    return {**user, "name": name, "email": email, "company": company}


def _every(fields: str) -> dict[str, str]:
    return {**_ANN, **dict(zip(_EVERY_INPUT, fields.split(" | "), strict=True))}


TASKS: Final = (
    Task(
        name="create",
        intent="Add the contact {name} ({email}) at {company}",
        start=_START,
        demonstrate=add_contact,
        recorded=_add(_ANN, "Harriet Okonkwo", "harriet.okonkwo@example.test", "Globex Industries"),
        replays=(
            _add(_ANN, "Tomasz Wieczorek", "tomasz.wieczorek@example.test", "Initech Systems"),
            _add(_ANN, "Aiko Fujimura", "aiko.fujimura@example.test", "Umbrella Holdings"),
        ),
        expected=_added,
        secrets=_SECRETS,
    ),
    Task(
        name="search-edit",
        intent="Change the e-mail of {name} to {email}",
        start=_START,
        demonstrate=search_and_edit,
        recorded={**_ANN, "name": "Henrietta Lindgren", "email": "h.lindgren@newmail.test"},
        replays=(
            # look-alike: "Maria Garcia-Lopez" is listed too, above her
            {**_ANN, "name": "Maria Garcia", "email": "maria.garcia@brightmail.test"},
            # look-alike: "Oskar Brandtner" is listed too, below him
            {**_ANN, "name": "Oskar Brandt", "email": "oskar.brandt@brightmail.test"},
        ),
        expected=_email_changed,
        secrets=_SECRETS,
        prepare=_seeder(_SEARCH_EDIT_ROWS),
    ),
    Task(
        name="bulk-delete",
        intent="Delete the contact {name}",
        start=_START,
        demonstrate=bulk_delete,
        recorded={**_ANN, "name": "Wilhelmina Strand"},
        replays=(
            {**_ANN, "name": "Jonas Becker"},  # look-alike "Jonas Becker-Ross" listed above
            {**_ANN, "name": "Priya Raman"},  # look-alike "Priya Ramanathan" listed below
        ),
        expected=_deleted,
        secrets=_SECRETS,
        prepare=_seeder(_BULK_DELETE_ROWS),
    ),
    Task(
        name="every-input",
        intent=(
            "Add the VIP contact {name} ({email}, {phone}, score {score}, born {birthday},"
            " {status}) at {company} with the note {notes}"
        ),
        start=_START,
        demonstrate=add_contact_every_input,
        recorded=_every(
            "Cordelia Fairweather | cordelia@fairweather.test | +44 20 7946 0321 | 87"
            " | 1986-03-14 | Customer | Initech Systems | Met at the Lisbon trade fair"
        ),
        replays=(
            _every(
                "Bartholomew Quist | bart.quist@quist.test | +1 415 555 0188 | 42 | 1979-11-02"
                " | Former | Umbrella Holdings | Prefers phone calls after noon"
            ),
            _every(  # status "Lead" is already chosen: the click leaves it so
                "Ngozi Adebayo | ngozi.adebayo@lagos.test | +234 1 555 0142 | 63 | 1992-07-28"
                " | Lead | Globex Industries | Asked for the spring catalogue"
            ),
        ),
        expected=_added_vip,
        secrets=_SECRETS,
    ),
    Task(
        name="sign-in-as",
        intent="Sign in as {username} and add the contact {name} ({email}) at {company}",
        start=_START,
        demonstrate=add_contact,
        recorded=_add(
            _BO, "Cornelius Vandermeer", "cornelius@vandermeer.test", "Umbrella Holdings"
        ),
        replays=(
            _add(_ANN, "Svetlana Petrovic", "svetlana.petrovic@example.test", "Globex Industries"),
            _add(_BO, "Desmond Achterberg", "desmond@achterberg.test", "Initech Systems"),
        ),
        expected=_added,
        secrets=_SECRETS,
    ),
)

DOM_NOTES: Final = (
    "5.2 wraps the page in landmarks 4.2 lacks: banner (the site name is no longer an h1),"
    " main, a search landmark around the search bar, contentinfo; the sidebar's tables get a"
    " hidden header row (Model name / Add link / Change or view list link).",
    "The row checkboxes have no accessible name in 4.2; in 5.2 they are named"
    " 'Select this object for an action - <name>' (a prefix match also hits a look-alike"
    " '<name>-Lopez'), the select-all box 'Select all objects on this page for an action'.",
    "Beside the company select, 4.2 has a link named 'Add' by its image (the sidebar's links"
    " are 'Add' too) and images 'Change' / 'View'; 5.2 empties the images' alt: the link is"
    " 'Add another company' (its title), the others are not links until a company is chosen.",
    "The delete confirmation's heading: 'Are you sure?' in 4.2, 'Delete multiple objects' in"
    " 5.2; both have the button 'Yes, I’m sure' (typographic apostrophe).",
    "Same in both: the nav sidebar ('Toggle navigation', 'Filter navigation items'), one"
    " unnamed fieldset (no legend), labels ending in ':' (the checkbox's 'Vip' does not), the"
    " date as a text field with 'Today' and 'Choose a Date' links, radios in div-wrapped labels"
    " under a 'Status:' label bound to none (the radio group has no name), the action bar"
    " ('Action:' select, 'Go' button, 'N of M selected').",
)

APP: Final = App(
    name="django-admin",
    variants=tuple(_variant(v) for v in VERSIONS),
    tasks=TASKS,
    notes=DOM_NOTES,
)
