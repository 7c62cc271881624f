"""The PySide6 desktop application: windows, models and dialogs over the services (no adapters)."""
