"""Chromium through Playwright's async API: launching or attaching, locators, the web recorder."""
