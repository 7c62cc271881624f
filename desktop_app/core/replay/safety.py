"""What replay may do to an element it did not find by the recording's own evidence.

A step's element found by its first recorded locator is the one the analyst approved. Any
other way of finding it (a fallback locator, the fingerprint, a remembered repair, the LLM, an
agent's pick) is a judgement, and a page can steer a judgement ("to edit the contact, click
Remove"). These rules keep a judgement from doing what the step never did:

- a pick that **commits** (its words delete, pay, send…) is refused unless the step itself
  commits (it is irreversible, or its recorded element said so);
- a **secret** goes only into the recorded element or a field made for secrets (a password
  field, one marked sensitive, one named for a password, PIN or token);
- a remembered repair is checked against the **recorded step** (its fingerprint, the kind of
  element it acts on, whether it commits or takes a secret), never against the repair's own
  picture of itself.

The words are one vocabulary for every check (overlays, agents, healing, induction).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Final

from desktop_app.core.models.target import Fingerprint, LocatorStrategy, Target
from desktop_app.core.models.workflow import FillStep, SelectStep, Step
from desktop_app.core.replay.browser import BrowserPort, Handle

__all__ = [
    "ACTIVATING_KEYS",
    "COMMIT_WORDS",
    "commits",
    "fills_secret",
    "focused_commits",
    "label_of",
    "sets_off",
    "step_commits",
    "takes_secret",
]

#: Words of controls that commit to something that cannot be taken back (never clicked to
#: clear an overlay, never by a healed pick or an agent unless the step itself commits).
COMMIT_WORDS: Final = re.compile(
    r"\b(delete|remove|erase|destroy|purge|wipe|pay|buy|purchase|order|checkout|submit|send|"
    r"sign ?out|log ?out|transfer|confirm|unsubscribe|cancel|revoke|terminate|close account|"
    r"discard)\b",
    re.IGNORECASE,
)

#: Names of fields made for secrets (besides password fields and fields marked sensitive).
_SECRET_FIELD: Final = re.compile(
    r"\b(pass(word|code|phrase)?|pin|otp|one[- ]time|token|secret|api[ _-]?key|cvc|cvv)\b",
    re.IGNORECASE,
)
_SECRET_AUTOCOMPLETE: Final = frozenset({"current-password", "new-password", "one-time-code"})


def label_of(fp: Fingerprint) -> str:
    """How a person would name the element: its role or tag and its name."""
    kind = fp.role or fp.tag or "element"
    name = fp.name or fp.text or fp.attributes.get("name") or fp.attributes.get("placeholder") or ""
    return f"{kind} '{name[:60]}'" if name else kind


def _words(fp: Fingerprint) -> str:
    """What the element says: its name, text, value and title (what a person reads on it)."""
    attributes = fp.attributes
    parts = [fp.name, fp.text, attributes.get("value"), attributes.get("title")]
    return " ".join(p for p in parts if p)


def commits(fp: Fingerprint | None, *, option: str = "") -> bool:
    """Whether acting on the element described by *fp* (choosing *option* in it) commits."""
    said = (_words(fp) if fp is not None else "") + " " + option
    return COMMIT_WORDS.search(said) is not None


def step_commits(step: Step) -> bool:
    """Whether *step* itself commits: it is marked irreversible, or the element it was
    recorded on (or the option it chooses) said so."""
    if step.irreversible:
        return True
    target = step.target_or_none
    said = [step.title]
    if isinstance(step, SelectStep):
        said.append(step.value)
    if target is not None:
        if target.fingerprint is not None:
            said.append(_words(target.fingerprint))
        said += [loc.name or "" for loc in target.locators]
        said += [
            loc.value
            for loc in target.locators
            if loc.strategy in (LocatorStrategy.TEXT, LocatorStrategy.LABEL)
        ]
    return COMMIT_WORDS.search(" ".join(said)) is not None


def sets_off(fp: Fingerprint | None) -> bool:
    """Whether clicking the element sets off what it says (a button, a link, a menu item), as
    opposed to ticking a box or focusing a field (a checkbox "Send me the newsletter" sends
    nothing)."""
    if fp is None:
        return True
    role = fp.role or ""
    kind = fp.attributes.get("type", "").lower()
    if role in _NOT_SET_OFF or (fp.tag == "input" and kind in _TICKED_OR_TYPED):
        return False
    return fp.tag not in ("textarea", "select", "label")


_NOT_SET_OFF: Final = frozenset(
    {"checkbox", "radio", "switch", "textbox", "searchbox", "combobox", "spinbutton", "slider"}
)
_TICKED_OR_TYPED: Final = frozenset(
    {"checkbox", "radio", "text", "email", "search", "tel", "url", "number", "password", "date"}
)


def takes_secret(described: Target | None) -> bool:
    """Whether the element is made for a secret: a password field, one the person marked
    sensitive when recording, or one whose name, label or autocomplete says password, PIN,
    one-time code or token."""
    if described is None or described.fingerprint is None:
        return False
    fp = described.fingerprint
    attributes = fp.attributes
    if attributes.get("type", "").lower() == "password":
        return True
    if attributes.get("data-procedura-sensitive") == "true":
        return True
    if attributes.get("autocomplete", "").lower() in _SECRET_AUTOCOMPLETE:
        return True
    named = (fp.name, attributes.get("name"), attributes.get("id"), attributes.get("placeholder"))
    said = " ".join(v for v in named if v)
    return _SECRET_FIELD.search(said.replace("_", " ")) is not None


def fills_secret(step: Step, secret_names: Collection[str]) -> bool:
    """Whether *step* as written (before its values are filled in) types a secret."""
    return isinstance(step, FillStep) and any(f"{{{n}}}" in step.value for n in secret_names)


#: Keys that set off the control they are pressed on (a button's click, a form's submit).
ACTIVATING_KEYS: Final = frozenset({"Enter", "Space", " "})


async def focused_commits(browser: BrowserPort, key: str) -> str | None:
    """For *key* pressed on the page (no element named): what it would set off, named as a
    person would, when that commits to something (else None): the focused control, or for
    Enter in a field, its form's submit button. A page that puts the focus on its "Delete"
    button turns a harmless Enter into a delete."""
    if key not in ACTIVATING_KEYS:
        return None
    focus = Handle(selector="*:focus")
    if (await browser.probe(focus)).count != 1:  # nothing has the focus (the page itself)
        return None
    focused = await browser.describe(focus)
    fp = focused.fingerprint if focused is not None else None
    if fp is None:
        return None
    if _is_control(fp):
        return label_of(fp) if commits(fp) else None
    if key != "Enter":
        return None
    # Enter in a field submits its form: what the form's submit button says it does.
    submit = Handle(selector=f"form:has(*:focus) :is({_SUBMITS}) >> nth=0")
    if (await browser.probe(submit)).count == 0:
        return None
    button = await browser.describe(submit)
    said = button.fingerprint if button is not None else None
    if said is None or not commits(said):
        return None
    return f"the form of {label_of(fp)}, whose {label_of(said)}"


def _is_control(fp: Fingerprint) -> bool:
    """A control that Enter or Space sets off (a button, a link, a menu item), not a field
    (where Enter submits its form, whose effect the field's words do not tell)."""
    if fp.role in ("button", "link", "menuitem", "menuitemcheckbox", "menuitemradio", "tab"):
        return True
    kind = fp.attributes.get("type", "").lower()
    return fp.tag in ("button", "a") or (fp.tag == "input" and kind in _BUTTON_INPUTS)


_BUTTON_INPUTS: Final = frozenset({"submit", "button", "image", "reset"})
_SUBMITS: Final = "button:not([type]), button[type=submit], input[type=submit], input[type=image]"
