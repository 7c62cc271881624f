"""The port replay drives a browser through; the Playwright adapter implements it.

Elements are addressed by :class:`Handle`: a recorded :class:`Locator` (rendered with the run's
values), or a selector the adapter itself handed out (a candidate's unique CSS selector, an
element ref from an ARIA snapshot). Methods never wait longer than they are told, and raise
:class:`ActionFailed` (one line, for the run record) when the browser refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from desktop_app.core.errors import ProceduraError
from desktop_app.core.models.target import Fingerprint, Locator, Target
from desktop_app.core.models.workflow import Expectation

__all__ = [
    "ActionFailed",
    "BrowserGone",
    "BrowserPort",
    "Candidate",
    "FieldState",
    "Handle",
    "NavigationRefused",
    "NoBrowser",
    "Overlay",
    "PageAction",
    "PageDialog",
    "PageItem",
    "PageMark",
    "Probe",
]


class ActionFailed(ProceduraError):
    """The browser could not do what was asked (gone, covered, detached, timed out).

    Args:
        message: what happened, in one line.
        blocked: something else on the page took the pointer (an overlay may be in the way).
    """

    def __init__(self, message: str, *, blocked: bool = False) -> None:
        super().__init__(message)
        self.blocked = blocked


class BrowserGone(ProceduraError):
    """The browser closed or crashed during the run: nothing more can be done in it, and what
    it no longer shows says nothing about the app (an element not found there is not drift).
    The run ends failed with the message, at once."""


class NavigationRefused(ProceduraError):
    """The page tried to go to a site outside the workflow's domains, and was stopped."""


@dataclass(frozen=True, slots=True)
class Handle:
    """How to reach one element: a recorded locator or an adapter's own selector."""

    locator: Locator | None = None
    selector: str | None = None

    def __post_init__(self) -> None:
        if (self.locator is None) == (self.selector is None):
            raise ValueError("a handle has either a locator or a selector")

    def describe(self) -> str:
        """A short human form for run records."""
        return self.locator.describe() if self.locator is not None else str(self.selector)


@dataclass(frozen=True, slots=True)
class Probe:
    """What a handle matches right now, without waiting."""

    count: int
    visible: bool = False
    enabled: bool = False

    @property
    def usable(self) -> bool:
        """Exactly one element, visible and enabled."""
        return self.count == 1 and self.visible and self.enabled


@dataclass(frozen=True, slots=True)
class Candidate:
    """An element on the current page a step could act on, as the page describes it."""

    handle: Handle
    fingerprint: Fingerprint


@dataclass(frozen=True, slots=True)
class FieldState:
    """What a form control holds now, read back after acting on it.

    ``value`` is a field's value (an editable region's text); ``checked`` a checkbox's, radio's
    or switch's state (None for other elements); ``selected`` the labels and values of a
    select's chosen options.
    """

    value: str = field(default="", repr=False)
    checked: bool | None = None
    selected: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PageDialog:
    """A question the browser itself asked (``confirm``, ``prompt``; an ``alert`` tells only),
    and how it was answered: ``accepted`` is OK; ``expected``: the step said how to answer."""

    kind: str
    message: str
    accepted: bool
    expected: bool


@dataclass(frozen=True, slots=True)
class Overlay:
    """Something covering the page (a consent banner, a modal) and the control that clears it."""

    description: str
    dismiss: Handle
    dismiss_label: str
    title: str = ""


@dataclass(frozen=True, slots=True)
class PageAction:
    """One whitelisted thing to do to an element (or to the page, for press and scroll)."""

    kind: Literal["click", "fill", "select", "check", "press", "scroll"]
    value: str = ""
    checked: bool = True
    key: str = ""
    button: Literal["left", "right", "middle"] = "left"
    click_count: int = 1
    modifiers: tuple[str, ...] = ()
    dx: float = 0
    dy: float = 0
    secret: bool = field(default=False, repr=False)


