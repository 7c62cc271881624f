"""A workflow as a standalone Python script on Playwright's async API (``--format playwright``).

The script is meant to be read, kept and edited by a person who never installs Procedura. It
needs Python 3.9+ and Playwright, nothing else, and is laid out like this:

* a docstring: the workflow's name, description, id and version, the command that runs it, and
  the steps a script cannot do;
* helpers: ``Step`` (a context manager per step: it prints ``6/10 Fill 'Full name' with …``,
  sets Playwright's default timeout to the step's, and turns any Playwright error inside it into
  ``StepFailed("step 6 'Fill …': <first line>")``), ``By`` + ``locate`` (a recorded locator and
  the Playwright call Procedura makes for it; ``test_id`` covers data-testid, data-test and
  data-qa), ``find`` (the ranked locators tried in order, again until the step's timeout; the
  first that finds exactly one visible, enabled element wins, else ``step 6 'Fill …': none of
  the 4 locators matched (role=textbox[name="Full name"]: no element; …)``), and the checks
  and converters the workflow needs (only those);
* ``build_parser``: one ``--option`` per parameter (``full_name`` → ``--full-name``), typed as
  ``procedura run`` types values (number, date, email, choice, bool; a bad value is argparse's
  exit 2 with the reason), defaults from the workflow, ``required`` where there is none. A
  secret gets only ``--NAME-env VAR``, naming an environment variable; without it the script
  asks at a hidden ``getpass`` prompt (or stops with exit 2 when standard input is no
  terminal). A secret never has a default, is never written into the script, cannot be given
  on the command line (``allow_abbrev=False``, so ``--password`` is not ``--password-env``)
  and is masked in failure messages. Then ``--base-url`` (URLs on the recorded origin move to
  it, as ``procedura run --base-url`` moves them), ``--headless``, ``--browser PATH`` (a
  Chromium-family executable; default Playwright's own) and ``--timeout SECONDS`` (every
  step's; default each step's recorded timeout);
* ``run(page, args)``: the steps in order, each a ``# N. title`` comment (plus ``# Irreversible``
  where it applies: a note only, the script asks nothing) and a ``with Step(...)`` block with
  the action and then the step's expectations as checks (``expect_url``, ``expect_title``,
  ``expect_text``, ``expect_element``). Values are the parameters (``args.full_name``) and the
  variables earlier ``extract`` steps stored (locals, also printed ``name=value`` on standard
  output), put into Python f-strings; step titles are shown with the values of the run, secrets
  left as ``{placeholder}``;
* blocks as Python (:mod:`.blocks`): an ``if`` is ``holds = <the condition, given the if's
  own timeout to hold>`` then ``if holds:`` … ``else:``; a ``for_each`` reads its items once
  in a ``with Step`` (``lines(args.names)`` for a list, ``csv_rows(step, path, column)`` for
  a CSV file, ``await page_items(page, step, css, contains=…, key=…, fields=…)`` for the
  page's rows: two rows showing the same key, or one showing none, stop it), stops before the
  first when there are more than its limit (``at_most``), and goes ``for item, field in …:``
  with the item and its fields as locals the steps' values use; a ``repeat_until`` is a
  ``while`` that looks at its condition before each round and fails after its last; a
  ``try`` is ``try:`` … ``except StepFailed:`` the ``otherwise`` steps, re-raising once an
  irreversible step inside was done (a flag set just before its action). A block's steps are
  numbered under it (``17.1``), an ``if``'s and a ``try``'s counting on through
  ``otherwise``. A value compared (``compare``) compares as Procedura does: text ignoring case
  and spaces around it, numbers as numbers. A variable a step inside a block sets starts
  empty at the top of ``run()``, so a way not taken leaves it empty;
* a ``list`` parameter's option takes several values (``--names Ann Bob``), each line of a
  value an item too, and may be given again to add more; the script keeps it one item a line,
  as Procedura does;
* ``main``: exit 0 when every step is done, 1 when one failed (the message names the step), 2
  for bad arguments.

Steps a script cannot do end the run at that step with an error naming it: ``call`` (the other
workflow is not in this export: export and run it too, or paste its steps in), ``agent`` (needs
Procedura's LLM) and the desktop steps; so do window-title and image checks. Unlike
``procedura run`` the script does not heal (no fingerprint matching, remembered repairs, LLM or
person), clears no overlays, tries no second element when a check fails and does not keep the
run to the workflow's domains.

The generated code passes ``ruff check`` and is laid out as ``ruff format`` lays it out (line
length 88). :func:`render_playwright` needs nothing but the standard library and never imports
Playwright.

The package: :mod:`.script` assembles the script from :mod:`.command_line` (the converters and
``build_parser``), :mod:`.steps` (``run``), :mod:`.blocks` (blocks in ``run``), :mod:`.values`
(options and placeholders) and :mod:`.source` (literals, comments and calls laid out as ruff
format lays them out); the fixed code every script shares is in ``templates/*.py.tmpl``, read
by :mod:`.fixed_parts`.
"""

from __future__ import annotations

from desktop_app.core.exports.playwright_script.script import render_playwright

__all__ = ["render_playwright"]
