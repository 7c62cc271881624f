"""The Recordings screen: every demonstration, its steps with screenshots, and what to do with it.

Also home to what the record control bar shares with it: :func:`describe_event` (one line a
person reads for an event), :class:`EventListModel` (events as a list with thumbnails) and
:class:`ThumbnailCache` (screenshots scaled off the GUI thread), and :func:`induce_draft` /
:func:`show_draft` / :func:`say_cancelled` (induce a draft from a recording and open it in the
editor, or say it was cancelled).

Its parts: :mod:`.page` (the screen), :mod:`.model` (recordings as a table), :mod:`.events` (one
line per event), :mod:`.event_list` (events as a list or storyboard), :mod:`.thumbnails`
(screenshots scaled off the GUI thread) and :mod:`.drafts` (induction from a recording).
"""

from desktop_app.ui.recordings_page.drafts import induce_draft, say_cancelled, show_draft
from desktop_app.ui.recordings_page.event_list import EventListModel, event_list_view
from desktop_app.ui.recordings_page.events import describe_event, screenshot_of
from desktop_app.ui.recordings_page.model import RecordingsModel
from desktop_app.ui.recordings_page.page import RecordingsPage
from desktop_app.ui.recordings_page.thumbnails import ThumbnailCache

__all__ = [
    "EventListModel",
    "RecordingsModel",
    "RecordingsPage",
    "ThumbnailCache",
    "describe_event",
    "event_list_view",
    "induce_draft",
    "say_cancelled",
    "screenshot_of",
    "show_draft",
]