@dataclass(frozen=True, slots=True)
class PageMark:
    """Where the page stood just before an action, to tell afterwards whether it reacted:
    which document it showed (None when not watched), how often that document had changed,
    how many requests the page had sent, how many documents it had loaded, its URL, and how
    many of the browser's own dialogs it had opened."""

    document: str | None
    changes: int
    requests: int
    documents: int
    url: str
    dialogs: int = 0


@dataclass(frozen=True, slots=True)
class PageItem:
    """One item of a list or table on the page: the text that names it, and its fields."""

    key: str
    fields: dict[str, str]


class BrowserPort(Protocol):
    """One browser page, seen and driven by replay."""

    async def url(self) -> str:
        """The page's current URL."""
        ...

    async def goto(self, url: str, *, timeout_s: float) -> None:
        """Open *url* (raises :class:`NavigationRefused` outside the allowed domains)."""
        ...

    async def probe(self, handle: Handle) -> Probe:
        """How many elements *handle* matches now, and whether the first is visible/enabled."""
        ...

    async def receives_pointer(self, handle: Handle) -> bool:
        """Whether a click at the element's centre would reach it (nothing covers it)."""
        ...

    async def covered_by_popup(self, handle: Handle) -> bool:
        """Whether what covers the element is a popup the page left open (a date picker, a
        menu: positioned over it, outside any dialog), which Escape would close."""
        ...

    async def perform(self, handle: Handle | None, action: PageAction, *, timeout_s: float) -> None:
        """Do *action* on the element (or the page when *handle* is None)."""
        ...

    async def expectation_holds(self, expectation: Expectation, *, timeout_s: float) -> bool:
        """Whether *expectation* holds within *timeout_s* (polled; 0 checks once)."""
        ...

    async def busy(self) -> bool:
        """Whether the page shows it is still loading (a spinner, ``aria-busy``)."""
        ...

    async def settled(self, *, quiet_s: float | None = None, pending: bool = False) -> bool:
        """Whether the page has come to rest: loaded, no request of its own pending, no
        change to its document (and no action) for a short while (*quiet_s*, by default the
        page's own), and nothing showing it is still loading (a person would see nothing
        happening). With *pending*, also nothing the page set itself to do in a moment: no
        short timer waiting to fire (a debounced save, handlers attached after ``load``), no
        storage write open, no change to its storage since the last look."""
        ...

    async def documents(self) -> int:
        """How many documents the page has begun to load (a navigation, a reload, a form
        sent): a new one needs a moment to be ready before it is acted on."""
        ...

    async def mark(self) -> PageMark:
        """Where the page stands now (see :meth:`reacted`)."""
        ...

    async def reacted(self, mark: PageMark) -> bool:
        """Whether the page did anything since *mark*: its document changed, it sent a
        request, it loaded another document, its URL changed or it asked a question."""
        ...

    async def kept_in_browser(self) -> bool:
        """Whether the document shown wrote to the browser's storage (``localStorage``,
        IndexedDB) since it loaded: an app keeping its data in the browser."""
        ...

    async def reload(
        self, *, timeout_s: float
    ) -> Literal["reloaded", "not reloadable", "asked to stay", "failed"]:
        """Load the page shown again, as a person would to see what the app kept. Nothing is
        done to a page that came from a form sent (a reload would send it again) or outside
        the domains; a page that asks to stay (``beforeunload``: changes not yet saved) is
        not left."""
        ...

    async def blocking_overlay(self) -> Overlay | None:
        """A visible overlay that takes the page's clicks, with its dismiss control, if any."""
        ...

    async def candidates(self) -> list[Candidate]:
        """Every visible element a step could act on, in document order."""
        ...

    async def page_messages(self) -> list[str]:
        """What the page says is wrong, as shown now: its error messages and alerts, and the
        validation messages of form fields a person (or a submit) has touched; most telling
        first, each once."""
        ...

    async def describe(self, handle: Handle) -> Target | None:
        """Ranked locators and fingerprint of the element (None if it is gone)."""
        ...

    async def snapshot(self) -> str:
        """The page's ARIA snapshot with ``[ref=eN]`` element refs (for the LLM)."""
        ...

    async def ref_handle(self, ref: str) -> Handle:
        """The handle of an element ref from the last :meth:`snapshot`."""
        ...

    async def read(self, handle: Handle, attribute: str | None) -> str:
        """The element's text (or *attribute*; ``value`` for a field's value)."""
        ...

    async def field_state(self, handle: Handle) -> FieldState:
        """What the form control *handle* finds holds now (raises :class:`ActionFailed` when
        it is gone)."""
        ...

    async def items(
        self, css: str, *, contains: str | None, key: str | None, fields: dict[str, str]
    ) -> list[PageItem]:
        """The shown elements *css* matches, in page order, whose text holds *contains*
        (ignoring case; every one when None): each one's key (the whole text of the element
        *key* finds inside it, or its own; spaces collapsed) and the text of each field's
        element inside it ("" when it has none)."""
        ...

    async def screenshot(self) -> bytes:
        """A PNG of the viewport with every password field masked, and every element a
        secret was typed into during the run (a ``fill`` with :attr:`PageAction.secret`),
        whatever its type, wherever it is now."""
        ...

    async def answer_dialogs(self, answer: Literal["accept", "dismiss"] | None) -> None:
        """Answer the browser's own questions from now on with *answer* (None: cancel them,
        they were not expected); forget the dialogs seen so far."""
        ...

    async def dialogs(self) -> list[PageDialog]:
        """The browser's own dialogs since :meth:`answer_dialogs`, and how they were answered."""
        ...


