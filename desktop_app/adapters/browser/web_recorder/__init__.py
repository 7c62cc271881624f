"""Recording a demonstration in Chromium: the page's scripts report, we persist at once.

Two scripts run in every page and frame: ``resources/recorder/effects.js`` observes what the
page does and ``resources/recorder/capture.js`` what the person does; both report through the
``__proceduraEmit`` binding. Every observation of an action is made by the page at the moment of
the action (the element pressed, described before the page reacted; the address and title;
when the element was last changed) and every change the page made is attributed by the page to
the action that caused it. So the order reports arrive in, and how late the recorder handles
them, never decides what belongs to which action.

Here each action report becomes an :class:`~desktop_app.core.models.Event`, stored at once
(so a crash loses no more than the last half second of typing), and what is learnt about it
later is written into the same stored event as it arrives: its effects and the page it led to
(``effects`` reports), its picture (a frame Chromium painted before the action began, from the
tab's screencast: see :mod:`~desktop_app.adapters.browser.tab_watch`), the title of a page
opened (``loaded``), who started a navigation, and an ARIA snapshot of where it led, kept only
when no other action began while it was taken.

While the recording runs, the person can pause it (what they do meanwhile is dropped, typing
included, even when the page reports it only after they resume), mark the focused field
sensitive (the same path as the Alt+Shift+S hotkey of the capture script), and add notes
(``ActionKind.NOTE`` events, stored in order with the actions around them).
"""

from __future__ import annotations

from desktop_app.adapters.browser.web_recorder.service import WebRecorder

__all__ = ["WebRecorder"]
