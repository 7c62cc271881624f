"""Keeping secrets out of what is stored and passed on: ARIA snapshots, fields marked sensitive
late, secrets stated in an intent, and the environment a browser inherits."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from desktop_app.core.models.run import MASK
from desktop_app.core.models.target import LocatorStrategy
from desktop_app.core.models.trajectory import (
    Effects,
    Event,
    Observation,
    SecretPlaceholder,
    TextChange,
)
from desktop_app.core.models.workflow import Workflow

__all__ = [
    "REDACTED",
    "FieldRedaction",
    "environment_without",
    "mask_secrets",
    "redact_effects",
    "redact_field",
    "redact_snapshot",
    "scrub_stated_secrets",
    "scrub_workflow",
]

#: What replaces a secret inside stored text.
REDACTED: Final = "[secret]"

_TEXTBOX_VALUE = re.compile(
    r"^(\s*- (?:textbox|searchbox|combobox)\b[^\n]*?:\s)(.+)$", re.MULTILINE
)
_MIN_LOOSE_LENGTH: Final = 4


# A secret stated in a sentence: a word that names one, an optional ":", "=", "is" or "was",
# then the value (a quoted phrase or the next whitespace-delimited token).
_STATED_SECRET = re.compile(
    r"(?P<word>\b(?:(?P<strong>pass(?:word|wd|phrase|code)|pwd)|pin(?:\s+code)?"
    r"|api[\s_-]?key|(?:access\s+|auth\s+)?token|secret)s?\b)"
    r"(?P<sep>\s*[:=]\s*|\s+(?:is|was)\s+|\s+)"
    r"(?P<value>\"[^\"]+\"|'[^']+'|\u201c[^\u201d]+\u201d|\S+)",
    re.IGNORECASE,
)
_PLACEHOLDER = re.compile(r"^\{[A-Za-z_][A-Za-z0-9_]*\}$")
_TRAILING = ".,;:!?)]}'\"\u201d"
# Words that follow "password" in a sentence about passwords, not in one that states one.
_COMMON_WORDS: Final = """
    a an the and or but nor for of to in on at by with without from into onto as via per if
    then than so that this these those it its is was be been are were will would should can
    could may must not no yes again too also only still now twice once my your his her their
    our me you him them us we i they he she who which what when where while after before until
    field fields box input form page screen dialog prompt reset resets change changes changed
    update updates updated manager policy policies settings setting rule rules requirements
    strength hint recovery expiry expired expires required wrong incorrect invalid correct
    empty missing set protected protection login sign entry reminder history generator please
    here there back both each every all any some new old current same different temporary
    reuse"""
_NOT_A_VALUE: Final = frozenset(_COMMON_WORDS.split())


def _states_a_value(value: str, separator: str, *, password_word: bool) -> bool:
    """Whether *value*, after a word naming a secret and *separator*, states one."""
    bare = value.strip(_TRAILING + "\u201c")
    if not bare or _PLACEHOLDER.match(value.rstrip(".,;:!?")):
        return False
    if separator.strip() in (":", "="):
        return True
    if any(not ch.isalpha() for ch in bare):
        return True  # digits or symbols: hunter2, 1234, sk-live-…, a value masked already
    return password_word and bare.lower() not in _NOT_A_VALUE


def scrub_stated_secrets(text: str, secrets: Iterable[str] = ()) -> str:
    """*text* (an intent, a workflow's name, description or intent template) with every secret
    it states replaced by :data:`MASK`.

    Two things are masked: the values in *secrets* (what the recording itself knows was typed
    into a secret field; one of fewer than four characters only as a whole word), and the value
    that follows a word naming a secret — password, passwd, passphrase, passcode, pwd, pin,
    api key, token, secret — and an optional ``:``, ``=``, "is" or "was": a quoted phrase or
    the next word. After ":" or "=" that word is always masked; otherwise only when it holds a
    digit or a symbol, or, after a password word, when it is no common word ("reset the
    password for bob" keeps its "for"). A ``{placeholder}`` is never masked.
    """
    for secret in sorted({s for s in secrets if s.strip()}, key=len, reverse=True):
        if len(secret) >= _MIN_LOOSE_LENGTH:
            text = text.replace(secret, MASK)
        else:
            text = re.sub(rf"(?<!\S){re.escape(secret)}(?!\S)", MASK, text)

    def mask(match: re.Match[str]) -> str:
        strong = match.group("strong") is not None
        if not _states_a_value(match.group("value"), match.group("sep"), password_word=strong):
            return match.group(0)
        return match.group("word") + match.group("sep") + MASK

    return _STATED_SECRET.sub(mask, text)


def scrub_workflow(workflow: Workflow, secrets: Iterable[str] = ()) -> Workflow:
    """*workflow* with :func:`scrub_stated_secrets` applied to its name, description and intent
    template (the texts an intent becomes); the same object when none states a secret."""
    hidden = tuple(secrets)
    name = scrub_stated_secrets(workflow.name, hidden)[:200]
    description = scrub_stated_secrets(workflow.description, hidden)
    template = workflow.intent_template
    if template is not None:
        template = scrub_stated_secrets(template, hidden)
    if (name, description, template) == (
        workflow.name,
        workflow.description,
        workflow.intent_template,
    ):
        return workflow
    return workflow.model_copy(
        update={"name": name, "description": description, "intent_template": template}
    )


def environment_without(environ: Mapping[str, str], secrets: Iterable[str]) -> dict[str, str]:
    """*environ* without the variables that hold a secret: whose value is one of *secrets*, or
    contains one of four characters or more (a URL with a password in it)."""
    hidden = {s for s in secrets if s}
    loose = [s for s in hidden if len(s) >= _MIN_LOOSE_LENGTH]
    return {
        name: value
        for name, value in environ.items()
        if value not in hidden and not any(s in value for s in loose)
    }


def mask_secrets(text: str, secrets: Iterable[str]) -> str:
    """*text* with every secret value in it replaced by :data:`MASK` (the longest first, so a
    secret inside another is not left half-shown)."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def redact_snapshot(snapshot: str, secrets: Iterable[str]) -> str:
    """*snapshot* (ARIA snapshot text) with the value of every field holding a secret masked.

    A field's value is the text after its role line's colon; any other occurrence of a secret of
    four characters or more is masked as well.
    """
    hidden = {s for s in secrets if s}
    if not hidden:
        return snapshot

    def mask(match: re.Match[str]) -> str:
        value = match.group(2).strip().strip('"')
        return match.group(1) + REDACTED if value in hidden else match.group(0)

    redacted = _TEXTBOX_VALUE.sub(mask, snapshot)
    for secret in sorted(hidden, key=len, reverse=True):
        if len(secret) >= _MIN_LOOSE_LENGTH:
            redacted = redacted.replace(secret, REDACTED)
    return redacted


def redact_effects(effects: Effects, secrets: Iterable[str]) -> Effects:
    """*effects* with every secret masked in the texts and values it reports."""
    hidden = [s for s in secrets if s]
    if not hidden:
        return effects

    def texts(changes: tuple[TextChange, ...]) -> tuple[TextChange, ...]:
        return tuple(
            c.model_copy(update={"text": redact_snapshot(c.text, hidden)}) for c in changes
        )

    return effects.model_copy(
        update={
            "texts_added": texts(effects.texts_added),
            "texts_removed": texts(effects.texts_removed),
            "browser_dialogs": tuple(
                d.model_copy(update={"message": redact_snapshot(d.message, hidden)})
                for d in effects.browser_dialogs
            ),
            "values_changed": tuple(
                v.model_copy(
                    update={
                        "value": REDACTED if v.value in hidden else redact_snapshot(v.value, hidden)
                    }
                )
                for v in effects.values_changed
            ),
        }
    )


def _css(event: Event) -> str | None:
    if event.target is None:
        return None
    return next(
        (loc.value for loc in event.target.locators if loc.strategy is LocatorStrategy.CSS), None
    )


class FieldRedaction:
    """What marking a field sensitive after typing into it changes in a recording.

    Attributes:
        events: index → the event as it must now be stored.
        dropped_media: screenshots that may show the value (taken after it was first typed).
    """

    def __init__(self) -> None:
        self.events: dict[int, Event] = {}
        self.dropped_media: set[str] = set()


def redact_field(events: Sequence[Event], css: str) -> FieldRedaction:
    """Scrub the values typed into the field *css* from *events*, as if it had been secret.

    Its fills and selects get a secret placeholder; from the first of them on, screenshots are
    dropped (they may show the value), and ARIA snapshots and the texts of reported effects have
    the values masked.
    """
    result = FieldRedaction()
    values = {e.value for e in events if _css(e) == css and isinstance(e.value, str) and e.value}
    first = next(
        (i for i, e in enumerate(events) if _css(e) == css and isinstance(e.value, str)), None
    )
    if first is None:
        return result
    for index in range(first, len(events)):
        event = events[index]
        update: dict[str, object] = {}
        if _css(event) == css and isinstance(event.value, str):
            label = (
                event.target.fingerprint.name if event.target and event.target.fingerprint else None
            )
            update["value"] = SecretPlaceholder(label=label)
        for side in ("before", "after"):
            observation: Observation | None = getattr(event, side)
            if observation is None:
                continue
            changes: dict[str, object] = {}
            if observation.screenshot is not None:
                result.dropped_media.add(observation.screenshot)
                changes["screenshot"] = None
            if observation.aria_snapshot:
                scrubbed = redact_snapshot(observation.aria_snapshot, values)
                if scrubbed != observation.aria_snapshot:
                    changes["aria_snapshot"] = scrubbed
            if changes:
                update[side] = observation.model_copy(update=changes)
        if event.effects is not None:
            scrubbed_effects = redact_effects(event.effects, values)
            if scrubbed_effects != event.effects:
                update["effects"] = scrubbed_effects
        if update:
            result.events[index] = event.model_copy(update=update)
    return result