class NoBrowser:
    """The page of a run that opened no browser (every step is a desktop step): a web step or
    expectation that turns up anyway fails, saying why."""

    _WHY = "this run opened no browser: the workflow's steps are desktop steps"

    async def url(self) -> str:
        return "about:blank"

    async def goto(self, url: str, *, timeout_s: float) -> None:
        raise ActionFailed(self._WHY)

    async def probe(self, handle: Handle) -> Probe:
        return Probe(count=0)

    async def receives_pointer(self, handle: Handle) -> bool:
        return False

    async def covered_by_popup(self, handle: Handle) -> bool:
        return False

    async def perform(self, handle: Handle | None, action: PageAction, *, timeout_s: float) -> None:
        raise ActionFailed(self._WHY)

    async def expectation_holds(self, expectation: Expectation, *, timeout_s: float) -> bool:
        return False

    async def busy(self) -> bool:
        return False

    async def settled(self, *, quiet_s: float | None = None, pending: bool = False) -> bool:
        return True

    async def documents(self) -> int:
        return 0

    async def mark(self) -> PageMark:
        return PageMark(None, 0, 0, 0, "about:blank")

    async def reacted(self, mark: PageMark) -> bool:
        return False

    async def kept_in_browser(self) -> bool:
        return False

    async def reload(
        self, *, timeout_s: float
    ) -> Literal["reloaded", "not reloadable", "asked to stay", "failed"]:
        return "not reloadable"

    async def blocking_overlay(self) -> Overlay | None:
        return None

    async def candidates(self) -> list[Candidate]:
        return []

    async def page_messages(self) -> list[str]:
        return []

    async def describe(self, handle: Handle) -> Target | None:
        return None

    async def snapshot(self) -> str:
        return ""

    async def ref_handle(self, ref: str) -> Handle:
        raise ActionFailed(self._WHY)

    async def read(self, handle: Handle, attribute: str | None) -> str:
        raise ActionFailed(self._WHY)

    async def field_state(self, handle: Handle) -> FieldState:
        raise ActionFailed(self._WHY)

    async def items(
        self, css: str, *, contains: str | None, key: str | None, fields: dict[str, str]
    ) -> list[PageItem]:
        raise ActionFailed(self._WHY)

    async def screenshot(self) -> bytes:
        raise ActionFailed(self._WHY)

    async def answer_dialogs(self, answer: Literal["accept", "dismiss"] | None) -> None:
        return None

    async def dialogs(self) -> list[PageDialog]:
        return []
