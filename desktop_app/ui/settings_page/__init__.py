"""The Settings screen: the LLM and its key, search embeddings, the browser, safety limits, data.

Every field edits one setting of ``settings.toml`` (the API key goes to the OS keyring, the data
folder to a pointer file read at start-up). A setting an environment variable sets wins over the
file, so its field is read-only and says which variable sets it. Apply writes through the backend
on the store thread and announces ``settings_changed``; Revert puts the fields back.

Its parts: :mod:`.page` (the screen: loading, changes, apply, the key, the tests), :mod:`.sections`
(the sections' fields), :mod:`.fields` (one field and the form's pieces) and :mod:`.state` (what
the screen shows).
"""

from desktop_app.ui.settings_page.page import SettingsPage
from desktop_app.ui.settings_page.state import SettingsState

__all__ = ["SettingsPage", "SettingsState"]
