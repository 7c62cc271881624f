"""What the user does, once for every way in: the command line, the desktop app's windows, the
tray and the hand-off from a second process are adapters over these plain, typed functions (no
Qt, no click). See docs/architecture.md.
"""
