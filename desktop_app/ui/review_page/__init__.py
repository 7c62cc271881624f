"""The Review screen: what waits for review, what each version changes, and the decision.

Left, the review queue (every version in review, newest first; repairs a replay proposed are
marked) and a picker to compare any two versions of any workflow. Right, the version's header and
the review buttons, a readable diff against the version it came from, its change note, for a
repair what healed and why (which rung found each step's element, with which locator, on what
evidence), and the version's review history.

Its parts: :mod:`.page` (the screen), :mod:`.markup` (the diff and what healed as HTML),
:mod:`.models` (the queue and the history as Qt models), :mod:`.loading` (what it loads on the
store thread) and :mod:`.widgets` (the diff browser and the comment dialog).
"""

#: Who saves the versions a replay proposes (``desktop_app.app.replay``).
from desktop_app.core.replay.learning import REPLAY_ACTOR
from desktop_app.ui.review_page.markup import diff_html, healed_html
from desktop_app.ui.review_page.models import HistoryModel, QueueEntry, ReviewQueueModel
from desktop_app.ui.review_page.page import ReviewPage
from desktop_app.ui.review_page.widgets import CommentDialog

__all__ = [
    "REPLAY_ACTOR",
    "CommentDialog",
    "HistoryModel",
    "QueueEntry",
    "ReviewPage",
    "ReviewQueueModel",
    "diff_html",
    "healed_html",
]
