"""NiceGUI (PyPI ``nicegui``): Python UIs rendered in the browser by Vue 3 and Quasar, every
event going to the server over a socket.io websocket. ``_APP`` is the small contacts app anyone
writes with it, over SQLite (``sqlite3``): ``/`` has a "Search" input bound to a ``ui.table``'s
filter, row checkboxes, "New contact" and "Delete selected" (a ``ui.dialog`` asking "Delete 1
contact?" with "Delete" / "Cancel", then a notification); ``/new`` and ``/edit/<id>`` are a form
of ``ui.input`` (name, e-mail), ``ui.number`` (score), a typed date with a ``ui.date`` popup,
``ui.select`` (status: a Quasar menu), ``ui.radio`` (preferred contact), ``ui.checkbox`` (VIP),
``ui.textarea`` (notes) and ``ui.switch`` (newsletter); "Save" stores and goes back to ``/``,
which notifies "Saved <name>" (a flash kept in ``app.storage.user``). Each variant is installed
once into a cached venv with every package pinned; every instance copies a template database.

Variants (what a replay sees differ):

* **NiceGUI 1.4.37** (Quasar 2.13): a row is opened by its name, a ``link`` to ``/edit/<id>``
  in a ``body-cell-name`` slot (the 1.x docs' recipe); the date is a ``ui.input`` whose
  ``append`` slot holds an ``edit_calendar`` icon (``<i role=presentation>``, not a button)
  opening a ``ui.menu`` with a ``ui.date``; field ids are ``f_<uuid>``. Events raised before
  the websocket is connected are buffered by socket.io, flushed ahead of the handshake and
  dropped by the server: text typed then shows in the field but never reaches the server.
* **NiceGUI 3.18.0** (Quasar 2.18): a row is opened by an "Edit" ``button`` in an extra,
  unlabelled column (a slot emitting an event answered by ``ui.navigate.to``), the name is
  plain text; the date is ``ui.date_input`` (new in 3.3), its calendar opener a round
  ``button`` without a name; field ids are element ids (``c10``), the label comes before the
  input. Events raised before the handshake wait for it in the browser.

Common to both: text fields are ``textbox`` / ``spinbutton`` named by ``aria-label`` (the radio
"Email" has the e-mail field's name); the select is an ``input role=combobox`` named "Status"
whose menu is a ``listbox`` of ``option``s teleported to ``body``; radios, checkbox and switch
are ``div``s with ``role=radio`` / ``checkbox`` / ``switch`` (the ``radiogroup`` is unnamed);
the table's row checkboxes are ``div role=checkbox`` without a name; the dialog is ``role=dialog
aria-modal=true``.

Tasks: ``create`` (name, e-mail, status through the select), ``search-edit`` (search, open the
exact row among look-alikes, change the e-mail), ``bulk-delete`` (search, tick the exact row,
"Delete selected", "Delete" in the dialog) and ``every-input`` (every widget of the form).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import re
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
from playwright.async_api import Locator
from third_party import installed

from realapps.harness import App, Instance, State, Task, Values, Variant


def _pins(text: str) -> tuple[str, ...]:
    return tuple(text.split())


#: Every package of each variant's environment, pinned.
PINS: Final = {
    "1.4.37": _pins("""
        nicegui==1.4.37 aiofiles==25.1.0 aiohappyeyeballs==2.7.1 aiohttp==3.14.5
        aiosignal==1.4.0 annotated-types==0.8.0 anyio==4.16.0 attrs==26.1.0 bidict==0.24.1
        certifi==2026.10.19.post1 charset-normalizer==3.5.3 click==8.5.1 docutils==0.23
        fastapi==0.109.2 frozenlist==1.8.0 h11==0.16.0 httpcore==1.0.9 httptools==0.9.0
        httpx==0.28.1 idna==3.20 ifaddr==0.2.0 itsdangerous==2.2.0 Jinja2==3.1.6
        markdown2==2.5.5 MarkupSafe==3.0.4 multidict==7.2.1 orjson==3.13.0 propcache==0.5.4
        pscript==0.7.7 pydantic==2.14.4 pydantic_core==2.50.5 Pygments==2.21.0
        python-dotenv==1.2.4 python-engineio==4.15.1 python-multipart==0.0.34
        python-socketio==5.18.1 PyYAML==6.0.4 requests==2.34.2 simple-websocket==1.1.0
        starlette==0.36.3 typing-inspection==0.4.5 typing_extensions==4.16.0 urllib3==2.8.0
        uvicorn==0.54.0 uvloop==0.23.0 vbuild==0.8.2 watchfiles==1.3.0 websockets==17.4
        wsproto==1.3.2 yarl==1.25.1
    """),
    "3.18.0": _pins("""
        nicegui==3.18.0 aiofiles==25.1.0 aiohappyeyeballs==2.7.1 aiohttp==3.14.5
        aiosignal==1.4.0 annotated-doc==0.0.7 annotated-types==0.8.0 anyio==4.16.0
        attrs==26.1.0 bidict==0.24.1 certifi==2026.10.19.post1 click==8.5.1 docutils==0.23
        fastapi==0.165.0 frozenlist==1.8.0 h11==0.16.0 httpcore==1.0.9 httptools==0.9.0
        httpx==0.28.1 idna==3.20 ifaddr==0.2.0 itsdangerous==2.2.0 Jinja2==3.1.6
        markdown2==2.5.5 MarkupSafe==3.0.4 multidict==7.2.1 opentelemetry-api==1.45.2
        orjson==3.13.0 propcache==0.5.4 pydantic==2.14.4 pydantic_core==2.50.5
        Pygments==2.21.0 python-dotenv==1.2.4 python-engineio==4.15.1 python-multipart==0.0.34
        python-socketio==5.18.1 PyYAML==6.0.4 simple-websocket==1.1.0 starlette==1.10.0
        tinycss2==1.5.1 typing-inspection==0.4.5 typing_extensions==4.16.0 uvicorn==0.54.0
        uvloop==0.23.0 watchfiles==1.3.0 webencodings==0.6.1 websockets==17.4 wsproto==1.3.2
        yarl==1.25.1
    """),
}
_INSTALL_TIMEOUT_S: Final = 900
_START_TIMEOUT_S: Final = 180
_FIELDS: Final = (
    "name", "email", "score", "birthday", "status", "contact_by", "vip", "notes", "newsletter"
)  # fmt: skip
SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS contacts (id INTEGER PRIMARY KEY, name TEXT NOT NULL,"
    " email TEXT, score INTEGER, birthday TEXT, status TEXT, contact_by TEXT,"
    " vip INTEGER, notes TEXT, newsletter INTEGER)"
)

_APP: Final = '''"""A NiceGUI contacts app over SQLite: python app.py DATABASE PORT."""
import sqlite3
import sys

import nicegui
from nicegui import app, ui

DATABASE = sys.argv[1]
PORT = int(sys.argv[2])
MAJOR = int(nicegui.__version__.split('.')[0])
STATUSES = ['Lead', 'Customer', 'Former']
FIELDS = FIELDS_HERE


def db():
    connection = sqlite3.connect(DATABASE)
    connection.row_factory = sqlite3.Row
    return connection


with db() as c:
    c.execute(SCHEMA_HERE)


@ui.page('/')
def index():
    message = app.storage.user.pop('flash', None)
    if message:
        ui.notify(message, type='positive')
    with db() as c:
        rows = [dict(r) for r in c.execute('SELECT id, name, email, status FROM contacts'
                                            ' ORDER BY name, email')]
    columns = [
        {'name': 'name', 'label': 'Name', 'field': 'name', 'align': 'left', 'sortable': True},
        {'name': 'email', 'label': 'Email', 'field': 'email', 'align': 'left'},
        {'name': 'status', 'label': 'Status', 'field': 'status', 'align': 'left'},
    ]
    if MAJOR >= 3:
        columns.append({'name': 'actions', 'label': '', 'field': 'id'})
    ui.label('Contacts').classes('text-h5')
    with ui.row().classes('items-center'):
        search = ui.input('Search').props('clearable')
        ui.button('New contact', icon='add', on_click=lambda: ui.navigate.to('/new'))
        delete_button = ui.button('Delete selected', icon='delete', color='negative')
    table = ui.table(columns=columns, rows=rows, row_key='id', selection='multiple')
    table.classes('w-full')
    search.bind_value_to(table, 'filter')
    if MAJOR >= 3:
        table.add_slot('body-cell-actions', """
            <q-td :props="props">
                <q-btn flat dense color="primary" icon="edit" label="Edit"
                       @click="() => $parent.$emit('edit', props.row)" />
            </q-td>
        """)
        table.on('edit', lambda e: ui.navigate.to(f'/edit/{e.args["id"]}'))
    else:
        table.add_slot('body-cell-name', """
            <q-td :props="props">
                <a :href="'/edit/' + props.row.id" class="text-primary">{{ props.value }}</a>
            </q-td>
        """)

    with ui.dialog() as dialog, ui.card():
        question = ui.label()
        with ui.row():
            ui.button('Delete', color='negative', on_click=lambda: dialog.submit(True))
            ui.button('Cancel', on_click=lambda: dialog.submit(False)).props('flat')

    async def delete_selected():
        selected = list(table.selected)
        if not selected:
            ui.notify('Select contacts first', type='warning')
            return
        count = f'{len(selected)} contact' + ('' if len(selected) == 1 else 's')
        question.text = f'Delete {count}?'
        if not await dialog:
            return
        with db() as c:
            c.executemany('DELETE FROM contacts WHERE id = ?', [(r['id'],) for r in selected])
        ids = {r['id'] for r in selected}
        table.rows[:] = [r for r in table.rows if r['id'] not in ids]
        table.selected.clear()
        table.update()
        ui.notify(f'Deleted {count}', type='positive')

    delete_button.on_click(delete_selected)


def contact_form(contact_id):
    with db() as c:
        row = c.execute('SELECT * FROM contacts WHERE id = ?', (contact_id,)).fetchone()
    data = dict(row) if row else {}
    ui.link('Contacts', '/')
    ui.label(f'Edit {data["name"]}' if row else 'New contact').classes('text-h5')
    with ui.column().classes('w-96'):
        name = ui.input('Name', value=data.get('name') or '').classes('w-full')
        email = ui.input('Email', value=data.get('email') or '').classes('w-full')
        score = ui.number('Score', value=data.get('score'), min=0, max=100).classes('w-full')
        if MAJOR >= 3:
            birthday = ui.date_input('Birthday', value=data.get('birthday') or '')
        else:
            with ui.input('Birthday', value=data.get('birthday') or '') as birthday:
                with ui.menu().props('no-parent-event') as menu:
                    with ui.date().bind_value(birthday):
                        with ui.row().classes('justify-end'):
                            ui.button('Close', on_click=menu.close).props('flat')
                with birthday.add_slot('append'):
                    ui.icon('edit_calendar').on('click', menu.open).classes('cursor-pointer')
        birthday.classes('w-full')
        status = ui.select(STATUSES, label='Status', value=data.get('status') or 'Lead')
        status.classes('w-full')
        ui.label('Preferred contact')
        contact_by = ui.radio(['Email', 'Phone'], value=data.get('contact_by') or 'Email')
        contact_by.props('inline')
        vip = ui.checkbox('VIP', value=bool(data.get('vip')))
        notes = ui.textarea('Notes', value=data.get('notes') or '').classes('w-full')
        newsletter = ui.switch('Newsletter', value=bool(data.get('newsletter')))

    def save():
        if not name.value:
            ui.notify('A name is needed', type='warning')
            return
        values = (name.value, email.value, None if score.value is None else int(score.value),
                  birthday.value or None, status.value, contact_by.value, int(vip.value),
                  notes.value, int(newsletter.value))
        with db() as c:
            if row:
                c.execute('UPDATE contacts SET ' + ', '.join(f'{f} = ?' for f in FIELDS) +
                          ' WHERE id = ?', (*values, contact_id))
            else:
                c.execute('INSERT INTO contacts (' + ', '.join(FIELDS) + ') VALUES (' +
                          ', '.join('?' * len(FIELDS)) + ')', values)
        app.storage.user['flash'] = f'Saved {name.value}'
        ui.navigate.to('/')

    ui.button('Save', icon='save', on_click=save)


@ui.page('/new')
def new():
    contact_form(None)


@ui.page('/edit/{contact_id}')
def edit(contact_id: int):
    contact_form(contact_id)


ui.run(host='127.0.0.1', port=PORT, reload=False, show=False, title='Contacts',
       storage_secret='test-only', favicon='📇')
'''.replace("FIELDS_HERE", repr(list(_FIELDS))).replace("SCHEMA_HERE", repr(SCHEMA))
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
    with contextlib.closing(sqlite3.connect(folder / TEMPLATE_DB)) as db, db:
        db.execute(SCHEMA)


def environment(version: str) -> Path:
    """The cached folder of *version*: its venv, the glue and the template database."""
    digest = hashlib.sha256((_APP + "\n".join(PINS[version])).encode()).hexdigest()[:8]
    return installed(f"realapps-nicegui-{version}-{digest}", functools.partial(_install, version))


class Site:
    """A running NiceGUI instance over its own copy of the template database."""

    def __init__(self, url: str, database: Path) -> None:
        self._url = url
        self.database = database

    @property
    def url(self) -> str:
        return self._url

    def state(self) -> State:
        """Every contact, all its fields but the id, sorted by name and e-mail."""
        with contextlib.closing(sqlite3.connect(self.database)) as db:
            db.row_factory = sqlite3.Row
            rows = db.execute(f"SELECT {', '.join(_FIELDS)} FROM contacts").fetchall()
        return {"contacts": sorted((dict(r) for r in rows), key=_contact_key)}


def _contact_key(contact: dict[str, Any]) -> tuple[str, str]:
    return (contact["name"] or "", contact["email"] or "")


@contextlib.contextmanager
def _start(version: str) -> Iterator[Site]:
    env = environment(version)
    folder = Path(tempfile.mkdtemp(prefix="realapps-nicegui-"))
    database = folder / "contacts.sqlite3"
    shutil.copyfile(env / TEMPLATE_DB, database)
    port = free_port()
    process = subprocess.Popen(
        [str(env / "venv" / "bin" / "python"), str(env / "app.py"), str(database), str(port)],
        cwd=folder,  # app.storage.user is kept in ./.nicegui
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    site = Site(f"http://127.0.0.1:{port}", database)
    try:
        deadline = time.monotonic() + _START_TIMEOUT_S
        while True:
            try:
                with urlopen(site.url + "/", timeout=5):
                    break
            except (URLError, OSError):
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(f"NiceGUI {version} did not start") from None
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

#: Contacts every task starts with (name, email, score, birthday, status, contact_by, vip,
#: notes, newsletter): the look-alikes "Maria Garcia" / "Maria Garcia-Lopez" and "Ana Lima" /
#: "Adriana Lima" (a search for "Ana Lima" shows "Adriana Lima" first); the recorded searches
#: ("Yusuf Demirel", "Cornelius Abernathy") find one row each.
SEED: Final = (
    ("Yusuf Demirel", "yusuf@demirel.test", 71, "1975-04-12", "Customer", "Phone", 1,
     "Prefers phone calls", 0),
    ("Cornelius Abernathy", "cornelius@abernathy.test", 12, "1968-09-30", "Former", "Email", 0,
     "Moved to Leeds", 1),
    ("Maria Garcia", "maria@garcia.test", 58, "1982-01-23", "Lead", "Email", 0,
     "Asked for a quote", 1),
    ("Maria Garcia-Lopez", "maria@garcia-lopez.test", 34, "1990-06-15", "Customer", "Phone", 1,
     "Signed in March", 0),
    ("Adriana Lima", "adriana@lima.test", 77, "1979-12-03", "Customer", "Email", 0,
     "Orders every quarter", 0),
    ("Ana Lima", "ana@lima.test", 25, "1986-08-21", "Lead", "Phone", 1, "Met at the expo", 1),
)  # fmt: skip


def _prepare(instance: Instance) -> None:
    assert isinstance(instance, Site)
    with contextlib.closing(sqlite3.connect(instance.database)) as db, db:
        db.executemany(
            f"INSERT INTO contacts ({', '.join(_FIELDS)}) VALUES ({', '.join('?' * 9)})", SEED
        )


def _contact(**fields: Any) -> dict[str, Any]:
    defaults = {"score": None, "birthday": None, "status": "Lead", "contact_by": "Email"}
    return defaults | {"vip": 0, "notes": "", "newsletter": 0} | fields


def _with(before: State, contact: dict[str, Any]) -> State:
    return {"contacts": sorted([*before["contacts"], contact], key=_contact_key)}


# ── tasks ──────────────────────────────────────────────────────────────────────────────────

_LIST: Final = re.compile(r"^https?://[^/]+/$")


def _row(do: Demonstrator, name: str) -> Locator:
    """The list row whose name cell is exactly *name* (not its look-alikes)."""
    page = do.page
    return page.get_by_role("row").filter(has=page.get_by_role("cell", name=name, exact=True))


def _box(do: Demonstrator, label: str) -> Locator:
    """The text field named *label* (a radio "Email" shares the e-mail field's name)."""
    return do.page.get_by_role("textbox", name=label, exact=True)


async def _search(do: Demonstrator, name: str) -> None:
    """Type *name* into the search field; wait until the table shows only rows matching it."""
    page = do.page
    await do.type_into(_box(do, "Search"), name)
    rows = page.get_by_role("row").filter(has=page.get_by_role("cell"))
    await rows.filter(has_not_text=name).first.wait_for(state="detached")
    await _row(do, name).wait_for()


async def _choose(do: Demonstrator, label: str, option: str) -> None:
    """Open the Quasar select *label*, click *option* in its menu, wait for the menu to close."""
    page = do.page
    await do.click(page.get_by_role("combobox", name=label))
    await do.click(page.get_by_role("listbox").get_by_role("option", name=option, exact=True))
    await page.get_by_role("listbox").wait_for(state="detached")


async def _save(do: Demonstrator, name: str) -> None:
    """Click "Save"; wait for the list and its notification."""
    page = do.page
    await do.click(page.get_by_role("button", name="Save", exact=True))
    await page.wait_for_url(_LIST)
    await page.get_by_text(f"Saved {name}", exact=True).wait_for()


async def _new(do: Demonstrator) -> None:
    await do.click(do.page.get_by_role("button", name="New contact"))
    await do.page.wait_for_url("**/new")


async def create(do: Demonstrator, values: Values) -> None:
    """New contact: a name, an e-mail and a status picked in the select."""
    await _new(do)
    await do.type_into(_box(do, "Name"), values["name"])
    await do.type_into(_box(do, "Email"), values["email"])
    await _choose(do, "Status", values["status"])
    await _save(do, values["name"])


async def search_edit(do: Demonstrator, values: Values) -> None:
    """Search the name, open that exact row (its name link in 1.4, its "Edit" button in 3.x),
    change the e-mail, save."""
    page = do.page
    await _search(do, values["name"])
    row = _row(do, values["name"])
    name_link = row.get_by_role("link", name=values["name"], exact=True)
    await do.click(name_link.or_(row.get_by_role("button", name="Edit", exact=True)))
    await page.wait_for_url("**/edit/*")
    await do.type_into(_box(do, "Email"), values["email"])
    await _save(do, values["name"])


async def bulk_delete(do: Demonstrator, values: Values) -> None:
    """Search the name, tick that exact row, "Delete selected", "Delete" in the dialog."""
    page = do.page
    await _search(do, values["name"])
    row = _row(do, values["name"])
    await do.click(row.get_by_role("checkbox"))
    await page.get_by_text("1 record selected.").wait_for()
    await do.click(page.get_by_role("button", name="Delete selected"))
    dialog = page.get_by_role("dialog")
    await dialog.get_by_text("Delete 1 contact?", exact=True).wait_for()
    await do.click(dialog.get_by_role("button", name="Delete", exact=True))
    await page.get_by_text("Deleted 1 contact", exact=True).wait_for()
    await row.wait_for(state="detached")


async def every_input(do: Demonstrator, values: Values) -> None:
    """New contact through every widget: text, e-mail, number, typed date, select, radio,
    checkbox, textarea, switch."""
    page = do.page
    await _new(do)
    await do.type_into(_box(do, "Name"), values["name"])
    await do.type_into(_box(do, "Email"), values["email"])
    await do.type_into(page.get_by_role("spinbutton", name="Score"), values["score"])
    await do.type_into(_box(do, "Birthday"), values["birthday"])
    await _choose(do, "Status", values["status"])
    await do.click(page.get_by_role("radio", name=values["contact_by"], exact=True))
    await do.click(page.get_by_role("checkbox", name="VIP", exact=True))
    await do.type_into(_box(do, "Notes"), values["notes"])
    await do.click(page.get_by_role("switch", name="Newsletter", exact=True))
    await _save(do, values["name"])


_EVERY_KEYS: Final = ("name", "email", "score", "birthday", "status", "contact_by", "notes")
#: every-input's values: the recorded ones, then the replays'.
_EVERY: Final = tuple(dict(zip(_EVERY_KEYS, values, strict=True)) for values in (
    ("Ingrid Solberg", "ingrid@solberg-fjord.test", "63", "1984-07-18", "Customer", "Phone",
     "Met at the Bergen trade fair"),
    ("Rafael Okonkwo", "rafael@okonkwo-studio.test", "41", "1991-11-05", "Former", "Email",
     "Prefers e-mail over calls"),
    ("Yuki Tanabe", "yuki@tanabe-works.test", "95", "1979-02-27", "Lead", "Email",
     "Interested in the spring catalogue"),
))  # fmt: skip


def _created(before: State, values: Values) -> State:
    return _with(
        before, _contact(name=values["name"], email=values["email"], status=values["status"])
    )


def _edited(before: State, values: Values) -> State:
    edited = [
        c | {"email": values["email"]} if c["name"] == values["name"] else c
        for c in before["contacts"]
    ]
    return {"contacts": sorted(edited, key=_contact_key)}


def _deleted(before: State, values: Values) -> State:
    return {"contacts": [c for c in before["contacts"] if c["name"] != values["name"]]}


def _filled(before: State, values: Values) -> State:
    fields = {k: values[k] for k in ("name", "email", "birthday", "status", "contact_by", "notes")}
    return _with(before, _contact(**fields, score=int(values["score"]), vip=1, newsletter=1))


TASKS: Final = (
    Task(
        name="create",
        intent="Create the contact {name} ({email}) with the status {status}",
        start="/",
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
        start="/",
        demonstrate=search_edit,
        recorded={"name": "Yusuf Demirel", "email": "y.demirel@harbourmail.test"},
        replays=(
            {"name": "Maria Garcia", "email": "maria.g@northwind.test"},
            {"name": "Ana Lima", "email": "a.lima@orchard.test"},
        ),
        expected=_edited,
        prepare=_prepare,
    ),
    Task(
        name="bulk-delete",
        intent="Delete the contact {name}",
        start="/",
        demonstrate=bulk_delete,
        recorded={"name": "Cornelius Abernathy"},
        replays=({"name": "Maria Garcia"}, {"name": "Ana Lima"}),
        expected=_deleted,
        prepare=_prepare,
    ),
    Task(
        name="every-input",
        intent="Add the VIP newsletter contact {name} ({email}), score {score}, born {birthday},"
        " status {status}, reached by {contact_by}, with the note {notes}",
        start="/",
        demonstrate=every_input,
        recorded=_EVERY[0],
        replays=_EVERY[1:],
        expected=_filled,
        prepare=_prepare,
    ),
)

APP: Final = App(
    name="nicegui",
    variants=tuple(
        Variant("nicegui", f"nicegui {version}", functools.partial(_start, version))
        for version in PINS
    ),
    tasks=TASKS,
    notes=(
        "Every event travels over the websocket: a page is usable once its socket.io handshake"
        " is done, which nothing on the page shows (the 'Connection lost' popup is hidden from"
        " the start); NiceGUI 1.4 drops what is typed or clicked before it (the field shows the"
        " text, the server never gets it), 3.x queues it in the browser.",
        "The search filters client-side after a round trip to the server (the input is bound to"
        " the table's filter): the rows shrink a moment after the last key.",
        "The table's row checkboxes are div role=checkbox without a name; they show ticked only"
        " after the server echoes the selection.",
        "Save, New contact and (3.x) Edit are buttons: the server answers the click with"
        " ui.navigate.to (window.open); 'Saved <name>' is a Quasar notification (role=alert,"
        " gone after 5 s) shown by the list page. Quasar buttons show their label upper-cased"
        " by CSS: innerText says 'NEW CONTACT', the accessible name 'New contact'.",
    ),
)
